package dev.panverbs.tools.perftest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code -c XRC} and {@code -c DC} on rxe against C perftest 6.06 itself: rxe has neither transport, so the C tools
 * connect, exchange versions, sys data and MTU, then fail in {@code ctx_init} ("Error opening XRC domain", "Unable to
 * create QP."), exit 1. Each case runs a C server with a C client for the reference, then a panverbs server with a C
 * client and a C server with a panverbs client: every panverbs side must exit 1 with the same stdout as the C tool in
 * its role and C's stderr followed by one line naming the capability, and its C peer must end as it does against C.
 * On a device that has the transport (the hardware lane) C perftest runs; there a panverbs side must refuse up front
 * (no XRC/DC test path yet), and the comparison is skipped with that reason.
 */
class XrcDcRefusalIT {

    record Case(PerftestTest test, String connection) {
        @Override
        public String toString() {
            return test.programName() + " -c " + connection;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(new Case(PerftestTest.SEND_BW, "XRC"), new Case(PerftestTest.WRITE_BW, "DC"),
                new Case(PerftestTest.READ_LAT, "DC"), new Case(PerftestTest.READ_LAT, "XRC"));
    }

    private static List<String> args(Case c, int port) {
        return List.of("-c", c.connection(), "-d", ItSupport.device(), "-p", Integer.toString(port), "-F");
    }

    private static List<String> cCommand(Case c, int port) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ItSupport.cTool(c.test().programName()));
        cmd.addAll(args(c, port));
        return cmd;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void refusesAsCPerftestDoes(Case c, @TempDir Path dir) throws Exception {
        int port = ItSupport.port();
        boolean capable;
        try (VerbsEngine.Device d = new CoreEngine().open(ItSupport.device())) {
            capable = c.connection().equals("XRC") ? d.supportsXrc() : d.isMlx5();
        }
        if (capable) {
            ItSupport.Side up = ItSupport.javaSide(c.test(), ItSupport.concat(args(c, port), "--jit_warmup=0"),
                    CoreEngine::new).get(120, TimeUnit.SECONDS);
            assertThat(up.rc()).as(up.describe("panverbs server")).isEqualTo(1);
            assertThat(up.err()).contains("-c " + c.connection() + " is not supported by panverbs' perftest yet");
            Assumptions.abort(ItSupport.device() + " has " + c.connection() + ": C perftest runs it there, panverbs' "
                    + "perftest refuses it up front (asserted); no XRC/DC test path yet");
        }
        ItSupport.CProcess cs = new ItSupport.CProcess(cCommand(c, port), dir, "c-server");
        cs.awaitStart();
        ItSupport.Side cClient = ItSupport.cClient(ItSupport.concat(cCommand(c, port), "127.0.0.1"), dir, "c-client",
                120);
        ItSupport.Side cServer = cs.await(120);
        assertThat(cServer.rc()).as(cServer.describe("C server")).isEqualTo(1);
        assertThat(cClient.rc()).as(cClient.describe("C client")).isEqualTo(1);
        String cause = c.connection().equals("XRC") ? "IBV_DEVICE_XRC" : "is not an mlx5 device";

        port = ItSupport.port();
        List<String> java = ItSupport.concat(args(c, port), "--jit_warmup=0");
        CompletableFuture<ItSupport.Side> js = ItSupport.javaSide(c.test(), java, CoreEngine::new);
        ItSupport.Side peerClient = ItSupport.cClient(ItSupport.concat(cCommand(c, port), "127.0.0.1"), dir,
                "client-of-java", 120);
        ItSupport.Side javaServer = js.get(120, TimeUnit.SECONDS);
        sameAsC(javaServer, cServer, cause, "panverbs server");
        assertThat(peerClient.rc()).as(peerClient.describe("C client of panverbs")).isEqualTo(1);
        assertThat(peerClient.err()).isEqualTo(cClient.err());

        port = ItSupport.port();
        ItSupport.CProcess ps = new ItSupport.CProcess(cCommand(c, port), dir, "server-of-java");
        ps.awaitStart();
        ItSupport.Side javaClient = ItSupport.javaClient(c.test(),
                ItSupport.concat(ItSupport.concat(args(c, port), "--jit_warmup=0"), "127.0.0.1"), 120);
        ItSupport.Side peerServer = ps.await(120);
        sameAsC(javaClient, cClient, cause, "panverbs client");
        assertThat(peerServer.rc()).as(peerServer.describe("C server of panverbs")).isEqualTo(1);
        assertThat(peerServer.err()).isEqualTo(cServer.err());
    }

    private static void sameAsC(ItSupport.Side java, ItSupport.Side c, String cause, String who) {
        String both = java.describe(who) + "\n" + c.describe("C in that role");
        assertThat(java.rc()).as(both).isEqualTo(1);
        assertThat(java.out()).as(both).isEqualTo(c.out());
        assertThat(java.err()).as(both).startsWith(c.err());
        String extra = java.err().substring(c.err().length());
        assertThat(extra).as(both).startsWith(" (").contains(cause).endsWith(")\n").doesNotContain("\n (");
    }
}
