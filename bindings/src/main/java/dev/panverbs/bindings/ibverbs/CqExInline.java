package dev.panverbs.bindings.ibverbs;

import static dev.panverbs.bindings.NativeMemory.nonNull;
import static dev.panverbs.bindings.NativeMemory.pointer;

import dev.panverbs.bindings.ProviderSlots;
import dev.panverbs.bindings.ProviderDowncalls;
import dev.panverbs.bindings.verbs.ibv_cq_ex;
import java.lang.foreign.MemorySegment;

/**
 * Java twins of the {@code struct ibv_cq_ex} polling inlines of rdma-core 44 {@code <infiniband/verbs.h>}:
 * {@code ibv_cq_ex_to_cq}, {@code ibv_start_poll}/{@code ibv_next_poll}/{@code ibv_end_poll} and the 16
 * {@code ibv_wc_read_*} readers, each one unchecked indirect call through a slot of the CQ. After a
 * successful start or next poll, {@code cq->status} and {@code cq->wr_id} hold the current completion (see
 * {@link CqExOps#status}, {@link CqExOps#wr_id}).
 *
 * <p>Providers leave a reader slot NULL when its {@code IBV_WC_EX_WITH_*} bit was not requested in
 * {@code wc_flags}; C would then jump to address 0. These twins throw the exception of
 * {@link ProviderSlots#missing} naming the verb and the missing bit instead. These twins re-read the slot per call, as C does; {@link CqExOps}
 * reads every slot once.
 */
public final class CqExInline {

    static final long STATUS = ibv_cq_ex.status$offset();
    static final long WR_ID = ibv_cq_ex.wr_id$offset();
    static final long START_POLL = ibv_cq_ex.start_poll$offset();
    static final long NEXT_POLL = ibv_cq_ex.next_poll$offset();
    static final long END_POLL = ibv_cq_ex.end_poll$offset();
    static final long READ_OPCODE = ibv_cq_ex.read_opcode$offset();
    static final long READ_VENDOR_ERR = ibv_cq_ex.read_vendor_err$offset();
    static final long READ_BYTE_LEN = ibv_cq_ex.read_byte_len$offset();
    static final long READ_IMM_DATA = ibv_cq_ex.read_imm_data$offset();
    static final long READ_QP_NUM = ibv_cq_ex.read_qp_num$offset();
    static final long READ_SRC_QP = ibv_cq_ex.read_src_qp$offset();
    static final long READ_WC_FLAGS = ibv_cq_ex.read_wc_flags$offset();
    static final long READ_SLID = ibv_cq_ex.read_slid$offset();
    static final long READ_SL = ibv_cq_ex.read_sl$offset();
    static final long READ_DLID_PATH_BITS = ibv_cq_ex.read_dlid_path_bits$offset();
    static final long READ_COMPLETION_TS = ibv_cq_ex.read_completion_ts$offset();
    static final long READ_COMPLETION_WALLCLOCK_NS = ibv_cq_ex.read_completion_wallclock_ns$offset();
    static final long READ_CVLAN = ibv_cq_ex.read_cvlan$offset();
    static final long READ_FLOW_TAG = ibv_cq_ex.read_flow_tag$offset();
    static final long READ_TM_INFO = ibv_cq_ex.read_tm_info$offset();

    static final String NO_BYTE_LEN = "the CQ was created without IBV_WC_EX_WITH_BYTE_LEN in wc_flags";
    static final String NO_IMM = "the CQ was created without IBV_WC_EX_WITH_IMM in wc_flags";
    static final String NO_QP_NUM = "the CQ was created without IBV_WC_EX_WITH_QP_NUM in wc_flags";
    static final String NO_SRC_QP = "the CQ was created without IBV_WC_EX_WITH_SRC_QP in wc_flags";
    static final String NO_SLID = "the CQ was created without IBV_WC_EX_WITH_SLID in wc_flags";
    static final String NO_SL = "the CQ was created without IBV_WC_EX_WITH_SL in wc_flags";
    static final String NO_DLID_PATH_BITS = "the CQ was created without IBV_WC_EX_WITH_DLID_PATH_BITS in wc_flags";
    static final String NO_TIMESTAMP = "the CQ was created without IBV_WC_EX_WITH_COMPLETION_TIMESTAMP in wc_flags";
    static final String NO_WALLCLOCK =
            "the CQ was created without IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK in wc_flags";
    static final String NO_CVLAN = "the CQ was created without IBV_WC_EX_WITH_CVLAN in wc_flags";
    static final String NO_FLOW_TAG = "the CQ was created without IBV_WC_EX_WITH_FLOW_TAG in wc_flags";
    static final String NO_TM_INFO = "the CQ was created without IBV_WC_EX_WITH_TM_INFO in wc_flags";
    static final String NOT_EXTENDED = "the CQ was not created by ibv_create_cq_ex";

    private CqExInline() {}

    /** {@code cq-><slot>}, never NULL. */
    private static MemorySegment slot(MemorySegment cq, long offset, String verb, String slot, String reason) {
        MemorySegment fn = pointer(nonNull(cq, verb, "cq") + offset);
        if (fn.address() == 0L) {
            throw missing(verb, slot, reason);
        }
        return fn;
    }

