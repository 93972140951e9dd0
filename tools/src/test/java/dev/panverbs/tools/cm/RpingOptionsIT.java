package dev.panverbs.tools.cm;

import static dev.panverbs.tools.cm.RpingIT.assertPinged;
import static dev.panverbs.tools.cm.RpingIT.c;
import static dev.panverbs.tools.cm.RpingIT.client;
import static dev.panverbs.tools.cm.RpingIT.java;
import static dev.panverbs.tools.cm.RpingIT.server;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * rping's {@code -q} (the application's own QP, moved with {@code rdma_init_qp_attr}, the client finishing with
 * {@code rdma_establish}) and {@code -P} (a persistent server, one thread per connection) against rdma-core's rping,
 * in both directions, with the ping data validated ({@code -V}) and each side's text compared as in {@link RpingIT}.
 * A {@code -q} side also talks to a side whose QP is rdma_cm's: the wire is the same.
 */
class RpingOptionsIT {
    private static final AtomicInteger PORTS = new AtomicInteger(7400);
    private static String addr;

    @TempDir
    Path dir;

    @BeforeAll
    static void device() {
        addr = RpingIT.deviceAddress("rping");
    }

    private static List<String> q(List<String> args) {
        List<String> all = new ArrayList<>(args);
        all.add("-q");
        return all;
    }

    private static void settle(int port) throws InterruptedException {
        CmListeners.await(port); // the server must listen before the client connects (no retry in the tools)
    }

    @Test
    void selfCreatedQpJavaClientAgainstRdmaCoreServer() throws Exception {
        int port = PORTS.incrementAndGet();
        RpingIT.Side server = c(q(server(addr, port)), dir.resolve("c-server.log"));
        settle(port);
        assertPinged(server, java(q(client(addr, port))));
    }

    @Test
    void selfCreatedQpRdmaCoreClientAgainstJavaServer() throws Exception {
        int port = PORTS.incrementAndGet();
        RpingIT.Side server = java(q(server(addr, port)));
        settle(port);
        assertPinged(server, c(q(client(addr, port)), dir.resolve("c-client.log")));
    }

    @Test
    void selfCreatedQpJavaClientAgainstACmQpServer() throws Exception {
        int port = PORTS.incrementAndGet();
        RpingIT.Side server = c(server(addr, port), dir.resolve("c-server.log"));
        settle(port);
        assertPinged(server, java(q(client(addr, port))));
    }

    @Test
    void persistentJavaServerServesConcurrentAndLaterRdmaCoreClients() throws Exception {
        int port = PORTS.incrementAndGet();
        List<String> args = new ArrayList<>(server(addr, port));
        args.add("-P");
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> exit = new CompletableFuture<>();
        Thread serverThread = new Thread(() -> exit.complete(Rping.execute(args.toArray(String[]::new),
                new PrintWriter(out, true), new PrintWriter(err, true))), "rping -P");
        serverThread.setDaemon(true);
        serverThread.start();
        settle(port);
        RpingIT.Side first = c(client(addr, port), dir.resolve("c1.log"));
        RpingIT.Side second = c(q(client(addr, port)), dir.resolve("c2.log"));
        for (RpingIT.Side client : List.of(first, second)) {
            assertClientPinged(client);
        }
        RpingIT.Side later = c(client(addr, port), dir.resolve("c3.log")); // the server still listens
        assertClientPinged(later);

        serverThread.interrupt(); // rping -P runs until killed; this one stops listening when interrupted
        assertThat(exit.get(RpingIT.TIMEOUT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS))
                .as("server output:%n%s%s", out, err).isZero();
        long served = out.toString().lines().filter(l -> l.startsWith("server ping data: ")).count();
        assertThat(served).as("3 clients x %d pings; output:%n%s%s", RpingIT.COUNT, out, err)
                .isEqualTo(3L * RpingIT.COUNT);
        assertThat(err.toString()).doesNotContain("rping: ");
    }

    @Test
    void javaClientsAgainstAPersistentRdmaCoreServer() throws Exception {
        int port = PORTS.incrementAndGet();
        List<String> args = new ArrayList<>(server(addr, port));
        args.add("-P");
        RpingIT.Side server = c(args, dir.resolve("c-server.log"));
        try {
            settle(port);
            // one after the other: rping -P clones its listening state per request, and a second request arriving
            // before the first is cloned overwrites it (rdma-core 44: the first client then never gets its reply)
            assertClientPinged(java(client(addr, port)));
            assertClientPinged(java(q(client(addr, port))));
        } finally {
            ProcessHandle.current().children().filter(p -> p.info().command().orElse("").endsWith("rping"))
                    .forEach(ProcessHandle::destroy);
        }
        server.exit().get(RpingIT.TIMEOUT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
    }

    private static void assertClientPinged(RpingIT.Side client) throws Exception {
        int status = client.await();
        String output = client.output().call();
        assertThat(status).as("%s exit; output:%n%s", client.name(), output).isZero();
        assertThat(output.lines().filter(l -> l.startsWith("ping data: ")).toList()).as(client.name())
                .containsExactlyElementsOf(RpingIT.expected("ping data: "));
        assertThat(output).doesNotContain("data mismatch");
    }
}
