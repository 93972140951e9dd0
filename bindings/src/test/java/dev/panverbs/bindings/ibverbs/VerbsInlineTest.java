package dev.panverbs.bindings.ibverbs;

import static dev.panverbs.bindings.ibverbs.FakeVerbs.args;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.UnsupportedSlotException;
import dev.panverbs.bindings.verbs.ibv_context;
import dev.panverbs.bindings.verbs.ibv_context_ops;
import dev.panverbs.bindings.verbs.ibv_dm;
import dev.panverbs.bindings.verbs.ibv_mr;
import dev.panverbs.bindings.verbs.ibv_mw;
import dev.panverbs.bindings.verbs.ibv_mw_bind;
import dev.panverbs.bindings.verbs.ibv_mw_bind_info;
import dev.panverbs.bindings.verbs.ibv_qp;
import dev.panverbs.bindings.verbs.ibv_wq;
import dev.panverbs.bindings.verbs.verbs_h;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The {@code ibv_context.ops} twins and their {@link ContextOps} route, the {@code ibv_wq}/{@code ibv_dm}
 * slots, {@code ibv_bind_mw}'s checks, the size-injecting wrappers and the pure helpers.
 */
class VerbsInlineTest {

    /** One ops twin: its slot in {@code ibv_context} and how to call it (twin and, if any, bound route). */
    record Op(String verb, String slot, long offset, FunctionDescriptor descriptor, Object ret,
            Function<FakeVerbs, Object> twin, Function<FakeVerbs, Object> bound, Function<FakeVerbs, List<Object>> args) {
        @Override
        public String toString() {
            return verb;
        }
    }

    static List<Op> ops() {
        MemorySegment bad = MemorySegment.ofAddress(0x5000);
        return List.of(
                new Op("ibv_post_send", "post_send", VerbsInline.OPS_POST_SEND, ibv_context_ops.post_send.descriptor(), 12,
                        f -> VerbsInline.ibv_post_send(f.qp, f.attr, bad),
                        f -> ContextOps.of(f.ctx).ibv_post_send(f.qp, f.attr, bad), f -> args(f.qp, f.attr, bad)),
                new Op("ibv_post_recv", "post_recv", VerbsInline.OPS_POST_RECV, ibv_context_ops.post_recv.descriptor(), 13,
                        f -> VerbsInline.ibv_post_recv(f.qp, f.attr, bad),
                        f -> ContextOps.of(f.ctx).ibv_post_recv(f.qp, f.attr, bad), f -> args(f.qp, f.attr, bad)),
                new Op("ibv_post_srq_recv", "post_srq_recv", VerbsInline.OPS_POST_SRQ_RECV,
                        ibv_context_ops.post_srq_recv.descriptor(), 14,
                        f -> VerbsInline.ibv_post_srq_recv(f.srq, f.attr, bad),
                        f -> ContextOps.of(f.ctx).ibv_post_srq_recv(f.srq, f.attr, bad), f -> args(f.srq, f.attr, bad)),
                new Op("ibv_poll_cq", "poll_cq", VerbsInline.OPS_POLL_CQ, ibv_context_ops.poll_cq.descriptor(), 3,
                        f -> VerbsInline.ibv_poll_cq(f.cq, 16, f.attr),
                        f -> ContextOps.of(f.ctx).ibv_poll_cq(f.cq, 16, f.attr), f -> args(f.cq, 16, f.attr)),
                new Op("ibv_req_notify_cq", "req_notify_cq", VerbsInline.OPS_REQ_NOTIFY_CQ,
                        ibv_context_ops.req_notify_cq.descriptor(), 0,
                        f -> VerbsInline.ibv_req_notify_cq(f.cq, 1),
                        f -> ContextOps.of(f.ctx).ibv_req_notify_cq(f.cq, 1), f -> args(f.cq, 1)),
                new Op("ibv_alloc_mw", "alloc_mw", VerbsInline.OPS_ALLOC_MW, ibv_context_ops.alloc_mw.descriptor(),
                        MemorySegment.ofAddress(0x7000), f -> VerbsInline.ibv_alloc_mw(f.errno, f.pd, 2).address(),
                        null, f -> args(f.pd, 2)),
                new Op("ibv_dealloc_mw", "dealloc_mw", VerbsInline.OPS_DEALLOC_MW, ibv_context_ops.dealloc_mw.descriptor(),
                        16, f -> VerbsInline.ibv_dealloc_mw(f.mw), null, f -> args(f.mw)),
                new Op("ibv_bind_mw", "bind_mw", VerbsInline.OPS_BIND_MW, ibv_context_ops.bind_mw.descriptor(), 17,
                        f -> VerbsInline.ibv_bind_mw(f.qp, f.mw, f.attr), null, f -> args(f.qp, f.mw, f.attr)));
    }

