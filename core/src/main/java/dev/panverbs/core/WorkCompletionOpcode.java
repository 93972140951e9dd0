package dev.panverbs.core;

import static dev.panverbs.bindings.verbs.verbs_h.*;

/**
 * The operation a work completion reports ({@code enum ibv_wc_opcode}, {@code ibv_poll_cq(3)}). Valid only when the
 * status is {@link WorkCompletionStatus#SUCCESS}. Receive-side opcodes have bit {@code IBV_WC_RECV} (128) set.
 */
public enum WorkCompletionOpcode {
    /** {@code IBV_WC_SEND}: a send (with or without immediate/invalidate) completed. */
    SEND(IBV_WC_SEND()),
    /** {@code IBV_WC_RDMA_WRITE}. */
    RDMA_WRITE(IBV_WC_RDMA_WRITE()),
    /** {@code IBV_WC_RDMA_READ}. */
    RDMA_READ(IBV_WC_RDMA_READ()),
    /** {@code IBV_WC_COMP_SWAP}: atomic compare and swap. */
    COMP_SWAP(IBV_WC_COMP_SWAP()),
    /** {@code IBV_WC_FETCH_ADD}: atomic fetch and add. */
    FETCH_ADD(IBV_WC_FETCH_ADD()),
    /** {@code IBV_WC_BIND_MW}. */
    BIND_MW(IBV_WC_BIND_MW()),
    /** {@code IBV_WC_LOCAL_INV}. */
    LOCAL_INV(IBV_WC_LOCAL_INV()),
    /** {@code IBV_WC_TSO}. */
    TSO(IBV_WC_TSO()),
    /** {@code IBV_WC_ATOMIC_WRITE}. */
    ATOMIC_WRITE(IBV_WC_ATOMIC_WRITE()),
    /** {@code IBV_WC_RECV}: a receive WR consumed an incoming SEND. */
    RECV(IBV_WC_RECV()),
    /** {@code IBV_WC_RECV_RDMA_WITH_IMM}: an incoming RDMA WRITE with immediate consumed a receive WR. */
    RECV_RDMA_WITH_IMM(IBV_WC_RECV_RDMA_WITH_IMM()),
    /** {@code IBV_WC_TM_ADD}. */
    TM_ADD(IBV_WC_TM_ADD()),
    /** {@code IBV_WC_TM_DEL}. */
    TM_DEL(IBV_WC_TM_DEL()),
    /** {@code IBV_WC_TM_SYNC}. */
    TM_SYNC(IBV_WC_TM_SYNC()),
    /** {@code IBV_WC_TM_RECV}. */
    TM_RECV(IBV_WC_TM_RECV()),
    /** {@code IBV_WC_TM_NO_TAG}. */
    TM_NO_TAG(IBV_WC_TM_NO_TAG()),
    /** {@code IBV_WC_DRIVER1}..{@code 3} and any value this version does not know. */
    DRIVER(IBV_WC_DRIVER1());

    private static final WorkCompletionOpcode[] BY_VALUE = new WorkCompletionOpcode[256];

    static {
        for (WorkCompletionOpcode o : values()) {
            BY_VALUE[o.value] = o;
        }
    }

    private final int value;

    WorkCompletionOpcode(int value) {
        this.value = value;
    }

    /** The C value ({@code IBV_WC_*}). */
    public int value() {
        return value;
    }

    /** Whether this completes a receive WR ({@code opcode & IBV_WC_RECV}). */
    public boolean isReceive() {
        return (value & IBV_WC_RECV()) != 0;
    }

    /** The constant for a C value; allocation-free. Unknown values map to {@link #DRIVER}. */
    public static WorkCompletionOpcode of(int value) {
        if (value >= 0 && value < BY_VALUE.length) {
            WorkCompletionOpcode o = BY_VALUE[value];
            if (o != null) {
                return o;
            }
        }
        return DRIVER;
    }
}