    /** The exception for a NULL polling or reader slot {@code slot} of {@code struct ibv_cq_ex}. */
    static RuntimeException missing(String verb, String slot, String reason) {
        return ProviderSlots.missing(verb, "ibv_cq_ex." + slot, reason);
    }

    /**
     * {@code struct ibv_cq *ibv_cq_ex_to_cq(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): a cast; an
     * {@code ibv_cq_ex} starts with the 128 bytes of an {@code ibv_cq}, so the address is the same.
     */
    public static MemorySegment ibv_cq_ex_to_cq(MemorySegment cq) {
        return cq;
    }

    /**
     * {@code int ibv_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)} (verbs.h, rdma-core 44):
     * {@code cq->start_poll(cq, attr)}. Starts polling: 0 if a completion is now current (read it with the
     * readers, {@code status} and {@code wr_id}), ENOENT if the CQ is empty, another errno value on failure; only
     * after 0 must {@code ibv_end_poll} follow. {@code attr} must point to a zeroed {@code struct
     * ibv_poll_cq_attr} (mlx5 dereferences it and rejects a non-zero {@code comp_mask} with EINVAL). May take the
     * CQ lock.
     */
    public static int ibv_start_poll(MemorySegment cq, MemorySegment attr) {
        return ProviderDowncalls.i_pp(slot(cq, START_POLL, "ibv_start_poll", "start_poll", NOT_EXTENDED), cq, attr);
    }

    /**
     * {@code int ibv_next_poll(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): {@code cq->next_poll(cq)}. Advances
     * to the next completion: 0, ENOENT when none is left, or another errno value. {@code ibv_end_poll} must
     * follow in every case.
     */
    public static int ibv_next_poll(MemorySegment cq) {
        return ProviderDowncalls.i_p(slot(cq, NEXT_POLL, "ibv_next_poll", "next_poll", NOT_EXTENDED), cq);
    }

    /**
     * {@code void ibv_end_poll(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): {@code cq->end_poll(cq)}. Ends
     * polling: updates the consumer index and releases the CQ lock.
     */
    public static void ibv_end_poll(MemorySegment cq) {
        ProviderDowncalls.v_p(slot(cq, END_POLL, "ibv_end_poll", "end_poll", NOT_EXTENDED), cq);
    }

    /**
     * {@code enum ibv_wc_opcode ibv_wc_read_opcode(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): {@code
     * cq->read_opcode(cq)}. The {@code enum ibv_wc_opcode} of the current completion.
     */
    public static int ibv_wc_read_opcode(MemorySegment cq) {
        return ProviderDowncalls.i_p(slot(cq, READ_OPCODE, "ibv_wc_read_opcode", "read_opcode", NOT_EXTENDED), cq);
    }

    /**
     * {@code uint32_t ibv_wc_read_vendor_err(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): {@code
     * cq->read_vendor_err(cq)}. The vendor error syndrome of the current completion.
     */
    public static int ibv_wc_read_vendor_err(MemorySegment cq) {
        MemorySegment fn = slot(cq, READ_VENDOR_ERR, "ibv_wc_read_vendor_err", "read_vendor_err", NOT_EXTENDED);
        return ProviderDowncalls.i_p(fn, cq);
    }

    /**
     * {@code uint32_t ibv_wc_read_byte_len(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): {@code
     * cq->read_byte_len(cq)}. The number of bytes transferred (unsigned 32 bits).
     */
    public static int ibv_wc_read_byte_len(MemorySegment cq) {
        return ProviderDowncalls.i_p(slot(cq, READ_BYTE_LEN, "ibv_wc_read_byte_len", "read_byte_len", NO_BYTE_LEN), cq);
    }

    /**
     * {@code __be32 ibv_wc_read_imm_data(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): {@code
     * cq->read_imm_data(cq)}. The immediate data, in network byte order.
     */
    public static int ibv_wc_read_imm_data(MemorySegment cq) {
        return ProviderDowncalls.i_p(slot(cq, READ_IMM_DATA, "ibv_wc_read_imm_data", "read_imm_data", NO_IMM), cq);
    }

    /**
     * {@code uint32_t ibv_wc_read_invalidated_rkey(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): {@code
     * cq->read_imm_data(cq)}. The rkey invalidated by a send-with-invalidate: the {@code read_imm_data} slot, its
     * 32 bits taken as a host-order key.
     */
    public static int ibv_wc_read_invalidated_rkey(MemorySegment cq) {
        MemorySegment fn = slot(cq, READ_IMM_DATA, "ibv_wc_read_invalidated_rkey", "read_imm_data", NO_IMM);
        return ProviderDowncalls.i_p(fn, cq);
    }

    /**
     * {@code uint32_t ibv_wc_read_qp_num(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): {@code
     * cq->read_qp_num(cq)}. The local QP number of the completion.
     */
    public static int ibv_wc_read_qp_num(MemorySegment cq) {
        return ProviderDowncalls.i_p(slot(cq, READ_QP_NUM, "ibv_wc_read_qp_num", "read_qp_num", NO_QP_NUM), cq);
    }

