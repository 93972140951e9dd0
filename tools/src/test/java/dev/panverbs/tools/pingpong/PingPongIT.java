package dev.panverbs.tools.pingpong;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.core.Context;
import dev.panverbs.core.Device;
import dev.panverbs.core.GidEntry;
import dev.panverbs.core.GidType;
import dev.panverbs.testing.RdmaTestDevice;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * rc_pingpong and ud_pingpong against each other and against rdma-core's {@code ibv_rc_pingpong} and
 * {@code ibv_ud_pingpong} on one device (rxe0 loopback in the bed), both ways, with {@code -c} so that data is
 * checked, and each side's printed remote address compared with the other's local one. Iterations are small:
 * under TCG everything runs ~20x slower.
 */
class PingPongIT {
    // below JUnit's 5-minute limit in the bed, so that a hang fails with both sides' output and stacks
    private static final Duration TIMEOUT = Duration.ofSeconds(200);
    private static final AtomicInteger PORTS = new AtomicInteger(18600);
    private static final String ITERS = "100";

    private static String device;
    private static String gidIndex;

    @TempDir
    Path dir;

    @BeforeAll
    static void device() {
        device = RdmaTestDevice.name();
        gidIndex = Integer.toString(gidIndexFor(device));
    }

    /** The first RoCE v2 IPv4-mapped GID (what rxe gets from the netdev's address), else 0 on IB. */
    static int gidIndexFor(String device) {
        try (Context ctx = Device.open(device)) {
            for (GidEntry e : ctx.queryGidTable()) {
                if (e.portNum() == 1 && e.type() == GidType.ROCE_V2 && e.gid().isIpv4Mapped()) {
                    return e.index();
                }
            }
            return 0;
        }
    }

    private static List<String> args(int port, String... more) {
        List<String> a = new ArrayList<>(List.of("-d", device, "-g", gidIndex, "-n", ITERS, "-p",
                Integer.toString(port)));
        a.addAll(List.of(more));
        return a;
    }

    private static List<String> withHost(List<String> args) {
        List<String> a = new ArrayList<>(args);
        a.add("127.0.0.1");
        return a;
    }

