package dev.panverbs.bindings.ibverbs;

import static dev.panverbs.bindings.NativeMemory.nonNull;
import static dev.panverbs.bindings.NativeMemory.pointer;

import dev.panverbs.bindings.ProviderSlots;
import dev.panverbs.bindings.ProviderDowncalls;
import dev.panverbs.bindings.verbs.ibv_qp_ex;
import java.lang.foreign.MemorySegment;

/**
 * Java twins of the 21 {@code ibv_wr_*} work-request builders of rdma-core 44 {@code <infiniband/verbs.h>}:
 * each is one unchecked indirect call through a function pointer of {@code struct ibv_qp_ex}. The
 * {@code qp} argument is an {@code ibv_qp_ex *} ({@code ibv_qp_to_qp_ex}, same address as the
 * {@code ibv_qp}). Before each builder the caller writes {@code qp->wr_id} and {@code qp->wr_flags} (see
 * {@link QpExOps#wr_id}, {@link QpExOps#wr_flags}).
 *
 * <p>Providers leave a slot NULL when its operation was not requested in {@code send_ops_flags} at creation
 * or does not exist for the QP type; C would then jump to address 0. These twins throw the exception of
 * {@link ProviderSlots#missing} naming the verb and the missing flag instead.
 *
 * <p>{@code ibv_wr_start} takes the send-queue spinlock and {@code ibv_wr_complete}/{@code ibv_wr_abort}
 * release it: call them on one thread, and abort on every exceptional path. These twins re-read the slot per
 * call, as C does; {@link QpExOps} reads every slot once.
 */
public final class QpExInline {

    static final long WR_ID = ibv_qp_ex.wr_id$offset();
    static final long WR_FLAGS = ibv_qp_ex.wr_flags$offset();
    static final long WR_ATOMIC_CMP_SWP = ibv_qp_ex.wr_atomic_cmp_swp$offset();
    static final long WR_ATOMIC_FETCH_ADD = ibv_qp_ex.wr_atomic_fetch_add$offset();
    static final long WR_BIND_MW = ibv_qp_ex.wr_bind_mw$offset();
    static final long WR_LOCAL_INV = ibv_qp_ex.wr_local_inv$offset();
    static final long WR_RDMA_READ = ibv_qp_ex.wr_rdma_read$offset();
    static final long WR_RDMA_WRITE = ibv_qp_ex.wr_rdma_write$offset();
    static final long WR_RDMA_WRITE_IMM = ibv_qp_ex.wr_rdma_write_imm$offset();
    static final long WR_SEND = ibv_qp_ex.wr_send$offset();
    static final long WR_SEND_IMM = ibv_qp_ex.wr_send_imm$offset();
    static final long WR_SEND_INV = ibv_qp_ex.wr_send_inv$offset();
    static final long WR_SEND_TSO = ibv_qp_ex.wr_send_tso$offset();
    static final long WR_SET_UD_ADDR = ibv_qp_ex.wr_set_ud_addr$offset();
    static final long WR_SET_XRC_SRQN = ibv_qp_ex.wr_set_xrc_srqn$offset();
    static final long WR_SET_INLINE_DATA = ibv_qp_ex.wr_set_inline_data$offset();
    static final long WR_SET_INLINE_DATA_LIST = ibv_qp_ex.wr_set_inline_data_list$offset();
    static final long WR_SET_SGE = ibv_qp_ex.wr_set_sge$offset();
    static final long WR_SET_SGE_LIST = ibv_qp_ex.wr_set_sge_list$offset();
    static final long WR_START = ibv_qp_ex.wr_start$offset();
    static final long WR_COMPLETE = ibv_qp_ex.wr_complete$offset();
    static final long WR_ABORT = ibv_qp_ex.wr_abort$offset();
    static final long WR_ATOMIC_WRITE = ibv_qp_ex.wr_atomic_write$offset();

