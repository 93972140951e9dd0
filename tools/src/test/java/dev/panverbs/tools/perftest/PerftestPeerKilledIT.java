package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A C perftest client killed (SIGKILL) once its run has begun, with a panverbs server waiting on it: the server
 * ends with status 1, "The peer closed the exchange connection during the test", no stack trace, long before its
 * --timeout (120 s here, so the stall message would be another one). perftest in the same seat waits 120 s (BW
 * receiver) or forever (latency).
 */
class PerftestPeerKilledIT {
    static String device;

    @BeforeAll
    static void device() {
        device = ItSupport.device();
    }

    record Case(PerftestTest test, List<String> options) {
        @Override
        public String toString() {
            return test.programName() + " " + String.join(" ", options) + " | C client killed";
        }
    }

    static Stream<Case> cases() {
        return Stream.of(new Case(PerftestTest.SEND_BW, List.of("-D", "30")),
                new Case(PerftestTest.WRITE_LAT, List.of("-D", "30")),
                new Case(PerftestTest.SEND_BW, List.of("-D", "30", "-R")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void serverEndsSoonAfterItsClientIsKilled(Case c, @TempDir Path dir) throws Exception {
        boolean cm = c.options().contains("-R");
        String host = cm ? System.getenv("PANVERBS_ADDR") : "127.0.0.1";
        assumeTrue(host != null, "rdma_cm needs PANVERBS_ADDR (testbed/test sets it)");
        int port = ItSupport.port();
        List<String> common = ItSupport.concat(c.options(), "-d", device, "-p", Integer.toString(port), "-F");
        CompletableFuture<ItSupport.Side> server = ItSupport.javaSide(c.test(),
                ItSupport.concat(common, "--jit_warmup=0", "--timeout=120"), CoreEngine::new);
        List<String> clientCommand = ItSupport.concat(List.of(ItSupport.cTool(c.test().programName())),
                ItSupport.concat(common, host).toArray(String[]::new));
        ItSupport.CProcess client = startedRun(clientCommand, dir);
        Thread.sleep(3000); // inside the measured run
        client.process.destroyForcibly().waitFor();
        ItSupport.Side s = server.get(100, TimeUnit.SECONDS);
        String both = s.describe("panverbs server") + "\n--- C client (killed)\n" + Files.readString(client.out)
                + Files.readString(client.err);
        // perftest's main when run_iter fails: write_lat returns 1 ("Test exited with Error"), send_bw 17
        assertThat(s.rc()).as(both).isEqualTo(c.test() == PerftestTest.WRITE_LAT ? 1 : RunFailure.RUN_ITER_FAILED);
        assertThat(s.err()).as(both).contains("The peer closed the exchange connection during the test")
                .doesNotContain("\tat ").doesNotContain("Exception");
    }

    /** Starts the C client (again while the server is not listening yet) and waits for its results header. */
    private static ItSupport.CProcess startedRun(List<String> command, Path dir) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(200);
        for (int attempt = 0; ; attempt++) {
            ItSupport.CProcess p = new ItSupport.CProcess(command, dir, "client" + attempt);
            while (System.nanoTime() < deadline) {
                if (Files.readString(p.out).contains("#bytes")) {
                    return p;
                }
                if (p.process.waitFor(200, TimeUnit.MILLISECONDS)) {
                    break; // ended before its run: the server was not listening yet
                }
            }
            assertThat(System.nanoTime()).as("the C client never began its run:\n" + Files.readString(p.out)
                    + Files.readString(p.err)).isLessThan(deadline);
            Thread.sleep(300);
        }
    }
}
