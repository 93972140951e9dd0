package dev.panverbs.bindings.ibverbs;

import static dev.panverbs.bindings.NativeMemory.nonNull;
import static dev.panverbs.bindings.ibverbs.VerbsContextInline.createVia;
import static dev.panverbs.bindings.ibverbs.VerbsInline.contextOf;
import static dev.panverbs.bindings.ibverbs.VerbsInline.contextOp;

import dev.panverbs.bindings.Downcalls;
import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.NativeMemory;
import dev.panverbs.bindings.ProviderControlDowncalls;
import dev.panverbs.bindings.verbs.ibv_counters;
import dev.panverbs.bindings.verbs.ibv_flow;
import dev.panverbs.bindings.verbs.ibv_flow_action;
import dev.panverbs.bindings.verbs.ibv_qp;
import dev.panverbs.bindings.verbs.ibv_rwq_ind_table;
import dev.panverbs.bindings.verbs.ibv_wq;
import dev.panverbs.bindings.verbs.ibv_wq_init_attr;
import dev.panverbs.bindings.verbs.verbs_context;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Java twins of the rdma-core 44 {@code <infiniband/verbs.h>} inlines that dispatch through an extended op of
 * {@code struct verbs_context} for raw-packet steering: flows, flow actions (IPsec ESP), counters, work queues
 * and RSS indirection tables. Conventions as in {@link VerbsContextInline}: when {@code verbs_get_ctx_op}
 * yields NULL, pointer-returning twins store EOPNOTSUPP in the {@link Errno} capture segment and return NULL,
 * int-returning twins return EOPNOTSUPP.
 */
public final class VerbsFlowInline {

    private static final int EOPNOTSUPP = Errno.EOPNOTSUPP;

    private VerbsFlowInline() {}

    /**
     * {@code struct ibv_flow *ibv_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *flow)} (verbs.h,
     * rdma-core 44): {@code vctx->ibv_create_flow(qp, flow)} on {@code qp->context}, or errno = EOPNOTSUPP and
     * NULL.
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_create_flow(MemorySegment errno, MemorySegment qp, MemorySegment flow) {
        MemorySegment fn = contextOp(contextOf(qp, ibv_qp.context$offset(), "ibv_create_flow", "qp"),
                verbs_context.ibv_create_flow$offset());
        return createVia(fn, errno, qp, flow);
    }

    /**
     * {@code int ibv_destroy_flow(struct ibv_flow *flow_id)} (verbs.h, rdma-core 44):
     * {@code vctx->ibv_destroy_flow(flow_id)} on {@code flow_id->context} (at offset 8, after
     * {@code comp_mask}), or EOPNOTSUPP.
     */
    public static int ibv_destroy_flow(MemorySegment flowId) {
        MemorySegment fn = contextOp(contextOf(flowId, ibv_flow.context$offset(), "ibv_destroy_flow", "flow_id"),
                verbs_context.ibv_destroy_flow$offset());
        return fn.address() == 0L ? EOPNOTSUPP : ProviderControlDowncalls.ctl_i_p(fn, flowId);
    }

    /**
     * {@code struct ibv_flow_action *ibv_create_flow_action_esp(struct ibv_context *ctx, struct
     * ibv_flow_action_esp_attr *esp)} (verbs.h, rdma-core 44): {@code vctx->create_flow_action_esp(ctx, esp)},
     * or errno = EOPNOTSUPP and NULL.
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_create_flow_action_esp(MemorySegment errno, MemorySegment ctx,
            MemorySegment esp) {
        MemorySegment fn = contextOp(nonNull(ctx, "ibv_create_flow_action_esp", "ctx"),
                verbs_context.create_flow_action_esp$offset());
        return createVia(fn, errno, ctx, esp);
    }

    /**
     * {@code int ibv_modify_flow_action_esp(struct ibv_flow_action *action, struct ibv_flow_action_esp_attr
     * *esp)} (verbs.h, rdma-core 44): {@code vctx->modify_flow_action_esp(action, esp)} on
     * {@code action->context}, or EOPNOTSUPP.
     */
    public static int ibv_modify_flow_action_esp(MemorySegment action, MemorySegment esp) {
        MemorySegment fn = contextOp(
                contextOf(action, ibv_flow_action.context$offset(), "ibv_modify_flow_action_esp", "action"),
                verbs_context.modify_flow_action_esp$offset());
        return fn.address() == 0L ? EOPNOTSUPP : ProviderControlDowncalls.ctl_i_pp(fn, action, esp);
    }

