package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.UnsupportedSlotException;
import dev.panverbs.bindings.ibverbs.CqExOps;
import dev.panverbs.bindings.ibverbs.QpExOps;
import dev.panverbs.bindings.mlx5.Mlx5dvInlineWr;
import dev.panverbs.bindings.mlx5dv.mlx5dv_qp_ex;
import dev.panverbs.bindings.verbs.ibv_context;
import dev.panverbs.bindings.verbs.ibv_context_ops;
import dev.panverbs.bindings.verbs.ibv_cq;
import dev.panverbs.bindings.verbs.ibv_cq_ex;
import dev.panverbs.bindings.verbs.ibv_qp;
import dev.panverbs.bindings.verbs.ibv_qp_ex;
import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A provider function pointer left NULL reaches users of core as {@link UnsupportedVerbException} and nothing else,
 * whichever object finds it: the QP's {@code ibv_qp_ex} builders ({@link PostBatch}), the CQ's {@code ibv_cq_ex}
 * readers ({@link ExtendedCompletionQueue}), the context's data-path ops, and the {@code mlx5dv_qp_ex} builders that
 * the mlx5 extensions will call. No device: the core objects are made by their creation verbs' constructors over
 * fake C objects in Java memory whose slots are NULL (a dummy non-NULL address where a slot must exist; never
 * called). The fakes are never closed, as their destroy verbs would call libibverbs.
 */
class MissingProviderSlotTest {

    /** Stands in for the provider ops that must be present; a slot test never calls it. */
    private static final MemorySegment NEVER_CALLED = Linker.nativeLinker().defaultLookup().find("getpid").orElseThrow();

    private final Arena arena = Arena.global();
    private Context context;
    private MemorySegment ctx;

    @BeforeEach
    void fakeContext() {
        ctx = arena.allocate(ibv_context.sizeof(), 8);
        ibv_context.async_fd(ctx, -1);
        for (long slot : new long[] {ibv_context_ops.post_send$offset(), ibv_context_ops.post_recv$offset(),
                ibv_context_ops.post_srq_recv$offset(), ibv_context_ops.poll_cq$offset(),
                ibv_context_ops.req_notify_cq$offset()}) {
            ctx.set(ValueLayout.ADDRESS, ibv_context.ops$offset() + slot, NEVER_CALLED);
        }
        context = new Context(new Device("fake0", 0L, NodeType.CA, TransportType.IB, 0), ctx);
    }

    @Test
    void postBatchOnAQpWithoutProviderBuildersIsUnsupportedVerb() {
        MemorySegment qpEx = arena.allocate(ibv_qp_ex.sizeof(), 8); // every wr_* slot NULL
        ibv_qp.context(qpEx, ctx); // ibv_qp_ex starts with its ibv_qp
        ibv_qp.qp_num(qpEx, 0x100);
        CompletionQueue cq = new CompletionQueue(context, null, fakeCq(), "CompletionQueue");
        ProtectionDomain pd = new ProtectionDomain(context, arena.allocate(64, 8));
        QueuePair qp = new QueuePair(new QueuePairBuilder.Created(pd, cq, cq, QueuePairType.RC,
                new QueuePairCapabilities(4, 4, 1, 1, 0), false, true, 1, qpEx, qpEx,
                SendOperation.bits(EnumSet.of(SendOperation.SEND)), false, new QueuePair.Cleanup(), "QueuePair[RC fake]"));
        qp.trackedState = QueuePairState.RTS;
        for (int i = 0; i < 2; i++) { // the refusal leaves the send side free: the second attempt fails the same way
            assertUnsupportedSlot(qp::startSend, "ibv_wr_start", "provider op ibv_qp_ex.wr_start",
                    "the QP was not created by ibv_create_qp_ex with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS in comp_mask");
        }
    }

    @Test
    void extendedCqWithoutProviderPollOpsIsUnsupportedVerb() {
        MemorySegment cqEx = arena.allocate(ibv_cq_ex.sizeof(), 8); // every poll and read slot NULL
        ibv_cq_ex.context(cqEx, ctx);
        ExtendedCompletionQueue cq = new ExtendedCompletionQueue(context, null, cqEx, 0L, false);
        for (int i = 0; i < 2; i++) { // the refusal opened no pass
            assertUnsupportedSlot(cq::startPoll, "ibv_start_poll", "provider op ibv_cq_ex.start_poll",
                    "the CQ was not created by ibv_create_cq_ex");
        }
    }

