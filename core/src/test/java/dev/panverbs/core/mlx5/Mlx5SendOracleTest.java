package dev.panverbs.core.mlx5;

import static dev.panverbs.core.mlx5.WqeWriter.SEND_FENCE;
import static dev.panverbs.core.mlx5.WqeWriter.SEND_INLINE;
import static dev.panverbs.core.mlx5.WqeWriter.SEND_SIGNALED;
import static dev.panverbs.core.mlx5.WqeWriter.SEND_SOLICITED;
import static dev.panverbs.core.mlx5.WqeWriter.WR_ATOMIC_CMP_AND_SWP;
import static dev.panverbs.core.mlx5.WqeWriter.WR_ATOMIC_FETCH_AND_ADD;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link WqeWriter} against libmlx5 itself: random RC chains (every opcode of this path, 0..max SGEs including empty
 * ones, inline payloads up to the limit, fence/signaled/solicited, sq_sig_all, rings of 8..128 WQEBBs entered at
 * random producer counters so WQEs and inline payloads wrap at the ring's end and the 16-bit index wraps, BlueFlame
 * allowed or not, prefer_bf and MLX5_SHUT_UP_BF, full rings) go through libmlx5's {@code mlx5_post_send} and
 * through its {@code ibv_wr_*} builders on a fake QP, and through the Java writer on identically prepared memory.
 * The ring bytes of every WQEBB the chain wrote, a hash of the whole ring (nothing else touched), the doorbell
 * record, both BlueFlame halves (copy or 8-byte doorbell, and where), the return code, the failing WR and the
 * counters must be equal.
 */
class Mlx5SendOracleTest {
    private static final int ENOMEM = 12;
    private static final int[] OPCODES = {0, 1, 2, 3, 4, 5, 6, 9};

    record Wr(long wrId, int opcode, int flags, int imm, long raddr, int rkey, long swap, long cmp, long[] addr,
              int[] len, int[] lkey) {
        String line() {
            StringBuilder sb = new StringBuilder("W ").append(wrId).append(' ').append(opcode).append(' ')
                    .append(flags).append(' ').append(Integer.toUnsignedString(imm)).append(' ')
                    .append(Long.toUnsignedString(raddr)).append(' ').append(Integer.toUnsignedString(rkey))
                    .append(' ').append(Long.toUnsignedString(swap)).append(' ').append(Long.toUnsignedString(cmp))
                    .append(' ').append(addr.length);
            for (int i = 0; i < addr.length; i++) {
                sb.append(' ').append(Long.toUnsignedString(addr[i])).append(' ').append(len[i]).append(' ')
                        .append(Integer.toUnsignedString(lkey[i]));
            }
            return sb.append('\n').toString();
        }
    }

    record Qp(int wqeCnt, int maxPost, int maxGs, int maxInline, int qpn, int sigBits, int bfSize, int uuarn,
              int prefer, int shutUp, int curPost) {
        String line() {
            return "Q " + wqeCnt + " " + maxPost + " " + maxGs + " " + maxInline + " " + qpn + " " + sigBits + " "
                    + bfSize + " " + uuarn + " " + prefer + " " + shutUp + " " + Integer.toUnsignedString(curPost)
                    + "\n";
        }

        /** The Java writer over a fresh ring (0xEE-filled), doorbell record and BlueFlame register of this shape. */
        Mlx5Oracle.Ring ring(Arena arena) {
            MemorySegment sq = arena.allocate((long) wqeCnt * 64, 64).fill((byte) 0xEE);
            MemorySegment dbrec = arena.allocate(8).fill((byte) 0);
            MemorySegment bf = arena.allocate(2L * bfSize, 64);
            return new Mlx5Oracle.Ring(sq, dbrec, bf, new WqeWriter(sq, wqeCnt, dbrec, bf, bfSize, uuarn != 0,
                    prefer != 0, shutUp != 0, qpn, sigBits, maxPost, maxGs, maxInline, curPost));
        }
    }

    sealed interface Step permits Post, Tail {}
    /** {@code burst}: null, or a burst's {rstride, lstride, flags, lastFlags} ({@link WqeBurst#write}). */
    record Post(List<Wr> wrs, boolean builders, long[] burst) implements Step {}
    record Tail(int tail) implements Step {}
    record Case(Qp qp, List<Step> steps) {}

    @Test
    void postSendEqualsLibmlx5ForRandomChains() {
        compare(10_000, false, 0x5eed1L);
    }

