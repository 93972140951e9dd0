package dev.panverbs.bindings.ibverbs;

import static dev.panverbs.bindings.NativeMemory.nonNull;
import static dev.panverbs.bindings.NativeMemory.pointer;
import static dev.panverbs.bindings.ibverbs.VerbsInline.contextOf;
import static dev.panverbs.bindings.ibverbs.VerbsInline.contextOp;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.NativeMemory;
import dev.panverbs.bindings.ProviderControlDowncalls;
import dev.panverbs.bindings.ProviderDowncalls;
import dev.panverbs.bindings.ProviderSlots;
import dev.panverbs.bindings.verbs.ibv_context;
import dev.panverbs.bindings.verbs.ibv_cq;
import dev.panverbs.bindings.verbs.ibv_device_attr_ex;
import dev.panverbs.bindings.verbs.ibv_dm;
import dev.panverbs.bindings.verbs.ibv_pd;
import dev.panverbs.bindings.verbs.ibv_port_attr;
import dev.panverbs.bindings.verbs.ibv_qp;
import dev.panverbs.bindings.verbs.ibv_qp_init_attr_ex;
import dev.panverbs.bindings.verbs.ibv_query_device_ex_input;
import dev.panverbs.bindings.verbs.ibv_srq;
import dev.panverbs.bindings.verbs.ibv_srq_init_attr_ex;
import dev.panverbs.bindings.verbs.ibv_td;
import dev.panverbs.bindings.verbs.ibv_xrcd;
import dev.panverbs.bindings.verbs.verbs_context;
import dev.panverbs.bindings.verbs.verbs_h;
import java.lang.foreign.MemorySegment;

/**
 * Java twins of the rdma-core 44 {@code <infiniband/verbs.h>} inlines that dispatch through an extended op of
 * {@code struct verbs_context} (found by {@link VerbsInline#verbs_get_ctx_op}): queries, extended CQ/QP/SRQ
 * creation, XRC domains, thread domains, parent domains, memory advice, null MRs and device memory.
 * {@link VerbsFlowInline} has the flow-steering, counter and WQ ones.
 *
 * <p>Where {@code verbs_get_ctx_op} yields NULL the twin does what C does: a pointer-returning verb stores
 * EOPNOTSUPP in the caller's {@link Errno} capture segment and returns NULL; an int-returning verb returns
 * EOPNOTSUPP. (libibverbs 44 fills every slot with a provider op or a dummy that reports EOPNOTSUPP itself,
 * so on a real context that branch only matters for an older libibverbs.)
 */
public final class VerbsContextInline {

    private static final int EOPNOTSUPP = Errno.EOPNOTSUPP;
    private static final int IBV_QP_INIT_ATTR_PD = verbs_h.IBV_QP_INIT_ATTR_PD();
    private static final int IBV_SRQ_INIT_ATTR_PD = verbs_h.IBV_SRQ_INIT_ATTR_PD();
    private static final int IBV_SRQ_INIT_ATTR_TYPE = verbs_h.IBV_SRQ_INIT_ATTR_TYPE();
    private static final int IBV_SRQT_BASIC = verbs_h.IBV_SRQT_BASIC();

    private VerbsContextInline() {}

    /**
     * The NULL + errno branch shared by the pointer-returning wrappers: {@code fn(errno, a0, a1)}, or errno =
     * EOPNOTSUPP and NULL when the op is missing.
     */
    static MemorySegment createVia(MemorySegment fn, MemorySegment errno, MemorySegment a0, MemorySegment a1) {
        if (fn.address() == 0L) {
            Errno.set(errno, EOPNOTSUPP);
            return MemorySegment.NULL;
        }
        return ProviderControlDowncalls.p_pp(fn, errno, a0, a1);
    }

