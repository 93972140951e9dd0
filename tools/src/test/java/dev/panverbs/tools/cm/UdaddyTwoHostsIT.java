package dev.panverbs.tools.cm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * udaddy across the bed's two guests (testbed/run --two), over a real wire: guest A ({@code PANVERBS_ROLE=server})
 * runs the servers, guest B the clients, one scenario after the other on udaddy's fixed port 7174: rdma-core's
 * server with the Java client, then the Java server with rdma-core's client, two connections each. Both sides must
 * print all of udaddy's steps and exit 0.
 */
class UdaddyTwoHostsIT {

    private record Scenario(String name, boolean javaServer) {}

    private static final List<Scenario> SCENARIOS = List.of(
            new Scenario("C server, Java client", false),
            new Scenario("Java server, C client", true));
    private static final List<String> OPTIONS = List.of("-c", "2", "-C", "5", "-S", "256");

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 20, unit = java.util.concurrent.TimeUnit.MINUTES)
    void javaAndCAcrossTwoHosts() throws Exception {
        String role = System.getenv("PANVERBS_ROLE");
        String peer = System.getenv("PANVERBS_PEER");
        String addr = System.getenv("PANVERBS_ADDR");
        Assumptions.assumeTrue(role != null && peer != null && addr != null,
                "two-hosts IT without PANVERBS_ROLE/PANVERBS_PEER/PANVERBS_ADDR: run it with testbed/test");
        boolean server = role.equals("server");
        int n = 0;
        for (Scenario s : SCENARIOS) {
            boolean java = server == s.javaServer();
            if (server) {
                List<String> args = new ArrayList<>(OPTIONS);
                args.addAll(List.of("-b", addr));
                RpingIT.Side side = java ? UdaddyIT.java(args) : UdaddyIT.c(args, dir.resolve(n++ + "-server.log"));
                int status = side.await();
                String out = side.output().call();
                assertThat(status).as("%s: %s; output:%n%s", s.name(), side.name(), out).isZero();
                assertThat(out.lines().toList()).as(s.name()).containsSubsequence(UdaddyIT.SERVER_LINES);
            } else {
                String out = client(s, java, peer, n++).output().call();
                assertThat(out.lines().toList()).as(s.name()).containsSubsequence(UdaddyIT.CLIENT_LINES);
                Thread.sleep(3000); // the previous server leaves its listener before the next scenario's request
            }
        }
    }

    /**
     * Starts the client, again while the server guest is not listening yet: its SIDR request then ends in the CM's
     * UNREACHABLE or REJECTED event.
     */
    private RpingIT.Side client(Scenario s, boolean java, String peer, int n) throws Exception {
        long deadline = System.nanoTime() + 600_000_000_000L;
        int attempt = 0;
        while (true) {
            List<String> args = new ArrayList<>(OPTIONS);
            args.addAll(List.of("-s", peer));
            RpingIT.Side side = java ? UdaddyIT.java(args)
                    : UdaddyIT.c(args, dir.resolve(n + "-client-" + attempt++ + ".log"));
            int status = side.await();
            String out = side.output().call();
            boolean noListener = out.contains("RDMA_CM_EVENT_UNREACHABLE") || out.contains("RDMA_CM_EVENT_REJECTED");
            if (status == 0 || !noListener || System.nanoTime() > deadline) {
                assertThat(status).as("%s: %s; output:%n%s", s.name(), side.name(), out).isZero();
                return side;
            }
            Thread.sleep(2000);
        }
    }
}