    @Test
    void readingACompletionFieldNotRequestedIsUnsupportedVerb() {
        MemorySegment cqEx = arena.allocate(ibv_cq_ex.sizeof(), 8);
        ibv_cq_ex.context(cqEx, ctx);
        ExtendedCompletionQueue cq = new ExtendedCompletionQueue(context, null, cqEx,
                CompletionField.bits(EnumSet.of(CompletionField.SLID)), false);
        assertThatThrownBy(cq::readByteLen).isInstanceOf(UnsupportedVerbException.class)
                .hasMessageStartingWith("ibv_wc_read_byte_len: unsupported: completion field BYTE_LEN; ")
                .hasMessageContaining("was not created with BYTE_LEN in wcFlags (requested: [SLID])")
                .satisfies(e -> assertThat(((UnsupportedVerbException) e).errno()).isZero());
    }

    @Test
    void contextWithoutDataPathOpsIsUnsupportedVerb() {
        MemorySegment foreign = arena.allocate(ibv_context.sizeof(), 8); // every ops slot NULL
        ibv_context.async_fd(foreign, -1);
        Context bare = new Context(new Device("fake1", 1L, NodeType.CA, TransportType.IB, 1), foreign);
        MemorySegment cq = arena.allocate(ibv_cq.sizeof(), 8);
        ibv_cq.context(cq, foreign);
        assertUnsupportedSlot(() -> new CompletionQueue(bare, null, cq, "CompletionQueue"), "ibv_post_send",
                "provider op ibv_context.ops.post_send", "the provider installed no such op in its ibv_context");
    }

    @Test
    void bindingsUsedByCoreThrowUnsupportedVerbForEveryProviderStruct() {
        // what the mlx5 extensions (and any later provider code) get from the same bindings, with core loaded
        MemorySegment mqp = arena.allocate(mlx5dv_qp_ex.sizeof(), 8);
        assertUnsupportedSlot(() -> Mlx5dvInlineWr.mlx5dv_wr_memcpy(mqp, 0, 0, 0, 0, 0), "mlx5dv_wr_memcpy",
                "provider op mlx5dv_qp_ex.wr_memcpy", "MLX5DV_QP_EX_WITH_MEMCPY");
        assertUnsupportedSlot(() -> QpExOps.of(arena.allocate(ibv_qp_ex.sizeof(), 8)).ibv_wr_rdma_write(1, 2),
                "ibv_wr_rdma_write", "provider op ibv_qp_ex.wr_rdma_write", "IBV_QP_EX_WITH_RDMA_WRITE");
        assertUnsupportedSlot(() -> CqExOps.of(arena.allocate(ibv_cq_ex.sizeof(), 8)).ibv_wc_read_byte_len(),
                "ibv_wc_read_byte_len", "provider op ibv_cq_ex.read_byte_len", "IBV_WC_EX_WITH_BYTE_LEN");
    }

    private MemorySegment fakeCq() {
        MemorySegment cq = arena.allocate(ibv_cq.sizeof(), 8);
        ibv_cq.context(cq, ctx);
        ibv_cq.cqe(cq, 16);
        return cq;
    }

    private static void assertUnsupportedSlot(ThrowingCallable call, String verb, String capability, String why) {
        assertThatThrownBy(call).isInstanceOf(UnsupportedVerbException.class)
                .hasMessageStartingWith(verb + ": unsupported: " + capability + "; the provider left ")
                .hasMessageContaining(why)
                .hasCauseInstanceOf(UnsupportedSlotException.class)
                .satisfies(e -> {
                    UnsupportedVerbException u = (UnsupportedVerbException) e;
                    assertThat(u.verb()).isEqualTo(verb);
                    assertThat(u.capability()).isEqualTo(capability);
                    assertThat(u.errno()).isZero();
                });
    }
}