    /**
     * {@code int ibv_destroy_flow_action(struct ibv_flow_action *action)} (verbs.h, rdma-core 44):
     * {@code vctx->destroy_flow_action(action)} on {@code action->context}, or EOPNOTSUPP.
     */
    public static int ibv_destroy_flow_action(MemorySegment action) {
        MemorySegment fn = contextOp(
                contextOf(action, ibv_flow_action.context$offset(), "ibv_destroy_flow_action", "action"),
                verbs_context.destroy_flow_action$offset());
        return fn.address() == 0L ? EOPNOTSUPP : ProviderControlDowncalls.ctl_i_p(fn, action);
    }

    /**
     * {@code struct ibv_wq *ibv_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *wq_init_attr)}
     * (verbs.h, rdma-core 44): {@code vctx->create_wq(context, wq_init_attr)}, or errno = EOPNOTSUPP and NULL.
     * On success the inline itself finishes the WQ, and so does this twin: {@code wq->wq_context =
     * wq_init_attr->wq_context}, {@code wq->events_completed = 0}, {@code pthread_mutex_init(&wq->mutex, NULL)},
     * {@code pthread_cond_init(&wq->cond, NULL)} (libibverbs' event code waits on them).
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_create_wq(MemorySegment errno, MemorySegment context, MemorySegment wqInitAttr) {
        MemorySegment fn = contextOp(nonNull(context, "ibv_create_wq", "context"), verbs_context.create_wq$offset());
        MemorySegment wq = createVia(fn, errno, context, wqInitAttr);
        long w = wq.address();
        if (w != 0L) {
            long attr = nonNull(wqInitAttr, "ibv_create_wq", "wq_init_attr");
            NativeMemory.pointer(w + ibv_wq.wq_context$offset(),
                    NativeMemory.pointer(attr + ibv_wq_init_attr.wq_context$offset()));
            NativeMemory.int32(w + ibv_wq.events_completed$offset(), 0);
            Pthread.init(Pthread.MUTEX_INIT, MemorySegment.ofAddress(w + ibv_wq.mutex$offset()));
            Pthread.init(Pthread.COND_INIT, MemorySegment.ofAddress(w + ibv_wq.cond$offset()));
        }
        return wq;
    }

    /**
     * {@code int ibv_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr)} (verbs.h, rdma-core 44):
     * {@code vctx->modify_wq(wq, wq_attr)} on {@code wq->context}, or EOPNOTSUPP.
     */
    public static int ibv_modify_wq(MemorySegment wq, MemorySegment wqAttr) {
        MemorySegment fn = contextOp(contextOf(wq, ibv_wq.context$offset(), "ibv_modify_wq", "wq"),
                verbs_context.modify_wq$offset());
        return fn.address() == 0L ? EOPNOTSUPP : ProviderControlDowncalls.ctl_i_pp(fn, wq, wqAttr);
    }

    /**
     * {@code int ibv_destroy_wq(struct ibv_wq *wq)} (verbs.h, rdma-core 44): {@code vctx->destroy_wq(wq)} on
     * {@code wq->context}, or EOPNOTSUPP.
     */
    public static int ibv_destroy_wq(MemorySegment wq) {
        MemorySegment fn = contextOp(contextOf(wq, ibv_wq.context$offset(), "ibv_destroy_wq", "wq"),
                verbs_context.destroy_wq$offset());
        return fn.address() == 0L ? EOPNOTSUPP : ProviderControlDowncalls.ctl_i_p(fn, wq);
    }

