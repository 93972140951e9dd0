package dev.panverbs.tools.perftest;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A server session in a second thread and a client session in the caller, over TCP on 127.0.0.1, both on one
 * engine: {@code --loopback} and the JIT warm-up ({@link Warmup}) run the two sides of a test this way.
 */
final class LoopbackPair {
    private LoopbackPair() { }

    /**
     * Runs {@code server} (its port is replaced by a free one unless set) and then {@code client} against it.
     * The client's output goes to {@code out}/{@code err}; the server's is printed on {@code err} only when it
     * fails. Returns the client's status, else the server's.
     */
    static int run(PerftestParameters server, PerftestParameters client, VerbsEngine engine, PrintStream out,
                   PrintStream err) {
        ByteArrayOutputStream serverOut = new ByteArrayOutputStream();
        PrintStream so = new PrintStream(serverOut, true, StandardCharsets.UTF_8);
        CompletableFuture<Integer> port = new CompletableFuture<>();
        CompletableFuture<Integer> serverRc = new CompletableFuture<>();
        Thread t = Thread.ofPlatform().name("perftest-loopback-server").daemon().start(() -> {
            int rc = 1;
            try {
                rc = new PerftestSession(server, engine, so, so, port::complete).run();
            } finally {
                port.complete(-1); // no-op when bound; unblocks the client when the server failed first
                serverRc.complete(rc);
            }
        });
        int bound;
        try {
            bound = port.get(client.timeoutSeconds, TimeUnit.SECONDS);
        } catch (Exception e) {
            bound = -1;
        }
        if (bound < 0) {
            err.print(serverOut.toString(StandardCharsets.UTF_8));
            err.println(" --loopback: the server side did not start");
            return 1;
        }
        client.port = bound;
        int rc = new PerftestSession(client, engine, out, err, null).run();
        int src;
        try {
            src = serverRc.get(client.timeoutSeconds * 10L, TimeUnit.SECONDS);
        } catch (Exception e) {
            t.interrupt();
            src = 1;
        }
        if (src != 0) {
            err.println(" --loopback: the server side failed; its output:");
            err.print(serverOut.toString(StandardCharsets.UTF_8));
        }
        return rc != 0 ? rc : src;
    }
}
