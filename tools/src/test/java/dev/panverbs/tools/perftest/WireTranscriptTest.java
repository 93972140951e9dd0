package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The bytes the tool puts on the wire, message by message, against a scripted peer that plays the C server's
 * side as perftest 6.06 does (fact sheet, recorded with a TCP proxy and on rxe): sizes, order, and the exact
 * content of every fixed message.
 */
@Timeout(30)
class WireTranscriptTest {
    static final byte[] VERSION = FakePeer.version("6.06");

    /** A simulated MR and QP the fake peer exposes, so the tool's RDMA operations find a target. */
    static VerbsEngine.Resources target(PerftestTest.Verb verb) {
        return new SimulatedEngine("sim0").open("sim0").allocate(new VerbsEngine.ResourceSpec(verb,
                PerftestParameters.Connection.RC, 1, 1, 0, 128, 512, 0, 1 << 20, false, true, false, false, true,
                false, 0));
    }

    static void assertPreamble(List<byte[]> got) {
        assertThat(got.get(0)).as("version").isEqualTo(VERSION);
        assertThat(ByteBuffer.wrap(got.get(1)).getInt()).as("page size").isEqualTo(Platform.pageSize());
        assertThat(ByteBuffer.wrap(got.get(2)).getInt()).as("cache line").isEqualTo(Platform.cacheLineSize());
        assertThat(got.get(3)).as("MTU: enum ibv_mtu 3 (1024) and NUL").isEqualTo(new byte[] {'3', 0});
    }

    static int[] sizes(List<byte[]> got) {
        return got.stream().mapToInt(b -> b.length).toArray();
    }

    @Test
    void writeBwClient() throws Exception {
        try (VerbsEngine.Resources t = target(PerftestTest.Verb.WRITE)) {
            byte[] key = FakePeer.key(t.qp(0).qpNum(), t.rkey(0), t.buffer(0).address());
            byte[] zero = new byte[8];
            FakePeer.Outcome o = FakePeer.clientAgainst(PerftestTest.WRITE_BW, List.of("-n", "20", "-s", "4096"),
                    FakePeer.PREAMBLE,
                    p -> p.exchange(108, key), p -> p.exchange(108, key), p -> p.exchange(108, key),
                    p -> p.exchange(108, key),
                    p -> {
                        for (int i = 0; i < 5; i++) {
                            p.exchange(8, zero);
                        }
                    },
                    p -> p.exchange(108, key), p -> p.read(5));
            assertThat(o.rc()).as(o.err()).isZero();
            assertThat(o.peerFailure()).isNull();
            List<byte[]> got = o.received();
            // version, page, cache line, MTU, q=1 keys, q keys, sync, end barrier, 5 report fields, close, done
            assertThat(sizes(got)).containsExactly(16, 4, 4, 2, 108, 108, 108, 108, 8, 8, 8, 8, 8, 108, 5);
            assertPreamble(got);
            KeyMessage first = KeyMessage.decode(got.get(4), true);
            assertThat(first.outReads()).isEqualTo(1);
            assertThat(first.gid()).isEqualTo(SimulatedEngine.GID1);
            for (int i = 5; i < 8; i++) {
                assertThat(KeyMessage.decode(got.get(i), true)).as("every key message repeats QP 0's")
                        .isEqualTo(first);
            }
            assertThat(ByteBuffer.wrap(got.get(8)).getLong()).as("report size").isEqualTo(4096);
            assertThat(ByteBuffer.wrap(got.get(9)).getLong()).as("report iterations").isEqualTo(20);
            double avg = ByteBuffer.wrap(got.get(11)).getDouble();
            assertThat(avg).as("report average").isPositive();
            assertThat(o.out()).contains(CFormat.fixed(avg, 2));
            assertThat(got.get(14)).isEqualTo("done\0".getBytes(StandardCharsets.US_ASCII));
        }
    }

    @Test
    void writeBwServerPrintsTheClientsReport() throws Exception {
        try (VerbsEngine.Resources t = target(PerftestTest.Verb.WRITE)) {
            byte[] key = FakePeer.key(t.qp(0).qpNum(), t.rkey(0), t.buffer(0).address());
            BwReport theirs = new BwReport(65536, 5000, 11826.93, 11779.57, 0.188473);
            FakePeer.Outcome o = FakePeer.serverAgainst(PerftestTest.WRITE_BW, List.of(),
                    p -> {
                        // the client writes first
                        p.write(VERSION);
                        p.read(16);
                        p.write(FakePeer.int32(4096));
                        p.read(4);
                        p.write(FakePeer.int32(64));
                        p.read(4);
                        p.write(new byte[] {'5', 0}); // the peer's MTU is 4096: the smaller (1024) wins
                        p.read(2);
                        for (int i = 0; i < 4; i++) {
                            p.write(key);
                            p.read(108);
                        }
                        for (int i = 0; i < 5; i++) {
                            p.write(theirs.field(i));
                            p.read(8);
                        }
                        p.write(key);
                        p.read(108);
                        p.write("done\0".getBytes(StandardCharsets.US_ASCII));
                        p.read(5);
                    });
            assertThat(o.rc()).as(o.err()).isZero();
            assertThat(o.out()).contains(" Mtu             : 1024[B]\n")
                    .contains(" 65536      5000             11826.93            11779.57\t\t   0.188473\n")
                    .doesNotContain("TX depth").endsWith(PerftestOutput.RESULT_LINE);
            assertThat(o.out()).startsWith(PerftestOutput.WAITING_BANNER);
        }
    }

