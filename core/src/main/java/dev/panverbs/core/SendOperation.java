package dev.panverbs.core;

import static dev.panverbs.bindings.verbs.verbs_h.*;

import java.util.Set;

/**
 * An operation a QP created for the extended work-request API may post ({@code IBV_QP_EX_WITH_*} bits of
 * {@code send_ops_flags} in {@code struct ibv_qp_init_attr_ex}, see {@code ibv_wr_post(3)}). Request them with
 * {@code QueuePairBuilder.sendOps(...)}; a {@link PostBatch} refuses any operation not requested, naming it.
 */
public enum SendOperation {
    /** {@code IBV_QP_EX_WITH_RDMA_WRITE}. */
    RDMA_WRITE(IBV_QP_EX_WITH_RDMA_WRITE()),
    /** {@code IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM}. */
    RDMA_WRITE_WITH_IMM(IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM()),
    /** {@code IBV_QP_EX_WITH_SEND}. */
    SEND(IBV_QP_EX_WITH_SEND()),
    /** {@code IBV_QP_EX_WITH_SEND_WITH_IMM}. */
    SEND_WITH_IMM(IBV_QP_EX_WITH_SEND_WITH_IMM()),
    /** {@code IBV_QP_EX_WITH_RDMA_READ}. */
    RDMA_READ(IBV_QP_EX_WITH_RDMA_READ()),
    /** {@code IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP}; needs device atomics. */
    ATOMIC_CMP_AND_SWP(IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP()),
    /** {@code IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD}; needs device atomics. */
    ATOMIC_FETCH_AND_ADD(IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD()),
    /** {@code IBV_QP_EX_WITH_LOCAL_INV}. */
    LOCAL_INV(IBV_QP_EX_WITH_LOCAL_INV()),
    /** {@code IBV_QP_EX_WITH_BIND_MW}. */
    BIND_MW(IBV_QP_EX_WITH_BIND_MW()),
    /** {@code IBV_QP_EX_WITH_SEND_WITH_INV}. */
    SEND_WITH_INV(IBV_QP_EX_WITH_SEND_WITH_INV());

    private final int bit;

    SendOperation(int bit) {
        this.bit = bit;
    }

    /** The C bit ({@code IBV_QP_EX_WITH_*}). */
    public int bit() {
        return bit;
    }

    /** The C {@code send_ops_flags} of a set of operations. */
    public static long bits(Set<SendOperation> ops) {
        long b = 0;
        for (SendOperation o : ops) {
            b |= o.bit;
        }
        return b;
    }
}
