package dev.panverbs.tools.cm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.testing.TwoHostsRole;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
        TwoHostsRole host = TwoHostsRole.fromEnvironment();
        int n = 0;
        for (Scenario s : SCENARIOS) {
            boolean java = host.server() == s.javaServer();
            int scenario = n++;
            if (host.server()) {
                List<String> args = withOptions("-b", host.addr());
                String out = RpingIT.exitedZero(s.name(), java ? UdaddyIT.java(args)
                        : UdaddyIT.c(args, dir.resolve(scenario + "-server.log")));
                assertThat(out.lines().toList()).as(s.name()).containsSubsequence(UdaddyIT.SERVER_LINES);
            } else {
                List<String> args = withOptions("-s", host.peer());
                // while the server guest is not listening yet, the SIDR request ends in UNREACHABLE or REJECTED
                String out = RpingIT.untilListening(s.name(), attempt -> java ? UdaddyIT.java(args)
                                : UdaddyIT.c(args, dir.resolve(scenario + "-client-" + attempt + ".log")),
                        o -> o.contains("RDMA_CM_EVENT_UNREACHABLE") || o.contains("RDMA_CM_EVENT_REJECTED"))
                        .output().call();
                assertThat(out.lines().toList()).as(s.name()).containsSubsequence(UdaddyIT.CLIENT_LINES);
                Thread.sleep(3000); // the previous server leaves its listener before the next scenario's request
            }
        }
    }

    private static List<String> withOptions(String flag, String host) {
        List<String> args = new ArrayList<>(OPTIONS);
        args.addAll(List.of(flag, host));
        return args;
    }
}