    @TestFactory
    Stream<DynamicTest> opsTwinCallsTheContextSlot() {
        return ops().stream().map(op -> DynamicTest.dynamicTest(op.verb(), () -> {
            try (FakeVerbs f = new FakeVerbs()) {
                f.installOp(op.offset(), op.slot(), op.descriptor(), op.ret());
                Object expected = op.ret() instanceof MemorySegment s ? (Object) s.address() : op.ret();
                assertThat(op.twin().apply(f)).isEqualTo(expected);
                assertThat(f.onlyCall()).isEqualTo(new FakeVerbs.Call(op.slot(), op.args().apply(f)));
            }
        }));
    }

    @TestFactory
    Stream<DynamicTest> contextOpsCallsTheSlotReadAtBindTime() {
        return ops().stream().filter(op -> op.bound() != null).map(op -> DynamicTest.dynamicTest(op.verb(), () -> {
            try (FakeVerbs f = new FakeVerbs()) {
                for (Op each : ops()) {
                    f.installOp(each.offset(), each.slot(), each.descriptor(), each.ret());
                }
                assertThat(op.bound().apply(f)).isEqualTo(op.ret());
                assertThat(f.onlyCall()).isEqualTo(new FakeVerbs.Call(op.slot(), op.args().apply(f)));
            }
        }));
    }

    /**
     * As in {@code QpExInlineTest}: the constant route (the first bound context's slots) and the field route each
     * call their own slots, interpreted and compiled (C2 folds the constant route). Fails when every binding takes
     * the constants.
     */
    @Test
    void contextOpsOfEachProviderCallItsOwnSlotsWhetherTheConstantOrTheFieldRoute() {
        try (FakeVerbs a = new FakeVerbs(); FakeVerbs b = new FakeVerbs()) {
            for (Op each : ops()) {
                a.installOp(each.offset(), each.slot(), each.descriptor(), each.ret());
                b.installOp(each.offset(), each.slot(), each.descriptor(), each.ret());
            }
            MemorySegment a2 = a.arena.allocate(ibv_context.layout());
            a2.copyFrom(a.ctx); // another context of a's provider: the same slot addresses
            ContextOps opsA = ContextOps.of(a.ctx);
            ContextOps opsB = ContextOps.of(b.ctx);
            ContextOps opsA2 = ContextOps.of(a2);
            assertThat(opsA2.callsConstantSlots()).isEqualTo(opsA.callsConstantSlots());
            assertThat(opsA.callsConstantSlots() && opsB.callsConstantSlots()).isFalse();
            for (int i = 0; i < 20_000; i++) {
                opsB.ibv_post_send(0x10, 0x20, 0x30);
                opsA2.ibv_post_send(0x11, 0x21, 0x31);
                assertThat(b.onlyCall()).isEqualTo(new FakeVerbs.Call("post_send", List.of(0x10L, 0x20L, 0x30L)));
                assertThat(a.onlyCall()).isEqualTo(new FakeVerbs.Call("post_send", List.of(0x11L, 0x21L, 0x31L)));
                a.calls.clear();
                b.calls.clear();
                opsB.ibv_post_recv(0x12, 0x22, 0x32);
                opsA2.ibv_poll_cq(0x13, 16, 0x23);
                assertThat(b.onlyCall()).isEqualTo(new FakeVerbs.Call("post_recv", List.of(0x12L, 0x22L, 0x32L)));
                assertThat(a.onlyCall()).isEqualTo(new FakeVerbs.Call("poll_cq", List.of(0x13L, 16, 0x23L)));
                a.calls.clear();
                b.calls.clear();
            }
        }
    }

    @TestFactory
    Stream<DynamicTest> nullOpsSlotThrowsWhereCWouldCrash() {
        return ops().stream().filter(op -> !op.verb().equals("ibv_alloc_mw"))
                .map(op -> DynamicTest.dynamicTest(op.verb(), () -> {
                    try (FakeVerbs f = new FakeVerbs()) {
                        assertThatThrownBy(() -> op.twin().apply(f)).isInstanceOf(UnsupportedSlotException.class)
                                .hasMessageStartingWith(op.verb() + ": ibv_context.ops." + op.slot() + " is NULL");
                    }
                }));
    }

    @Test
    void contextOpsRefusesAContextWithoutDataPathOps() {
        try (FakeVerbs f = new FakeVerbs()) {
            assertThatThrownBy(() -> ContextOps.of(f.ctx)).isInstanceOf(UnsupportedSlotException.class)
                    .hasMessageContaining("ibv_context.ops.post_send is NULL");
        }
    }