    /**
     * {@code struct ibv_rwq_ind_table *ibv_create_rwq_ind_table(struct ibv_context *context, struct
     * ibv_rwq_ind_table_init_attr *init_attr)} (verbs.h, rdma-core 44): {@code vctx->create_rwq_ind_table(...)},
     * or errno = EOPNOTSUPP and NULL.
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_create_rwq_ind_table(MemorySegment errno, MemorySegment context,
            MemorySegment initAttr) {
        MemorySegment fn = contextOp(nonNull(context, "ibv_create_rwq_ind_table", "context"),
                verbs_context.create_rwq_ind_table$offset());
        return createVia(fn, errno, context, initAttr);
    }

    /**
     * {@code int ibv_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table)} (verbs.h, rdma-core 44):
     * {@code vctx->destroy_rwq_ind_table(rwq_ind_table)} on its context, or EOPNOTSUPP.
     */
    public static int ibv_destroy_rwq_ind_table(MemorySegment rwqIndTable) {
        MemorySegment fn = contextOp(contextOf(rwqIndTable, ibv_rwq_ind_table.context$offset(),
                "ibv_destroy_rwq_ind_table", "rwq_ind_table"), verbs_context.destroy_rwq_ind_table$offset());
        return fn.address() == 0L ? EOPNOTSUPP : ProviderControlDowncalls.ctl_i_p(fn, rwqIndTable);
    }

    /**
     * {@code struct ibv_counters *ibv_create_counters(struct ibv_context *context, struct
     * ibv_counters_init_attr *init_attr)} (verbs.h, rdma-core 44): {@code vctx->create_counters(context,
     * init_attr)}, or errno = EOPNOTSUPP and NULL.
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_create_counters(MemorySegment errno, MemorySegment context,
            MemorySegment initAttr) {
        MemorySegment fn = contextOp(nonNull(context, "ibv_create_counters", "context"),
                verbs_context.create_counters$offset());
        return createVia(fn, errno, context, initAttr);
    }

    /**
     * {@code int ibv_destroy_counters(struct ibv_counters *counters)} (verbs.h, rdma-core 44):
     * {@code vctx->destroy_counters(counters)} on {@code counters->context}, or EOPNOTSUPP.
     */
    public static int ibv_destroy_counters(MemorySegment counters) {
        MemorySegment fn = contextOp(
                contextOf(counters, ibv_counters.context$offset(), "ibv_destroy_counters", "counters"),
                verbs_context.destroy_counters$offset());
        return fn.address() == 0L ? EOPNOTSUPP : ProviderControlDowncalls.ctl_i_p(fn, counters);
    }

    /**
     * {@code int ibv_attach_counters_point_flow(struct ibv_counters *counters, struct ibv_counter_attach_attr
     * *attr, struct ibv_flow *flow)} (verbs.h, rdma-core 44): {@code vctx->attach_counters_point_flow(counters,
     * attr, flow)} on {@code counters->context}, or EOPNOTSUPP.
     */
    public static int ibv_attach_counters_point_flow(MemorySegment counters, MemorySegment attr,
            MemorySegment flow) {
        MemorySegment fn = contextOp(
                contextOf(counters, ibv_counters.context$offset(), "ibv_attach_counters_point_flow", "counters"),
                verbs_context.attach_counters_point_flow$offset());
        return fn.address() == 0L ? EOPNOTSUPP : ProviderControlDowncalls.ctl_i_ppp(fn, counters, attr, flow);
    }

    /**
     * {@code int ibv_read_counters(struct ibv_counters *counters, uint64_t *counters_value, uint32_t ncounters,
     * uint32_t flags)} (verbs.h, rdma-core 44): {@code vctx->read_counters(...)} on {@code counters->context},
     * or EOPNOTSUPP.
     */
    public static int ibv_read_counters(MemorySegment counters, MemorySegment countersValue, int ncounters,
            int flags) {
        MemorySegment fn = contextOp(
                contextOf(counters, ibv_counters.context$offset(), "ibv_read_counters", "counters"),
                verbs_context.read_counters$offset());
        return fn.address() == 0L ? EOPNOTSUPP
                : ProviderControlDowncalls.ctl_i_ppii(fn, counters, countersValue, ncounters, flags);
    }

    /** libc's {@code pthread_mutex_init}/{@code pthread_cond_init}, which {@code ibv_create_wq} calls inline. */
    private static final class Pthread {
        static final MethodHandle MUTEX_INIT = libc("pthread_mutex_init");
        static final MethodHandle COND_INIT = libc("pthread_cond_init");

        private static MethodHandle libc(String name) {
            Linker linker = Linker.nativeLinker();
            return linker.downcallHandle(linker.defaultLookup().find(name).orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
        }

        /** {@code init(object, NULL)}; both return 0 on Linux for default attributes, as C ignores it. */
        static void init(MethodHandle init, MemorySegment object) {
            try {
                int ignored = (int) init.invokeExact(object, MemorySegment.NULL);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw Downcalls.unreachable(t);
            }
        }
    }
}
