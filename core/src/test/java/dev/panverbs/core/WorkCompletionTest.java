package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.ibverbs.LibIbverbsStrings;
import dev.panverbs.bindings.verbs.ibv_wc;
import dev.panverbs.bindings.verbs.verbs_h;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** Enum values and texts against libibverbs, and the flyweight against the generated ibv_wc layout. */
class WorkCompletionTest {

    @Test
    void statusTextIsIbvWcStatusStr() {
        for (WorkCompletionStatus s : WorkCompletionStatus.values()) {
            String c = LibIbverbsStrings.ibv_wc_status_str(s.value()).reinterpret(256).getString(0);
            assertThat(s.description()).as(s.name()).isEqualTo(c);
            assertThat(WorkCompletionStatus.of(s.value())).isSameAs(s);
        }
        assertThat(WorkCompletionStatus.RNR_RETRY_EXC_ERR.value()).isEqualTo(verbs_h.IBV_WC_RNR_RETRY_EXC_ERR())
                .isEqualTo(13);
        assertThat(WorkCompletionStatus.REM_ACCESS_ERR.value()).isEqualTo(10);
        assertThat(WorkCompletionStatus.of(999)).isSameAs(WorkCompletionStatus.GENERAL_ERR);
    }

    @Test
    void opcodeValues() {
        assertThat(WorkCompletionOpcode.RECV.value()).isEqualTo(verbs_h.IBV_WC_RECV()).isEqualTo(128);
        assertThat(WorkCompletionOpcode.RECV_RDMA_WITH_IMM.isReceive()).isTrue();
        assertThat(WorkCompletionOpcode.RDMA_READ.isReceive()).isFalse();
        for (WorkCompletionOpcode o : WorkCompletionOpcode.values()) {
            assertThat(WorkCompletionOpcode.of(o.value())).isSameAs(o);
        }
        assertThat(WorkRequestOpcode.ATOMIC_FETCH_AND_ADD.value()).isEqualTo(verbs_h.IBV_WR_ATOMIC_FETCH_AND_ADD());
        assertThat(SendOperation.RDMA_READ.bit()).isEqualTo(verbs_h.IBV_QP_EX_WITH_RDMA_READ());
        assertThat(CompletionField.COMPLETION_TIMESTAMP.bit()).isEqualTo(verbs_h.IBV_WC_EX_WITH_COMPLETION_TIMESTAMP());
        assertThat(SendFlag.SIGNALED.bit()).isEqualTo(SendFlag.SIGNALED_BIT).isEqualTo(2);
        for (SendOperation op : SendOperation.values()) { // every ibv_wr_* operation maps onto a classic opcode
            assertThat(WorkRequestOpcode.valueOf(op.name())).isNotNull();
        }
    }

    /** CompletionQueue.poll passes capacity() as num_entries: the provider may write that many 48-byte ibv_wc. */
    @Test
    void pollArrayHoldsCapacityEntriesOfGccSize() {
        for (int capacity : new int[] {1, 16, 1000}) {
            WorkCompletions wcs = WorkCompletions.allocate(capacity);
            assertThat(wcs.capacity()).isEqualTo(capacity);
            assertThat(wcs.array().byteSize()).as("capacity %d", capacity).isEqualTo(capacity * 48L);
        }
    }

    @Test
    void flyweightReadsEachSlot() {
        WorkCompletions wcs = WorkCompletions.allocate(3);
        MemorySegment array = wcs.array();
        assertThat(WorkCompletions.WC_SIZE).isEqualTo(48);
        for (int i = 0; i < 3; i++) {
            MemorySegment wc = array.asSlice(i * 48L, ibv_wc.layout());
            ibv_wc.wr_id(wc, 1000 + i);
            ibv_wc.status(wc, i == 2 ? verbs_h.IBV_WC_REM_ACCESS_ERR() : 0);
            ibv_wc.opcode(wc, verbs_h.IBV_WC_RECV_RDMA_WITH_IMM());
            ibv_wc.byte_len(wc, 4096 * i);
            ibv_wc.imm_data(wc, Integer.reverseBytes(0x0A0B0C0D + i)); // __be32 as the provider stores it
            ibv_wc.qp_num(wc, 0x11 + i);
            ibv_wc.src_qp(wc, 0x22);
            ibv_wc.wc_flags(wc, verbs_h.IBV_WC_WITH_IMM() | verbs_h.IBV_WC_GRH());
            ibv_wc.slid(wc, (short) 0xBEEF);
            ibv_wc.sl(wc, (byte) 3);
            ibv_wc.vendor_err(wc, 0x33);
        }
        wcs.count(3);
        WorkCompletion first = wcs.get(0);
        assertThat(first.wrId()).isEqualTo(1000);
        assertThat(first.ok()).isTrue();
        assertThat(first.opcode()).isEqualTo(WorkCompletionOpcode.RECV_RDMA_WITH_IMM);
        assertThat(first.immData()).isEqualTo(0x0A0B0C0D);
        assertThat(first.hasImm()).isTrue();
        assertThat(first.hasGrh()).isTrue();
        assertThat(first.hasInv()).isFalse();
        assertThat(first.slid()).isEqualTo(0xBEEF);
        assertThat(first.sl()).isEqualTo(3);
        WorkCompletion third = wcs.get(2);
        assertThat(third).isSameAs(first); // one flyweight, repositioned
        assertThat(third.wrId()).isEqualTo(1002);
        assertThat(third.byteLen()).isEqualTo(8192);
        assertThat(third.status()).isEqualTo(WorkCompletionStatus.REM_ACCESS_ERR);
        assertThat(third.qpNum()).isEqualTo(0x13);
        assertThat(third.vendorErr()).isEqualTo(0x33);
        assertThat(third.immData()).isEqualTo(0x0A0B0C0F);
        assertThatThrownBy(() -> wcs.get(3)).isInstanceOf(IndexOutOfBoundsException.class);
    }

    /** The flyweight reads a whole struct at the slot's address: a count above the capacity would read past it. */
    @Test
    void aPollCountAboveTheCapacityIsRefusedAndCopyToTakesTheCurrentSlot() {
        WorkCompletions wcs = WorkCompletions.allocate(2);
        ibv_wc.wr_id(wcs.array().asSlice(48, ibv_wc.layout()), 77);
        assertThatThrownBy(() -> wcs.count(3)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("3 completions into an array of 2");
        assertThatThrownBy(() -> wcs.get(0)).as("nothing readable after the refusal")
                .isInstanceOf(IndexOutOfBoundsException.class);
        wcs.count(2);
        MemorySegment copy = MemorySegment.ofArray(new long[6]);
        wcs.get(1).copyTo(copy);
        assertThat(ibv_wc.wr_id(copy)).isEqualTo(77);
    }
}
