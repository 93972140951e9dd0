package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * -R against peers that are absent or do not play along, on rxe: each ends with exit status 1 and an error that
 * names rdma_cm and the cause, well within the bound the test waits (a hang fails the test by its timeout).
 */
class PerftestRdmaCmPeerIT {
    private static String device;
    private static String addr;

    @TempDir
    Path dir;

    @BeforeAll
    static void setUp() {
        device = ItSupport.device();
        addr = System.getenv("PANVERBS_ADDR");
        assumeTrue(addr != null, "rdma_cm ITs need PANVERBS_ADDR (testbed/test sets it)");
    }

    private static List<String> args(String... more) {
        return ItSupport.concat(List.of("-d", device, "-p", Integer.toString(ItSupport.port()), "-F", "--timeout",
                "15"), more);
    }

    /** Nothing listens on the port: the connect request is rejected (no listener) and the client says so. */
    @Test
    void clientWithoutServer() throws Exception {
        ItSupport.Side c = ItSupport.javaSide(PerftestTest.WRITE_BW, args("-R", addr), CoreEngine::new)
                .get(60, TimeUnit.SECONDS);
        assertThat(c.rc()).as(c.describe("client")).isEqualTo(1);
        assertThat(c.err()).as(c.describe("client")).contains("Couldn't connect to " + addr)
                .contains("through rdma_cm").contains("no rdma_cm listener on port");
    }

    /**
     * A C server with one QP and a panverbs client with two: the server accepts one connection and stops
     * listening, so the second is refused; the client retries as perftest does and gives up with the reason. (The C
     * server then spins forever on its exchange channel, a perftest bug: the test kills it.)
     */
    @Test
    void serverRefusesTheSecondQp() throws Exception {
        List<String> common = args("-R", "-s", "4096", "-n", "100");
        int port = Integer.parseInt(common.get(3));
        ItSupport.CProcess server = new ItSupport.CProcess(ItSupport.concat(List.of(
                ItSupport.cTool("ib_write_bw")), common.stream().filter(a -> !a.equals("--timeout")
                && !a.equals("15")).toArray(String[]::new)), dir, "server");
        try {
            server.awaitStart();
            // retried while the C server does not listen yet ("Couldn't connect"); the refusal of the second QP
            // is another message
            ItSupport.Side c = ItSupport.javaClient(PerftestTest.WRITE_BW, ItSupport.concat(common, "-q", "2", addr),
                    120);
            assertThat(c.rc()).as(c.describe("client")).isEqualTo(1);
            assertThat(c.err()).as(c.describe("client")).containsAnyOf("Failed to connect RDMA CM client",
                    "Failed to create RDMA CM connection");
            assertThat(port).isPositive();
        } finally {
            server.process.destroyForcibly().waitFor();
        }
    }

    /** A panverbs server waiting for two connections from a C client that makes one gives up after --timeout. */
    @Test
    void serverMissingAConnection() throws Exception {
        List<String> common = args("-R", "-s", "4096", "-n", "100");
        CompletableFuture<ItSupport.Side> s = ItSupport.javaSide(PerftestTest.WRITE_BW,
                ItSupport.concat(common, "-q", "2"), CoreEngine::new);
        ItSupport.CProcess client = new ItSupport.CProcess(ItSupport.concat(List.of(ItSupport.cTool("ib_write_bw")),
                ItSupport.concat(common.stream().filter(a -> !a.equals("--timeout") && !a.equals("15")).toList(),
                        addr).toArray(String[]::new)), dir, "client");
        try {
            ItSupport.Side server = s.get(120, TimeUnit.SECONDS);
            assertThat(server.rc()).as(server.describe("server")).isEqualTo(1);
            assertThat(server.err()).as(server.describe("server")).contains("RDMA CM")
                    .contains("CONNECT_REQUEST");
        } finally {
            client.process.destroyForcibly().waitFor();
        }
    }
}
