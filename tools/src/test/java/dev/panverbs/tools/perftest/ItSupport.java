package dev.panverbs.tools.perftest;

import dev.panverbs.testing.RdmaTestDevice;
import org.junit.jupiter.api.Assertions;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Shared plumbing of the tools' integration tests: the device under test, the C perftest binaries, and running a
 * panverbs side in-process (one JVM start is ~10 s under TCG; in-process runs cost nothing).
 */
final class ItSupport {
    private ItSupport() { }

    private static final AtomicInteger NEXT_PORT = new AtomicInteger(19515);

    /** A TCP port no earlier run of this JVM used (TIME_WAIT-free). */
    static int port() {
        return NEXT_PORT.getAndIncrement();
    }

    /** The device under test: {@link RdmaTestDevice#name()}. */
    static String device() {
        return RdmaTestDevice.name();
    }

    /** Path of a C perftest binary: {@link RdmaTestDevice#program(String, String)}. */
    static String cTool(String name) {
        return RdmaTestDevice.program(name, "perftest");
    }

    /** A finished run of one side. */
    record Side(int rc, String out, String err) {
        PerftestTranscript transcript() {
            return PerftestTranscript.parse(out);
        }

        String describe(String who) {
            return who + " exit " + rc + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    /** The panverbs side, running in a thread of this JVM. */
    static CompletableFuture<Side> javaSide(PerftestTest test, List<String> args,
                                            Supplier<? extends VerbsEngine> engine) {
        CompletableFuture<Side> f = new CompletableFuture<>();
        Thread.ofPlatform().name("panverbs-" + test.programName()).daemon().start(() -> {
            ByteArrayOutputStream o = new ByteArrayOutputStream();
            ByteArrayOutputStream e = new ByteArrayOutputStream();
            int rc;
            try (PrintStream out = new PrintStream(o, true, StandardCharsets.UTF_8);
                 PrintStream err = new PrintStream(e, true, StandardCharsets.UTF_8)) {
                rc = PerftestMain.run(test, test.programName(), args, out, err, engine);
            } catch (Throwable t) {
                f.completeExceptionally(t);
                return;
            }
            f.complete(new Side(rc, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8)));
        });
        return f;
    }

    /** Runs the Java client, retrying while the server is not listening yet (perftest's client does not wait). */
    static Side javaClient(PerftestTest test, List<String> args, long timeoutSeconds) throws Exception {
        long deadline = System.nanoTime() + timeoutSeconds * 1_000_000_000L;
        while (true) {
            Side s = javaSide(test, args, CoreEngine::new).get(timeoutSeconds, TimeUnit.SECONDS);
            if (s.rc() == 0 || !s.err().contains("Couldn't connect") || System.nanoTime() > deadline) {
                return s;
            }
            Thread.sleep(300);
        }
    }

    /** A C perftest process with its output captured to files. */
    static final class CProcess {
        final Process process;
        final Path out;
        final Path err;

        CProcess(List<String> command, Path dir, String name) throws IOException {
            out = dir.resolve(name + ".out");
            err = dir.resolve(name + ".err");
            // line-buffered stdout (stdbuf): a C tool killed after a hang still shows how far it got
            List<String> cmd = Files.isExecutable(Path.of("/usr/bin/stdbuf"))
                    ? concat(List.of("/usr/bin/stdbuf", "-oL"), command.toArray(String[]::new)) : command;
            process = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        }

        Side await(long timeoutSeconds) throws Exception {
            if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                String where = stacks(process.pid());
                process.destroyForcibly().waitFor();
                Assertions.fail("C perftest still running after " + timeoutSeconds + " s:\n" + Files.readString(out)
                        + Files.readString(err) + where);
            }
            return new Side(process.exitValue(), Files.readString(out), Files.readString(err));
        }

        /** Where a hung C tool waits: each thread's kernel stack and, when gdb is installed, its user stacks. */
        static String stacks(long pid) throws InterruptedException {
            StringBuilder b = new StringBuilder("\n--- where the C process (pid " + pid + ") waits\n");
            try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
                for (Path t : tasks.sorted().toList()) {
                    b.append("thread ").append(t.getFileName()).append(" wchan=")
                            .append(readQuietly(t.resolve("wchan"))).append('\n').append(readQuietly(t.resolve("stack")));
                }
            } catch (IOException e) {
                b.append("(no /proc/").append(pid).append("/task: ").append(e.getMessage()).append(")\n");
            }
            if (Files.isExecutable(Path.of("/usr/bin/gdb"))) {
                try {
                    Path log = Files.createTempFile("gdb-" + pid, ".txt");
                    Process gdb = new ProcessBuilder("/usr/bin/gdb", "-q", "-batch", "-p", Long.toString(pid), "-ex",
                            "thread apply all bt").redirectErrorStream(true).redirectOutput(log.toFile()).start();
                    gdb.getOutputStream().close();
                    if (gdb.waitFor(60, TimeUnit.SECONDS)) {
                        b.append(Files.readString(log));
                    } else {
                        gdb.destroyForcibly();
                        b.append("(gdb did not finish in 60 s)\n");
                    }
                } catch (IOException e) {
                    b.append("(gdb: ").append(e.getMessage()).append(")\n");
                }
            }
            return b.toString();
        }

        private static String readQuietly(Path p) {
            try {
                return Files.readString(p).strip() + "\n";
            } catch (IOException e) {
                return "(" + e.getMessage() + ")\n";
            }
        }

        /**
         * Gives the server a moment to start listening (its banner sits in a stdio buffer, so it cannot be
         * watched); the client retries anyway.
         */
        void awaitStart() throws Exception {
            Thread.sleep(1000);
        }
    }

    /** Runs a C client, retrying while the Java server is not listening yet. */
    static Side cClient(List<String> command, Path dir, String name, long timeoutSeconds) throws Exception {
        long deadline = System.nanoTime() + timeoutSeconds * 1_000_000_000L;
        while (true) {
            Side s = new CProcess(command, dir, name).await(timeoutSeconds);
            if (s.rc() == 0 || !(s.err().contains("Couldn't connect") || notListening(s.err()))
                    || System.nanoTime() > deadline) {
                return s;
            }
            Thread.sleep(300);
        }
    }

    /** The C client's -R/-z failure when nothing listens yet (REJECTED, event 8, on its control connection). */
    private static boolean notListening(String err) {
        return err.contains("Unexpected CM event bl blka 8");
    }

    static List<String> concat(List<String> a, String... more) {
        List<String> l = new ArrayList<>(a);
        l.addAll(List.of(more));
        return l;
    }
}