    static final String NO_ATOMIC_CMP_SWP =
            "the QP was created without IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP in send_ops_flags";
    static final String NO_ATOMIC_FETCH_ADD =
            "the QP was created without IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD in send_ops_flags";
    static final String NO_BIND_MW =
            "the QP was created without IBV_QP_EX_WITH_BIND_MW in send_ops_flags";
    static final String NO_LOCAL_INV =
            "the QP was created without IBV_QP_EX_WITH_LOCAL_INV in send_ops_flags";
    static final String NO_RDMA_READ =
            "the QP was created without IBV_QP_EX_WITH_RDMA_READ in send_ops_flags";
    static final String NO_RDMA_WRITE =
            "the QP was created without IBV_QP_EX_WITH_RDMA_WRITE in send_ops_flags";
    static final String NO_RDMA_WRITE_IMM =
            "the QP was created without IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM in send_ops_flags";
    static final String NO_SEND =
            "the QP was created without IBV_QP_EX_WITH_SEND in send_ops_flags";
    static final String NO_SEND_IMM =
            "the QP was created without IBV_QP_EX_WITH_SEND_WITH_IMM in send_ops_flags";
    static final String NO_SEND_INV =
            "the QP was created without IBV_QP_EX_WITH_SEND_WITH_INV in send_ops_flags";
    static final String NO_SEND_TSO =
            "the QP was created without IBV_QP_EX_WITH_TSO in send_ops_flags";
    static final String NO_ATOMIC_WRITE =
            "the QP was created without IBV_QP_EX_WITH_ATOMIC_WRITE in send_ops_flags"
            + ", or the provider does not support it (mlx5 in rdma-core 44 never does)";
    static final String UD_ONLY = "the provider installs it only for QP types with a per-WR address (UD, DC)";
    static final String XRC_ONLY = "the provider installs it only for XRC_SEND QPs";
    static final String NOT_EXTENDED =
            "the QP was not created by ibv_create_qp_ex with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS in comp_mask";

    private QpExInline() {}

    /** {@code qp-><slot>}, never NULL. */
    private static MemorySegment slot(MemorySegment qp, long offset, String verb, String reason) {
        MemorySegment fn = pointer(nonNull(qp, verb, "qp") + offset);
        if (fn.address() == 0L) {
            throw missing(verb, reason);
        }
        return fn;
    }

    /** The exception for a NULL builder slot; {@code verb} is {@code ibv_wr_x}, the slot {@code wr_x}. */
    static RuntimeException missing(String verb, String reason) {
        return ProviderSlots.missing(verb, "ibv_qp_ex." + verb.substring("ibv_".length()), reason);
    }

    /**
     * {@code void ibv_wr_atomic_cmp_swp(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, uint64_t
     * compare, uint64_t swap)} (verbs.h, rdma-core 44): {@code qp->wr_atomic_cmp_swp(qp, rkey, remote_addr,
     * compare, swap)}. Builds an atomic compare-and-swap WR on the 8 bytes at {@code remote_addr}.
     */
    public static void ibv_wr_atomic_cmp_swp(MemorySegment qp, int rkey, long remoteAddr, long compare, long swap) {
        ProviderDowncalls.v_pijjj(slot(qp, WR_ATOMIC_CMP_SWP, "ibv_wr_atomic_cmp_swp", NO_ATOMIC_CMP_SWP),
                qp, rkey, remoteAddr, compare, swap);
    }

    /**
     * {@code void ibv_wr_atomic_fetch_add(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, uint64_t
     * add)} (verbs.h, rdma-core 44): {@code qp->wr_atomic_fetch_add(qp, rkey, remote_addr, add)}. Builds an atomic
     * fetch-and-add WR on the 8 bytes at {@code remote_addr}.
     */
    public static void ibv_wr_atomic_fetch_add(MemorySegment qp, int rkey, long remoteAddr, long add) {
        ProviderDowncalls.v_pijj(slot(qp, WR_ATOMIC_FETCH_ADD, "ibv_wr_atomic_fetch_add", NO_ATOMIC_FETCH_ADD),
                qp, rkey, remoteAddr, add);
    }