    private PingPongSide c(String tool, List<String> args, String log) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(tool);
        cmd.addAll(args);
        return PingPongSide.process(cmd, dir.resolve(log));
    }

    /** Runs server then client and checks both. */
    private static void pair(PingPongSide server, int port, java.util.concurrent.Callable<PingPongSide> client,
                             int size) throws Exception {
        PingPongSide cl = null;
        try {
            PingPongSide.awaitListening(port, TIMEOUT);
            cl = client.call();
            cl.assertCompleted(size, Integer.parseInt(ITERS), TIMEOUT);
            server.assertCompleted(size, Integer.parseInt(ITERS), TIMEOUT);
            PingPongSide.assertExchanged(server, cl);
        } catch (Throwable t) {
            // both sides' output and where a live one waits: the assertion names only the side it checked
            throw new AssertionError(t.getMessage() + server.postMortem() + (cl == null ? "" : cl.postMortem()), t);
        }
    }

    @Test
    void rcJavaToJava() throws Exception {
        int port = PORTS.getAndIncrement();
        List<String> a = args(port, "-c", "-s", "8192");
        pair(PingPongSide.java(false, a), port, () -> PingPongSide.java(false, withHost(a)), 8192);
    }

    @Test
    void rcJavaClientCServer() throws Exception {
        int port = PORTS.getAndIncrement();
        List<String> a = args(port, "-c", "-s", "8192");
        pair(c("ibv_rc_pingpong", a, "c-server.log"), port, () -> PingPongSide.java(false, withHost(a)), 8192);
    }

    @Test
    void rcCClientJavaServer() throws Exception {
        int port = PORTS.getAndIncrement();
        List<String> a = args(port, "-c", "-s", "8192");
        pair(PingPongSide.java(false, a), port, () -> c("ibv_rc_pingpong", withHost(a), "c-client.log"), 8192);
    }

    @Test
    void rcEventsBothWays() throws Exception {
        int port = PORTS.getAndIncrement();
        List<String> a = args(port, "-c", "-e");
        pair(PingPongSide.java(false, a), port, () -> c("ibv_rc_pingpong", withHost(a), "c-client.log"), 4096);
        int port2 = PORTS.getAndIncrement();
        List<String> b = args(port2, "-c", "-e");
        pair(c("ibv_rc_pingpong", b, "c-server.log"), port2, () -> PingPongSide.java(false, withHost(b)), 4096);
    }

    @Test
    void rcNewSendApiWithC() throws Exception {
        // -N: ibv_create_qp_ex + ibv_wr_start/ibv_wr_send/ibv_wr_set_sge/ibv_wr_complete on both sides
        int port = PORTS.getAndIncrement();
        List<String> a = args(port, "-c", "-N", "-s", "8192");
        pair(c("ibv_rc_pingpong", a, "c-server.log"), port, () -> PingPongSide.java(false, withHost(a)), 8192);
        int port2 = PORTS.getAndIncrement();
        List<String> b = args(port2, "-N", "-s", "64"); // 64 bytes: inline (ibv_wr_set_inline_data) when the QP grants max_inline_data >= 64
        pair(PingPongSide.java(false, b), port2, () -> c("ibv_rc_pingpong", withHost(b), "c-client.log"), 64);
    }

    @Test
    void rcDefaultSizeAndMtuWithC() throws Exception {
        // no -s/-m: both sides must agree on the defaults (4096 bytes, MTU 1024) to interoperate
        int port = PORTS.getAndIncrement();
        List<String> a = args(port);
        pair(c("ibv_rc_pingpong", a, "c-server.log"), port, () -> PingPongSide.java(false, withHost(a)), 4096);
    }

    @Test
    void udJavaToJava() throws Exception {
        int port = PORTS.getAndIncrement();
        List<String> a = args(port, "-c");
        pair(PingPongSide.java(true, a), port, () -> PingPongSide.java(true, withHost(a)), 1024);
    }

    @Test
    void udJavaClientCServer() throws Exception {
        // default size on both sides: proves 1024 is ibv_ud_pingpong's real default (a receive holds size + 40)
        int port = PORTS.getAndIncrement();
        List<String> a = args(port, "-c");
        pair(c("ibv_ud_pingpong", a, "c-server.log"), port, () -> PingPongSide.java(true, withHost(a)), 1024);
    }

    @Test
    void udCClientJavaServer() throws Exception {
        int port = PORTS.getAndIncrement();
        List<String> a = args(port, "-c", "-e", "-s", "512");
        pair(PingPongSide.java(true, a), port, () -> c("ibv_ud_pingpong", withHost(a), "c-client.log"), 512);
    }

    @Test
    void chkDetectsDataTheClientDidNotMark() throws Exception {
        // a C client without -c leaves 0x7b at the page starts: the Java server with -c must say so and exit 1
        int port = PORTS.getAndIncrement();
        PingPongSide server = PingPongSide.java(false, args(port, "-c", "-s", "8192"));
        PingPongSide.awaitListening(port, TIMEOUT);
        PingPongSide client = c("ibv_rc_pingpong", withHost(args(port, "-s", "8192")), "c-client.log");
        assertThat(client.await(TIMEOUT)).isZero();
        assertThat(server.await(TIMEOUT)).as(server.output()).isEqualTo(1);
        assertThat(server.output()).contains("invalid data in page 0\ninvalid data in page 1\n");
    }

    @Test
    void launcherAgainstC(@TempDir Path logs) throws Exception {
        Path launcher = repo().resolve("tools/bin/ud_pingpong");
        assertThat(Files.isExecutable(launcher)).as(launcher.toString()).isTrue();
        int port = PORTS.getAndIncrement();
        List<String> a = args(port, "-c");
        PingPongSide server = c("ibv_ud_pingpong", a, "c-server.log");
        List<String> cmd = new ArrayList<>();
        cmd.add(launcher.toString());
        cmd.addAll(withHost(a));
        pair(server, port, () -> PingPongSide.process(cmd, logs.resolve("launcher.log")), 1024);
    }

    @Test
    void clientAgainstGarbageServerExits1() throws Exception {
        try (ServerSocket garbage = new ServerSocket(0)) {
            Thread t = Thread.ofVirtual().start(() -> {
                try (Socket s = garbage.accept()) {
                    s.getOutputStream().write("HTTP/1.1 200 OK\r\nServer: not a pingpong at all\r\n\r\n!!!!!!!!!!"
                            .getBytes(StandardCharsets.US_ASCII));
                    s.getInputStream().readNBytes(52);
                } catch (IOException e) {
                    // the client gave up first
                }
            });
            PingPongSide client = PingPongSide.java(false, withHost(args(garbage.getLocalPort())));
            assertThat(client.await(TIMEOUT)).isEqualTo(1);
            assertThat(client.output()).contains("rc_pingpong: malformed address message from the peer");
            t.join();
        }
    }

    @Test
    void serverAgainstClientThatHangsUpExits1() throws Exception {
        int port = PORTS.getAndIncrement();
        PingPongSide server = PingPongSide.java(true, args(port));
        PingPongSide.awaitListening(port, TIMEOUT);
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.getOutputStream().write("0001:00".getBytes(StandardCharsets.US_ASCII));
        }
        assertThat(server.await(TIMEOUT)).isEqualTo(1);
        assertThat(server.output()).contains("ud_pingpong: the peer closed the connection after 7 of 52 bytes");
    }

    /** A peer that stops after 3 of the 50 iterations: this side gives up, never hangs. */
    private PingPongSide serverOutlivesItsPeer(boolean ud, boolean cClient, int peerTimeout, String... more)
            throws Exception {
        int port = PORTS.getAndIncrement();
        List<String> server = new ArrayList<>(List.of("-d", device, "-g", gidIndex, "-s", "1024", "-n", "50", "-p",
                Integer.toString(port), "--peer-timeout", Integer.toString(peerTimeout)));
        server.addAll(List.of(more));
        List<String> client = new ArrayList<>(List.of("-d", device, "-g", gidIndex, "-s", "1024", "-n", "3", "-p",
                Integer.toString(port), "127.0.0.1"));
        PingPongSide s = PingPongSide.java(ud, server);
        PingPongSide.awaitListening(port, TIMEOUT);
        PingPongSide c = cClient ? c(ud ? "ibv_ud_pingpong" : "ibv_rc_pingpong", client, "c-client.log")
                : PingPongSide.java(ud, client);
        c.assertCompleted(1024, 3, TIMEOUT);
        assertThat(s.await(TIMEOUT)).as(s.output()).isEqualTo(1);
        return s;
    }

    @Test
    void rcServerGivesUpOnACPeerThatRunsFewerIterations() throws Exception {
        // a C client closes the exchange connection at once: nothing to watch, so --peer-timeout ends the run
        PingPongSide s = serverOutlivesItsPeer(false, true, 5);
        assertThat(s.output()).contains("rc_pingpong: no completion for 5 s after 3 of 50 receives and 3 of 50 sends:"
                + " the peer stopped");
    }

    @Test
    void udServerWithEventsNoticesItsJavaPeerEndAfterFewerIterations() throws Exception {
        // two panverbs sides keep the exchange connection: its close ends the run long before --peer-timeout
        PingPongSide s = serverOutlivesItsPeer(true, false, 200, "-e");
        assertThat(s.output()).contains("ud_pingpong: the peer closed the exchange connection and nothing arrived"
                + " for 2 s after: it exited or was killed (see its output); this side had 3 of 50 receives and 3 of"
                + " 50 sends");
    }

    /**
     * The launcher as client, SIGKILLed during a long run; the Java server must end long before its 200 s
     * --peer-timeout (the assertion's 120 s bound covers TCG) with one line saying why. C's server waits forever.
     */
    private void serverEndsSoonAfterItsJavaClientIsKilled(boolean ud, String tool, Path logs) throws Exception {
        int port = PORTS.getAndIncrement();
        List<String> a = List.of("-d", device, "-g", gidIndex, "-s", "64", "-n", "100000000", "-p",
                Integer.toString(port));
        List<String> server = new ArrayList<>(a);
        server.addAll(List.of("--peer-timeout", "200"));
        PingPongSide s = PingPongSide.java(ud, server);
        PingPongSide.awaitListening(port, TIMEOUT);
        List<String> cmd = new ArrayList<>();
        cmd.add(repo().resolve("tools/bin/" + tool).toString());
        cmd.addAll(withHost(a));
        PingPongSide client = PingPongSide.process(cmd, logs.resolve("client.log"));
        client.awaitOutput("remote address", Duration.ofSeconds(120));
        Thread.sleep(2000); // inside the run
        client.kill();
        int status = s.await(Duration.ofSeconds(120));
        String text = s.output();
        assertThat(status).as(text).isEqualTo(1);
        assertThat(text).doesNotContain("no completion for").doesNotContain("\tat ").doesNotContain("Exception");
        // RC: the server's send may have been in flight, then the QP's retries end first (as in C)
        assertThat(text).containsAnyOf(tool + ": the peer closed the exchange connection and nothing arrived",
                ud ? "the peer closed the exchange connection" : "Failed status transport retry counter exceeded");
    }

    @Test
    void rcServerEndsSoonAfterItsJavaClientIsKilled(@TempDir Path logs) throws Exception {
        serverEndsSoonAfterItsJavaClientIsKilled(false, "rc_pingpong", logs);
    }

    @Test
    void udServerEndsSoonAfterItsJavaClientIsKilled(@TempDir Path logs) throws Exception {
        serverEndsSoonAfterItsJavaClientIsKilled(true, "ud_pingpong", logs);
    }

    @Test
    void roceWithoutGidIndexIsRefusedWithAHint() throws Exception {
        try (Context ctx = Device.open(device)) {
            RdmaTestDevice.assumeCapability(ctx.queryPort(1).grhRequired(), "a port that requires a GRH (RoCE)");
        }
        int port = PORTS.getAndIncrement();
        List<String> a = List.of("-d", device, "-n", "1", "-p", Integer.toString(port));
        PingPongSide server = PingPongSide.java(false, a);
        PingPongSide.awaitListening(port, TIMEOUT);
        PingPongSide client = PingPongSide.java(false, withHost(a));
        assertThat(server.await(TIMEOUT)).isEqualTo(1);
        assertThat(client.await(TIMEOUT)).isEqualTo(1);
        assertThat(server.output()).contains("needs a GRH, but the peer sent no GID: run both sides with -g");
    }

    static Path repo() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("tools/bin"))) {
            p = p.getParent();
        }
        assertThat(p).as("repository root above " + Path.of("").toAbsolutePath()).isNotNull();
        return p;
    }
}
