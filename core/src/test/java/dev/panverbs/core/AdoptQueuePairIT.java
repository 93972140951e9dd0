package dev.panverbs.core;

import static dev.panverbs.bindings.verbs.verbs_h.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.LibIbverbsQueues;
import dev.panverbs.bindings.ibverbs.VerbsContextInline;
import dev.panverbs.bindings.verbs.ibv_qp;
import dev.panverbs.bindings.verbs.ibv_qp_cap;
import dev.panverbs.bindings.verbs.ibv_qp_init_attr_ex;
import dev.panverbs.core.internal.NativeHandles;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@code NativeHandles.Access.adoptQueuePair} on a real device: a QP created with the raw bindings (as mlx5dv or
 * rdma_cm would create one) becomes an ordinary {@link QueuePair}: it connects, moves data, retires its
 * completions, and closes with its context through the destroy function it was given, exactly once.
 */
class AdoptQueuePairIT extends DataPathResources {
    private final AtomicInteger destroyed = new AtomicInteger();

    private int countingDestroy(MemorySegment qp) {
        destroyed.incrementAndGet();
        return LibIbverbsQueues.ibv_destroy_qp(qp);
    }

    /** ibv_create_qp (sendOps empty) or ibv_create_qp_ex with send_ops_flags, straight through the bindings. */
    private MemorySegment rawQp(CompletionQueue sendCq, CompletionQueue recvCq, Set<SendOperation> sendOps) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_qp_init_attr_ex.layout());
            ibv_qp_init_attr_ex.send_cq(attr, NativeHandles.handle(sendCq, "ibv_create_qp"));
            ibv_qp_init_attr_ex.recv_cq(attr, NativeHandles.handle(recvCq, "ibv_create_qp"));
            MemorySegment cap = ibv_qp_init_attr_ex.cap(attr);
            ibv_qp_cap.max_send_wr(cap, 16);
            ibv_qp_cap.max_recv_wr(cap, 16);
            ibv_qp_cap.max_send_sge(cap, 1);
            ibv_qp_cap.max_recv_sge(cap, 1);
            ibv_qp_init_attr_ex.qp_type(attr, IBV_QPT_RC());
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment qp;
            if (sendOps.isEmpty()) {
                qp = LibIbverbsQueues.ibv_create_qp(errno, NativeHandles.pd(pd, "ibv_create_qp"), attr);
            } else {
                ibv_qp_init_attr_ex.pd(attr, NativeHandles.pd(pd, "ibv_create_qp_ex"));
                ibv_qp_init_attr_ex.comp_mask(attr, IBV_QP_INIT_ATTR_PD() | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS());
                ibv_qp_init_attr_ex.send_ops_flags(attr, SendOperation.bits(sendOps));
                qp = VerbsContextInline.ibv_create_qp_ex(errno, NativeHandles.context(ctx, "ibv_create_qp_ex"), attr);
            }
            assertThat(qp.address()).as("create QP, errno %d", Errno.get(errno)).isNotZero();
            return qp;
        }
    }

    private QueuePair adopt(CompletionQueue cq, MemorySegment qp, Set<SendOperation> sendOps) {
        return NativeHandles.access().adoptQueuePair(pd, cq, cq, QueuePairType.RC, qp, sendOps, "ibv_destroy_qp",
                this::countingDestroy);
    }

    @Test
    void rawRcQpAdoptedWritesReceivesAndClosesWithTheContext() {
        CompletionQueue cq = ctx.createCq(64).build();
        MemorySegment raw = rawQp(cq, cq, Set.of());
        QueuePair a = adopt(cq, raw, Set.of());
        assertThat(a.qpNum()).isEqualTo(ibv_qp.qp_num(raw.reinterpret(ibv_qp.sizeof())));
        assertThat(NativeHandles.handle(a, "test").address()).isEqualTo(raw.address());
        assertThat(a.type()).isEqualTo(QueuePairType.RC);
        assertThat(a.capabilities().maxSendWr()).isGreaterThanOrEqualTo(16);
        assertThat(a.capabilities().maxRecvWr()).isGreaterThanOrEqualTo(16);
        assertThat(a.sqSigAll()).isFalse();
        assertThat(a.protectionDomain()).isSameAs(pd);
        assertThat(a.sendCq()).isSameAs(cq);

        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(a, b);
        MemoryRegion src = pd.allocate(16384, ALL_REMOTE);
        MemoryRegion dst = pd.allocate(16384, ALL_REMOTE);
        fill(src.buffer(), 0, 16384, 11);

        a.sendRequests().rdmaWrite(1, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address()).sge(src, 0, 4096);
        assertThat(a.sendRequests().post()).isEqualTo(1);
        WorkCompletion wc = pollOne(cq);
        assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.RDMA_WRITE);
        assertThat(wc.qpNum()).isEqualTo(a.qpNum());
        assertSameBytes(src.buffer(), 0, dst.buffer(), 0, 4096);

        // the receive side of the adopted QP: a SEND from the built QP lands in its posted receive
        a.receiveRequests().recv(7).sge(src, 8192, 256);
        a.receiveRequests().post();
        b.sendRequests().send(8, SendFlag.SIGNALED_BIT).sge(dst, 1024, 200);
        b.sendRequests().post();
        boolean received = false;
        for (int i = 0; i < 2; i++) {
            wc = pollOne(cq);
            assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
            if (wc.wrId() == 7) {
                received = true;
                assertThat(wc.qpNum()).isEqualTo(a.qpNum());
                assertThat(wc.byteLen()).isEqualTo(200);
            }
        }
        assertThat(received).isTrue();
        assertSameBytes(dst.buffer(), 1024, src.buffer(), 8192, 200);
        // retired through the CQ directory: the regions are no longer in flight
        src.close();
        dst.close();

        assertThat(destroyed).hasValue(0);
        ctx.close();
        assertThat(destroyed).as("destroy function runs once, by the context's cascade").hasValue(1);
        assertThatThrownBy(a::sendRequests).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(a::state).isInstanceOf(IllegalStateException.class);
        a.close();
        assertThat(destroyed).hasValue(1);
    }

    @Test
    void extendedQpAdoptedPostsThroughItsBatchAndClosesOnce() {
        CompletionQueue cq = ctx.createCq(64).build();
        Set<SendOperation> ops = EnumSet.of(SendOperation.RDMA_WRITE, SendOperation.SEND);
        QueuePair a = adopt(cq, rawQp(cq, cq, ops), ops);
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(a, b);
        MemoryRegion src = pd.allocate(4096, ALL_REMOTE);
        MemoryRegion dst = pd.allocate(4096, ALL_REMOTE);
        fill(src.buffer(), 0, 4096, 5);
        try (PostBatch batch = a.startSend()) {
            batch.rdmaWrite(21, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address()).setSge(src, 0, 1024);
            batch.submit();
        }
        WorkCompletion wc = pollOne(cq);
        assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(wc.wrId()).isEqualTo(21);
        assertSameBytes(src.buffer(), 0, dst.buffer(), 0, 1024);

        a.close(); // closed directly this time; the context's cascade must not destroy it again
        assertThat(destroyed).hasValue(1);
        assertThatThrownBy(a::startSend).isInstanceOf(IllegalStateException.class);
        ctx.close();
        assertThat(destroyed).hasValue(1);
    }

    @Test
    void mismatchedHandleIsRefusedAndStaysTheCallers() {
        CompletionQueue cq = ctx.createCq(16).build();
        CompletionQueue other = ctx.createCq(16).build();
        MemorySegment raw = rawQp(cq, cq, Set.of());
        assertThatThrownBy(() -> NativeHandles.access().adoptQueuePair(pd, other, other, QueuePairType.RC, raw,
                Set.of(), "ibv_destroy_qp", this::countingDestroy))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("send_cq");
        assertThatThrownBy(() -> NativeHandles.access().adoptQueuePair(pd, cq, cq, QueuePairType.UC, raw,
                Set.of(), "ibv_destroy_qp", this::countingDestroy))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("qp_type");
        assertThatThrownBy(() -> adopt(cq, raw, EnumSet.of(SendOperation.RDMA_WRITE)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ibv_qp_to_qp_ex");
        assertThat(destroyed).hasValue(0);
        assertThat(LibIbverbsQueues.ibv_destroy_qp(raw)).isZero(); // still ours, and still a live QP
        ctx.close();
        assertThat(destroyed).hasValue(0);
    }
}
