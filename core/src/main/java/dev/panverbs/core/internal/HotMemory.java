package dev.panverbs.core.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;

/**
 * Native memory that the hot path hands to provider calls (a QP's WR chain and {@code bad_wr} cell, a CQ's
 * {@code ibv_wc} array, a batch's SGE list) without paying for an arena per call.
 *
 * <p>Why: a downcall acquires the scope of every segment argument for the duration of the call. For a shared or
 * automatic arena that is a compare-and-swap before and another after the call (measured here: the largest single
 * cost of a one-WR post). A segment of the global scope costs nothing to acquire. So the memory is allocated in an
 * automatic arena (freed by the GC, never by a {@code close()} that could race a writer on another thread) and
 * used through {@link #segment}, a global-scope view of it. The view does not keep the memory alive: the
 * {@code HotMemory} object does. Its holder keeps it in a field and calls {@link #keepAlive()} after each downcall
 * that passed the view, so the memory outlives every call that can touch it, whatever the holder's own lifetime.
 *
 * <p>What the arena's liveness check used to give (an exception when the owner was closed) the owner checks itself:
 * writing into this memory after the owner closed is harmless (it is still allocated) and posting is refused by the
 * owner's state.
 */
public final class HotMemory {
    /** The allocation; reachable exactly as long as this object is. */
    @SuppressWarnings({"unused", "FieldCanBeLocal"})
    private final MemorySegment allocation;
    /** A global-scope view of the allocation: accesses and downcalls check no liveness and acquire nothing. */
    public final MemorySegment segment;

    private HotMemory(MemorySegment allocation) {
        this.allocation = allocation;
        this.segment = MemorySegment.ofAddress(allocation.address()).reinterpret(allocation.byteSize());
    }

    /** Zeroed memory for {@code count} elements of {@code layout}. */
    public static HotMemory allocate(MemoryLayout layout, long count) {
        return new HotMemory(Arena.ofAuto().allocate(layout, Math.max(count, 1)));
    }

    /** Zeroed memory of {@code byteSize} bytes aligned to {@code alignment}. */
    public static HotMemory allocate(long byteSize, long alignment) {
        return new HotMemory(Arena.ofAuto().allocate(Math.max(byteSize, 1), alignment));
    }

    /** Keeps the memory allocated up to this point (call after a downcall that was passed {@link #segment}). */
    public void keepAlive() {
        Reference.reachabilityFence(this);
    }
}