    /** Homogeneous chains through {@link WqeBurst#write} against the same WRs through mlx5_post_send. */
    @Test
    void burstsEqualLibmlx5ForRandomChains() {
        compare(10_000, false, 0x5eed3L, true);
    }

    @Test
    void ibvWrBuildersEqualLibmlx5ForRandomChains() {
        compare(10_000, true, 0x5eed2L);
    }

    /** Runs {@code chains} random chains through libmlx5 and through Java and compares every output. */
    private static void compare(int chains, boolean builders, long seed) {
        compare(chains, builders, seed, false);
    }

    private static void compare(int chains, boolean builders, long seed, boolean bursts) {
        SplittableRandom rnd = new SplittableRandom(seed);
        oneCall[0] = 0;
        List<Case> cases = new ArrayList<>();
        int made = 0;
        while (made < chains) {
            Case c = randomCase(rnd, builders, bursts);
            made += (int) c.steps.stream().filter(s -> s instanceof Post).count();
            cases.add(c);
        }
        StringBuilder script = new StringBuilder();
        for (Case c : cases) {
            script.append(c.qp.line());
            for (Step s : c.steps) {
                if (s instanceof Tail t) {
                    script.append("T ").append(Integer.toUnsignedString(t.tail)).append('\n');
                } else if (s instanceof Post p) {
                    script.append(p.builders ? "X " : "P ").append(p.wrs.size()).append('\n');
                    p.wrs.forEach(w -> script.append(w.line()));
                }
            }
        }
        Iterator<String> out = Mlx5Oracle.run(script).iterator();
        byte[] pattern = Mlx5Oracle.pattern();
        int compared = 0;
        int bfCopies = 0;
        int wraps = 0;
        int overflows = 0;
        int byteWraps = 0;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(pattern.length);
            MemorySegment.copy(pattern, 0, src, ValueLayout.JAVA_BYTE, 0, pattern.length);
            for (int ci = 0; ci < cases.size(); ci++) {
                Case c = cases.get(ci);
                Qp q = c.qp;
                Mlx5Oracle.Ring ring = q.ring(arena);
                WqeWriter w = ring.writer();
                MemorySegment bf = ring.bf();
                for (int si = 0; si < c.steps.size(); si++) {
                    Step s = c.steps.get(si);
                    if (s instanceof Tail t) {
                        w.tail = t.tail;
                        continue;
                    }
                    Post p = (Post) s;
                    int ci0 = ci;
                    int si0 = si;
                    java.util.function.Function<String, java.util.function.Supplier<String>> where = what -> () ->
                            "case " + ci0 + " step " + si0 + " " + q + "\n" + (p.builders ? "X" : "P") + " chain:\n"
                            + String.join("", p.wrs.stream().map(Wr::line).toList()) + ": " + what;
                    bf.fill((byte) 0);
                    int old = w.curPost;
                    int oldBf = w.bfOffset();
                    List<Integer> noImm = new ArrayList<>();
                    int[] rcBad = p.burst != null ? postBurst(w, p) : post(w, p.wrs, src, noImm);
                    Mlx5Oracle.Checked checked = Mlx5Oracle.checkChain(out, ring, old, oldBf, rcBad[0], rcBad[1],
                            p.builders ? noImm : List.of(), p.wrs.size(), where);
                    compared++;
                    if (checked.blueFlameCopy()) {
                        bfCopies++;
                    }
                    if (Integer.compareUnsigned((old & (q.wqeCnt - 1)) + checked.wqebbs(), q.wqeCnt) > 0) {
                        wraps++;
                    }
                    if (rcBad[0] == ENOMEM) {
                        overflows++;
                    }
                    int inRing = old & (q.wqeCnt - 1);
                    if (inRing + checked.wqebbs() > (inRing | 0xFF) + 1 && (inRing | 0xFF) + 1 < q.wqeCnt) {
                        byteWraps++; // the WQE index's low byte wraps inside the ring, not at its end
                    }
                }
            }
        }
        assertThat(out.hasNext()).isFalse();
        assertThat(compared).isGreaterThanOrEqualTo(chains);
        // the random mix must really cover the rules it claims to
        assertThat(bfCopies).as("BlueFlame copies").isGreaterThan(chains / 50);
        assertThat(wraps).as("chains wrapping the ring").isGreaterThan(chains / 50);
        assertThat(oneCall[0]).as("WRs written by the one-pass writer").isGreaterThan(bursts ? -1 : chains / 10);
        if (bursts) {
            assertThat(byteWraps).as("bursts whose WQE index's low byte wraps inside the ring").isGreaterThan(50);
        }
        if (!builders) {
            assertThat(overflows).as("chains refused by a full ring").isGreaterThan(chains / 200);
        }
    }

    /** WRs the one-call form writes ({@link WqeWriter#writeOne}): RDMA WRITE, SEND, RDMA READ, at most one SGE. */
    private static boolean oneCallShape(Wr x) {
        return (x.opcode == 0 || x.opcode == 2 || x.opcode == 4) && (x.flags & SEND_INLINE) == 0 && x.addr.length <= 1;
    }

    /** How many WRs went through {@link WqeWriter#writeOne}. */
    private static final int[] oneCall = new int[1];

    /** The chain loop of mlx5_post_send over the Java writer: {rc, index of the refused WR or -1}. */
    static int[] post(WqeWriter w, List<Wr> wrs, MemorySegment src, List<Integer> noImm) {
        int rc = 0;
        int bad = -1;
        MemorySegment[] srcs = new MemorySegment[64];
        java.util.Arrays.fill(srcs, src);
        for (int i = 0; i < wrs.size(); i++) {
            Wr x = wrs.get(i);
            if (w.full(i)) { // counted here: writeOne does not count the chain (DirectSendQueue rings with its count)
                rc = ENOMEM;
                bad = i;
                break;
            }
            int idx;
            if (oneCallShape(x) && (x.wrId & 1) == 0) { // half of them through the one-pass writer of the one-call form
                oneCall[0]++;
                boolean sge = x.addr.length == 1;
                idx = w.writeOne(x.opcode, x.flags, x.raddr, x.rkey, sge ? x.addr[0] : 0, sge ? x.len[0] : 0,
                        sge ? x.lkey[0] : 0);
            } else {
                idx = w.write(x.opcode, x.flags, x.imm, x.raddr, x.rkey, x.swap, x.cmp, x.addr.length, 0, x.addr,
                        x.len, x.lkey, srcs, x.addr);
            }
            if (x.opcode != 1 && x.opcode != 3 && x.opcode != 9) {
                noImm.add(idx);
            }
        }
        w.ring(false, bad < 0 ? wrs.size() : bad);
        return new int[] {rc, bad};
    }

    /** A burst's chain as {@link DirectSendQueue}'s burst writes it: the WRs that fit, then the doorbell. */
    static int[] postBurst(WqeWriter w, Post p) {
        int n = p.wrs.size();
        int fit = 0;
        while (fit < n && !w.full(fit)) {
            fit++;
        }
        Wr x = p.wrs.get(0);
        boolean sge = x.addr.length == 1;
        if (fit > 0) {
            int flags = (int) p.burst[2];
            WqeBurst.write(w, x.opcode, fit, flags, fit == n ? (int) p.burst[3] : flags, x.raddr, p.burst[0], x.rkey,
                    sge ? x.addr[0] : 0, p.burst[1], sge ? x.len[0] : 0, WqeWriter.lkeyWord(sge ? x.lkey[0] : 0));
        }
        w.ring(false, fit);
        return new int[] {fit < n ? ENOMEM : 0, fit < n ? fit : -1};
    }

    /** n WRs of one opcode, rkey, length, lkey and flags (the last its own), addresses with a stride. */
    private static Post randomBurst(SplittableRandom rnd, Qp qp, int n) {
        int opcode = new int[] {0, 2, 4}[rnd.nextInt(3)];
        int flags = randomFlags(rnd);
        int lastFlags = randomFlags(rnd);
        int len = rnd.nextInt(6) == 0 ? 0 : 1 + rnd.nextInt(1 << 20);
        long[] strides = {0, 64, len, -4096, rnd.nextLong()};
        long rstride = strides[rnd.nextInt(strides.length)];
        long lstride = strides[rnd.nextInt(strides.length)];
        long raddr = rnd.nextLong();
        long addr = rnd.nextLong();
        int rkey = rnd.nextInt();
        int lkey = rnd.nextInt();
        long wrId = rnd.nextLong() & Long.MAX_VALUE;
        List<Wr> wrs = new ArrayList<>();
        for (int j = 0; j < n; j++) {
            boolean sge = len != 0;
            wrs.add(new Wr(wrId + j, opcode, j == n - 1 ? lastFlags : flags, 0, raddr + j * rstride, rkey, 0, 0,
                    sge ? new long[] {addr + j * lstride} : new long[0], sge ? new int[] {len} : new int[0],
                    sge ? new int[] {lkey} : new int[0]));
        }
        return new Post(wrs, false, new long[] {rstride, lstride, flags, lastFlags});
    }

    private static int randomFlags(SplittableRandom rnd) {
        return (rnd.nextInt(5) == 0 ? SEND_FENCE : 0) | (rnd.nextBoolean() ? SEND_SIGNALED : 0)
                | (rnd.nextInt(4) == 0 ? SEND_SOLICITED : 0);
    }

    private static Case randomCase(SplittableRandom rnd, boolean builders, boolean bursts) {
        // bursts: rings up to 512 WQEBBs too, so that a burst crosses a multiple of 256 inside the ring (WqeBurst
        // splits its runs there)
        int wqeCnt = 8 << rnd.nextInt(bursts ? 7 : 5);
        int maxGs = 1 + rnd.nextInt(8);
        int maxInline = rnd.nextInt(4) == 0 ? 0 : 4 + rnd.nextInt(157);
        int[] starts = {0, wqeCnt - 1, wqeCnt - 2, 0xFFFE, 0xFFFF_FFF0, rnd.nextInt()};
        Qp qp = new Qp(wqeCnt, wqeCnt / 4, maxGs, maxInline, 1 + rnd.nextInt(0xFF_FFFF), rnd.nextBoolean() ? 0 : 8,
                rnd.nextInt(4) == 0 ? 512 : 256, rnd.nextInt(4) == 0 ? 0 : 1 + rnd.nextInt(7), rnd.nextInt(4) == 0 ? 0 : 1,
                rnd.nextInt(6) == 0 ? 1 : 0, starts[rnd.nextInt(starts.length)]);
        List<Step> steps = new ArrayList<>();
        int head = qp.curPost;
        int chains = 5 + rnd.nextInt(20);
        for (int k = 0; k < chains; k++) {
            if (builders || rnd.nextInt(8) != 0) {
                steps.add(new Tail(head)); // everything completed; otherwise the ring fills up
            }
            int n = rnd.nextInt(3) == 0 ? 1 : 1 + rnd.nextInt(builders ? qp.maxPost : qp.maxPost + 2);
            if (bursts) {
                steps.add(randomBurst(rnd, qp, n));
                head += n;
                continue;
            }
            List<Wr> wrs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                wrs.add(randomWr(rnd, qp, builders));
            }
            steps.add(new Post(wrs, builders, null));
            head += n; // an upper bound is enough for Tail: libmlx5 only compares head - tail
        }
        return new Case(qp, steps);
    }

    private static Wr randomWr(SplittableRandom rnd, Qp qp, boolean builders) {
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
        boolean inline = !atomic && opcode != 4 && qp.maxInline > 0 && rnd.nextInt(3) == 0;
        int nsge = atomic ? 1 : builders && !inline ? 1 + rnd.nextInt(qp.maxGs) : rnd.nextInt(qp.maxGs + 1);
        if (inline) {
            flags |= SEND_INLINE;
            nsge = 1 + rnd.nextInt(Math.min(qp.maxGs, 4));
        }
        long[] addr = new long[nsge];
        int[] len = new int[nsge];
        int[] lkey = new int[nsge];
        int budget = qp.maxInline;
        for (int i = 0; i < nsge; i++) {
            lkey[i] = rnd.nextInt();
            if (inline) {
                len[i] = i == nsge - 1 ? rnd.nextInt(budget + 1) : rnd.nextInt(budget / 2 + 1);
                if (builders && len[i] == 0) {
                    len[i] = Math.min(1, budget);
                }
                budget -= len[i];
                addr[i] = rnd.nextInt(60000);
            } else {
                len[i] = atomic ? 8 : rnd.nextInt(6) == 0 && !builders ? 0 : 1 + rnd.nextInt(1 << 20);
                addr[i] = rnd.nextLong();
            }
        }
        return new Wr(rnd.nextLong() & Long.MAX_VALUE, opcode, flags, rnd.nextInt(), rnd.nextLong(), rnd.nextInt(),
                rnd.nextLong(), rnd.nextLong(), addr, len, lkey);
    }
}