    /**
     * {@code int ibv_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr)}
     * (verbs.h macro → {@code ___ibv_query_port}, rdma-core 44): {@code vctx->query_port(context, port_num,
     * port_attr, sizeof(*port_attr))} with the full 52-byte {@code ibv_port_attr}; if the op is missing,
     * zero {@code *port_attr} and call the exported compat {@code ibv_query_port}, which fills only its first 48
     * bytes. 0 or an errno value. {@code port_attr} must hold the 52 bytes ({@link IllegalArgumentException}).
     */
    public static int ibv_query_port(MemorySegment context, byte portNum, MemorySegment portAttr) {
        long ctx = nonNull(context, "ibv_query_port", "context");
        long attr = NativeMemory.output(portAttr, ibv_port_attr.sizeof(), "ibv_query_port", "port_attr");
        MemorySegment fn = contextOp(ctx, verbs_context.query_port$offset());
        if (fn.address() == 0L) {
            NativeMemory.zero(attr, ibv_port_attr.sizeof());
            return LibIbverbs.ibv_query_port(context, portNum, portAttr);
        }
        return ProviderControlDowncalls.ctl_i_pbpj(fn, context, portNum, portAttr, ibv_port_attr.sizeof());
    }

    /**
     * {@code int ibv_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
     * struct ibv_device_attr_ex *attr)} (verbs.h, rdma-core 44): EINVAL if {@code input} is non-NULL with a
     * non-zero {@code comp_mask}; else {@code vctx->query_device_ex(context, input, attr, sizeof(*attr))} (400
     * bytes). If the op is missing or returns EOPNOTSUPP or ENOSYS, the legacy path: zero {@code *attr} and
     * return {@code ibv_query_device(context, &attr->orig_attr)}. 0 or an errno value. {@code attr} must hold the
     * 400 bytes ({@link IllegalArgumentException}).
     */
    public static int ibv_query_device_ex(MemorySegment context, MemorySegment input, MemorySegment attr) {
        long ctx = nonNull(context, "ibv_query_device_ex", "context");
        long a = NativeMemory.output(attr, ibv_device_attr_ex.sizeof(), "ibv_query_device_ex", "attr");
        if (input.address() != 0L
                && NativeMemory.int32(input.address() + ibv_query_device_ex_input.comp_mask$offset()) != 0) {
            return Errno.EINVAL;
        }
        MemorySegment fn = contextOp(ctx, verbs_context.query_device_ex$offset());
        if (fn.address() != 0L) {
            int ret = ProviderControlDowncalls.ctl_i_pppj(fn, context, input, attr, ibv_device_attr_ex.sizeof());
            if (ret != EOPNOTSUPP && ret != Errno.ENOSYS) {
                return ret;
            }
        }
        NativeMemory.zero(a, ibv_device_attr_ex.sizeof());
        return LibIbverbs.ibv_query_device(context,
                MemorySegment.ofAddress(a + ibv_device_attr_ex.orig_attr$offset()));
    }

    /**
     * {@code int ibv_query_rt_values_ex(struct ibv_context *context, struct ibv_values_ex *values)} (verbs.h,
     * rdma-core 44): {@code vctx->query_rt_values(context, values)}, or EOPNOTSUPP.
     */
    public static int ibv_query_rt_values_ex(MemorySegment context, MemorySegment values) {
        MemorySegment fn = contextOp(nonNull(context, "ibv_query_rt_values_ex", "context"),
                verbs_context.query_rt_values$offset());
        return fn.address() == 0L ? EOPNOTSUPP : ProviderControlDowncalls.ctl_i_pp(fn, context, values);
    }

    /**
     * {@code struct ibv_cq_ex *ibv_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex
     * *cq_attr)} (verbs.h, rdma-core 44): {@code vctx->create_cq_ex(context, cq_attr)}, or errno = EOPNOTSUPP
     * and NULL. In v44 the slot holds libibverbs' own wrapper, which rejects {@code wc_flags} outside
     * {@code IBV_CREATE_CQ_SUP_WC_FLAGS} and initialises the CQ's channel, lock and counters.
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_create_cq_ex(MemorySegment errno, MemorySegment context, MemorySegment cqAttr) {
        MemorySegment fn = contextOp(nonNull(context, "ibv_create_cq_ex", "context"),
                verbs_context.create_cq_ex$offset());
        return createVia(fn, errno, context, cqAttr);
    }

    /**
     * {@code int ibv_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr)} (verbs.h, rdma-core 44):
     * {@code vctx->modify_cq(cq, attr)} on {@code cq->context}, or EOPNOTSUPP.
     */
    public static int ibv_modify_cq(MemorySegment cq, MemorySegment attr) {
        MemorySegment fn = contextOp(contextOf(cq, ibv_cq.context$offset(), "ibv_modify_cq", "cq"),
                verbs_context.modify_cq$offset());
        return fn.address() == 0L ? EOPNOTSUPP : ProviderControlDowncalls.ctl_i_pp(fn, cq, attr);
    }

