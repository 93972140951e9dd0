package dev.panverbs.tools.pingpong;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One side of a ping-pong in an IT: the Java tool run in this JVM (a thread, so that no JVM start-up is paid
 * under TCG), the launcher {@code tools/bin/*_pingpong}, or rdma-core's C tool as a process.
 */
final class PingPongSide {
    private static final Pattern ADDRESS = Pattern.compile(
            "^  (local|remote) address: {1,2}LID 0x(\\p{XDigit}{4}), QPN 0x(\\p{XDigit}{6}), PSN 0x(\\p{XDigit}{6})"
                    + "(?:,|:) GID (\\S+)$", Pattern.MULTILINE);

    final String name;
    private final CompletableFuture<Integer> exit;
    private final Output output;
    private final Process process; // null for the in-JVM tool

    private interface Output {
        String text() throws IOException;
    }

    private PingPongSide(String name, CompletableFuture<Integer> exit, Output output, Process process) {
        this.name = name;
        this.exit = exit;
        this.output = output;
        this.process = process;
    }

    /** The Java tool in this JVM: {@code ud} picks ud_pingpong. */
    static PingPongSide java(boolean ud, List<String> args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> exit = new CompletableFuture<>();
        String name = (ud ? "ud_pingpong " : "rc_pingpong ") + String.join(" ", args);
        Thread t = new Thread(() -> {
            try {
                String[] a = args.toArray(String[]::new);
                PrintWriter o = new PrintWriter(out, true);
                PrintWriter e = new PrintWriter(err, true);
                exit.complete(ud ? UdPingPong.execute(PingPongRun::ud, a, o, e)
                        : RcPingPong.execute(PingPongRun::rc, a, o, e));
            } catch (Throwable e) {
                err.write("uncaught: " + e);
                exit.complete(-1);
            }
        }, "pingpong " + name);
        t.setDaemon(true);
        t.start();
        return new PingPongSide("java " + name, exit, () -> out + err.toString(), null);
    }

    /** A process, e.g. {@code ibv_rc_pingpong} or {@code tools/bin/rc_pingpong}, its output merged into a file. */
    static PingPongSide process(List<String> command, Path log) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        return new PingPongSide(String.join(" ", command), p.onExit().thenApply(Process::exitValue),
                () -> Files.readString(log), p);
    }

    /** SIGKILL to a {@link #process} side, and waits for it to end. */
    void kill() throws InterruptedException {
        process.destroyForcibly().waitFor();
    }

    /** Waits until the output contains {@code text} (e.g. the run has begun); fails if the side ends first. */
    void awaitOutput(String text, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!output().contains(text)) {
            if (exit.isDone() || System.nanoTime() > deadline) {
                throw new AssertionError(name + " never printed \"" + text + "\"; output:\n" + output());
            }
            Thread.sleep(100);
        }
    }

    int await(Duration timeout) throws Exception {
        try {
            return exit.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError(name + " did not finish within " + timeout + "; output so far:\n" + output(), e);
        }
    }

    /**
     * For a failed pair: this side's output and, if its process still runs, where it waits (a JVM's thread dump
     * through jcmd, else each thread's kernel stack); then the process is killed so that it cannot outlive the test.
     */
    String postMortem() {
        StringBuilder b = new StringBuilder("\n--- ").append(name).append(exit.isDone() ? " (exited " + exit.getNow(null)
                + ")" : " (still running)").append(":\n");
        try {
            b.append(output());
        } catch (IOException e) {
            b.append("(no output: ").append(e.getMessage()).append(")\n");
        }
        if (process != null && process.isAlive()) {
            long pid = process.pid();
            b.append(jvmThreads(pid));
            try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
                for (Path t : tasks.sorted().toList()) {
                    b.append("thread ").append(t.getFileName()).append(" wchan=").append(quietly(t.resolve("wchan")))
                            .append('\n').append(quietly(t.resolve("stack")));
                }
            } catch (IOException e) {
                b.append("(no /proc/").append(pid).append("/task)\n");
            }
            process.destroyForcibly();
        }
        return b.toString();
    }

    private static String jvmThreads(long pid) {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        if (!quietly(Path.of("/proc/" + pid + "/cmdline")).contains("java") || !Files.isExecutable(jcmd)) {
            return "";
        }
        try {
            Path log = Files.createTempFile("jcmd-" + pid, ".txt");
            Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "Thread.print")
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return "(jcmd Thread.print did not finish in 60 s)\n";
            }
            return Files.readString(log);
        } catch (IOException e) {
            return "(jcmd: " + e.getMessage() + ")\n";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "(interrupted)\n";
        }
    }

    private static String quietly(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            return "?";
        }
    }

    String output() throws IOException {
        return output.text();
    }

    /** The addresses printed, in order: local first, then remote. */
    List<PingPongDestination> addresses() throws IOException {
        List<PingPongDestination> all = new ArrayList<>();
        Matcher m = ADDRESS.matcher(output());
        while (m.find()) {
            all.add(new PingPongDestination(Integer.parseInt(m.group(2), 16), Integer.parseInt(m.group(3), 16),
                    Integer.parseInt(m.group(4), 16), PingPongSide.gidBytes(m.group(5))));
        }
        return all;
    }

    private static byte[] gidBytes(String text) {
        try {
            byte[] b = java.net.InetAddress.getByName(text).getAddress();
            return b.length == 16 ? b : ipv4Mapped(b);
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError("unparseable GID " + text, e);
        }
    }

    // InetAddress turns ::ffff:a.b.c.d into an Inet4Address
    private static byte[] ipv4Mapped(byte[] v4) {
        byte[] g = new byte[16];
        g[10] = (byte) 0xff;
        g[11] = (byte) 0xff;
        System.arraycopy(v4, 0, g, 12, 4);
        return g;
    }

    /** Asserts a complete, successful run: exit 0, both address lines, both result lines with these numbers. */
    void assertCompleted(int size, int iters, Duration timeout) throws Exception {
        int status = await(timeout);
        String text = output();
        assertThat(status).as("exit status of %s; output:%n%s", name, text).isZero();
        assertThat(addresses()).as("address lines of %s:%n%s", name, text).hasSize(2);
        long bytes = (long) size * iters * 2;
        assertThat(text).as(name).containsPattern("(?m)^" + bytes + " bytes in \\d+\\.\\d\\d seconds = \\d+\\.\\d\\d"
                + " Mbit/sec$");
        assertThat(text).as(name).containsPattern("(?m)^" + iters + " iters in \\d+\\.\\d\\d seconds = \\d+\\.\\d\\d"
                + " usec/iter$");
        assertThat(text).as(name).doesNotContain("invalid data");
    }

    /** Asserts that each side printed the other's local address as its remote address: the exchange worked. */
    static void assertExchanged(PingPongSide a, PingPongSide b) throws IOException {
        List<PingPongDestination> x = a.addresses();
        List<PingPongDestination> y = b.addresses();
        assertThat(x.get(1)).as("%s's remote address is %s's local one", a.name, b.name).isEqualTo(y.get(0));
        assertThat(y.get(1)).as("%s's remote address is %s's local one", b.name, a.name).isEqualTo(x.get(0));
    }

    /** Waits until a TCP socket listens on {@code port} on this host (/proc/net/tcp{,6}), without connecting. */
    static void awaitListening(int port, Duration timeout) throws Exception {
        String hex = String.format(":%04X", port);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            for (String f : new String[] {"/proc/net/tcp", "/proc/net/tcp6"}) {
                Path p = Path.of(f);
                if (Files.exists(p)) {
                    for (String line : Files.readAllLines(p)) {
                        String[] c = line.trim().split("\\s+");
                        if (c.length > 3 && c[1].endsWith(hex) && c[3].equals("0A")) {
                            return;
                        }
                    }
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError("nothing listens on TCP port " + port + " after " + timeout);
    }
}
