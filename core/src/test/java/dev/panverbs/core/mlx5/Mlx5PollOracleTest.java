package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.bindings.verbs.ibv_wc;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link CqePoller} against libmlx5's {@code mlx5_poll_cq}, {@code mlx5_arm_cq} and {@code mlx5_cq_event}: random
 * 64-byte CQEs (every requester and responder opcode, success and error with every syndrome and random ones,
 * resize and reserved opcodes, CQEs of an unknown QP) are produced over several laps of CQs of 4..64 entries, with
 * the owner bit of each lap, and polled in random batch sizes, also before the producer wrote them. Both sides fill
 * the {@code ibv_wc} array with 0xCC first, so every field is compared, including the ones libmlx5 leaves unwritten
 * ({@code byte_len} of successful sends and writes, {@code opcode} of errors): the Java poller must leave them
 * alone too. The return code, {@code cons_index}, the consumer-index doorbell record, and the arm doorbell record
 * and register after arming (solicited or not, after 0..3 events) must be equal.
 */
class Mlx5PollOracleTest {
    private static final int[] OPCODES = {0, 0, 0, 0, 1, 2, 2, 3, 4, 13, 13, 14, 5, 6, 7, 9, 11};
    private static final int[] REQ_OPS = {0x08, 0x09, 0x0a, 0x0b, 0x01, 0x10, 0x11, 0x12, 0x25, 0x00, 0x0e, 0x33};
    private static final int[] SYNDROMES = {0x01, 0x02, 0x04, 0x05, 0x06, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16,
        0x22, 0x7f};

    @Test
    void pollEqualsLibmlx5ForRandomCqes() {
        compare(false, 0xc0ffeeL);
    }

    /** CQE version 1 (ConnectX-4 and later): libmlx5 finds the QP by the user index in srqn_uidx. */
    @Test
    void pollEqualsLibmlx5ForRandomCqesOfCqeVersion1() {
        compare(true, 0xbeefL);
    }

