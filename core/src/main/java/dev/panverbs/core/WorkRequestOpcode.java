package dev.panverbs.core;

import static dev.panverbs.bindings.verbs.verbs_h.*;

/**
 * The operation of a send work request ({@code enum ibv_wr_opcode}, {@code ibv_post_send(3)}). Which opcodes a QP
 * accepts depends on its type: UD only SEND/SEND_WITH_IMM; UC no RDMA_READ nor atomics.
 */
public enum WorkRequestOpcode {
    /** {@code IBV_WR_RDMA_WRITE}. */
    RDMA_WRITE(IBV_WR_RDMA_WRITE()),
    /** {@code IBV_WR_RDMA_WRITE_WITH_IMM}: consumes a receive WR at the peer. */
    RDMA_WRITE_WITH_IMM(IBV_WR_RDMA_WRITE_WITH_IMM()),
    /** {@code IBV_WR_SEND}. */
    SEND(IBV_WR_SEND()),
    /** {@code IBV_WR_SEND_WITH_IMM}. */
    SEND_WITH_IMM(IBV_WR_SEND_WITH_IMM()),
    /** {@code IBV_WR_RDMA_READ}. */
    RDMA_READ(IBV_WR_RDMA_READ()),
    /** {@code IBV_WR_ATOMIC_CMP_AND_SWP}: 8-byte compare and swap at an 8-byte aligned remote address. */
    ATOMIC_CMP_AND_SWP(IBV_WR_ATOMIC_CMP_AND_SWP()),
    /** {@code IBV_WR_ATOMIC_FETCH_AND_ADD}: 8-byte fetch and add. */
    ATOMIC_FETCH_AND_ADD(IBV_WR_ATOMIC_FETCH_AND_ADD()),
    /** {@code IBV_WR_LOCAL_INV}. */
    LOCAL_INV(IBV_WR_LOCAL_INV()),
    /** {@code IBV_WR_BIND_MW}. */
    BIND_MW(IBV_WR_BIND_MW()),
    /** {@code IBV_WR_SEND_WITH_INV}. */
    SEND_WITH_INV(IBV_WR_SEND_WITH_INV()),
    /** {@code IBV_WR_TSO}. */
    TSO(IBV_WR_TSO()),
    /** {@code IBV_WR_ATOMIC_WRITE}. */
    ATOMIC_WRITE(IBV_WR_ATOMIC_WRITE());

    private final int value;

    WorkRequestOpcode(int value) {
        this.value = value;
    }

    /** The C value ({@code IBV_WR_*}). */
    public int value() {
        return value;
    }

    /** Whether the WR reads or writes remote memory, and so needs a remote address and rkey. */
    public boolean isRemote() {
        return this == RDMA_WRITE || this == RDMA_WRITE_WITH_IMM || this == RDMA_READ || isAtomic();
    }

    /** Whether this is an 8-byte atomic. */
    public boolean isAtomic() {
        return this == ATOMIC_CMP_AND_SWP || this == ATOMIC_FETCH_AND_ADD;
    }
}
