package dev.panverbs.bindings.ibverbs;

import static dev.panverbs.bindings.ibverbs.FakeVerbs.args;
import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.verbs.ibv_qp_init_attr_ex;
import dev.panverbs.bindings.verbs.ibv_srq_init_attr_ex;
import dev.panverbs.bindings.verbs.verbs_context;
import dev.panverbs.bindings.verbs.verbs_h;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * All 35 twins over {@code verbs_context} ops: each calls its op with the C arguments and returns its result,
 * and each returns EOPNOTSUPP (or NULL with errno EOPNOTSUPP) exactly where {@code verbs_get_ctx_op} would
 * yield NULL: {@code abi_compat} not the sentinel, {@code sz} one byte too small, op NULL. The verbs with a
 * fallback or special case ({@code ibv_query_port}, {@code ibv_query_device_ex}, {@code ibv_close_xrcd},
 * fast paths, {@code ibv_create_wq}) are covered in {@link VerbsContextSpecialCasesTest}.
 */
class VerbsContextInlineTest {

    /** Value the int ops return; not EOPNOTSUPP, so a missing op cannot pass for a call. */
    static final int OP_RESULT = 42;

    /** One wrapper: its op slot, whether it returns a pointer (NULL + errno style), the call and the C args. */
    record Ext(String verb, String op, FunctionDescriptor descriptor, boolean returnsPointer,
            Function<FakeVerbs, Object> call, Function<FakeVerbs, List<Object>> args) {
        long opOffset() {
            return verbs_context.layout().byteOffset(java.lang.foreign.MemoryLayout.PathElement.groupElement(op));
        }

        /** Whether the twin falls back (or throws) instead of returning EOPNOTSUPP when the op is missing. */
        boolean special() {
            return List.of("ibv_query_port", "ibv_query_device_ex", "ibv_close_xrcd").contains(verb);
        }

        @Override
        public String toString() {
            return verb;
        }
    }

    private static Ext ptr(String verb, String op, FunctionDescriptor d, Function<FakeVerbs, Object> call,
            Function<FakeVerbs, List<Object>> args) {
        return new Ext(verb, op, d, true, call, args);
    }

    private static Ext num(String verb, String op, FunctionDescriptor d, Function<FakeVerbs, Object> call,
            Function<FakeVerbs, List<Object>> args) {
        return new Ext(verb, op, d, false, call, args);
    }