    @Test
    void readBwClientSendsItsOutstandingReads() throws Exception {
        try (VerbsEngine.Resources t = target(PerftestTest.Verb.READ)) {
            byte[] key = new KeyMessage(0, 0x80, t.qp(0).qpNum(), 0x42, t.rkey(0), t.buffer(0).address(),
                    SimulatedEngine.GID1, 0).encode();
            FakePeer.Outcome o = FakePeer.clientAgainst(PerftestTest.READ_BW, List.of("-n", "10", "-o", "4"),
                    FakePeer.PREAMBLE,
                    p -> {
                        for (int i = 0; i < 4; i++) {
                            p.exchange(108, key);
                        }
                        for (int i = 0; i < 5; i++) {
                            p.exchange(8, new byte[8]);
                        }
                        p.exchange(108, key);
                        p.read(5);
                    });
            assertThat(o.rc()).as(o.err()).isZero();
            assertThat(KeyMessage.decode(o.received().get(4), true).outReads()).isEqualTo(4);
            assertThat(o.out()).contains(" OUT 0x04 RKey", " OUT 0x80 RKey", " Outstand reads  : 4\n");
        }
    }

    @Test
    void sendBwClientSequence() throws Exception {
        try (VerbsEngine.Resources t = target(PerftestTest.Verb.SEND)) {
            for (int i = 0; i < 50; i++) {
                t.qp(0).postRecv(t.buffer(0).address(), 4096, t.lkey(0), 0);
            }
            byte[] key = FakePeer.key(t.qp(0).qpNum(), 0, 0);
            FakePeer.Outcome o = FakePeer.clientAgainst(PerftestTest.SEND_BW, List.of("-n", "50", "-s", "4096"),
                    FakePeer.PREAMBLE,
                    p -> {
                        // q keys, sync after RTR, q keys (second round), pre-run sync, then close and done
                        for (int i = 0; i < 5; i++) {
                            p.exchange(108, key);
                        }
                        p.read(5);
                    });
            assertThat(o.rc()).as(o.err()).isZero();
            assertThat(sizes(o.received())).containsExactly(16, 4, 4, 2, 108, 108, 108, 108, 108, 5);
            assertThat(o.out()).contains(" local address: LID 0000 QPN 0x").doesNotContain("RKey");
        }
    }

    @Test
    void readLatClientSequence() throws Exception {
        try (VerbsEngine.Resources t = target(PerftestTest.Verb.READ)) {
            byte[] key = FakePeer.key(t.qp(0).qpNum(), t.rkey(0), t.buffer(0).address());
            FakePeer.Outcome o = FakePeer.clientAgainst(PerftestTest.READ_LAT, List.of("-n", "20"),
                    FakePeer.PREAMBLE,
                    p -> {
                        // first sync, q keys, q keys, sync; the client runs; close and done
                        for (int i = 0; i < 5; i++) {
                            p.exchange(108, key);
                        }
                        p.read(5);
                    });
            assertThat(o.rc()).as(o.err()).isZero();
            assertThat(sizes(o.received())).containsExactly(16, 4, 4, 2, 108, 108, 108, 108, 108, 5);
            assertThat(o.out()).contains(PerftestOutput.RESULT_FMT_LAT);
        }
    }

    @Test
    void ibLinkWithoutGidUsesTheShortForm() throws Exception {
        byte[] key = new KeyMessage(7, 1, 0x99, 0x5, 0x1105, 0x7f5300337000L, null, 0).encode();
        SimulatedEngine ib = new SimulatedEngine("sim0");
        ib.ethernet = false;
        FakePeer peer = new FakePeer();
        // run through the generic path with an IB-link engine: the tool must send 59-byte messages
        try (java.net.ServerSocket server = new java.net.ServerSocket(0)) {
            Thread th = Thread.ofPlatform().daemon().start(() -> {
                try (java.net.Socket s = server.accept()) {
                    peer.in = s.getInputStream();
                    peer.out = s.getOutputStream();
                    FakePeer.PREAMBLE.run(peer);
                    peer.exchange(59, key);
                    peer.exchange(59, key);
                    peer.exchange(59, key);
                    s.close();
                } catch (Exception e) {
                    // the tool fails after the close; that is expected here
                }
            });
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
            int rc = PerftestMain.run(PerftestTest.WRITE_BW, "ib_write_bw",
                    List.of("-n", "5", "--timeout=2", "--jit_warmup=0", "-p", Integer.toString(server.getLocalPort()), "127.0.0.1"),
                    new java.io.PrintStream(out), new java.io.PrintStream(err), () -> ib);
            th.join(5000);
            assertThat(rc).isEqualTo(1); // the fake peer leaves after the sync
            assertThat(peer.received.subList(4, 7)).allSatisfy(b -> assertThat(b).hasSize(59));
            assertThat(new String(peer.received.get(4), StandardCharsets.US_ASCII)).startsWith("0001:0001:");
            String o = out.toString();
            assertThat(o).contains(" Link type       : IB\n").doesNotContain("GID")
                    .contains(" remote address: LID 0x07 QPN 0x0099 PSN 0x0005 RKey 0x001105 VAddr "
                            + "0x007f5300337000\n");
            // the fake peer's rkey is not registered anywhere: the first write fails cleanly
            assertThat(Arrays.asList(err.toString().split("\n"))).anyMatch(l -> l.contains("REM_ACCESS_ERR")
                    || l.contains("closed the connection"));
        }
    }
}
