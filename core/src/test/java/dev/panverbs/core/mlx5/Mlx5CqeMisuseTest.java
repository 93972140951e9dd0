package dev.panverbs.core.mlx5;

import static dev.panverbs.core.mlx5.Mlx5Model.LOCAL_WRITE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.WorkCompletionStatus;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/**
 * The mlx5 direct CQ fed what a misbehaving device or a misused CQ would give it, over the setup of
 * {@link Mlx5Fixture}: error CQEs, CQEs of a QP no direct queue writes, of a send WQE never written, of a
 * receive never posted. Error CQEs complete with their status; every CQE this path cannot attribute is a Java
 * exception naming the poll, returns the completions before it and retires no work still in flight.
 */
class Mlx5CqeMisuseTest extends Mlx5Fixture {

    @Test
    void errorCqesCompleteWithTheirStatusAndRetireTheirWork() throws Throwable {
        MemorySegment seg = arena.allocate(256, 64);
        MemoryRegion mr = fp.register(seg, 0x3333);
        Mlx5Model.reg.invokeExact(0x3333, seg.address(), 256L, LOCAL_WRITE);
        Mlx5Model.failNext.invokeExact(0x99); // a syndrome libmlx5 does not map: IBV_WC_GENERAL_ERR
        dsq.rdmaWrite(1, 0, mrRemote.rkey(), remote.address(), mr, 0, 8) // unsignaled: the error completes it
                .rdmaWrite(2, SIG, mrRemote.rkey(), remote.address(), mr, 8, 8).post();
        assertThat(ring()).isEqualTo(2);
        assertThat(dcq.poll(wcs)).isEqualTo(2);
        assertThat(wcs.get(0).wrId()).isEqualTo(1);
        assertThat(wcs.get(0).status()).isEqualTo(WorkCompletionStatus.GENERAL_ERR);
        assertThat(wcs.get(0).vendorErr()).isEqualTo(0x42);
        assertThat(wcs.get(1).status()).isEqualTo(WorkCompletionStatus.WR_FLUSH_ERR);
        mr.close(); // both retired
    }

    @Test
    void aCqeThisPathCannotAttributeIsRefusedAndTheCqStaysUsable() throws Throwable {
        // a requester CQE of a QP no direct queue writes (0xABCDE), owner bit 0 at index 0
        cqBuf.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 56, 0x08 << 24 | 0xABCDE);
        cqBuf.set(ValueLayout.JAVA_BYTE, 63, (byte) 0x00);
        assertThatThrownBy(() -> dcq.poll(wcs)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("mlx5 direct CQE poll").hasMessageContaining("CompletionQueue.poll");
        assertThat(wcs.count()).isZero();
        // the model's next CQE goes after the consumed one: a 32-CQE view from index 1 (owner 0 in both laps' view)
        Mlx5Model.qpFn.invokeExact(sq, 64, dbrec, qp.qpNum(), cqBuf.asSlice(64), 32, rcqBuf, 64, 0x999);
        dsq.rdmaWrite(7, SIG, mrRemote.rkey(), remote.address(), mrLocal, 0, 8).post();
        assertThat(ring()).isEqualTo(1);
        assertThat(dcq.poll(wcs)).isEqualTo(1);
        assertThat(wcs.get(0).wrId()).isEqualTo(7);
    }

    @Test
    void completionsBeforeAnUnattributableCqeAreReturnedAndTheNextPollRefusesIt() throws Throwable {
        dsq.rdmaWrite(5, SIG, mrRemote.rkey(), remote.address(), mrLocal, 0, 8).post();
        assertThat(ring()).isEqualTo(1); // its CQE at index 0
        cqBuf.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 64 + 56, 0x08 << 24 | 0xABCDE);
        cqBuf.set(ValueLayout.JAVA_BYTE, 64 + 63, (byte) 0x00); // an unknown QP's CQE at index 1
        assertThat(dcq.poll(wcs)).as("the completion before it is not lost").isEqualTo(1);
        assertThat(wcs.get(0).wrId()).isEqualTo(5);
        assertThatThrownBy(() -> dcq.poll(wcs)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("mlx5 direct CQE poll").hasMessageContaining("consumed");
        assertThat(wcs.count()).isZero();
        assertThat(dcq.poll(wcs)).isZero();
        mrLocal.close(); // the returned completion retired its WR
    }

    @Test
    void aCqeNamingASendWqeNeverWrittenIsRefusedAndRetiresNothing() throws Throwable {
        MemorySegment seg = arena.allocate(256, 64);
        MemoryRegion mr = fp.register(seg, 0x3333);
        Mlx5Model.reg.invokeExact(0x3333, seg.address(), 256L, LOCAL_WRITE);
        dsq.rdmaWrite(1, 0, mrRemote.rkey(), remote.address(), mr, 0, 8).post(); // WR 0 at WQE 0, not executed
        cqe(0, 0x00, 0x08 << 24 | qp.qpNum(), 5); // a requester CQE of this QP naming WQE 5: nothing written there
        assertThatThrownBy(() -> dcq.poll(wcs)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("mlx5 direct CQE poll").hasMessageContaining("send WQE 5")
                .hasMessageContaining("misbehaves");
        assertThatThrownBy(mr::close).as("WR 0 is still in flight: not retired by that CQE")
                .isInstanceOf(IllegalStateException.class);
        assertThat(mr.isOpen()).isTrue();
    }

    @Test
    void aReceiveCqeWithNoReceiveOutstandingIsRefusedAndLaterOnesRetireNothingStillPosted() {
        DirectReceiveQueue drq = receiveQueue();
        MemoryRegion l5 = fp.register(arena.allocate(64, 64), 0x4445);
        MemoryRegion l6 = fp.register(arena.allocate(64, 64), 0x4446);
        MemoryRegion l7 = fp.register(arena.allocate(64, 64), 0x4447);
        drq.recv(5).sge(l5, 0, 64);
        drq.post();
        cqe(0, 0x2, qp.qpNum(), 0); // RESP_SEND: completes receive 5
        cqe(1, 0x2, qp.qpNum(), 0); // one more: no receive is outstanding
        WorkCompletions one = WorkCompletions.allocate(1);
        assertThat(dcq.poll(one)).isEqualTo(1);
        assertThat(one.get(0).wrId()).isEqualTo(5);
        l5.close();
        assertThatThrownBy(() -> dcq.poll(one)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("mlx5 direct CQE poll").hasMessageContaining("receive queue")
                .hasMessageContaining("misbehaves");
        drq.recv(6).sge(l6, 0, 64);
        drq.recv(7).sge(l7, 0, 64);
        assertThat(drq.post()).isEqualTo(2);
        cqe(2, 0x2, qp.qpNum(), 0); // the device completes receive 6; the extra CQE above shifted attribution
        assertThatThrownBy(() -> dcq.poll(one)).as("refused rather than retiring receive 7 through it")
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("not the oldest outstanding");
        assertThatThrownBy(l7::close).as("receive 7 is still posted").isInstanceOf(IllegalStateException.class);
        assertThat(l7.isOpen()).isTrue();
    }

    /** A CQE written where the device would write it: index {@code k} of the first lap (owner bit 0). */
    private void cqe(int k, int opcode, int sopDropQpn, int wqeCounter) {
        cqBuf.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 64L * k + 56, sopDropQpn);
        cqBuf.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 64L * k + 60, (short) wqeCounter);
        cqBuf.set(ValueLayout.JAVA_BYTE, 64L * k + 63, (byte) (opcode << 4));
    }
}
