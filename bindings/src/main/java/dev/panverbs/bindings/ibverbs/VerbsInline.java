package dev.panverbs.bindings.ibverbs;

import static dev.panverbs.bindings.NativeMemory.nonNull;
import static dev.panverbs.bindings.NativeMemory.pointer;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.NativeMemory;
import dev.panverbs.bindings.ProviderControlDowncalls;
import dev.panverbs.bindings.ProviderDowncalls;
import dev.panverbs.bindings.ProviderSlots;
import dev.panverbs.bindings.verbs.ibv_context;
import dev.panverbs.bindings.verbs.ibv_context_ops;
import dev.panverbs.bindings.verbs.ibv_cq;
import dev.panverbs.bindings.verbs.ibv_dm;
import dev.panverbs.bindings.verbs.ibv_gid_entry;
import dev.panverbs.bindings.verbs.ibv_mr;
import dev.panverbs.bindings.verbs.ibv_mw;
import dev.panverbs.bindings.verbs.ibv_mw_bind;
import dev.panverbs.bindings.verbs.ibv_mw_bind_info;
import dev.panverbs.bindings.verbs.ibv_pd;
import dev.panverbs.bindings.verbs.ibv_qp;
import dev.panverbs.bindings.verbs.ibv_srq;
import dev.panverbs.bindings.verbs.ibv_wc;
import dev.panverbs.bindings.verbs.ibv_wq;
import dev.panverbs.bindings.verbs.verbs_context;
import dev.panverbs.bindings.verbs.verbs_h;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Java twins of the {@code static inline} verbs of rdma-core 44 {@code <infiniband/verbs.h>} that have no
 * exported symbol: the {@code ibv_context.ops} dispatch (post, poll, notify, memory windows), the
 * {@code verbs_get_ctx}/{@code verbs_get_ctx_op} container arithmetic, the per-object {@code ibv_wq}/{@code ibv_dm}
 * slots, the size-injecting wrappers and the pure helpers. The extended-context wrappers are in
 * {@link VerbsContextInline} and {@link VerbsFlowInline}; {@code ibv_qp_ex} builders in {@link QpExInline};
 * {@code ibv_cq_ex} polling in {@link CqExInline}.
 *
 * <p>Each method keeps the C name and argument order and does what the C body does, so it can be diffed
 * against verbs.h. Where C would dereference a NULL argument (a crash), the twin throws
 * {@link IllegalArgumentException} naming the verb and the argument; where it would call a NULL function pointer, the
 * exception of {@link ProviderSlots#missing} naming the verb and the slot.
 *
 * <p>These twins re-read the function pointer on every call, as C does. For the data path use
 * {@link ContextOps}, {@link QpExOps} and {@link CqExOps}, which read each slot once.
 */
public final class VerbsInline {

    /** {@code offsetof(struct verbs_context, context)}: 320 on x86_64; {@code vctx = ctx - 320}. */
    static final long CONTEXT_IN_VERBS_CONTEXT = verbs_context.context$offset();
    /** {@code sizeof(struct verbs_context)}: 648. */
    static final long VERBS_CONTEXT_SIZE = verbs_context.sizeof();
    /** {@code __VERBS_ABI_IS_EXTENDED}, the all-ones pointer libibverbs stores in {@code ctx->abi_compat}. */
    static final long ABI_IS_EXTENDED = verbs_h.__VERBS_ABI_IS_EXTENDED().address();

    private static final long ABI_COMPAT = ibv_context.abi_compat$offset();
    private static final long SZ = verbs_context.sz$offset();
    private static final long OPS = ibv_context.ops$offset();
    static final long OPS_POST_SEND = OPS + ibv_context_ops.post_send$offset();
    static final long OPS_POST_RECV = OPS + ibv_context_ops.post_recv$offset();
    static final long OPS_POST_SRQ_RECV = OPS + ibv_context_ops.post_srq_recv$offset();
    static final long OPS_POLL_CQ = OPS + ibv_context_ops.poll_cq$offset();
    static final long OPS_REQ_NOTIFY_CQ = OPS + ibv_context_ops.req_notify_cq$offset();
    static final long OPS_ALLOC_MW = OPS + ibv_context_ops.alloc_mw$offset();
    static final long OPS_BIND_MW = OPS + ibv_context_ops.bind_mw$offset();
    static final long OPS_DEALLOC_MW = OPS + ibv_context_ops.dealloc_mw$offset();

    private static final long WC_SIZE = ibv_wc.sizeof();
    private static final int IBV_MW_TYPE_1 = verbs_h.IBV_MW_TYPE_1();
    private static final int IB_ROCE_UDP_ENCAP_VALID_PORT_MIN = verbs_h.IB_ROCE_UDP_ENCAP_VALID_PORT_MIN();

    private VerbsInline() {}

    // ---- verbs_get_ctx / verbs_get_ctx_op ----

    /**
     * {@code struct verbs_context *verbs_get_ctx(struct ibv_context *ctx)} (verbs.h, rdma-core 44): NULL unless
     * {@code ctx->abi_compat == __VERBS_ABI_IS_EXTENDED}, else the enclosing {@code verbs_context}, which starts
     * 320 bytes below {@code ctx} (open-coded {@code container_of}). The result spans the whole 648-byte struct.
     */
    public static MemorySegment verbs_get_ctx(MemorySegment ctx) {
        long c = nonNull(ctx, "verbs_get_ctx", "ctx");
        if (NativeMemory.int64(c + ABI_COMPAT) != ABI_IS_EXTENDED) {
            return MemorySegment.NULL;
        }
        return MemorySegment.ofAddress(c - CONTEXT_IN_VERBS_CONTEXT).reinterpret(VERBS_CONTEXT_SIZE);
    }

    /**
     * {@code verbs_get_ctx_op(ctx, op)} (verbs.h macro, rdma-core 44): the {@code verbs_context} if it is
     * extended, if {@code vctx->sz >= sizeof(*vctx) - offsetof(struct verbs_context, op)} (the library that
     * built it knows the op: {@code verbs_context} grows towards lower addresses, so an older library has a
     * smaller {@code sz}) and if the op is not NULL; otherwise NULL.
     *
     * @param opOffset {@code offsetof(struct verbs_context, op)}, e.g. {@code verbs_context.query_port$offset()}
     */
    public static MemorySegment verbs_get_ctx_op(MemorySegment ctx, long opOffset) {
        MemorySegment vctx = verbs_get_ctx(ctx);
        if (vctx.equals(MemorySegment.NULL)
                || Long.compareUnsigned(vctx.get(ValueLayout.JAVA_LONG, SZ), VERBS_CONTEXT_SIZE - opOffset) < 0
                || vctx.get(ValueLayout.ADDRESS, opOffset).address() == 0L) {
            return MemorySegment.NULL;
        }
        return vctx;
    }

    /**
     * The function pointer {@code verbs_get_ctx_op(ctx, op)->op}, or NULL where the macro yields NULL; the same
     * three checks without allocating the {@code verbs_context} segment.
     */
    static MemorySegment contextOp(long ctx, long opOffset) {
        if (NativeMemory.int64(ctx + ABI_COMPAT) != ABI_IS_EXTENDED) {
            return MemorySegment.NULL;
        }
        long vctx = ctx - CONTEXT_IN_VERBS_CONTEXT;
        if (Long.compareUnsigned(NativeMemory.int64(vctx + SZ), VERBS_CONTEXT_SIZE - opOffset) < 0) {
            return MemorySegment.NULL;
        }
        return pointer(vctx + opOffset);
    }

    /** {@code obj->context} where {@code context} is at {@code contextField}, never NULL. */
    static long contextOf(MemorySegment obj, long contextField, String verb, String argument) {
        long ctx = pointer(nonNull(obj, verb, argument) + contextField).address();
        if (ctx == 0L) {
            throw new IllegalArgumentException(verb + ": " + argument + "->context is NULL");
        }
        return ctx;
    }

    /** {@code ctx->ops.<slot>} (at {@code opsSlot} from ctx), never NULL: C would call through it regardless. */
    static MemorySegment opsSlot(long ctx, long opsSlot, String verb, String slot) {
        MemorySegment fn = pointer(ctx + opsSlot);
        if (fn.address() == 0L) {
            throw ProviderSlots.missing(verb, slot, "the provider installed no such op in its ibv_context");
        }
        return fn;
    }

    // ---- struct ibv_context.ops dispatch ----

    /**
     * {@code int ibv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)}
     * (verbs.h, rdma-core 44): {@code qp->context->ops.post_send(qp, wr, bad_wr)}. Returns 0 or an errno value;
     * the provider stores the first failed WR in {@code *bad_wr}.
     */
    public static int ibv_post_send(MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
        long ctx = contextOf(qp, ibv_qp.context$offset(), "ibv_post_send", "qp");
        return ProviderDowncalls.kick_i_ppp(opsSlot(ctx, OPS_POST_SEND, "ibv_post_send", "ibv_context.ops.post_send"),
                qp, wr, badWr);
    }

    /**
     * {@code int ibv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)}
     * (verbs.h, rdma-core 44): {@code qp->context->ops.post_recv(qp, wr, bad_wr)}. Returns 0 or an errno value.
     */
    public static int ibv_post_recv(MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
        long ctx = contextOf(qp, ibv_qp.context$offset(), "ibv_post_recv", "qp");
        return ProviderDowncalls.i_ppp(opsSlot(ctx, OPS_POST_RECV, "ibv_post_recv", "ibv_context.ops.post_recv"),
                qp, wr, badWr);
    }

    /**
     * {@code int ibv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr, struct ibv_recv_wr
     * **bad_recv_wr)} (verbs.h, rdma-core 44): {@code srq->context->ops.post_srq_recv(...)}. 0 or an errno value.
     */
    public static int ibv_post_srq_recv(MemorySegment srq, MemorySegment recvWr, MemorySegment badRecvWr) {
        long ctx = contextOf(srq, ibv_srq.context$offset(), "ibv_post_srq_recv", "srq");
        return ProviderDowncalls.i_ppp(
                opsSlot(ctx, OPS_POST_SRQ_RECV, "ibv_post_srq_recv", "ibv_context.ops.post_srq_recv"),
                srq, recvWr, badRecvWr);
    }

    /**
     * {@code int ibv_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)} (verbs.h, rdma-core 44):
     * {@code cq->context->ops.poll_cq(cq, num_entries, wc)}. Returns the number of completions written (0 to
     * {@code num_entries}) or a negative value on error. {@code wc} must hold {@code num_entries} entries of 48
     * bytes ({@link IllegalArgumentException}).
     */
    public static int ibv_poll_cq(MemorySegment cq, int numEntries, MemorySegment wc) {
        long ctx = contextOf(cq, ibv_cq.context$offset(), "ibv_poll_cq", "cq");
        NativeMemory.output(wc, Math.max(0, numEntries) * WC_SIZE, "ibv_poll_cq", "wc");
        return ProviderDowncalls.i_pip(opsSlot(ctx, OPS_POLL_CQ, "ibv_poll_cq", "ibv_context.ops.poll_cq"),
                cq, numEntries, wc);
    }

    /**
     * {@code int ibv_req_notify_cq(struct ibv_cq *cq, int solicited_only)} (verbs.h, rdma-core 44):
     * {@code cq->context->ops.req_notify_cq(cq, solicited_only)}. Returns 0 or an errno value.
     */
    public static int ibv_req_notify_cq(MemorySegment cq, int solicitedOnly) {
        long ctx = contextOf(cq, ibv_cq.context$offset(), "ibv_req_notify_cq", "cq");
        return ProviderDowncalls.kick_i_pi(
                opsSlot(ctx, OPS_REQ_NOTIFY_CQ, "ibv_req_notify_cq", "ibv_context.ops.req_notify_cq"),
                cq, solicitedOnly);
    }

    /**
     * {@code struct ibv_mw *ibv_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)} (verbs.h, rdma-core 44): if
     * {@code pd->context->ops.alloc_mw} is NULL, errno = EOPNOTSUPP and NULL; else that op's result (NULL +
     * errno on failure).
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_alloc_mw(MemorySegment errno, MemorySegment pd, int type) {
        long ctx = contextOf(pd, ibv_pd.context$offset(), "ibv_alloc_mw", "pd");
        MemorySegment fn = pointer(ctx + OPS_ALLOC_MW);
        if (fn.address() == 0L) {
            Errno.set(errno, Errno.EOPNOTSUPP);
            return MemorySegment.NULL;
        }
        return ProviderControlDowncalls.p_pi(fn, errno, pd, type);
    }

    /**
     * {@code int ibv_dealloc_mw(struct ibv_mw *mw)} (verbs.h, rdma-core 44):
     * {@code mw->context->ops.dealloc_mw(mw)}. Returns 0 or an errno value.
     */
    public static int ibv_dealloc_mw(MemorySegment mw) {
        long ctx = contextOf(mw, ibv_mw.context$offset(), "ibv_dealloc_mw", "mw");
        return ProviderControlDowncalls.ctl_i_p(
                opsSlot(ctx, OPS_DEALLOC_MW, "ibv_dealloc_mw", "ibv_context.ops.dealloc_mw"), mw);
    }

    /**
     * {@code int ibv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)} (verbs.h,
     * rdma-core 44). Before dispatching to {@code mw->context->ops.bind_mw} (note: the MW's context, not the
     * QP's) it returns EINVAL if {@code mw->type} is not {@code IBV_MW_TYPE_1}, EINVAL if
     * {@code bind_info.mr} is NULL while {@code bind_info.addr} or {@code .length} is not 0, and EPERM if the MR
     * and the MW belong to different PDs. Returns 0 or an errno value.
     */
    public static int ibv_bind_mw(MemorySegment qp, MemorySegment mw, MemorySegment mwBind) {
        long m = nonNull(mw, "ibv_bind_mw", "mw");
        long bindInfo = nonNull(mwBind, "ibv_bind_mw", "mw_bind") + ibv_mw_bind.bind_info$offset();
        if (NativeMemory.int32(m + ibv_mw.type$offset()) != IBV_MW_TYPE_1) {
            return Errno.EINVAL;
        }
        long mr = pointer(bindInfo + ibv_mw_bind_info.mr$offset()).address();
        if (mr == 0L && (NativeMemory.int64(bindInfo + ibv_mw_bind_info.addr$offset()) != 0L
                || NativeMemory.int64(bindInfo + ibv_mw_bind_info.length$offset()) != 0L)) {
            return Errno.EINVAL;
        }
        if (mr != 0L && pointer(m + ibv_mw.pd$offset()).address() != pointer(mr + ibv_mr.pd$offset()).address()) {
            return Errno.EPERM;
        }
        long ctx = contextOf(mw, ibv_mw.context$offset(), "ibv_bind_mw", "mw");
        return ProviderDowncalls.kick_i_ppp(opsSlot(ctx, OPS_BIND_MW, "ibv_bind_mw", "ibv_context.ops.bind_mw"),
                qp, mw, mwBind);
    }

    // ---- other per-object function pointers ----

    /**
     * {@code int ibv_post_wq_recv(struct ibv_wq *wq, struct ibv_recv_wr *recv_wr, struct ibv_recv_wr
     * **bad_recv_wr)} (verbs.h, rdma-core 44): {@code wq->post_recv(wq, recv_wr, bad_recv_wr)}. 0 or an errno
     * value.
     */
    public static int ibv_post_wq_recv(MemorySegment wq, MemorySegment recvWr, MemorySegment badRecvWr) {
        return ProviderDowncalls.i_ppp(objectSlot(wq, ibv_wq.post_recv$offset(), "ibv_post_wq_recv", "wq",
                "ibv_wq.post_recv"), wq, recvWr, badRecvWr);
    }

    /**
     * {@code int ibv_memcpy_to_dm(struct ibv_dm *dm, uint64_t dm_offset, const void *host_addr, size_t length)}
     * (verbs.h, rdma-core 44): {@code dm->memcpy_to_dm(dm, dm_offset, host_addr, length)}. 0 or an errno value.
     */
    public static int ibv_memcpy_to_dm(MemorySegment dm, long dmOffset, MemorySegment hostAddr, long length) {
        return ProviderDowncalls.i_pjpj(objectSlot(dm, ibv_dm.memcpy_to_dm$offset(), "ibv_memcpy_to_dm", "dm",
                "ibv_dm.memcpy_to_dm"), dm, dmOffset, hostAddr, length);
    }

    /**
     * {@code int ibv_memcpy_from_dm(void *host_addr, struct ibv_dm *dm, uint64_t dm_offset, size_t length)}
     * (verbs.h, rdma-core 44): {@code dm->memcpy_from_dm(host_addr, dm, dm_offset, length)}; note the host
     * address comes first. 0 or an errno value.
     */
    public static int ibv_memcpy_from_dm(MemorySegment hostAddr, MemorySegment dm, long dmOffset, long length) {
        return ProviderDowncalls.i_ppjj(objectSlot(dm, ibv_dm.memcpy_from_dm$offset(), "ibv_memcpy_from_dm", "dm",
                "ibv_dm.memcpy_from_dm"), hostAddr, dm, dmOffset, length);
    }

    private static MemorySegment objectSlot(MemorySegment obj, long slot, String verb, String argument,
            String slotName) {
        MemorySegment fn = pointer(nonNull(obj, verb, argument) + slot);
        if (fn.address() == 0L) {
            throw ProviderSlots.missing(verb, slotName, "the provider did not install it for this object");
        }
        return fn;
    }

    // ---- wrappers that add a size or pick an exported function ----

    /**
     * {@code int ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index, struct
     * ibv_gid_entry *entry, uint32_t flags)} (verbs.h, rdma-core 44): the exported {@code _ibv_query_gid_ex}
     * with {@code entry_size = sizeof(struct ibv_gid_entry)} (32). 0 or an errno value. {@code entry} must hold
     * the 32 bytes ({@link IllegalArgumentException}).
     */
    public static int ibv_query_gid_ex(MemorySegment context, int portNum, int gidIndex, MemorySegment entry,
            int flags) {
        NativeMemory.output(entry, ibv_gid_entry.sizeof(), "ibv_query_gid_ex", "entry");
        return LibIbverbs._ibv_query_gid_ex(context, portNum, gidIndex, entry, flags, ibv_gid_entry.sizeof());
    }

    /**
     * {@code ssize_t ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries, size_t
     * max_entries, uint32_t flags)} (verbs.h, rdma-core 44): the exported {@code _ibv_query_gid_table} with
     * {@code entry_size = 32}. The number of entries, or a negative errno value. {@code entries} must hold
     * {@code max_entries} entries ({@link IllegalArgumentException}).
     */
    public static long ibv_query_gid_table(MemorySegment context, MemorySegment entries, long maxEntries,
            int flags) {
        if (maxEntries < 0 || maxEntries > Long.MAX_VALUE / ibv_gid_entry.sizeof()) {
            throw new IllegalArgumentException("ibv_query_gid_table: max_entries " + maxEntries + " is out of range");
        }
        NativeMemory.output(entries, maxEntries * ibv_gid_entry.sizeof(), "ibv_query_gid_table", "entries");
        return LibIbverbs._ibv_query_gid_table(context, entries, maxEntries, flags, ibv_gid_entry.sizeof());
    }

    /**
     * {@code ibv_reg_mr(pd, addr, length, access)} (verbs.h macro → {@code __ibv_reg_mr}, rdma-core 44). C picks
     * the exported {@code ibv_reg_mr} only when {@code access} is a compile-time constant without
     * {@code IBV_ACCESS_OPTIONAL_RANGE} bits; from Java it never is, so this is the other branch:
     * {@code ibv_reg_mr_iova2(pd, addr, length, (uintptr_t) addr, access)} (in v44 the two behave alike).
     * NULL + errno.
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_reg_mr(MemorySegment errno, MemorySegment pd, MemorySegment addr, long length,
            int access) {
        return LibIbverbs.ibv_reg_mr_iova2(errno, pd, addr, length, addr.address(), access);
    }

    /**
     * {@code ibv_reg_mr_iova(pd, addr, length, iova, access)} (verbs.h macro → {@code __ibv_reg_mr_iova},
     * rdma-core 44), for a non-constant {@code access}: {@code ibv_reg_mr_iova2(pd, addr, length, iova, access)}.
     * NULL + errno.
     *
     * @param errno an {@link Errno} capture segment
     */
    public static MemorySegment ibv_reg_mr_iova(MemorySegment errno, MemorySegment pd, MemorySegment addr,
            long length, long iova, int access) {
        return LibIbverbs.ibv_reg_mr_iova2(errno, pd, addr, length, iova, access);
    }

    // ---- pure helpers ----

    /**
     * {@code uint32_t ibv_inc_rkey(uint32_t rkey)} (verbs.h, rdma-core 44): the next key with the same index,
     * i.e. the low 8 bits (the key tag) incremented modulo 256, the upper 24 bits kept.
     */
    public static int ibv_inc_rkey(int rkey) {
        final int mask = 0x000000ff;
        int newTag = (rkey + 1) & mask;
        return (rkey & ~mask) | newTag;
    }

    /**
     * {@code int ibv_is_qpt_supported(uint32_t caps, enum ibv_qp_type qpt)} (verbs.h, rdma-core 44):
     * {@code !!(caps & (1 << qpt))}, 1 if bit {@code qpt} of {@code caps} is set, else 0. {@code qpt} must be
     * below 32 (C's shift is undefined beyond; Java's wraps).
     */
    public static int ibv_is_qpt_supported(int caps, int qpt) {
        return (caps & (1 << qpt)) != 0 ? 1 : 0;
    }

    /**
     * {@code uint16_t ibv_flow_label_to_udp_sport(uint32_t fl)} (verbs.h, rdma-core 44): folds a 20-bit IPv6
     * flow label into the RoCEv2 UDP source port range 0xC000-0xFFFF ({@code IB_ROCE_UDP_ENCAP_VALID_PORT_MIN}).
     * Returned as an {@code int} holding the unsigned 16-bit port.
     */
    public static int ibv_flow_label_to_udp_sport(int fl) {
        int flLow = fl & 0x03FFF;
        int flHigh = fl & 0xFC000;
        flLow ^= flHigh >>> 14;
        return (flLow | IB_ROCE_UDP_ENCAP_VALID_PORT_MIN) & 0xFFFF;
    }
}
