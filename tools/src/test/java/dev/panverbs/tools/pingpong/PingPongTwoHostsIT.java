package dev.panverbs.tools.pingpong;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.core.Context;
import dev.panverbs.core.Device;
import dev.panverbs.testing.RdmaTestDevice;
import dev.panverbs.testing.TwoHostsRole;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Java and C ping-pong across the bed's two guests (testbed/run --two), over a real wire: guest A
 * ({@code PANVERBS_ROLE=server}) runs the servers, guest B the clients, scenario by scenario on distinct TCP
 * ports. RC and UD, Java client with C server and C client with Java server, {@code -c} on both sides. Each
 * side checks its own run and that the peer it printed is the other guest's address.
 */
class PingPongTwoHostsIT {
    private static final Duration SERVER_WAIT = Duration.ofSeconds(900);
    private static final Duration CLIENT_RETRY = Duration.ofSeconds(600);

    private record Scenario(String name, boolean ud, boolean javaServer, int port, List<String> extra) {}

    private static final List<Scenario> SCENARIOS = List.of(
            new Scenario("RC: C server, Java client", false, false, 18701, List.of("-s", "8192")),
            new Scenario("RC: Java server, C client", false, true, 18702, List.of("-s", "8192", "-e")),
            new Scenario("UD: C server, Java client", true, false, 18703, List.of()),
            new Scenario("UD: Java server, C client", true, true, 18704, List.of("-e")));

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 20, unit = java.util.concurrent.TimeUnit.MINUTES) // four runs, each waiting for the other guest
    void javaAndCAcrossTwoHosts() throws Exception {
        TwoHostsRole host = TwoHostsRole.fromEnvironment();
        String device = RdmaTestDevice.name();
        String gid;
        try (Context ctx = Device.open(device)) {
            gid = Integer.toString(ctx.roceV2GidIndex(1, InetAddress.getByName(host.addr())));
        }
        boolean server = host.server();
        String peer = host.peer();
        for (Scenario s : SCENARIOS) {
            List<String> args = new ArrayList<>(List.of("-d", device, "-g", gid, "-n", "100", "-c", "-p",
                    Integer.toString(s.port())));
            args.addAll(s.extra());
            int size = s.extra().contains("8192") ? 8192 : s.ud() ? 1024 : 4096;
            boolean java = server == s.javaServer();
            PingPongSide side = server ? start(s, java, args, "server") : client(s, java, args, peer);
            side.assertCompleted(size, 100, SERVER_WAIT);
            assertThat(side.addresses().get(1).gid()).as("%s: %s's peer", s.name(), host.role())
                    .isEqualTo(ipv4Mapped(InetAddress.getByName(peer)));
        }
    }

    private PingPongSide start(Scenario s, boolean java, List<String> args, String what) throws Exception {
        if (java) {
            return PingPongSide.java(s.ud(), args);
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(s.ud() ? "ibv_ud_pingpong" : "ibv_rc_pingpong");
        cmd.addAll(args);
        return PingPongSide.process(cmd, dir.resolve(s.port() + "-" + what + ".log"));
    }

    /** Starts the client, again while the server guest is not listening yet ("Couldn't connect"). */
    private PingPongSide client(Scenario s, boolean java, List<String> args, String peer) throws Exception {
        List<String> a = new ArrayList<>(args);
        a.add(peer);
        long deadline = System.nanoTime() + CLIENT_RETRY.toNanos();
        while (true) {
            PingPongSide side = start(s, java, a, "client");
            int status = side.await(SERVER_WAIT);
            if (status == 0 || !side.output().contains("Couldn't connect") || System.nanoTime() > deadline) {
                return side;
            }
            Thread.sleep(2000);
        }
    }

    private static byte[] ipv4Mapped(InetAddress v4) {
        byte[] g = new byte[16];
        g[10] = (byte) 0xff;
        g[11] = (byte) 0xff;
        System.arraycopy(v4.getAddress(), 0, g, 12, 4);
        return g;
    }
}