    /**
     * {@code void ibv_wr_bind_mw(struct ibv_qp_ex *qp, struct ibv_mw *mw, uint32_t rkey, const struct
     * ibv_mw_bind_info *bind_info)} (verbs.h, rdma-core 44): {@code qp->wr_bind_mw(qp, mw, rkey, bind_info)}.
     * Builds a WR that binds a type-2 memory window with the new {@code rkey}.
     */
    public static void ibv_wr_bind_mw(MemorySegment qp, MemorySegment mw, int rkey, MemorySegment bindInfo) {
        ProviderDowncalls.v_ppip(slot(qp, WR_BIND_MW, "ibv_wr_bind_mw", NO_BIND_MW), qp, mw, rkey, bindInfo);
    }

    /**
     * {@code void ibv_wr_local_inv(struct ibv_qp_ex *qp, uint32_t invalidate_rkey)} (verbs.h, rdma-core 44):
     * {@code qp->wr_local_inv(qp, invalidate_rkey)}. Builds a local-invalidate WR for {@code invalidate_rkey}.
     */
    public static void ibv_wr_local_inv(MemorySegment qp, int invalidateRkey) {
        ProviderDowncalls.v_pi(slot(qp, WR_LOCAL_INV, "ibv_wr_local_inv", NO_LOCAL_INV), qp, invalidateRkey);
    }

    /**
     * {@code void ibv_wr_rdma_read(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr)} (verbs.h, rdma-core
     * 44): {@code qp->wr_rdma_read(qp, rkey, remote_addr)}. Builds an RDMA read WR from {@code remote_addr}; set
     * the local buffer with a {@code wr_set_sge*} call.
     */
    public static void ibv_wr_rdma_read(MemorySegment qp, int rkey, long remoteAddr) {
        ProviderDowncalls.v_pij(slot(qp, WR_RDMA_READ, "ibv_wr_rdma_read", NO_RDMA_READ), qp, rkey, remoteAddr);
    }

    /**
     * {@code void ibv_wr_rdma_write(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr)} (verbs.h, rdma-
     * core 44): {@code qp->wr_rdma_write(qp, rkey, remote_addr)}. Builds an RDMA write WR to {@code remote_addr};
     * set the data with a {@code wr_set_sge*} or {@code wr_set_inline_data*} call.
     */
    public static void ibv_wr_rdma_write(MemorySegment qp, int rkey, long remoteAddr) {
        ProviderDowncalls.v_pij(slot(qp, WR_RDMA_WRITE, "ibv_wr_rdma_write", NO_RDMA_WRITE), qp, rkey, remoteAddr);
    }

    /**
     * {@code void ibv_wr_rdma_write_imm(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, __be32
     * imm_data)} (verbs.h, rdma-core 44): {@code qp->wr_rdma_write_imm(qp, rkey, remote_addr, imm_data)}. Builds
     * an RDMA write-with-immediate WR; {@code imm_data} is in network byte order.
     */
    public static void ibv_wr_rdma_write_imm(MemorySegment qp, int rkey, long remoteAddr, int immData) {
        ProviderDowncalls.v_piji(slot(qp, WR_RDMA_WRITE_IMM, "ibv_wr_rdma_write_imm", NO_RDMA_WRITE_IMM),
                qp, rkey, remoteAddr, immData);
    }

    /**
     * {@code void ibv_wr_send(struct ibv_qp_ex *qp)} (verbs.h, rdma-core 44): {@code qp->wr_send(qp)}. Builds a
     * send WR; set the data with a {@code wr_set_sge*} or {@code wr_set_inline_data*} call.
     */
    public static void ibv_wr_send(MemorySegment qp) {
        ProviderDowncalls.v_p(slot(qp, WR_SEND, "ibv_wr_send", NO_SEND), qp);
    }

