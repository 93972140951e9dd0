package dev.panverbs.tools.cm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * rping across the bed's two guests (testbed/run --two), over a real wire: guest A ({@code PANVERBS_ROLE=server})
 * runs the servers, guest B the clients, scenario by scenario on distinct ports: rdma-core's server with the Java
 * client, and the Java server with rdma-core's client, {@code -V -v} with the data lines checked on both sides.
 */
class RpingTwoHostsIT {

    private record Scenario(String name, boolean javaServer, int port) {}

    private static final List<Scenario> SCENARIOS = List.of(
            new Scenario("C server, Java client", false, 7401),
            new Scenario("Java server, C client", true, 7402));

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
        for (Scenario s : SCENARIOS) {
            boolean java = server == s.javaServer();
            if (server) {
                List<String> args = RpingIT.server(addr, s.port());
                RpingIT.Side side = java ? RpingIT.java(args) : RpingIT.c(args, dir.resolve(s.port() + "-server.log"));
                int status = side.await();
                String out = side.output().call();
                assertThat(status).as("%s: %s; output:%n%s", s.name(), side.name(), out).isZero();
                assertThat(out.lines().filter(l -> l.startsWith("server ping data: ")).toList()).as(s.name())
                        .containsExactlyElementsOf(RpingIT.expected("server ping data: "));
            } else {
                RpingIT.Side side = client(s, java, peer);
                String out = side.output().call();
                assertThat(out.lines().filter(l -> l.startsWith("ping data: ")).toList()).as(s.name())
                        .containsExactlyElementsOf(RpingIT.expected("ping data: "));
                assertThat(out).doesNotContain("data mismatch");
            }
        }
    }

    /** Starts the client, again while the server guest is not listening yet (the peer's CM rejects: no listener). */
    private RpingIT.Side client(Scenario s, boolean java, String peer) throws Exception {
        long deadline = System.nanoTime() + 600_000_000_000L;
        int attempt = 0;
        while (true) {
            List<String> args = RpingIT.client(peer, s.port());
            RpingIT.Side side = java ? RpingIT.java(args)
                    : RpingIT.c(args, dir.resolve(s.port() + "-client-" + attempt++ + ".log"));
            int status = side.await();
            String out = side.output().call();
            boolean noListener = out.contains("REJECTED") || out.contains("nothing listens");
            if (status == 0 || !noListener || System.nanoTime() > deadline) {
                assertThat(status).as("%s: %s; output:%n%s", s.name(), side.name(), out).isZero();
                return side;
            }
            Thread.sleep(2000);
        }
    }
}