    static List<Ext> wrappers() {
        return List.of(
                num("ibv_query_port", "query_port", verbs_context.query_port.descriptor(),
                        f -> VerbsContextInline.ibv_query_port(f.ctx, (byte) 1, f.attr),
                        f -> args(f.ctx, (byte) 1, f.attr, 52L)),
                num("ibv_query_device_ex", "query_device_ex", verbs_context.query_device_ex.descriptor(),
                        f -> VerbsContextInline.ibv_query_device_ex(f.ctx, MemorySegment.NULL, f.attr),
                        f -> args(f.ctx, MemorySegment.NULL, f.attr, 400L)),
                num("ibv_query_rt_values_ex", "query_rt_values", verbs_context.query_rt_values.descriptor(),
                        f -> VerbsContextInline.ibv_query_rt_values_ex(f.ctx, f.attr), f -> args(f.ctx, f.attr)),
                ptr("ibv_create_cq_ex", "create_cq_ex", verbs_context.create_cq_ex.descriptor(),
                        f -> VerbsContextInline.ibv_create_cq_ex(f.errno, f.ctx, f.attr), f -> args(f.ctx, f.attr)),
                num("ibv_modify_cq", "modify_cq", verbs_context.modify_cq.descriptor(),
                        f -> VerbsContextInline.ibv_modify_cq(f.cq, f.attr), f -> args(f.cq, f.attr)),
                ptr("ibv_create_qp_ex", "create_qp_ex", verbs_context.create_qp_ex.descriptor(),
                        f -> VerbsContextInline.ibv_create_qp_ex(f.errno, f.ctx, Masks.qpInitAttrExWithSendOps(f)),
                        f -> args(f.ctx, f.attr)),
                ptr("ibv_open_qp", "open_qp", verbs_context.open_qp.descriptor(),
                        f -> VerbsContextInline.ibv_open_qp(f.errno, f.ctx, f.attr), f -> args(f.ctx, f.attr)),
                num("ibv_modify_qp_rate_limit", "modify_qp_rate_limit", verbs_context.modify_qp_rate_limit.descriptor(),
                        f -> VerbsContextInline.ibv_modify_qp_rate_limit(f.qp, f.attr), f -> args(f.qp, f.attr)),
                ptr("ibv_create_srq_ex", "create_srq_ex", verbs_context.create_srq_ex.descriptor(),
                        f -> VerbsContextInline.ibv_create_srq_ex(f.errno, f.ctx, Masks.srqInitAttrExXrc(f)),
                        f -> args(f.ctx, f.attr)),
                num("ibv_get_srq_num", "get_srq_num", verbs_context.get_srq_num.descriptor(),
                        f -> VerbsContextInline.ibv_get_srq_num(f.srq, f.attr), f -> args(f.srq, f.attr)),
                num("ibv_post_srq_ops", "post_srq_ops", verbs_context.post_srq_ops.descriptor(),
                        f -> VerbsContextInline.ibv_post_srq_ops(f.srq, f.attr, f.attr.asSlice(512)),
                        f -> args(f.srq, f.attr, f.attr.asSlice(512))),
                ptr("ibv_open_xrcd", "open_xrcd", verbs_context.open_xrcd.descriptor(),
                        f -> VerbsContextInline.ibv_open_xrcd(f.errno, f.ctx, f.attr), f -> args(f.ctx, f.attr)),
                num("ibv_close_xrcd", "close_xrcd", verbs_context.close_xrcd.descriptor(),
                        f -> VerbsContextInline.ibv_close_xrcd(f.xrcd), f -> args(f.xrcd)),
                ptr("ibv_alloc_td", "alloc_td", verbs_context.alloc_td.descriptor(),
                        f -> VerbsContextInline.ibv_alloc_td(f.errno, f.ctx, f.attr), f -> args(f.ctx, f.attr)),
                num("ibv_dealloc_td", "dealloc_td", verbs_context.dealloc_td.descriptor(),
                        f -> VerbsContextInline.ibv_dealloc_td(f.td), f -> args(f.td)),
                ptr("ibv_alloc_parent_domain", "alloc_parent_domain", verbs_context.alloc_parent_domain.descriptor(),
                        f -> VerbsContextInline.ibv_alloc_parent_domain(f.errno, f.ctx, f.attr), f -> args(f.ctx, f.attr)),
                num("ibv_advise_mr", "advise_mr", verbs_context.advise_mr.descriptor(),
                        f -> VerbsContextInline.ibv_advise_mr(f.pd, 1, 2, f.attr, 3), f -> args(f.pd, 1, 2, f.attr, 3)),
                ptr("ibv_alloc_null_mr", "alloc_null_mr", verbs_context.alloc_null_mr.descriptor(),
                        f -> VerbsContextInline.ibv_alloc_null_mr(f.errno, f.pd), f -> args(f.pd)),
                ptr("ibv_alloc_dm", "alloc_dm", verbs_context.alloc_dm.descriptor(),
                        f -> VerbsContextInline.ibv_alloc_dm(f.errno, f.ctx, f.attr), f -> args(f.ctx, f.attr)),
                num("ibv_free_dm", "free_dm", verbs_context.free_dm.descriptor(),
                        f -> VerbsContextInline.ibv_free_dm(f.dm), f -> args(f.dm)),
                ptr("ibv_reg_dm_mr", "reg_dm_mr", verbs_context.reg_dm_mr.descriptor(),
                        f -> VerbsContextInline.ibv_reg_dm_mr(f.errno, f.pd, f.dm, 64L, 4096L, 7),
                        f -> args(f.pd, f.dm, 64L, 4096L, 7)),
                ptr("ibv_create_flow", "ibv_create_flow", verbs_context.ibv_create_flow.descriptor(),
                        f -> VerbsFlowInline.ibv_create_flow(f.errno, f.qp, f.attr), f -> args(f.qp, f.attr)),
                num("ibv_destroy_flow", "ibv_destroy_flow", verbs_context.ibv_destroy_flow.descriptor(),
                        f -> VerbsFlowInline.ibv_destroy_flow(f.flow), f -> args(f.flow)),
                ptr("ibv_create_flow_action_esp", "create_flow_action_esp",
                        verbs_context.create_flow_action_esp.descriptor(),
                        f -> VerbsFlowInline.ibv_create_flow_action_esp(f.errno, f.ctx, f.attr), f -> args(f.ctx, f.attr)),
                num("ibv_modify_flow_action_esp", "modify_flow_action_esp",
                        verbs_context.modify_flow_action_esp.descriptor(),
                        f -> VerbsFlowInline.ibv_modify_flow_action_esp(f.flowAction, f.attr),
                        f -> args(f.flowAction, f.attr)),
                num("ibv_destroy_flow_action", "destroy_flow_action", verbs_context.destroy_flow_action.descriptor(),
                        f -> VerbsFlowInline.ibv_destroy_flow_action(f.flowAction), f -> args(f.flowAction)),
                ptr("ibv_create_wq", "create_wq", verbs_context.create_wq.descriptor(),
                        f -> VerbsFlowInline.ibv_create_wq(f.errno, f.ctx, f.attr), f -> args(f.ctx, f.attr)),
                num("ibv_modify_wq", "modify_wq", verbs_context.modify_wq.descriptor(),
                        f -> VerbsFlowInline.ibv_modify_wq(f.wq, f.attr), f -> args(f.wq, f.attr)),
                num("ibv_destroy_wq", "destroy_wq", verbs_context.destroy_wq.descriptor(),
                        f -> VerbsFlowInline.ibv_destroy_wq(f.wq), f -> args(f.wq)),
                ptr("ibv_create_rwq_ind_table", "create_rwq_ind_table", verbs_context.create_rwq_ind_table.descriptor(),
                        f -> VerbsFlowInline.ibv_create_rwq_ind_table(f.errno, f.ctx, f.attr), f -> args(f.ctx, f.attr)),
                num("ibv_destroy_rwq_ind_table", "destroy_rwq_ind_table",
                        verbs_context.destroy_rwq_ind_table.descriptor(),
                        f -> VerbsFlowInline.ibv_destroy_rwq_ind_table(f.rwqIndTable), f -> args(f.rwqIndTable)),
                ptr("ibv_create_counters", "create_counters", verbs_context.create_counters.descriptor(),
                        f -> VerbsFlowInline.ibv_create_counters(f.errno, f.ctx, f.attr), f -> args(f.ctx, f.attr)),
                num("ibv_destroy_counters", "destroy_counters", verbs_context.destroy_counters.descriptor(),
                        f -> VerbsFlowInline.ibv_destroy_counters(f.counters), f -> args(f.counters)),
                num("ibv_attach_counters_point_flow", "attach_counters_point_flow",
                        verbs_context.attach_counters_point_flow.descriptor(),
                        f -> VerbsFlowInline.ibv_attach_counters_point_flow(f.counters, f.attr, f.flow),
                        f -> args(f.counters, f.attr, f.flow)),
                num("ibv_read_counters", "read_counters", verbs_context.read_counters.descriptor(),
                        f -> VerbsFlowInline.ibv_read_counters(f.counters, f.attr, 4, 0), f -> args(f.counters, f.attr, 4, 0)));
    }

