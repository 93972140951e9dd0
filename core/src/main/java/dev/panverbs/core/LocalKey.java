package dev.panverbs.core;

/**
 * Memory that a scatter/gather entry can name: a local key ({@code lkey}) over a range of I/O virtual addresses
 * in one protection domain. In C this is the {@code (addr, length, lkey)} triple of {@code struct ibv_sge} together
 * with the object that issued the key: a {@link MemoryRegion} ({@code struct ibv_mr}) or an mlx5 indirect mkey
 * configured by a UMR ({@code struct mlx5dv_mkey}, {@link dev.panverbs.core.mlx5.IndirectMkey}); later a range
 * bound to a memory window and device memory ({@code ibv_reg_dm_mr}) join this sealed family.
 *
 * <p>Every post path ({@link SendRequests#sge}, {@link ReceiveRequests#sge}, {@link PostBatch#setSge}) takes a
 * {@code LocalKey} and reads it as one immutable snapshot, taken when the SGE is added and re-checked when the
 * work request is posted: a key that was closed, re-registered or whose memory's arena was closed in between is
 * refused before the provider sees the request.
 */
public sealed interface LocalKey permits MemoryRegion, dev.panverbs.core.mlx5.IndirectMkey {

    /** The I/O virtual address of the first byte, as SGEs and peers name it ({@code ibv_mr.addr} or its iova). */
    long address();

    /** The length of the range in bytes. */
    long length();

    /** The local key ({@code ibv_mr.lkey}) written into SGEs. */
    int lkey();

    /** The protection domain the key belongs to: only QPs of that domain may use it. */
    ProtectionDomain protectionDomain();

    /** Whether the key can still be used: not closed (deregistered). */
    boolean isOpen();
}