    /**
     * {@code struct ibv_qp *ibv_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex
     * *qp_init_attr_ex)} (verbs.h, rdma-core 44): if {@code comp_mask} is exactly {@code IBV_QP_INIT_ATTR_PD},
     * the exported {@code ibv_create_qp(attr->pd, (struct ibv_qp_init_attr *) attr)} (the first 64 bytes of the
     * two structs match); else {@code vctx->create_qp_ex(context, attr)}, or errno = EOPNOTSUPP and NULL.
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_create_qp_ex(MemorySegment errno, MemorySegment context,
            MemorySegment qpInitAttrEx) {
        long ctx = nonNull(context, "ibv_create_qp_ex", "context");
        long attr = nonNull(qpInitAttrEx, "ibv_create_qp_ex", "qp_init_attr_ex");
        if (NativeMemory.int32(attr + ibv_qp_init_attr_ex.comp_mask$offset()) == IBV_QP_INIT_ATTR_PD) {
            return LibIbverbsQueues.ibv_create_qp(errno, pointer(attr + ibv_qp_init_attr_ex.pd$offset()),
                    qpInitAttrEx);
        }
        return createVia(contextOp(ctx, verbs_context.create_qp_ex$offset()), errno, context, qpInitAttrEx);
    }

    /**
     * {@code struct ibv_qp *ibv_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *qp_open_attr)}
     * (verbs.h, rdma-core 44): {@code vctx->open_qp(context, qp_open_attr)}, or errno = EOPNOTSUPP and NULL.
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_open_qp(MemorySegment errno, MemorySegment context, MemorySegment qpOpenAttr) {
        MemorySegment fn = contextOp(nonNull(context, "ibv_open_qp", "context"), verbs_context.open_qp$offset());
        return createVia(fn, errno, context, qpOpenAttr);
    }

    /**
     * {@code int ibv_modify_qp_rate_limit(struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *attr)} (verbs.h,
     * rdma-core 44): {@code vctx->modify_qp_rate_limit(qp, attr)} on {@code qp->context}, or EOPNOTSUPP.
     */
    public static int ibv_modify_qp_rate_limit(MemorySegment qp, MemorySegment attr) {
        MemorySegment fn = contextOp(contextOf(qp, ibv_qp.context$offset(), "ibv_modify_qp_rate_limit", "qp"),
                verbs_context.modify_qp_rate_limit$offset());
        return fn.address() == 0L ? EOPNOTSUPP : ProviderControlDowncalls.ctl_i_pp(fn, qp, attr);
    }

    /**
     * {@code struct ibv_srq *ibv_create_srq_ex(struct ibv_context *context, struct ibv_srq_init_attr_ex
     * *srq_init_attr_ex)} (verbs.h, rdma-core 44). Fast path first: if {@code comp_mask} has no bit besides
     * {@code IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE}, has {@code PD}, and either lacks {@code TYPE} or
     * asks for {@code IBV_SRQT_BASIC}, the exported {@code ibv_create_srq(attr->pd, (struct ibv_srq_init_attr
     * *) attr)}. Else {@code vctx->create_srq_ex(context, attr)}, or errno = EOPNOTSUPP and NULL.
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_create_srq_ex(MemorySegment errno, MemorySegment context,
            MemorySegment srqInitAttrEx) {
        long ctx = nonNull(context, "ibv_create_srq_ex", "context");
        long attr = nonNull(srqInitAttrEx, "ibv_create_srq_ex", "srq_init_attr_ex");
        int mask = NativeMemory.int32(attr + ibv_srq_init_attr_ex.comp_mask$offset());
        if ((mask & ~(IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE)) == 0
                && (mask & IBV_SRQ_INIT_ATTR_PD) != 0
                && ((mask & IBV_SRQ_INIT_ATTR_TYPE) == 0
                        || NativeMemory.int32(attr + ibv_srq_init_attr_ex.srq_type$offset()) == IBV_SRQT_BASIC)) {
            return LibIbverbsQueues.ibv_create_srq(errno, pointer(attr + ibv_srq_init_attr_ex.pd$offset()),
                    srqInitAttrEx);
        }
        return createVia(contextOp(ctx, verbs_context.create_srq_ex$offset()), errno, context, srqInitAttrEx);
    }

    /**
     * {@code int ibv_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)} (verbs.h, rdma-core 44):
     * {@code vctx->get_srq_num(srq, srq_num)} on {@code srq->context}, or EOPNOTSUPP.
     */
    public static int ibv_get_srq_num(MemorySegment srq, MemorySegment srqNum) {
        MemorySegment fn = contextOp(contextOf(srq, ibv_srq.context$offset(), "ibv_get_srq_num", "srq"),
                verbs_context.get_srq_num$offset());
        return fn.address() == 0L ? EOPNOTSUPP : ProviderControlDowncalls.ctl_i_pp(fn, srq, srqNum);
    }