    @Test
    void allThirtyFiveWrappersAreCovered() {
        assertThat(wrappers()).hasSize(35).extracting(Ext::op).doesNotHaveDuplicates();
    }

    @TestFactory
    Stream<DynamicTest> wrapperCallsItsOp() {
        return wrappers().stream().map(e -> DynamicTest.dynamicTest(e.verb(), () -> {
            try (FakeVerbs f = new FakeVerbs()) {
                install(f, e);
                assertReturnsOpResult(f, e, e.call().apply(f));
                assertThat(f.onlyCall()).isEqualTo(new FakeVerbs.Call(e.op(), e.args().apply(f)));
            }
        }));
    }

    @TestFactory
    Stream<DynamicTest> wrapperCallsItsOpWhenSzIsExactlyLargeEnough() {
        return wrappers().stream().map(e -> DynamicTest.dynamicTest(e.verb(), () -> {
            try (FakeVerbs f = new FakeVerbs()) {
                install(f, e);
                verbs_context.sz(f.vctx, verbs_context.sizeof() - e.opOffset());
                assertReturnsOpResult(f, e, e.call().apply(f));
                assertThat(f.onlyCall().slot()).isEqualTo(e.op());
            }
        }));
    }

    @TestFactory
    Stream<DynamicTest> eopnotsuppWhenAbiCompatIsNotTheSentinel() {
        return missing("abi_compat", f -> f.ctx.set(ValueLayout.JAVA_LONG, ibv_context_abi_compat(), 0L));
    }