    /**
     * {@code void ibv_wr_send_imm(struct ibv_qp_ex *qp, __be32 imm_data)} (verbs.h, rdma-core 44): {@code
     * qp->wr_send_imm(qp, imm_data)}. Builds a send-with-immediate WR; {@code imm_data} is in network byte order.
     */
    public static void ibv_wr_send_imm(MemorySegment qp, int immData) {
        ProviderDowncalls.v_pi(slot(qp, WR_SEND_IMM, "ibv_wr_send_imm", NO_SEND_IMM), qp, immData);
    }

    /**
     * {@code void ibv_wr_send_inv(struct ibv_qp_ex *qp, uint32_t invalidate_rkey)} (verbs.h, rdma-core 44): {@code
     * qp->wr_send_inv(qp, invalidate_rkey)}. Builds a send-with-invalidate WR that invalidates {@code
     * invalidate_rkey} at the responder.
     */
    public static void ibv_wr_send_inv(MemorySegment qp, int invalidateRkey) {
        ProviderDowncalls.v_pi(slot(qp, WR_SEND_INV, "ibv_wr_send_inv", NO_SEND_INV), qp, invalidateRkey);
    }

    /**
     * {@code void ibv_wr_send_tso(struct ibv_qp_ex *qp, void *hdr, uint16_t hdr_sz, uint16_t mss)} (verbs.h, rdma-
     * core 44): {@code qp->wr_send_tso(qp, hdr, hdr_sz, mss)}. Builds a TCP segmentation offload send WR (raw
     * packet QPs) with the {@code hdr_sz}-byte header at {@code hdr}.
     */
    public static void ibv_wr_send_tso(MemorySegment qp, MemorySegment hdr, short hdrSz, short mss) {
        ProviderDowncalls.v_ppss(slot(qp, WR_SEND_TSO, "ibv_wr_send_tso", NO_SEND_TSO), qp, hdr, hdrSz, mss);
    }

    /**
     * {@code void ibv_wr_set_ud_addr(struct ibv_qp_ex *qp, struct ibv_ah *ah, uint32_t remote_qpn, uint32_t
     * remote_qkey)} (verbs.h, rdma-core 44): {@code qp->wr_set_ud_addr(qp, ah, remote_qpn, remote_qkey)}. Sets the
     * destination of the current WR (UD and DC QPs).
     */
    public static void ibv_wr_set_ud_addr(MemorySegment qp, MemorySegment ah, int remoteQpn, int remoteQkey) {
        ProviderDowncalls.v_ppii(slot(qp, WR_SET_UD_ADDR, "ibv_wr_set_ud_addr", UD_ONLY),
                qp, ah, remoteQpn, remoteQkey);
    }

    /**
     * {@code void ibv_wr_set_xrc_srqn(struct ibv_qp_ex *qp, uint32_t remote_srqn)} (verbs.h, rdma-core 44): {@code
     * qp->wr_set_xrc_srqn(qp, remote_srqn)}. Sets the remote SRQ number of the current WR (XRC send QPs).
     */
    public static void ibv_wr_set_xrc_srqn(MemorySegment qp, int remoteSrqn) {
        ProviderDowncalls.v_pi(slot(qp, WR_SET_XRC_SRQN, "ibv_wr_set_xrc_srqn", XRC_ONLY), qp, remoteSrqn);
    }

    /**
     * {@code void ibv_wr_set_inline_data(struct ibv_qp_ex *qp, void *addr, size_t length)} (verbs.h, rdma-core
     * 44): {@code qp->wr_set_inline_data(qp, addr, length)}. Copies {@code length} bytes at {@code addr} inline
     * into the current WR.
     */
    public static void ibv_wr_set_inline_data(MemorySegment qp, MemorySegment addr, long length) {
        ProviderDowncalls.v_ppj(slot(qp, WR_SET_INLINE_DATA, "ibv_wr_set_inline_data", NOT_EXTENDED), qp, addr, length);
    }

