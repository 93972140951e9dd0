package dev.panverbs.core;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The hot paths' native access: stores and loads through one all-memory segment at addresses masked into a
 * power-of-two allocation (the classic chains of {@link WorkRequests}, the {@code ibv_wc} array of
 * {@link WorkCompletions}, the retirement of {@link CompletionQueue}). No C counterpart: this is how the Java twins
 * of the C structs' plain stores stay one {@code mov} each. Static members only; moved out of {@code WorkRequests}
 * unchanged (C2 folds a {@code static final} of any class alike).
 */
final class MaskedMemory {
    /**
     * Unaligned twins of JAVA_LONG/JAVA_INT: every offset written is naturally aligned by the C layout, so the
     * per-access alignment check of the aligned layouts is redundant; dropping it keeps the hot methods small
     * enough for C2 to inline into the caller's loop.
     */
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;

    /**
     * All of native memory as one segment, held in a constant: C2 folds its class, scope and size, so a hot store
     * through it at a {@link #masked} address is one {@code mov}, with no per-store segment loads and bounds branch
     * (as the mlx5 {@code WqeWriter} does). The mask keeps every such store inside its own allocation by
     * construction (a power-of-two size and an offset mask), whatever the offset; the allocation's holder keeps it
     * reachable across the provider call.
     */
    static final MemorySegment NATIVE = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
    /**
     * The access handles of {@link #LONG}/{@link #INT} ({@code (MemorySegment, long offset)}): the per-WR stores call
     * them directly, {@code LONG_AT.set(NATIVE, address, value)}, the same access as {@code NATIVE.set(LONG, ...)}
     * without its two wrapper methods, which C2 parses (~60 nodes) into every store of a caller's per-WR loop: the
     * loop's compile then stays under C2's inlining node cutoff ({@code NodeCountInliningCutoff}), which left a call
     * per WR when passed (perf/README.md, issue 9, tenth round).
     */
    static final VarHandle LONG_AT = LONG.varHandle();
    static final VarHandle INT_AT = INT.varHandle();
    /** User-space addresses on x86-64 and aarch64 are below 2^56 (checked by {@link #checkMaskable}). */
    static final long ADDR_BITS = (1L << 56) - 1;
    /** A masked allocation is below 4 GiB (checked by {@link #maskableSize}): bounds every offset for C2. */
    static final long OFFSET_BITS = (1L << 32) - 1;

    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    private MaskedMemory() {
    }

    /**
     * Two adjacent C ints, {@code lo} at the lower address, as one long for one store: fewer native stores per WR
     * (each a bounds and liveness check) and a smaller compiled post path.
     */
    static long pair(int lo, int hi) {
        return LITTLE_ENDIAN ? (lo & 0xFFFF_FFFFL) | ((long) hi << 32) : ((long) lo << 32) | (hi & 0xFFFF_FFFFL);
    }

    /**
     * {@code address + (offset & mask)} for a store or load through {@link #NATIVE}: {@code address} is a
     * power-of-two allocation of {@code mask + 1} bytes (below 4 GiB, at a user-space address), so the result is in
     * it whatever {@code offset} is, and C2 sees it below {@code NATIVE}'s size from the constant masks. The hot
     * callers write this expression out in leaf methods ({@link WorkRequests#wrAt}): C2 refused to inline this one
     * as "low call site frequency" in some compiles of a per-WR loop.
     */
    static long masked(long address, long offset, long mask) {
        return (address & ADDR_BITS) + (offset & mask & OFFSET_BITS);
    }

    /** The power-of-two size {@link #masked} needs for {@code bytes}, checked (cold). */
    static long maskableSize(long bytes) {
        long size = Math.max(Long.highestOneBit(Math.max(bytes, 2) - 1) << 1, 8);
        if (size > OFFSET_BITS + 1) {
            throw new IllegalArgumentException("a native array of " + bytes + " bytes (over 4 GiB)");
        }
        return size;
    }

    /** Refuses an allocation outside the user address space {@link #masked} assumes (cold). */
    static void checkMaskable(long address) {
        if ((address & ~ADDR_BITS) != 0) {
            throw new IllegalStateException("native memory at 0x" + Long.toHexString(address) + " is outside the "
                    + "user address space the hot paths assume");
        }
    }
}