    /**
     * {@code int ibv_post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad_op)}
     * (verbs.h, rdma-core 44): {@code vctx->post_srq_ops(srq, op, bad_op)} on {@code srq->context}; if the op
     * is missing, {@code *bad_op = op} and EOPNOTSUPP.
     */
    public static int ibv_post_srq_ops(MemorySegment srq, MemorySegment op, MemorySegment badOp) {
        MemorySegment fn = contextOp(contextOf(srq, ibv_srq.context$offset(), "ibv_post_srq_ops", "srq"),
                verbs_context.post_srq_ops$offset());
        if (fn.address() == 0L) {
            NativeMemory.pointer(nonNull(badOp, "ibv_post_srq_ops", "bad_op"), op);
            return EOPNOTSUPP;
        }
        return ProviderDowncalls.i_ppp(fn, srq, op, badOp);
    }

    /**
     * {@code struct ibv_xrcd *ibv_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr
     * *xrcd_init_attr)} (verbs.h, rdma-core 44): {@code vctx->open_xrcd(context, xrcd_init_attr)}, or errno =
     * EOPNOTSUPP and NULL.
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_open_xrcd(MemorySegment errno, MemorySegment context,
            MemorySegment xrcdInitAttr) {
        MemorySegment fn = contextOp(nonNull(context, "ibv_open_xrcd", "context"), verbs_context.open_xrcd$offset());
        return createVia(fn, errno, context, xrcdInitAttr);
    }

    /**
     * {@code int ibv_close_xrcd(struct ibv_xrcd *xrcd)} (verbs.h, rdma-core 44):
     * {@code verbs_get_ctx(xrcd->context)->close_xrcd(xrcd)}. Unlike every other wrapper C checks nothing
     * (it would crash on a non-extended context or a NULL op); this twin throws the
     * {@link ProviderSlots#missing} exception there instead. 0 or an errno value.
     */
    public static int ibv_close_xrcd(MemorySegment xrcd) {
        long ctx = contextOf(xrcd, ibv_xrcd.context$offset(), "ibv_close_xrcd", "xrcd");
        if (NativeMemory.int64(ctx + ibv_context.abi_compat$offset())
                != VerbsInline.ABI_IS_EXTENDED) {
            throw ProviderSlots.missing("ibv_close_xrcd", "verbs_context.close_xrcd",
                    "xrcd->context is not an extended verbs_context (abi_compat is not the sentinel)");
        }
        MemorySegment fn = pointer(ctx - VerbsInline.CONTEXT_IN_VERBS_CONTEXT + verbs_context.close_xrcd$offset());
        if (fn.address() == 0L) {
            throw ProviderSlots.missing("ibv_close_xrcd", "verbs_context.close_xrcd",
                    "the provider has no XRC support");
        }
        return ProviderControlDowncalls.ctl_i_p(fn, xrcd);
    }

    /**
     * {@code struct ibv_td *ibv_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *init_attr)}
     * (verbs.h, rdma-core 44): {@code vctx->alloc_td(context, init_attr)}, or errno = EOPNOTSUPP and NULL.
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_alloc_td(MemorySegment errno, MemorySegment context, MemorySegment initAttr) {
        MemorySegment fn = contextOp(nonNull(context, "ibv_alloc_td", "context"), verbs_context.alloc_td$offset());
        return createVia(fn, errno, context, initAttr);
    }

    /**
     * {@code int ibv_dealloc_td(struct ibv_td *td)} (verbs.h, rdma-core 44): {@code vctx->dealloc_td(td)} on
     * {@code td->context}, or EOPNOTSUPP.
     */
    public static int ibv_dealloc_td(MemorySegment td) {
        MemorySegment fn = contextOp(contextOf(td, ibv_td.context$offset(), "ibv_dealloc_td", "td"),
                verbs_context.dealloc_td$offset());
        return fn.address() == 0L ? EOPNOTSUPP : ProviderControlDowncalls.ctl_i_p(fn, td);
    }