    private static void compare(boolean v1, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        StringBuilder script = new StringBuilder();
        List<Runnable> replay = new ArrayList<>();
        List<String> expectations = new ArrayList<>();
        int[] produced = {0};
        try (Arena arena = Arena.ofConfined()) {
            List<CqCase> cases = new ArrayList<>();
            while (produced[0] < 13_500) {
                cases.add(randomCase(rnd, produced, v1));
            }
            for (CqCase c : cases) {
                script.append(c.script);
            }
            Iterator<String> out = Mlx5Oracle.run(script).iterator();
            int polled = 0;
            int errors = 0;
            int laps = 0;
            for (CqCase c : cases) {
                MemorySegment buf = arena.allocate(64L * c.ncqe, 64);
                for (int i = 0; i < c.ncqe; i++) {
                    buf.set(ValueLayout.JAVA_BYTE, i * 64L + 63, (byte) 0xF1);
                }
                MemorySegment dbrec = arena.allocate(8).fill((byte) 0);
                MemorySegment uar = arena.allocate(8).fill((byte) 0);
                CqePoller p = new CqePoller(buf, c.ncqe, dbrec, uar, 0x77, 0, v1);
                long[] sq = new long[c.sqCnt];
                long[] rq = new long[c.rqCnt];
                for (int i = 0; i < sq.length; i++) {
                    sq[i] = 0x5100000000L + i;
                }
                for (int i = 0; i < rq.length; i++) {
                    rq[i] = 0x5200000000L + i;
                }
                // the send side as DirectSendQueue attaches it: the provider wr_id by WQE index (only retires), whose
                // low bits name the slot of the caller's wr_id (reported), and a sink that must be called once per
                // poll, with the last send completion's WQE and its provider wr_id
                long[] sqIds = new long[sq.length];
                long[] slots = new long[2 * sq.length]; // stride 2: a slot's second long is not the wr_id
                for (int i = 0; i < sq.length; i++) {
                    sqIds[i] = 0x5300000000L + i;
                    slots[2 * i] = sq[i];
                    slots[2 * i + 1] = -1;
                }
                int[] retired = {0, -1};
                CqePoller.Target target = new CqePoller.Target(c.qpn, rq);
                target.send(sqIds, slots, sq.length - 1, 2, (idx, wr) -> {
                    assertThat(wr).as("provider wr_id retired").isEqualTo(0x5300000000L + idx);
                    retired[0]++;
                    retired[1] = idx;
                    return wr;
                });
                p.attach(target);
                MemorySegment wcs = arena.allocate(64 * CqePoller.WC_SIZE);
                laps = Math.max(laps, c.laps);
                for (String op : c.ops) {
                    String[] a = op.split(" ");
                    switch (a[0]) {
                        case "E" -> MemorySegment.copy(Mlx5Oracle.unhex(a[2]), 0, buf, ValueLayout.JAVA_BYTE,
                                Integer.parseInt(a[1]) * 64L, 64);
                        case "L" -> {
                            int n = Integer.parseInt(a[1]);
                            wcs.fill((byte) 0xCC);
                            retired[0] = 0;
                            int rc = p.poll(wcs, n);
                            assertThat(String.format("N %d %d %08x", rc, Integer.toUnsignedLong(p.consIndex),
                                    dbrec.get(WqeWriter.BE32, 0))).as(() -> c.ops.toString()).isEqualTo(out.next());
                            for (int i = 0; i < rc; i++) {
                                assertThat(wcLine(wcs, i)).as(() -> "completion of " + op + " in " + c.ops)
                                        .isEqualTo(out.next());
                                int status = wcs.get(ValueLayout.JAVA_INT, i * CqePoller.WC_SIZE
                                        + ibv_wc.status$offset());
                                errors += status != 0 ? 1 : 0;
                            }
                            int lastSend = -1;
                            for (int i = 0; i < rc; i++) {
                                long id = wcs.get(ValueLayout.JAVA_LONG, i * CqePoller.WC_SIZE);
                                if (id >>> 32 == 0x51) {
                                    lastSend = (int) (id - 0x5100000000L);
                                }
                            }
                            if (rc >= 0) {
                                assertThat(retired[0]).as("retirements in one poll").isEqualTo(lastSend < 0 ? 0 : 1);
                                if (lastSend >= 0) {
                                    assertThat(retired[1]).as("retired through the last send completion")
                                            .isEqualTo(lastSend);
                                }
                            }
                            polled += Math.max(rc, 0);
                        }
                        case "A" -> {
                            p.arm(a[1].equals("1"));
                            assertThat(String.format("Y %08x  %s", dbrec.get(WqeWriter.BE32, 4),
                                    Mlx5Oracle.hex(uar.toArray(ValueLayout.JAVA_BYTE)))).isEqualTo(out.next());
                        }
                        case "V" -> {
                            for (int i = Integer.parseInt(a[1]); i > 0; i--) {
                                p.eventArrived();
                            }
                        }
                        default -> throw new AssertionError(op);
                    }
                }
            }
            assertThat(out.hasNext()).isFalse();
            assertThat(polled).isGreaterThanOrEqualTo(10_000);
            assertThat(errors).as("error completions").isGreaterThan(polled / 20);
            assertThat(laps).as("owner-bit laps of one CQ").isGreaterThanOrEqualTo(4);
        }
    }

    private static String wcLine(MemorySegment wcs, int i) {
        long b = i * CqePoller.WC_SIZE;
        return "WC " + Long.toUnsignedString(wcs.get(ValueLayout.JAVA_LONG, b + ibv_wc.wr_id$offset())) + " "
                + u32(wcs, b + ibv_wc.status$offset()) + " " + u32(wcs, b + ibv_wc.opcode$offset()) + " "
                + u32(wcs, b + ibv_wc.vendor_err$offset()) + " " + u32(wcs, b + ibv_wc.byte_len$offset()) + " "
                + u32(wcs, b + ibv_wc.imm_data$offset()) + " " + u32(wcs, b + ibv_wc.qp_num$offset()) + " "
                + u32(wcs, b + ibv_wc.src_qp$offset()) + " " + u32(wcs, b + ibv_wc.wc_flags$offset()) + " "
                + (wcs.get(ValueLayout.JAVA_SHORT, b + ibv_wc.pkey_index$offset()) & 0xFFFF) + " "
                + (wcs.get(ValueLayout.JAVA_SHORT, b + ibv_wc.slid$offset()) & 0xFFFF) + " "
                + (wcs.get(ValueLayout.JAVA_BYTE, b + ibv_wc.sl$offset()) & 0xFF) + " "
                + (wcs.get(ValueLayout.JAVA_BYTE, b + ibv_wc.dlid_path_bits$offset()) & 0xFF);
    }

