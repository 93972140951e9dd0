package dev.panverbs.tools.cm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.testing.TwoHostsRole;
import java.nio.file.Path;
import java.util.List;
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
        TwoHostsRole host = TwoHostsRole.fromEnvironment();
        for (Scenario s : SCENARIOS) {
            boolean java = host.server() == s.javaServer();
            if (host.server()) {
                List<String> args = RpingIT.server(host.addr(), s.port());
                String out = RpingIT.exitedZero(s.name(), java ? RpingIT.java(args)
                        : RpingIT.c(args, dir.resolve(s.port() + "-server.log")));
                assertThat(out.lines().filter(l -> l.startsWith("server ping data: ")).toList()).as(s.name())
                        .containsExactlyElementsOf(RpingIT.expected("server ping data: "));
            } else {
                List<String> args = RpingIT.client(host.peer(), s.port());
                // the peer's CM rejects while the server guest is not listening yet
                String out = RpingIT.untilListening(s.name(), attempt -> java ? RpingIT.java(args)
                                : RpingIT.c(args, dir.resolve(s.port() + "-client-" + attempt + ".log")),
                        o -> o.contains("REJECTED") || o.contains("nothing listens")).output().call();
                assertThat(out.lines().filter(l -> l.startsWith("ping data: ")).toList()).as(s.name())
                        .containsExactlyElementsOf(RpingIT.expected("ping data: "));
                assertThat(out).doesNotContain("data mismatch");
            }
        }
    }
}