    @Test
    void postSendOnQpWithoutContextIsAnArgumentError() {
        try (FakeVerbs f = new FakeVerbs()) {
            ibv_qp.context(f.qp, MemorySegment.NULL);
            assertThatThrownBy(() -> VerbsInline.ibv_post_send(f.qp, f.attr, f.attr))
                    .isInstanceOf(IllegalArgumentException.class).hasMessage("ibv_post_send: qp->context is NULL");
            assertThatThrownBy(() -> VerbsInline.ibv_poll_cq(MemorySegment.NULL, 1, f.attr))
                    .isInstanceOf(IllegalArgumentException.class).hasMessage("ibv_poll_cq: cq is NULL");
        }
    }

    @Test
    void allocMwWithoutTheOpIsNullWithEopnotsupp() {
        try (FakeVerbs f = new FakeVerbs()) {
            assertThat(VerbsInline.ibv_alloc_mw(f.errno, f.pd, 1).address()).isZero();
            assertThat(Errno.get(f.errno)).isEqualTo(Errno.EOPNOTSUPP);
        }
    }

    @Test
    void bindMwChecksBeforeDispatching() {
        try (FakeVerbs f = new FakeVerbs()) {
            f.installOp(VerbsInline.OPS_BIND_MW, "bind_mw", ibv_context_ops.bind_mw.descriptor(), 0);
            MemorySegment bind = f.arena.allocate(ibv_mw_bind.layout());
            MemorySegment info = bind.asSlice(ibv_mw_bind.bind_info$offset(), ibv_mw_bind_info.layout());

            ibv_mw.type(f.mw, verbs_h.IBV_MW_TYPE_2());
            assertThat(VerbsInline.ibv_bind_mw(f.qp, f.mw, bind)).as("type 2").isEqualTo(Errno.EINVAL);
            ibv_mw.type(f.mw, verbs_h.IBV_MW_TYPE_1());

            ibv_mw_bind_info.addr(info, 0x1000);
            assertThat(VerbsInline.ibv_bind_mw(f.qp, f.mw, bind)).as("no MR, addr").isEqualTo(Errno.EINVAL);
            ibv_mw_bind_info.addr(info, 0);
            ibv_mw_bind_info.length(info, 64);
            assertThat(VerbsInline.ibv_bind_mw(f.qp, f.mw, bind)).as("no MR, length").isEqualTo(Errno.EINVAL);
            ibv_mw_bind_info.length(info, 0);
            assertThat(f.calls).isEmpty();

            MemorySegment otherPd = f.arena.allocate(64);
            MemorySegment otherMr = f.arena.allocate(ibv_mr.layout());
            ibv_mr.pd(otherMr, otherPd);
            ibv_mw_bind_info.mr(info, otherMr);
            assertThat(VerbsInline.ibv_bind_mw(f.qp, f.mw, bind)).as("PD mismatch").isEqualTo(Errno.EPERM);
            assertThat(f.calls).isEmpty();

            ibv_mw_bind_info.mr(info, f.mr);
            assertThat(VerbsInline.ibv_bind_mw(f.qp, f.mw, bind)).isZero();
            ibv_mw_bind_info.mr(info, MemorySegment.NULL);
            assertThat(VerbsInline.ibv_bind_mw(f.qp, f.mw, bind)).as("unbind").isZero();
            assertThat(f.calls).hasSize(2);
        }
    }

    @Test
    void postWqRecvCallsTheWqSlot() {
        try (FakeVerbs f = new FakeVerbs()) {
            f.install(f.wq, ibv_wq.post_recv$offset(), "post_recv", ibv_wq.post_recv.descriptor(), 21);
            assertThat(VerbsInline.ibv_post_wq_recv(f.wq, f.attr, f.errno)).isEqualTo(21);
            assertThat(f.onlyCall()).isEqualTo(new FakeVerbs.Call("post_recv", args(f.wq, f.attr, f.errno)));
        }
    }

    @Test
    void memcpyDmCallsTheDmSlotsWithTheirArgumentOrder() {
        try (FakeVerbs f = new FakeVerbs()) {
            f.install(f.dm, ibv_dm.memcpy_to_dm$offset(), "memcpy_to_dm", ibv_dm.memcpy_to_dm.descriptor(), 0);
            f.install(f.dm, ibv_dm.memcpy_from_dm$offset(), "memcpy_from_dm", ibv_dm.memcpy_from_dm.descriptor(), 5);
            assertThat(VerbsInline.ibv_memcpy_to_dm(f.dm, 8L, f.attr, 64L)).isZero();
            assertThat(VerbsInline.ibv_memcpy_from_dm(f.attr, f.dm, 16L, 32L)).isEqualTo(5);
            assertThat(f.calls).containsExactly(new FakeVerbs.Call("memcpy_to_dm", args(f.dm, 8L, f.attr, 64L)),
                    new FakeVerbs.Call("memcpy_from_dm", args(f.attr, f.dm, 16L, 32L)));
        }
    }