    /**
     * {@code uint32_t ibv_wc_read_src_qp(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): {@code
     * cq->read_src_qp(cq)}. The remote (source) QP number (UD).
     */
    public static int ibv_wc_read_src_qp(MemorySegment cq) {
        return ProviderDowncalls.i_p(slot(cq, READ_SRC_QP, "ibv_wc_read_src_qp", "read_src_qp", NO_SRC_QP), cq);
    }

    /**
     * {@code unsigned int ibv_wc_read_wc_flags(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): {@code
     * cq->read_wc_flags(cq)}. The {@code enum ibv_wc_flags} bits of the current completion.
     */
    public static int ibv_wc_read_wc_flags(MemorySegment cq) {
        MemorySegment fn = slot(cq, READ_WC_FLAGS, "ibv_wc_read_wc_flags", "read_wc_flags", NOT_EXTENDED);
        return ProviderDowncalls.i_p(fn, cq);
    }

    /**
     * {@code uint32_t ibv_wc_read_slid(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): {@code cq->read_slid(cq)}.
     * The source LID (UD).
     */
    public static int ibv_wc_read_slid(MemorySegment cq) {
        return ProviderDowncalls.i_p(slot(cq, READ_SLID, "ibv_wc_read_slid", "read_slid", NO_SLID), cq);
    }

    /**
     * {@code uint8_t ibv_wc_read_sl(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): {@code cq->read_sl(cq)}. The
     * service level, returned as an {@code int} 0-255.
     */
    public static int ibv_wc_read_sl(MemorySegment cq) {
        return Byte.toUnsignedInt(ProviderDowncalls.b_p(slot(cq, READ_SL, "ibv_wc_read_sl", "read_sl", NO_SL), cq));
    }

    /**
     * {@code uint8_t ibv_wc_read_dlid_path_bits(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): {@code
     * cq->read_dlid_path_bits(cq)}. The destination LID path bits, returned as an {@code int} 0-255.
     */
    public static int ibv_wc_read_dlid_path_bits(MemorySegment cq) {
        MemorySegment fn = slot(cq, READ_DLID_PATH_BITS, "ibv_wc_read_dlid_path_bits", "read_dlid_path_bits",
                NO_DLID_PATH_BITS);
        return Byte.toUnsignedInt(ProviderDowncalls.b_p(fn, cq));
    }

    /**
     * {@code uint64_t ibv_wc_read_completion_ts(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): {@code
     * cq->read_completion_ts(cq)}. The raw HCA clock at completion.
     */
    public static long ibv_wc_read_completion_ts(MemorySegment cq) {
        MemorySegment fn = slot(cq, READ_COMPLETION_TS, "ibv_wc_read_completion_ts", "read_completion_ts",
                NO_TIMESTAMP);
        return ProviderDowncalls.j_p(fn, cq);
    }

    /**
     * {@code uint64_t ibv_wc_read_completion_wallclock_ns(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): {@code
     * cq->read_completion_wallclock_ns(cq)}. The completion time in nanoseconds of wall-clock time.
     */
    public static long ibv_wc_read_completion_wallclock_ns(MemorySegment cq) {
        MemorySegment fn = slot(cq, READ_COMPLETION_WALLCLOCK_NS, "ibv_wc_read_completion_wallclock_ns",
                "read_completion_wallclock_ns", NO_WALLCLOCK);
        return ProviderDowncalls.j_p(fn, cq);
    }

    /**
     * {@code uint16_t ibv_wc_read_cvlan(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): {@code
     * cq->read_cvlan(cq)}. The customer VLAN tag, returned as an {@code int} 0-65535.
     */
    public static int ibv_wc_read_cvlan(MemorySegment cq) {
        MemorySegment fn = slot(cq, READ_CVLAN, "ibv_wc_read_cvlan", "read_cvlan", NO_CVLAN);
        return Short.toUnsignedInt(ProviderDowncalls.s_p(fn, cq));
    }

    /**
     * {@code uint32_t ibv_wc_read_flow_tag(struct ibv_cq_ex *cq)} (verbs.h, rdma-core 44): {@code
     * cq->read_flow_tag(cq)}. The flow tag of the steering rule that matched.
     */
    public static int ibv_wc_read_flow_tag(MemorySegment cq) {
        return ProviderDowncalls.i_p(slot(cq, READ_FLOW_TAG, "ibv_wc_read_flow_tag", "read_flow_tag", NO_FLOW_TAG), cq);
    }

    /**
     * {@code void ibv_wc_read_tm_info(struct ibv_cq_ex *cq, struct ibv_wc_tm_info *tm_info)} (verbs.h, rdma-core
     * 44): {@code cq->read_tm_info(cq, tm_info)}. Fills the 16-byte {@code struct ibv_wc_tm_info} at {@code
     * tm_info} (tag matching).
     */
    public static void ibv_wc_read_tm_info(MemorySegment cq, MemorySegment tmInfo) {
        ProviderDowncalls.v_pp(slot(cq, READ_TM_INFO, "ibv_wc_read_tm_info", "read_tm_info", NO_TM_INFO), cq, tmInfo);
    }
}