    /**
     * {@code struct ibv_pd *ibv_alloc_parent_domain(struct ibv_context *context, struct
     * ibv_parent_domain_init_attr *attr)} (verbs.h, rdma-core 44): {@code vctx->alloc_parent_domain(context,
     * attr)}, or errno = EOPNOTSUPP and NULL.
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_alloc_parent_domain(MemorySegment errno, MemorySegment context,
            MemorySegment attr) {
        MemorySegment fn = contextOp(nonNull(context, "ibv_alloc_parent_domain", "context"),
                verbs_context.alloc_parent_domain$offset());
        return createVia(fn, errno, context, attr);
    }

    /**
     * {@code int ibv_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags, struct
     * ibv_sge *sg_list, uint32_t num_sge)} (verbs.h, rdma-core 44): {@code vctx->advise_mr(...)} on
     * {@code pd->context}, or EOPNOTSUPP.
     */
    public static int ibv_advise_mr(MemorySegment pd, int advice, int flags, MemorySegment sgList, int numSge) {
        MemorySegment fn = contextOp(contextOf(pd, ibv_pd.context$offset(), "ibv_advise_mr", "pd"),
                verbs_context.advise_mr$offset());
        return fn.address() == 0L ? EOPNOTSUPP : ProviderControlDowncalls.ctl_i_piipi(fn, pd, advice, flags, sgList, numSge);
    }

    /**
     * {@code struct ibv_mr *ibv_alloc_null_mr(struct ibv_pd *pd)} (verbs.h, rdma-core 44):
     * {@code vctx->alloc_null_mr(pd)} on {@code pd->context}, or errno = EOPNOTSUPP and NULL.
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_alloc_null_mr(MemorySegment errno, MemorySegment pd) {
        MemorySegment fn = contextOp(contextOf(pd, ibv_pd.context$offset(), "ibv_alloc_null_mr", "pd"),
                verbs_context.alloc_null_mr$offset());
        if (fn.address() == 0L) {
            Errno.set(errno, EOPNOTSUPP);
            return MemorySegment.NULL;
        }
        return ProviderControlDowncalls.p_p(fn, errno, pd);
    }

    /**
     * {@code struct ibv_dm *ibv_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *attr)} (verbs.h,
     * rdma-core 44): {@code vctx->alloc_dm(context, attr)}, or errno = EOPNOTSUPP and NULL.
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_alloc_dm(MemorySegment errno, MemorySegment context, MemorySegment attr) {
        MemorySegment fn = contextOp(nonNull(context, "ibv_alloc_dm", "context"), verbs_context.alloc_dm$offset());
        return createVia(fn, errno, context, attr);
    }

    /**
     * {@code int ibv_free_dm(struct ibv_dm *dm)} (verbs.h, rdma-core 44): {@code vctx->free_dm(dm)} on
     * {@code dm->context}, or EOPNOTSUPP.
     */
    public static int ibv_free_dm(MemorySegment dm) {
        MemorySegment fn = contextOp(contextOf(dm, ibv_dm.context$offset(), "ibv_free_dm", "dm"),
                verbs_context.free_dm$offset());
        return fn.address() == 0L ? EOPNOTSUPP : ProviderControlDowncalls.ctl_i_p(fn, dm);
    }

    /**
     * {@code struct ibv_mr *ibv_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t dm_offset, size_t
     * length, unsigned int access)} (verbs.h, rdma-core 44): {@code vctx->reg_dm_mr(...)} on {@code pd->context},
     * or errno = EOPNOTSUPP and NULL.
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_reg_dm_mr(MemorySegment errno, MemorySegment pd, MemorySegment dm,
            long dmOffset, long length, int access) {
        MemorySegment fn = contextOp(contextOf(pd, ibv_pd.context$offset(), "ibv_reg_dm_mr", "pd"),
                verbs_context.reg_dm_mr$offset());
        if (fn.address() == 0L) {
            Errno.set(errno, EOPNOTSUPP);
            return MemorySegment.NULL;
        }
        return ProviderControlDowncalls.p_ppjji(fn, errno, pd, dm, dmOffset, length, access);
    }
}