    @TestFactory
    Stream<DynamicTest> eopnotsuppWhenSzIsOneByteTooSmall() {
        return wrappers().stream().filter(e -> !e.special()).map(e -> DynamicTest.dynamicTest(e.verb(), () -> {
            try (FakeVerbs f = new FakeVerbs()) {
                install(f, e);
                verbs_context.sz(f.vctx, verbs_context.sizeof() - e.opOffset() - 1);
                assertEopnotsupp(f, e, e.call().apply(f));
            }
        }));
    }

    @TestFactory
    Stream<DynamicTest> eopnotsuppWhenOpIsNull() {
        return missing("op", f -> { });
    }

    /** {@code breakIt} disables the context after the op was installed (or, for "op", leaves it NULL). */
    private Stream<DynamicTest> missing(String what, Consumer<FakeVerbs> breakIt) {
        return wrappers().stream().filter(e -> !e.special()).map(e -> DynamicTest.dynamicTest(e.verb(), () -> {
            try (FakeVerbs f = new FakeVerbs()) {
                if (!what.equals("op")) {
                    install(f, e);
                }
                breakIt.accept(f);
                assertEopnotsupp(f, e, e.call().apply(f));
            }
        }));
    }

    /** Attribute structs whose {@code comp_mask} sends the create verbs through their op, not a fast path. */
    static final class Masks {
        private Masks() {}

        static MemorySegment qpInitAttrExWithSendOps(FakeVerbs f) {
            ibv_qp_init_attr_ex.comp_mask(f.attr, verbs_h.IBV_QP_INIT_ATTR_PD() | verbs_h.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS());
            return f.attr;
        }

        static MemorySegment srqInitAttrExXrc(FakeVerbs f) {
            ibv_srq_init_attr_ex.comp_mask(f.attr, verbs_h.IBV_SRQ_INIT_ATTR_PD() | verbs_h.IBV_SRQ_INIT_ATTR_TYPE()
                    | verbs_h.IBV_SRQ_INIT_ATTR_XRCD() | verbs_h.IBV_SRQ_INIT_ATTR_CQ());
            ibv_srq_init_attr_ex.srq_type(f.attr, verbs_h.IBV_SRQT_XRC());
            return f.attr;
        }
    }

    private static long ibv_context_abi_compat() {
        return dev.panverbs.bindings.verbs.ibv_context.abi_compat$offset();
    }

    static void install(FakeVerbs f, Ext e) {
        f.install(f.vctx, e.opOffset(), e.op(), e.descriptor(), e.returnsPointer() ? f.wq : (Object) OP_RESULT);
    }

    private static void assertReturnsOpResult(FakeVerbs f, Ext e, Object result) {
        if (e.returnsPointer()) {
            assertThat(((MemorySegment) result).address()).isEqualTo(f.wq.address());
        } else {
            assertThat(result).isEqualTo(OP_RESULT);
        }
    }

    private static void assertEopnotsupp(FakeVerbs f, Ext e, Object result) {
        assertThat(f.calls).as("calls of a missing op").isEmpty();
        if (e.returnsPointer()) {
            assertThat(((MemorySegment) result).address()).isZero();
            assertThat(Errno.get(f.errno)).isEqualTo(Errno.EOPNOTSUPP);
        } else {
            assertThat(result).isEqualTo(Errno.EOPNOTSUPP);
        }
    }
}
