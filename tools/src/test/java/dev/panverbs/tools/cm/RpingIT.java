package dev.panverbs.tools.cm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.panverbs.testing.RdmaTestDevice;
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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * rping against rdma-core's rping on one device (rxe0 in the bed, over its own IP address), both directions, with
 * {@code -V} (the client compares what came back with what it sent) and {@code -v} (both sides print the data, and
 * each side's lines are compared with the text rdma-core's client generates). The Java side runs in this JVM (a
 * thread: no JVM start-up under TCG).
 */
class RpingIT {
    static final Duration TIMEOUT = Duration.ofSeconds(240);
    static final int COUNT = 5;
    private static final AtomicInteger PORTS = new AtomicInteger(7300);

    private static String addr;

    @TempDir
    Path dir;

    @BeforeAll
    static void device() {
        addr = deviceAddress("rping");
    }

    /** The device's IP address ({@code PANVERBS_ADDR}, set by testbed/test); the {@code tool}'s ITs skip without. */
    static String deviceAddress(String tool) {
        RdmaTestDevice.name();
        String addr = System.getenv("PANVERBS_ADDR");
        assumeTrue(addr != null, tool + " ITs need PANVERBS_ADDR (testbed/test sets it)");
        return addr;
    }

    /** One running side: its exit status and its output. */
    record Side(String name, CompletableFuture<Integer> exit, java.util.concurrent.Callable<String> output) {
        int await() throws Exception {
            try {
                return exit.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                throw new AssertionError(name + " did not finish in " + TIMEOUT + "; output:\n" + output.call(), e);
            }
        }
    }

    /** Waits for {@code side} to exit, asserts it exited 0 ({@code scenario} names the failure), returns its output. */
    static String exitedZero(String scenario, Side side) throws Exception {
        int status = side.await();
        String out = side.output().call();
        assertThat(status).as("%s: %s; output:%n%s", scenario, side.name(), out).isZero();
        return out;
    }

    /** Starts one client attempt; {@code attempt} numbers its log. */
    interface ClientStart {
        Side start(int attempt) throws Exception;
    }

    /**
     * Starts a client, again every 2 s for up to 10 minutes while its output says {@code noListener} (the server
     * guest of a two-hosts IT is not listening yet); asserts that the last attempt exited 0.
     */
    static Side untilListening(String scenario, ClientStart client, Predicate<String> noListener) throws Exception {
        long deadline = System.nanoTime() + 600_000_000_000L;
        for (int attempt = 0; ; attempt++) {
            Side side = client.start(attempt);
            int status = side.await();
            String out = side.output().call();
            if (status == 0 || !noListener.test(out) || System.nanoTime() > deadline) {
                assertThat(status).as("%s: %s; output:%n%s", scenario, side.name(), out).isZero();
                return side;
            }
            Thread.sleep(2000);
        }
    }

    /** A Java tool's {@code execute(args, out, err)} (Rping's, Udaddy's). */
    interface Tool {
        int execute(String[] args, PrintWriter out, PrintWriter err);
    }

    static Side java(List<String> args) {
        return java("rping", Rping::execute, args);
    }

    /** The Java tool {@code name} on a thread of this JVM, its output collected. */
    static Side java(String name, Tool tool, List<String> args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> exit = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                exit.complete(tool.execute(args.toArray(String[]::new), new PrintWriter(out, true),
                        new PrintWriter(err, true)));
            } catch (Throwable e) {
                err.write("uncaught: " + e);
                exit.complete(-1);
            }
        }, name + " " + args);
        t.setDaemon(true);
        t.start();
        return new Side("java " + name + " " + args, exit, () -> out + err.toString());
    }

    static Side c(List<String> args, Path log) throws IOException {
        return c("rping", args, log);
    }

    /** rdma-core's {@code program} (rdmacm-utils) as a process, its output in {@code log}. */
    static Side c(String program, List<String> args, Path log) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(RdmaTestDevice.program(program, "rdmacm-utils"));
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        return new Side(String.join(" ", cmd), p.onExit().thenApply(Process::exitValue), () -> Files.readString(log));
    }

    static List<String> server(String host, int port) {
        return List.of("-s", "-v", "-a", host, "-p", Integer.toString(port), "-S", "100");
    }

    static List<String> client(String host, int port) {
        return List.of("-c", "-v", "-V", "-a", host, "-p", Integer.toString(port), "-C", Integer.toString(COUNT),
                "-S", "100");
    }

    /** The lines rdma-core's client generates for {@code COUNT} pings of 100 bytes, with {@code prefix}. */
    static List<String> expected(String prefix) {
        List<String> lines = new ArrayList<>();
        byte[] buf = new byte[100];
        int start = 65;
        for (int i = 0; i < COUNT; i++) {
            RpingText.fill(buf, i, start);
            start = RpingText.next(start);
            lines.add(prefix + RpingText.cString(buf));
        }
        return lines;
    }

    static void assertPinged(Side server, Side client) throws Exception {
        int c = client.await();
        String clientOut = client.output().call();
        assertThat(c).as("%s exit; output:%n%s", client.name(), clientOut).isZero();
        int s = server.await();
        String serverOut = server.output().call();
        assertThat(s).as("%s exit; output:%n%s", server.name(), serverOut).isZero();
        assertThat(clientOut.lines().filter(l -> l.startsWith("ping data: ")).toList())
                .as(client.name()).containsExactlyElementsOf(expected("ping data: "));
        assertThat(clientOut).doesNotContain("data mismatch");
        assertThat(serverOut.lines().filter(l -> l.startsWith("server ping data: ")).toList())
                .as(server.name()).containsExactlyElementsOf(expected("server ping data: "));
    }

    private static void settle(int port) throws InterruptedException {
        CmListeners.await(port); // the server must listen before the client connects (no retry in the tools)
    }

    @Test
    void javaClientAgainstRdmaCoreServer() throws Exception {
        int port = PORTS.incrementAndGet();
        Side server = c(server(addr, port), dir.resolve("c-server.log"));
        settle(port);
        assertPinged(server, java(client(addr, port)));
    }

    @Test
    void rdmaCoreClientAgainstJavaServer() throws Exception {
        int port = PORTS.incrementAndGet();
        Side server = java(server(addr, port));
        settle(port);
        assertPinged(server, c(client(addr, port), dir.resolve("c-client.log")));
    }

    @Test
    void javaAgainstJava() throws Exception {
        int port = PORTS.incrementAndGet();
        Side server = java(server(addr, port));
        settle(port);
        assertPinged(server, java(client(addr, port)));
    }
}