    @Test
    void nullObjectSlotsThrowNamingTheSlot() {
        try (FakeVerbs f = new FakeVerbs()) {
            assertThatThrownBy(() -> VerbsInline.ibv_post_wq_recv(f.wq, f.attr, f.attr))
                    .isInstanceOf(UnsupportedSlotException.class)
                    .hasMessageStartingWith("ibv_post_wq_recv: ibv_wq.post_recv is NULL");
            assertThatThrownBy(() -> VerbsInline.ibv_memcpy_from_dm(f.attr, f.dm, 0L, 1L))
                    .isInstanceOf(UnsupportedSlotException.class)
                    .hasMessageStartingWith("ibv_memcpy_from_dm: ibv_dm.memcpy_from_dm is NULL");
        }
    }

    /** libibverbs' {@code verbs_context_ops.reg_mr}: {@code (pd, addr, length, iova, access) -> ibv_mr *}. */
    private static final FunctionDescriptor PRIV_REG_MR = FunctionDescriptor.of(ValueLayout.ADDRESS,
            ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT);

    @Test
    void regMrIsRegMrIova2WithIovaEqualToAddr() {
        try (FakeVerbs f = new FakeVerbs()) {
            f.fillPriv("priv.reg_mr", PRIV_REG_MR, f.mr);
            int access = verbs_h.IBV_ACCESS_LOCAL_WRITE() | verbs_h.IBV_ACCESS_REMOTE_WRITE();
            MemorySegment buf = f.arena.allocate(4096, 4096);

            MemorySegment mr = VerbsInline.ibv_reg_mr(f.errno, f.pd, buf, 4096L, access);

            assertThat(mr.address()).isEqualTo(f.mr.address());
            assertThat(f.onlyCall()).isEqualTo(new FakeVerbs.Call("priv.reg_mr",
                    args(f.pd, buf, 4096L, buf.address(), access)));
            // ibv_reg_mr_iova2 completes the MR as the library's callers expect
            assertThat(ibv_mr.addr(f.mr).address()).isEqualTo(buf.address());
            assertThat(ibv_mr.length(f.mr)).isEqualTo(4096L);
        }
    }

    @Test
    void regMrIovaPassesTheIova() {
        try (FakeVerbs f = new FakeVerbs()) {
            f.fillPriv("priv.reg_mr", PRIV_REG_MR, f.mr);
            MemorySegment buf = f.arena.allocate(4096, 4096);
            VerbsInline.ibv_reg_mr_iova(f.errno, f.pd, buf, 4096L, 0x10_0000L, verbs_h.IBV_ACCESS_LOCAL_WRITE());
            assertThat(f.onlyCall().args().get(3)).isEqualTo(0x10_0000L);
        }
    }

    @Test
    void queryGidExAndTableReachTheExportedFunctions() {
        // the fake context's cmd_fd is -1: the library's ioctl fails with EBADF, which both return. A zeroed
        // verbs_ex_private says every ioctl is supported, so the library tries the ioctl first.
        try (FakeVerbs f = new FakeVerbs()) {
            f.priv.fill((byte) 0);
            assertThat(VerbsInline.ibv_query_gid_ex(f.ctx, 1, 0, f.attr, 0)).isEqualTo(verbs_h.EBADF());
            assertThat(VerbsInline.ibv_query_gid_table(f.ctx, f.attr, 4L, 0)).isEqualTo(-verbs_h.EBADF());
            assertThat(f.calls).isEmpty();
        }
    }

    @Test
    void incRkeyWrapsTheKeyTagWithinItsByte() {
        assertThat(VerbsInline.ibv_inc_rkey(0x1234_56FF)).isEqualTo(0x1234_5600);
        assertThat(VerbsInline.ibv_inc_rkey(0x1234_5601)).isEqualTo(0x1234_5602);
        assertThat(VerbsInline.ibv_inc_rkey(0xFFFF_FFFF)).isEqualTo(0xFFFF_FF00);
    }

    @Test
    void isQptSupportedTestsTheQpTypeBit() {
        int rc = verbs_h.IBV_QPT_RC();
        assertThat(VerbsInline.ibv_is_qpt_supported(1 << rc, rc)).isEqualTo(1);
        assertThat(VerbsInline.ibv_is_qpt_supported(0x8, rc)).isZero();
        assertThat(VerbsInline.ibv_is_qpt_supported(0x4, 2)).isEqualTo(1);
    }

    @Test
    void flowLabelToUdpSportMatchesTheCHelper() {
        // values computed by running the verbs.h helper (rdma-core 44, gcc 12)
        assertThat(VerbsInline.ibv_flow_label_to_udp_sport(0)).isEqualTo(0xC000);
        assertThat(VerbsInline.ibv_flow_label_to_udp_sport(0xFFFFF)).isEqualTo(0xFFC0);
        assertThat(VerbsInline.ibv_flow_label_to_udp_sport(0x12345)).isEqualTo(0xE341);
    }
}
