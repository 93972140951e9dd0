package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.RepetitionInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Peers that send garbage, close early, stall, send too much or too little, or run another test: every time the
 * tool exits with status 1 (17 where perftest's send_bw/send_lat receiver returns it: its run_iter failed) within a
 * bounded time (--timeout=1 here), says what went wrong at which exchange step,
 * and prints no stack trace.
 */
@Timeout(60)
class MisbehavingPeerTest {
    static final List<String> FAST = List.of("-n", "20", "--timeout=1");

    static void assertCleanFailure(FakePeer.Outcome o, String... expected) {
        assertCleanFailure(o, 1, expected);
    }

    /** As {@link #assertCleanFailure(FakePeer.Outcome, String...)} with perftest's exit {@code status}. */
    static void assertCleanFailure(FakePeer.Outcome o, int status, String... expected) {
        assertThat(o.rc()).as("exit status; stderr:\n" + o.err()).isEqualTo(status);
        assertThat(o.millis()).as("bounded by the timeout").isLessThan(15_000);
        assertThat(o.err()).as("no stack trace").doesNotContain("\tat ").doesNotContain("Exception");
        for (String e : expected) {
            assertThat(o.err()).contains(e);
        }
    }

    @Test
    void garbageVersion() throws Exception {
        FakePeer.Outcome o = FakePeer.clientAgainst(PerftestTest.WRITE_BW, FAST,
                p -> p.exchange(16, "GET / HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII)));
        assertCleanFailure(o, "Current implementation is not compatible with versions older than 5.70",
                "\"GET / HTTP/1.1\\x0d\\x0a\"", "not a perftest version");
    }

    @Test
    void tooOldVersion() throws Exception {
        FakePeer.Outcome o = FakePeer.clientAgainst(PerftestTest.WRITE_BW, FAST,
                p -> p.exchange(16, FakePeer.version("5.60")));
        assertCleanFailure(o, "not compatible with versions older than 5.70 (the peer sent \"5.60\\0");
        assertThat(o.err()).doesNotContain("not a perftest version");
    }

    @Test
    void closesRightAway() throws Exception {
        FakePeer.Outcome o = FakePeer.clientAgainst(PerftestTest.WRITE_BW, FAST, p -> p.socket.close());
        assertCleanFailure(o, "version exchange");
    }

    @Test
    void stallsAtTheVersion() throws Exception {
        FakePeer.Outcome o = FakePeer.clientAgainst(PerftestTest.READ_BW, FAST, p -> {
            p.read(16);
            sleep(3000);
        });
        assertCleanFailure(o, "the peer sent nothing for 1 s during the version exchange (nothing received of 16 bytes)");
        assertThat(o.millis()).isLessThan(2900);
    }

    @Test
    void dribblesSlowerThanTheDeadline() throws Exception {
        FakePeer.Outcome o = FakePeer.clientAgainst(PerftestTest.WRITE_BW, FAST, p -> {
            p.read(16);
            for (byte b : FakePeer.version("6.06")) {
                p.write(new byte[] {b});
                sleep(300); // each byte within the read timeout, the message not within the deadline
            }
        });
        assertCleanFailure(o, "during the version exchange (received");
    }

    @Test
    void truncatedKeyMessageThenClose() throws Exception {
        FakePeer.Outcome o = FakePeer.clientAgainst(PerftestTest.WRITE_BW, FAST, FakePeer.PREAMBLE, p -> {
            p.read(108);
            p.write(Arrays.copyOf(FakePeer.key(1, 2, 3), 50));
            p.socket.close();
        });
        assertCleanFailure(o, "the peer closed the connection during the QP 0 address exchange (received 50 of 108 bytes: "
                + "\"0000:0001:000001:123456:00000002:0000000000000003:\")");
    }

    @Test
    void shortFormKeyWhenAGidIsExpected() throws Exception {
        byte[] shortKey = new KeyMessage(1, 1, 0x10, 0x20, 0x30, 0x40, null, 0).encode();
        FakePeer.Outcome o = FakePeer.clientAgainst(PerftestTest.WRITE_BW, FAST, FakePeer.PREAMBLE, p -> {
            p.read(108);
            p.write(shortKey);
            sleep(3000);
        });
        assertCleanFailure(o, "without a GID (59 bytes) and this side expects them with one (108 bytes)");
    }

    @Test
    void randomBytesAsKeyMessage() throws Exception {
        byte[] junk = new byte[108];
        new Random(1).nextBytes(junk);
        FakePeer.Outcome o = FakePeer.clientAgainst(PerftestTest.SEND_BW, FAST, FakePeer.PREAMBLE,
                p -> p.exchange(108, junk));
        assertCleanFailure(o, "bad QP 0 address message from the peer: not a perftest key message");
    }

    @Test
    void oversizedKeyMessage() throws Exception {
        byte[] big = new byte[300];
        System.arraycopy(FakePeer.key(1, 2, 3), 0, big, 0, 108);
        Arrays.fill(big, 108, 300, (byte) 'Z');
        FakePeer.Outcome o = FakePeer.clientAgainst(PerftestTest.WRITE_BW, FAST, FakePeer.PREAMBLE,
                p -> p.exchange(108, big), p -> sleep(3000));
        assertCleanFailure(o, "QP 0 address (second round)", "not a perftest key message");
    }

    @Test
    void garbageMtuAndSystemData() throws Exception {
        FakePeer.Outcome mtu = FakePeer.clientAgainst(PerftestTest.WRITE_BW, FAST, p -> {
            p.exchange(16, FakePeer.version("6.06"));
            p.exchange(4, FakePeer.int32(4096));
            p.exchange(4, FakePeer.int32(64));
            p.exchange(2, new byte[] {'9', 'x'});
        });
        assertCleanFailure(mtu, "the peer sent MTU \"9x\"");
        FakePeer.Outcome page = FakePeer.clientAgainst(PerftestTest.WRITE_BW, FAST, p -> {
            p.exchange(16, FakePeer.version("6.06"));
            p.exchange(4, FakePeer.int32(12345));
            p.exchange(4, FakePeer.int32(64));
        });
        assertCleanFailure(page, "the peer sent page size 12345");
    }

    @Test
    void peerRunsTheLatencyTestInsteadOfBandwidth() throws Exception {
        // an ib_write_lat server: after the sync it ping-pongs and never sends the BW report
        try (VerbsEngine.Resources t = WireTranscriptTest.target(PerftestTest.Verb.WRITE)) {
            byte[] key = FakePeer.key(t.qp(0).qpNum(), t.rkey(0), t.buffer(0).address());
            FakePeer.Outcome o = FakePeer.clientAgainst(PerftestTest.WRITE_BW, FAST, FakePeer.PREAMBLE,
                    p -> {
                        for (int i = 0; i < 4; i++) {
                            p.exchange(108, key);
                        }
                    },
                    p -> sleep(3_000));
            // 1 + q + q + 1 key messages of write_lat match q + q + sync + end of write_bw for q=1: the
            // mismatch shows at the report, which a latency server never sends
            assertCleanFailure(o, "the peer sent nothing for 1 s during the report size exchange",
                    "running another test");
        }
    }

    @Test
    void peerFinishedItsOtherTestAndSaidDone() throws Exception {
        FakePeer.Outcome o = FakePeer.clientAgainst(PerftestTest.SEND_BW, FAST, FakePeer.PREAMBLE, p -> {
            p.read(108);
            p.write("done\0".getBytes(StandardCharsets.US_ASCII));
            p.socket.close();
        });
        assertCleanFailure(o, "it sent \"done\"", "different tests or different options");
    }

    @Test
    void serverSideGarbageClient() throws Exception {
        FakePeer.Outcome o = FakePeer.serverAgainst(PerftestTest.WRITE_BW, FAST, p -> {
            p.write("\u0016\u0003\u0001 hello TLS?!!".getBytes(StandardCharsets.ISO_8859_1)); // 16 bytes
            sleep(200);
        });
        assertCleanFailure(o, "not compatible with versions older than 5.70");
    }

    @Test
    void serverSideClientVanishesDuringKeys() throws Exception {
        FakePeer.Outcome o = FakePeer.serverAgainst(PerftestTest.WRITE_LAT, FAST, p -> {
            p.write(FakePeer.version("6.06"));
            p.read(16);
            p.write(FakePeer.int32(4096));
            p.read(4);
            p.write(FakePeer.int32(64));
            p.read(4);
            p.write(new byte[] {'3', 0});
            p.read(2);
            p.write(new byte[40]);
            p.socket.close();
        });
        assertCleanFailure(o, "the peer closed the connection during the first sync exchange (received 40 of 108 bytes");
    }

    /** A client's side of the start of ib_send_bw and ib_send_lat: preamble, then four key exchanges. */
    static final FakePeer.Step CLIENT_UP_TO_THE_RUN = p -> {
        p.write(FakePeer.version("6.06"));
        p.read(16);
        p.write(FakePeer.int32(4096));
        p.read(4);
        p.write(FakePeer.int32(64));
        p.read(4);
        p.write(new byte[] {'3', 0});
        p.read(2);
        for (int i = 0; i < 4; i++) {
            p.write(FakePeer.key(0x99, 0x1234, 0x10000));
            p.read(KeyMessage.SIZE_GID);
        }
    };

    @Test
    void senderKilledWhileTheSendBwServerReceives() throws Exception {
        // the peer's process ends (its socket closes) once the run has begun: the receiver stops waiting a few
        // seconds after, not at its 60 s timeout (perftest waits it out: "Did not get Message for 120 Seconds")
        FakePeer.Outcome o = FakePeer.serverAgainst(PerftestTest.SEND_BW, List.of("-n", "20", "--timeout=60"),
                CLIENT_UP_TO_THE_RUN, p -> p.socket.close());
        assertCleanFailure(o, RunFailure.RUN_ITER_FAILED, "The peer closed the exchange connection during the test", "it exited or was killed",
                "Total Received=0, Total Iters Required=20");
        assertThat(o.err()).doesNotContain("Did not get Message for");
    }

    @Test
    void senderKilledWhileTheSendBwServerWaitsForAnEvent() throws Exception {
        FakePeer.Outcome o = FakePeer.serverAgainst(PerftestTest.SEND_BW, List.of("-e", "-n", "20",
                "--timeout=60"), CLIENT_UP_TO_THE_RUN, p -> p.socket.close());
        assertCleanFailure(o, RunFailure.RUN_ITER_FAILED, "The peer closed the exchange connection during the test",
                "(waiting for a completion event)");
    }

    @Test
    void clientKilledWhileTheSendLatServerWaitsForItsMessage() throws Exception {
        FakePeer.Outcome o = FakePeer.serverAgainst(PerftestTest.SEND_LAT, List.of("-n", "20", "--timeout=60"),
                CLIENT_UP_TO_THE_RUN, p -> p.socket.close());
        assertCleanFailure(o, RunFailure.RUN_ITER_FAILED, "The peer closed the exchange connection during the test", "(received 0 of 20)");
        assertThat(o.err()).doesNotContain("No message from the peer for");
    }

    @Test
    void clientKilledDuringADurationRunCountsWhatArrived() throws Exception {
        FakePeer.Outcome o = FakePeer.serverAgainst(PerftestTest.SEND_LAT, List.of("-D", "5", "--timeout=60"),
                CLIENT_UP_TO_THE_RUN, p -> p.socket.close());
        assertCleanFailure(o, RunFailure.RUN_ITER_FAILED, "The peer closed the exchange connection during the test", "(received 0)");
        assertThat(o.err()).doesNotContain(" of 0");
    }

    @Test
    void peerThatStaysConnectedIsWaitedForUntilTheTimeout() throws Exception {
        // the same stalled receiver with the peer's socket still open: no early end, the timeout's message
        FakePeer.Outcome o = FakePeer.serverAgainst(PerftestTest.SEND_BW, List.of("-n", "20", "--timeout=4"),
                CLIENT_UP_TO_THE_RUN, p -> sleep(7000));
        assertCleanFailure(o, RunFailure.RUN_ITER_FAILED, "Did not get Message for 4 Seconds");
        assertThat(o.err()).doesNotContain("closed the exchange connection");
    }

    @Test
    void portInUse() throws Exception {
        try (ServerSocket busy = new ServerSocket(0)) {
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int rc = PerftestMain.run(PerftestTest.WRITE_BW, "ib_write_bw",
                    List.of("-p", Integer.toString(busy.getLocalPort())), new PrintStream(new ByteArrayOutputStream()),
                    new PrintStream(err), () -> new SimulatedEngine("sim0"));
            assertThat(rc).isEqualTo(1);
            assertThat(err.toString()).startsWith("Couldn't listen to port " + busy.getLocalPort() + "\n")
                    .contains("is another server using TCP port").doesNotContain("\tat ");
        }
    }

    @Test
    void portOutOfRange() {
        for (List<String> args : List.of(List.of("-p", "70000", "127.0.0.1"), List.of("-p", "-5", "127.0.0.1"),
                List.of("-p", "0", "127.0.0.1"), List.of("-p", "70000"))) {
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int rc = PerftestMain.run(PerftestTest.SEND_BW, "ib_send_bw", args,
                    new PrintStream(new ByteArrayOutputStream()), new PrintStream(err),
                    () -> new SimulatedEngine("sim0"));
            assertThat(rc).as(args.toString()).isEqualTo(1);
            assertThat(err.toString()).as(args.toString()).contains("1 to 65535").doesNotContain("start it first")
                    .doesNotContain("\tat ");
        }
    }

    @Test
    void nobodyListening() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = PerftestMain.run(PerftestTest.WRITE_BW, "ib_write_bw", List.of("-p", Integer.toString(port),
                "127.0.0.1"), new PrintStream(new ByteArrayOutputStream()), new PrintStream(err),
                () -> new SimulatedEngine("sim0"));
        assertThat(rc).isEqualTo(1);
        assertThat(err.toString()).startsWith("Couldn't connect to 127.0.0.1:" + port + "\n"
                + "Unable to open file descriptor for socket connection Unable to init the socket connection\n")
                .contains("start it first");
    }

    @Test
    void unknownDeviceListsTheDevices() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = PerftestMain.run(PerftestTest.WRITE_BW, "ib_write_bw", List.of("-d", "mlx5_7"),
                new PrintStream(new ByteArrayOutputStream()), new PrintStream(err),
                () -> new SimulatedEngine("rxe0", "rxe1"));
        assertThat(rc).isEqualTo(1);
        assertThat(err.toString()).isEqualTo("IB device mlx5_7 not found\n Unable to find the Infiniband/RoCE device\n"
                + " (available devices: rxe0, rxe1)\n");
    }

    @Test
    void noDeviceAtAll() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = PerftestMain.run(PerftestTest.SEND_LAT, "ib_send_lat", List.of(),
                new PrintStream(new ByteArrayOutputStream()), new PrintStream(err), SimulatedEngine::new);
        assertThat(rc).isEqualTo(1);
        assertThat(err.toString()).startsWith(" Did not detect devices \n If device exists, check if driver is up\n"
                + " Unable to find the Infiniband/RoCE device\n");
    }

    @Test
    void badGidIndexListsTheValidOnes() throws Exception {
        FakePeer.Outcome o = FakePeer.clientAgainst(PerftestTest.WRITE_BW, List.of("-x", "5", "--timeout=1"),
                FakePeer.PREAMBLE);
        assertCleanFailure(o, "GID index 5 is not valid on sim0 port 1; valid indexes: 0 (fe80:0:0:0:5054:ff:fe12:3456, "
                + "RoCE v2), 1 (::ffff:127.0.0.1, RoCE v2)");
    }

    @Test
    void udMessageLargerThanTheMtu() throws Exception {
        FakePeer.Outcome o = FakePeer.clientAgainst(PerftestTest.SEND_BW, List.of("-c", "UD", "-s", "4096",
                "--timeout=10"), FakePeer.PREAMBLE);
        assertCleanFailure(o, " Max message size in UD cannot be greater than MTU \n", "use -s 1024 or less");
    }

    /**
     * One random misbehaviour: the test, how many exchange steps (version, page size, cache line, MTU, two keys) go
     * right, then random bytes, an early close or a stall longer than the tool's --timeout=1.
     */
    private record Fuzz(PerftestTest test, int goodSteps, int mode, byte[] junk) {
        static final int[] SIZES = {16, 4, 4, 2, 108, 108};
        /** A good answer to each step (only ever written). */
        static final byte[][] ANSWERS = {FakePeer.version("6.06"), FakePeer.int32(4096), FakePeer.int32(64),
                new byte[] {'3', 0}, FakePeer.key(1, 2, 3), FakePeer.key(1, 2, 3)};

        static Fuzz draw(long seed, int maxJunk) {
            Random r = new Random(seed);
            PerftestTest test = PerftestTest.values()[r.nextInt(PerftestTest.values().length)];
            int goodSteps = r.nextInt(6);
            int mode = r.nextInt(3);
            byte[] junk = new byte[1 + r.nextInt(maxJunk)];
            r.nextBytes(junk);
            return new Fuzz(test, goodSteps, mode, junk);
        }

        void misbehave(FakePeer p) throws IOException {
            switch (mode) {
                case 0 -> p.write(junk);
                case 1 -> p.socket.close();
                default -> { }
            }
            sleep(1300); // longer than the tool's --timeout=1
        }
    }

    /** Random scripts: random bytes at a random step, random early close or stall; always a clean exit 1. */
    @RepeatedTest(25)
    void fuzzedPeer(RepetitionInfo info) throws Exception {
        Fuzz f = Fuzz.draw(info.getCurrentRepetition() * 7919L, 200);
        FakePeer.Outcome o = FakePeer.clientAgainst(f.test(), FAST, p -> {
            for (int i = 0; i < f.goodSteps(); i++) {
                p.exchange(Fuzz.SIZES[i], Fuzz.ANSWERS[i]);
            }
            p.read(Fuzz.SIZES[f.goodSteps()]);
            f.misbehave(p);
        });
        assertCleanFailure(o);
        assertThat(o.err()).containsAnyOf("exchange", "message", "version", "MTU", "page size", "Completion",
                "cache line");
    }

    /**
     * The tool as server against random clients: random bytes at a random step (version, system data, MTU, keys), a
     * random early close or stall; always a clean exit 1, never a hang or a stack trace.
     */
    @RepeatedTest(20)
    void fuzzedClient(RepetitionInfo info) throws Exception {
        Fuzz f = Fuzz.draw(info.getCurrentRepetition() * 104729L, 300);
        FakePeer.Outcome o = FakePeer.serverAgainst(f.test(), FAST, p -> {
            for (int i = 0; i < f.goodSteps(); i++) {
                p.write(Fuzz.ANSWERS[i]);
                p.read(Fuzz.SIZES[i]);
            }
            f.misbehave(p);
        });
        assertCleanFailure(o);
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
