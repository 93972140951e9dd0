package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The bytes really move: panverbs server and client on the device, each buffer filled with its own pattern; at
 * the end the bytes that perftest's address plan says were written, read or received must be the other side's
 * pattern, byte for byte, and the bytes outside it untouched.
 */
class DataVerificationIT {
    static final int CLIENT_SEED = 11;
    static final int SERVER_SEED = 22;
    static String device;

    @BeforeAll
    static void device() {
        device = ItSupport.device();
    }

    record Run(ItSupport.Side server, ItSupport.Side client, byte[] serverBuf, byte[] clientBuf, long buff) { }

    static Run run(PerftestTest test, List<String> options, long size) throws Exception {
        long buff = Math.max(size, Platform.pageSize());
        CapturingEngine se = new CapturingEngine(new CoreEngine(), SERVER_SEED, buff);
        CapturingEngine ce = new CapturingEngine(new CoreEngine(), CLIENT_SEED, buff);
        int port = ItSupport.port();
        List<String> common = ItSupport.concat(options, "-d", device, "-p", Integer.toString(port), "-s",
                Long.toString(size), "--timeout=60", "--jit_warmup=0"); // the engine captures every run's buffers
        CompletableFuture<ItSupport.Side> s = ItSupport.javaSide(test, common, () -> se);
        ItSupport.Side client = null;
        for (int attempt = 0; attempt < 50; attempt++) {
            client = ItSupport.javaSide(test, ItSupport.concat(common, "127.0.0.1"), () -> ce).get(240,
                    TimeUnit.SECONDS);
            if (client.rc() == 0 || !client.err().contains("Couldn't connect")) {
                break;
            }
            ce.finalBuffers.clear();
            Thread.sleep(200);
        }
        ItSupport.Side server = s.get(240, TimeUnit.SECONDS);
        String both = server.describe("server") + client.describe("client");
        assertThat(server.rc()).as(both).isZero();
        assertThat(client.rc()).as(both).isZero();
        assertThat(se.finalBuffers).hasSize(1);
        assertThat(ce.finalBuffers).hasSize(1);
        return new Run(server, client, se.finalBuffers.get(0), ce.finalBuffers.get(0), buff);
    }

    /** Offsets (relative to an area) and length of the slots perftest's address cycle touched in n messages. */
    static long[][] slots(long size, long n) {
        int cycle = Platform.pageSize();
        int cl = Platform.cacheLineSize();
        if (size > cycle / 2) {
            return new long[][] {{0, size}};
        }
        long inc = BufferLayout.inc(size, cl);
        long count = Math.min(n, cycle / inc);
        long[][] s = new long[(int) count][];
        for (int k = 0; k < count; k++) {
            s[k] = new long[] {k * inc, size};
        }
        return s;
    }

    static void assertPattern(byte[] buf, long areaStart, long rel, long len, int seed, String what) {
        for (long i = 0; i < len; i++) {
            byte want = CapturingEngine.pattern(seed, rel + i);
            byte got = buf[(int) (areaStart + rel + i)];
            if (got != want) {
                throw new AssertionError(what + ": byte " + (rel + i) + " of the area is " + got + ", expected "
                        + want + " (seed " + seed + ")");
            }
        }
    }

    @ParameterizedTest(name = "ib_write_bw -s {0} -n {1} -q {2}")
    @CsvSource({"64, 50, 1", "65536, 50, 1", "4096, 20, 2"})
    void writeLandsInTheServersAdvertisedArea(long size, int n, int q) throws Exception {
        Run r = run(PerftestTest.WRITE_BW, List.of("-n", Integer.toString(n), "-q", Integer.toString(q)), size);
        for (int i = 0; i < q; i++) {
            long area = (q + i) * r.buff();
            for (long[] s : slots(size, n)) {
                assertPattern(r.serverBuf(), area, s[0], s[1], CLIENT_SEED, "QP " + i + " written slot");
            }
            assertPattern(r.serverBuf(), i * r.buff(), 0, r.buff(), SERVER_SEED, "QP " + i + " send area untouched");
        }
    }

    @ParameterizedTest(name = "ib_read_bw -s {0} -n {1}")
    @CsvSource({"64, 50", "65536, 30"})
    void readBringsTheServersBytes(long size, int n) throws Exception {
        Run r = run(PerftestTest.READ_BW, List.of("-n", Integer.toString(n)), size);
        for (long[] s : slots(size, n)) {
            assertPattern(r.clientBuf(), 0, s[0], s[1], SERVER_SEED, "read slot");
        }
        assertPattern(r.clientBuf(), r.buff(), 0, r.buff(), CLIENT_SEED, "client's advertised area untouched");
    }

    @ParameterizedTest(name = "ib_send_bw -c {0} -s {1}")
    @CsvSource({"RC, 4096", "RC, 65536", "UD, 1024"})
    void sendLandsInTheReceiveBuffer(String conn, long size) throws Exception {
        Run r = run(PerftestTest.SEND_BW, List.of("-c", conn, "-n", "40"), size);
        int cl = Platform.cacheLineSize();
        long recvArea = BufferLayout.inc(r.buff(), cl); // the first receive area (one QP)
        if (conn.equals("UD")) {
            // UD receives start 40 bytes before a cache line: the GRH fills those, the payload starts on the line.
            // The receive slots are one message apart, so each slot's last 40 bytes are overwritten by the next
            // slot's GRH: only the rest of a slot is the sender's data.
            assertPattern(r.serverBuf(), recvArea + cl, 0, size - 40, CLIENT_SEED, "UD receive slot");
        } else {
            // larger than half a page: every message uses the same send and receive address
            assertPattern(r.serverBuf(), recvArea, 0, size, CLIENT_SEED, "receive buffer");
        }
    }
}
