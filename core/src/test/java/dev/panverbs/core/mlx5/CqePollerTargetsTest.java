package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.verbs.ibv_wc;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link CqePoller}'s in-loop requester path when one CQ serves the send queues of two QPs (what
 * {@code Mlx5PollOracleTest}'s one-QP cases do not reach): completions of QP A, then B, then A again in one poll
 * report each WR's own wr_id and QP number, and each run of one QP's completions is retired once, through its last
 * WQE, in CQE order. Also the poll's one bounds check of the {@code ibv_wc} array, which its stores rely on.
 */
class CqePollerTargetsTest {
    private static final int NCQE = 16;
    private static final int QP_A = 0x1234, QP_B = 0xabcdef;

    @Test
    void completionsOfTwoQpsInOnePollAreReportedAndRetiredPerRun() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = invalidCqes(arena);
            CqePoller p = new CqePoller(buf, NCQE, arena.allocate(8), arena.allocate(8), 0x77, 0);
            List<String> retired = new ArrayList<>();
            p.attach(target(QP_A, 0xA0, retired));
            p.attach(target(QP_B, 0xB0, retired));
            // A WRITE@0, A SEND@1, B WRITE@0, B WRITE@1, B SEND@2, A WRITE@2, then a second poll: B WRITE@3
            int[][] cqes = {{QP_A, 0x08, 0}, {QP_A, 0x0a, 1}, {QP_B, 0x08, 0}, {QP_B, 0x08, 1}, {QP_B, 0x0a, 2},
                {QP_A, 0x08, 2}, {QP_B, 0x08, 3}};
            for (int i = 0; i < cqes.length; i++) {
                cqe(buf, i, cqes[i][0], cqes[i][1], cqes[i][2]);
            }
            MemorySegment wcs = arena.allocate(8 * CqePoller.WC_SIZE).fill((byte) 0xCC);

            assertThat(p.poll(wcs, 6)).isEqualTo(6);

            for (int i = 0; i < 6; i++) {
                long w = i * CqePoller.WC_SIZE;
                int qpn = cqes[i][0];
                assertThat(wcs.get(ValueLayout.JAVA_LONG, w + ibv_wc.wr_id$offset()))
                        .isEqualTo((qpn == QP_A ? 0xA0L : 0xB0L) + cqes[i][2]);
                assertThat(wcs.get(ValueLayout.JAVA_INT, w + ibv_wc.status$offset())).isZero();
                assertThat(wcs.get(ValueLayout.JAVA_INT, w + ibv_wc.opcode$offset()))
                        .isEqualTo(cqes[i][1] == 0x08 ? 1 : 0); // IBV_WC_RDMA_WRITE : IBV_WC_SEND
                assertThat(wcs.get(ValueLayout.JAVA_INT, w + ibv_wc.qp_num$offset())).isEqualTo(qpn);
                assertThat(wcs.get(ValueLayout.JAVA_INT, w + ibv_wc.wc_flags$offset())).isZero();
                assertThat(wcs.get(ValueLayout.JAVA_INT, w + ibv_wc.byte_len$offset())).as("unwritten")
                        .isEqualTo(0xCCCCCCCC);
                assertThat(wcs.get(ValueLayout.JAVA_INT, w + ibv_wc.src_qp$offset())).as("unwritten")
                        .isEqualTo(0xCCCCCCCC);
            }
            assertThat(retired).containsExactly("1234@1", "abcdef@2", "1234@2");

            retired.clear();
            assertThat(p.poll(wcs, 8)).isEqualTo(1);
            assertThat(wcs.get(ValueLayout.JAVA_LONG, ibv_wc.wr_id$offset())).isEqualTo(0xB3L);
            assertThat(retired).containsExactly("abcdef@3");
            assertThat(p.consIndex).isEqualTo(7);
        }
    }

    @Test
    void anArrayTooSmallForTheCountOrNotNativeIsRefusedBeforeAnyCqeIsConsumed() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = invalidCqes(arena);
            CqePoller p = new CqePoller(buf, NCQE, arena.allocate(8), arena.allocate(8), 0x77, 0);
            p.attach(target(QP_A, 0xA0, new ArrayList<>()));
            cqe(buf, 0, QP_A, 0x08, 0);

            assertThatThrownBy(() -> p.poll(arena.allocate(2 * CqePoller.WC_SIZE - 1), 2))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("poll of 2 completions into");
            assertThatThrownBy(() -> p.poll(MemorySegment.ofArray(new long[64]), 1))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("needs native memory");
            assertThat(p.consIndex).isZero();
            assertThat(p.poll(arena.allocate(CqePoller.WC_SIZE), 1)).isEqualTo(1);
        }
    }

    /** A send side as {@code DirectSendChecks.routeCompletions} attaches it: wr_id {@code base + idx}, slot idx. */
    private static CqePoller.Target target(int qpn, long base, List<String> retired) {
        long[] sq = new long[8];
        long[] slots = new long[2 * sq.length];
        for (int i = 0; i < sq.length; i++) {
            sq[i] = 0x5300000000L + i;
            slots[2 * i] = base + i;
            slots[2 * i + 1] = -1;
        }
        CqePoller.Target t = new CqePoller.Target(qpn);
        t.send(sq, slots, sq.length - 1, 2, (idx, wr) -> {
            assertThat(wr).isEqualTo(0x5300000000L + idx);
            retired.add(Integer.toHexString(qpn) + "@" + idx);
            return wr;
        });
        return t;
    }

    private static MemorySegment invalidCqes(Arena arena) {
        MemorySegment buf = arena.allocate(NCQE * 64L, 64).fill((byte) 0);
        for (int i = 0; i < NCQE; i++) {
            buf.set(ValueLayout.JAVA_BYTE, i * 64L + 63, (byte) 0xF1); // INVALID, owner 1
        }
        return buf;
    }

    /** A requester CQE of the first lap (owner 0): sop_drop_qpn, wqe_counter, op_own = REQ. */
    private static void cqe(MemorySegment buf, int i, int qpn, int sop, int wqeCounter) {
        buf.set(WqeWriter.BE32, i * 64L + 56, sop << 24 | qpn);
        buf.set(WqeWriter.BE32, i * 64L + 60, wqeCounter << 16 | 0x00);
    }
}
