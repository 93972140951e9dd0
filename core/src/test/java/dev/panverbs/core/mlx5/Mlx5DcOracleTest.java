package dev.panverbs.core.mlx5;

import static dev.panverbs.core.mlx5.WqeWriter.SEND_FENCE;
import static dev.panverbs.core.mlx5.WqeWriter.SEND_INLINE;
import static dev.panverbs.core.mlx5.WqeWriter.SEND_SIGNALED;
import static dev.panverbs.core.mlx5.WqeWriter.SEND_SOLICITED;
import static dev.panverbs.core.mlx5.WqeWriter.WR_ATOMIC_CMP_AND_SWP;
import static dev.panverbs.core.mlx5.WqeWriter.WR_ATOMIC_FETCH_AND_ADD;
import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.core.mlx5.Mlx5SendOracleTest.Qp;
import dev.panverbs.core.mlx5.Mlx5SendOracleTest.Wr;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The DC initiator's Direct WQE bytes against libmlx5 itself: random DCI chains (RDMA WRITE with and without
 * immediate, SEND with and without immediate, RDMA READ, both atomics; 1..max SGEs, inline payloads up to the limit,
 * fence/signaled/solicited, sq_sig_all; several fake {@code struct mlx5_ah}s of random address vectors, random DCT
 * numbers and DC keys; rings of 8..128 WQEBBs entered at random producer counters so the datagram segment's WQEBB is
 * the ring's last and what follows wraps, and the 16-bit index wraps; BlueFlame allowed or not, prefer_bf,
 * MLX5_SHUT_UP_BF) go through libmlx5's {@code ibv_wr_<op>}, {@code mlx5dv_wr_set_dc_addr}
 * ({@code mlx5_send_wr_set_dc_addr}) or, for two WRs in three, {@code mlx5dv_wr_set_dc_addr_stream}
 * ({@code mlx5_send_wr_set_dc_addr_stream}; random stream ids, any {@code uint16_t}), {@code ibv_wr_set_*} and
 * {@code ibv_wr_complete} on a fake DCI ({@code qp_type IBV_QPT_DRIVER}, {@code dc_type MLX5DV_DCTYPE_DCI},
 * rdma-core 44's {@code struct mlx5_qp}), and through {@link DcWqe#beginDc} with a {@link DcAddress} (on the same
 * stream, {@link DcAddress#onStream}) on identically prepared memory: the WQEBBs written, a hash of the whole ring,
 * the doorbell record, both BlueFlame halves, the return code and the counters must be equal.
 */
class Mlx5DcOracleTest {
    private static final int[] OPCODES = {0, 1, 2, 3, 4, 5, 6};

    /** {@code stream} -1: {@code mlx5dv_wr_set_dc_addr}; else {@code mlx5dv_wr_set_dc_addr_stream} on it. */
    record Dc(int ah, int dctn, long key, int stream) {}

    record Chain(List<Wr> wrs, List<Dc> dcs) {}

    record Case(Qp qp, byte[][] avs, List<Chain> chains) {}

    @Test
    void dciWqesEqualLibmlx5ForRandomChains() {
        SplittableRandom rnd = new SplittableRandom(0xdc1L);
        List<Case> cases = new ArrayList<>();
        int made = 0;
        while (made < 10_000) {
            Case c = randomCase(rnd);
            made += c.chains.size();
            cases.add(c);
        }
        StringBuilder script = new StringBuilder();
        for (Case c : cases) {
            script.append(c.qp.line()).append("Z\n");
            for (int i = 0; i < c.avs.length; i++) {
                script.append("J ").append(i).append(' ').append(Mlx5Oracle.hex(c.avs[i])).append('\n');
            }
            int head = c.qp.curPost(); // each chain's tail is the head before it: everything completed
            for (Chain ch : c.chains) {
                script.append("T ").append(Integer.toUnsignedString(head)).append('\n');
                script.append("Y ").append(ch.wrs.size()).append('\n');
                for (int i = 0; i < ch.wrs.size(); i++) {
                    Dc d = ch.dcs.get(i);
                    script.append(ch.wrs.get(i).line()).append("M ").append(d.ah).append(' ')
                            .append(d.dctn).append(' ').append(Long.toUnsignedString(d.key));
                    if (d.stream >= 0) {
                        script.append(' ').append(d.stream);
                    }
                    script.append('\n');
                }
                head += ch.wrs.size();
            }
        }
        Iterator<String> out = Mlx5Oracle.run(script).iterator();
        byte[] pattern = Mlx5Oracle.pattern();
        int compared = 0;
        int bfCopies = 0;
        int wrapsAfterAv = 0;
        int inlines = 0;
        int streamed = 0;
        int streamZero = 0;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(pattern.length);
            MemorySegment.copy(pattern, 0, src, ValueLayout.JAVA_BYTE, 0, pattern.length);
            for (int ci = 0; ci < cases.size(); ci++) {
                Case c = cases.get(ci);
                Qp q = c.qp;
                Mlx5Oracle.Ring ring = q.ring(arena);
                WqeWriter w = ring.writer();
                MemorySegment bf = ring.bf();
                int head = q.curPost();
                for (int si = 0; si < c.chains.size(); si++) {
                    Chain ch = c.chains.get(si);
                    w.tail = head;
                    head += ch.wrs.size();
                    int ci0 = ci;
                    int si0 = si;
                    java.util.function.Function<String, Supplier<String>> where = what -> () -> "case " + ci0
                            + " chain " + si0 + " " + q + "\n" + ch + ": " + what;
                    bf.fill((byte) 0);
                    int old = w.curPost;
                    int oldBf = w.bfOffset();
                    List<Integer> noImm = new ArrayList<>();
                    for (int i = 0; i < ch.wrs.size(); i++) {
                        Wr x = ch.wrs.get(i);
                        Dc d = ch.dcs.get(i);
                        DcAddress to = new DcAddress(null, 0, c.avs[d.ah], d.dctn, d.key);
                        if (d.stream >= 0) {
                            to = to.onStream(d.stream);
                            streamed += d.stream != 0 ? 1 : 0;
                            streamZero += d.stream == 0 ? 1 : 0;
                        }
                        int idx = DcWqe.beginDc(w, x.opcode(), x.flags(), x.imm(), x.raddr(), x.rkey(), x.swap(),
                                x.cmp(), to.av, to.streamId);
                        if (((idx + 1) & (q.wqeCnt() - 1)) == 0) {
                            wrapsAfterAv++;
                        }
                        for (int k = 0; k < x.addr().length; k++) {
                            if ((x.flags() & SEND_INLINE) != 0) {
                                w.inlineData(src, x.addr()[k], x.len()[k]);
                                inlines++;
                            } else {
                                w.data(x.addr()[k], x.len()[k], x.lkey()[k]);
                            }
                        }
                        w.end();
                        if (x.opcode() != 1 && x.opcode() != 3) {
                            noImm.add(idx);
                        }
                    }
                    w.ring(false, ch.wrs.size());
                    Mlx5Oracle.Checked checked = Mlx5Oracle.checkChain(out, ring, old, oldBf, 0, -1, noImm,
                            ch.wrs.size(), where);
                    compared++;
                    if (checked.blueFlameCopy()) {
                        bfCopies++;
                    }
                }
            }
        }
        assertThat(out.hasNext()).isFalse();
        assertThat(compared).isGreaterThanOrEqualTo(10_000);
        assertThat(bfCopies).as("BlueFlame copies").isGreaterThan(200);
        assertThat(wrapsAfterAv).as("WRs whose datagram segment ends the ring").isGreaterThan(200);
        assertThat(inlines).as("inline pieces").isGreaterThan(1000);
        assertThat(streamed).as("WRs on a non-zero DCI stream").isGreaterThan(2000);
        // mlx5dv_wr_set_dc_addr_stream(..., 0) = mlx5dv_wr_set_dc_addr = a plain DcAddress (stream 0): what lets a DCI
        // without streams take stream 0 on both paths (DciStreamsTest)
        assertThat(streamZero).as("WRs through mlx5dv_wr_set_dc_addr_stream on stream 0").isGreaterThan(100);
    }

    private static Case randomCase(SplittableRandom rnd) {
        int wqeCnt = 8 << rnd.nextInt(5);
        int maxGs = 1 + rnd.nextInt(8);
        int maxInline = rnd.nextInt(4) == 0 ? 0 : 4 + rnd.nextInt(157);
        int[] starts = {0, wqeCnt - 1, wqeCnt - 2, 0xFFFE, 0xFFFF_FFF0, rnd.nextInt()};
        Qp qp = new Qp(wqeCnt, wqeCnt / 4, maxGs, maxInline, 1 + rnd.nextInt(0xFF_FFFF), rnd.nextBoolean() ? 0 : 8,
                rnd.nextInt(4) == 0 ? 512 : 256, rnd.nextInt(4) == 0 ? 0 : 1 + rnd.nextInt(7),
                rnd.nextInt(4) == 0 ? 0 : 1, rnd.nextInt(6) == 0 ? 1 : 0, starts[rnd.nextInt(starts.length)]);
        byte[][] avs = new byte[1 + rnd.nextInt(4)][48];
        for (byte[] av : avs) {
            for (int i = 0; i < 48; i++) {
                av[i] = (byte) rnd.nextInt(256);
            }
        }
        List<Chain> chains = new ArrayList<>();
        int n = 5 + rnd.nextInt(20);
        for (int k = 0; k < n; k++) {
            int len = rnd.nextInt(3) == 0 ? 1 : 1 + rnd.nextInt(qp.maxPost());
            List<Wr> wrs = new ArrayList<>();
            List<Dc> dcs = new ArrayList<>();
            for (int i = 0; i < len; i++) {
                wrs.add(randomWr(rnd, qp));
                int stream = switch (rnd.nextInt(3)) { // none; a small stream; any uint16_t (high byte too)
                    case 0 -> -1;
                    case 1 -> rnd.nextInt(16);
                    default -> rnd.nextInt(1 << 16);
                };
                dcs.add(new Dc(rnd.nextInt(avs.length), rnd.nextInt(1 << 24), rnd.nextLong(), stream));
            }
            chains.add(new Chain(wrs, dcs));
        }
        return new Case(qp, avs, chains);
    }

    private static Wr randomWr(SplittableRandom rnd, Qp qp) {
        int opcode = OPCODES[rnd.nextInt(OPCODES.length)];
        boolean atomic = opcode == WR_ATOMIC_CMP_AND_SWP || opcode == WR_ATOMIC_FETCH_AND_ADD;
        int flags = 0;
        if (rnd.nextInt(5) == 0) {
            flags |= SEND_FENCE;
        }
        if (rnd.nextBoolean()) {
            flags |= SEND_SIGNALED;
        }
        if (rnd.nextInt(4) == 0) {
            flags |= SEND_SOLICITED;
        }
        boolean inline = !atomic && opcode != 4 && qp.maxInline() > 0 && rnd.nextInt(3) == 0;
        int nsge = atomic ? 1 : 1 + rnd.nextInt(qp.maxGs());
        if (inline) {
            flags |= SEND_INLINE;
            nsge = 1 + rnd.nextInt(Math.min(qp.maxGs(), 4));
        }
        long[] addr = new long[nsge];
        int[] len = new int[nsge];
        int[] lkey = new int[nsge];
        int budget = qp.maxInline();
        for (int i = 0; i < nsge; i++) {
            lkey[i] = rnd.nextInt();
            if (inline) {
                len[i] = i == nsge - 1 ? rnd.nextInt(budget + 1) : rnd.nextInt(budget / 2 + 1);
                if (len[i] == 0) {
                    len[i] = Math.min(1, budget);
                }
                budget -= len[i];
                addr[i] = rnd.nextInt(60000);
            } else {
                len[i] = atomic ? 8 : 1 + rnd.nextInt(1 << 20);
                addr[i] = rnd.nextLong();
            }
        }
        return new Wr(rnd.nextLong() & Long.MAX_VALUE, opcode, flags, rnd.nextInt(), rnd.nextLong(), rnd.nextInt(),
                rnd.nextLong(), rnd.nextLong(), addr, len, lkey);
    }
}