    /**
     * {@code void ibv_wr_set_inline_data_list(struct ibv_qp_ex *qp, size_t num_buf, const struct ibv_data_buf
     * *buf_list)} (verbs.h, rdma-core 44): {@code qp->wr_set_inline_data_list(qp, num_buf, buf_list)}. Copies
     * {@code num_buf} buffers ({@code struct ibv_data_buf}) inline into the current WR.
     */
    public static void ibv_wr_set_inline_data_list(MemorySegment qp, long numBuf, MemorySegment bufList) {
        ProviderDowncalls.v_pjp(slot(qp, WR_SET_INLINE_DATA_LIST, "ibv_wr_set_inline_data_list", NOT_EXTENDED),
                qp, numBuf, bufList);
    }

    /**
     * {@code void ibv_wr_set_sge(struct ibv_qp_ex *qp, uint32_t lkey, uint64_t addr, uint32_t length)} (verbs.h,
     * rdma-core 44): {@code qp->wr_set_sge(qp, lkey, addr, length)}. Sets the single scatter/gather element of the
     * current WR.
     */
    public static void ibv_wr_set_sge(MemorySegment qp, int lkey, long addr, int length) {
        ProviderDowncalls.v_piji(slot(qp, WR_SET_SGE, "ibv_wr_set_sge", NOT_EXTENDED), qp, lkey, addr, length);
    }

    /**
     * {@code void ibv_wr_set_sge_list(struct ibv_qp_ex *qp, size_t num_sge, const struct ibv_sge *sg_list)}
     * (verbs.h, rdma-core 44): {@code qp->wr_set_sge_list(qp, num_sge, sg_list)}. Sets {@code num_sge}
     * scatter/gather elements ({@code struct ibv_sge}) of the current WR.
     */
    public static void ibv_wr_set_sge_list(MemorySegment qp, long numSge, MemorySegment sgList) {
        ProviderDowncalls.v_pjp(slot(qp, WR_SET_SGE_LIST, "ibv_wr_set_sge_list", NOT_EXTENDED), qp, numSge, sgList);
    }

    /**
     * {@code void ibv_wr_start(struct ibv_qp_ex *qp)} (verbs.h, rdma-core 44): {@code qp->wr_start(qp)}. Starts a
     * batch of WRs; takes the send queue lock, which {@code wr_complete} or {@code wr_abort} releases (same
     * thread).
     */
    public static void ibv_wr_start(MemorySegment qp) {
        ProviderDowncalls.v_p(slot(qp, WR_START, "ibv_wr_start", NOT_EXTENDED), qp);
    }

    /**
     * {@code int ibv_wr_complete(struct ibv_qp_ex *qp)} (verbs.h, rdma-core 44): {@code qp->wr_complete(qp)}.
     * Posts the WRs built since {@code wr_start} and rings the doorbell. Returns 0 or an errno value, in which
     * case the provider discarded the whole batch.
     */
    public static int ibv_wr_complete(MemorySegment qp) {
        return ProviderDowncalls.kick_i_p(slot(qp, WR_COMPLETE, "ibv_wr_complete", NOT_EXTENDED), qp);
    }

    /**
     * {@code void ibv_wr_abort(struct ibv_qp_ex *qp)} (verbs.h, rdma-core 44): {@code qp->wr_abort(qp)}. Discards
     * the WRs built since {@code wr_start} and releases the send queue lock.
     */
    public static void ibv_wr_abort(MemorySegment qp) {
        ProviderDowncalls.v_p(slot(qp, WR_ABORT, "ibv_wr_abort", NOT_EXTENDED), qp);
    }

    /**
     * {@code void ibv_wr_atomic_write(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, const void
     * *atomic_wr)} (verbs.h, rdma-core 44): {@code qp->wr_atomic_write(qp, rkey, remote_addr, atomic_wr)}. Builds
     * an atomic write WR of the 8 bytes at {@code atomic_wr}.
     */
    public static void ibv_wr_atomic_write(MemorySegment qp, int rkey, long remoteAddr, MemorySegment atomicWr) {
        ProviderDowncalls.v_pijp(slot(qp, WR_ATOMIC_WRITE, "ibv_wr_atomic_write", NO_ATOMIC_WRITE),
                qp, rkey, remoteAddr, atomicWr);
    }
}
