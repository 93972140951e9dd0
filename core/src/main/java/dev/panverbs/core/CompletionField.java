package dev.panverbs.core;

import static dev.panverbs.bindings.verbs.verbs_h.*;

import java.util.Set;

/**
 * A field an extended completion queue is asked to report ({@code IBV_WC_EX_WITH_*} bits of {@code wc_flags} in
 * {@code struct ibv_cq_init_attr_ex}, see {@code ibv_create_cq_ex(3)}). Reading a field that was not requested is
 * refused in Java (the provider leaves its reader NULL).
 */
public enum CompletionField {
    /** {@code IBV_WC_EX_WITH_BYTE_LEN}. */
    BYTE_LEN(IBV_WC_EX_WITH_BYTE_LEN()),
    /** {@code IBV_WC_EX_WITH_IMM}: immediate data and invalidated rkey. */
    IMM(IBV_WC_EX_WITH_IMM()),
    /** {@code IBV_WC_EX_WITH_QP_NUM}. */
    QP_NUM(IBV_WC_EX_WITH_QP_NUM()),
    /** {@code IBV_WC_EX_WITH_SRC_QP}. */
    SRC_QP(IBV_WC_EX_WITH_SRC_QP()),
    /** {@code IBV_WC_EX_WITH_SLID}. */
    SLID(IBV_WC_EX_WITH_SLID()),
    /** {@code IBV_WC_EX_WITH_SL}. */
    SL(IBV_WC_EX_WITH_SL()),
    /** {@code IBV_WC_EX_WITH_DLID_PATH_BITS}. */
    DLID_PATH_BITS(IBV_WC_EX_WITH_DLID_PATH_BITS()),
    /** {@code IBV_WC_EX_WITH_COMPLETION_TIMESTAMP}: raw HCA clock; needs {@code completion_timestamp_mask != 0}. */
    COMPLETION_TIMESTAMP(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP()),
    /** {@code IBV_WC_EX_WITH_CVLAN}. */
    CVLAN(IBV_WC_EX_WITH_CVLAN()),
    /** {@code IBV_WC_EX_WITH_FLOW_TAG}. */
    FLOW_TAG(IBV_WC_EX_WITH_FLOW_TAG()),
    /** {@code IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK}: nanoseconds; needs {@code hca_core_clock}. */
    COMPLETION_TIMESTAMP_WALLCLOCK(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK());

    private final int bit;

    CompletionField(int bit) {
        this.bit = bit;
    }

    /** The C bit ({@code IBV_WC_EX_WITH_*}). */
    public int bit() {
        return bit;
    }

    /** The C {@code wc_flags} of a set of fields. */
    public static long bits(Set<CompletionField> fields) {
        long b = 0;
        for (CompletionField f : fields) {
            b |= f.bit;
        }
        return b;
    }
}