    private static long u32(MemorySegment s, long off) {
        return Integer.toUnsignedLong(s.get(ValueLayout.JAVA_INT, off));
    }

    record CqCase(int ncqe, int qpn, int sqCnt, int rqCnt, String script, List<String> ops, int laps) {}

    private static CqCase randomCase(SplittableRandom rnd, int[] produced, boolean v1) {
        int ncqe = 4 << rnd.nextInt(5);
        int qpn = 1 + rnd.nextInt(0xFF_FFFF);
        int uidx = v1 ? 1 + rnd.nextInt(0xFF_FFFF) : 0;
        int sqCnt = 8 << rnd.nextInt(4);
        int rqCnt = 8 << rnd.nextInt(4);
        List<String> ops = new ArrayList<>();
        int prod = 0;
        int cons = 0;
        int events = 0;
        int rounds = 4 + rnd.nextInt(40);
        for (int r = 0; r < rounds; r++) {
            int k = rnd.nextInt(ncqe - (prod - cons) + 1);
            for (int i = 0; i < k; i++) {
                byte[] cqe = randomCqe(rnd, qpn, uidx, (prod / ncqe) & 1);
                ops.add("E " + (prod & (ncqe - 1)) + " " + Mlx5Oracle.hex(cqe));
                prod++;
            }
            produced[0] += k;
            while (cons < prod || rnd.nextInt(4) == 0) {
                int n = 1 + rnd.nextInt(8);
                ops.add("L " + n);
                cons = Math.min(prod, cons + n); // an upper bound: a POLL_ERR stops a batch early
                if (cons == prod) {
                    break;
                }
            }
            cons = prod; // drained: the loop polls until the batch is consumed (re-polls follow in the next round)
            ops.add("L 8");
            if (rnd.nextInt(3) == 0) {
                int e = rnd.nextInt(3);
                events += e;
                if (e > 0) {
                    ops.add("V " + e);
                }
                ops.add("A " + (rnd.nextBoolean() ? 1 : 0));
            }
        }
        StringBuilder sb = new StringBuilder("C " + ncqe + " " + qpn + " " + sqCnt + " " + rqCnt + " " + uidx + "\n");
        ops.forEach(o -> sb.append(o).append('\n'));
        return new CqCase(ncqe, qpn, sqCnt, rqCnt, sb.toString(), ops, prod / ncqe);
    }

    private static byte[] randomCqe(SplittableRandom rnd, int qpn, int uidx, int owner) {
        byte[] c = new byte[64];
        rnd.nextBytes(c);
        int opcode = OPCODES[rnd.nextInt(OPCODES.length)];
        boolean unknown = rnd.nextInt(40) == 0; // a QP this CQ does not know: both its number and user index
        int q = unknown ? qpn ^ 0x5a5a : qpn;
        int top = opcode == 0 ? REQ_OPS[rnd.nextInt(REQ_OPS.length)] : c[56] & 0xFF;
        put32(c, 56, top << 24 | q);
        // srqn_uidx: version 0 no SRQ; version 1 the QP's user index (its top byte is reserved)
        put32(c, 32, c[32] << 24 | (uidx == 0 ? 0 : unknown ? uidx ^ 0x3c3c : uidx));
        if (opcode == 13 || opcode == 14) {
            c[55] = (byte) SYNDROMES[rnd.nextInt(SYNDROMES.length)];
        }
        c[63] = (byte) (opcode << 4 | (c[63] & 0x2) | owner); // no inline scatter (bits 2, 3)
        return c;
    }

    private static void put32(byte[] b, int off, int v) {
        b[off] = (byte) (v >>> 24);
        b[off + 1] = (byte) (v >>> 16);
        b[off + 2] = (byte) (v >>> 8);
        b[off + 3] = (byte) v;
    }
}
