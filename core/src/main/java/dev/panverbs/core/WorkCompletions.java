package dev.panverbs.core;

import dev.panverbs.bindings.verbs.ibv_wc;

import dev.panverbs.core.internal.HotMemory;
import java.lang.foreign.MemorySegment;

/**
 * A reusable native array of {@code struct ibv_wc} that {@link CompletionQueue#poll(WorkCompletions)} fills, with one
 * {@link WorkCompletion} flyweight to read its slots. Allocate it once, outside the poll loop:
 *
 * <pre>{@code
 * WorkCompletions wcs = WorkCompletions.allocate(32);
 * while (running) {
 *     int n = cq.poll(wcs);
 *     for (int i = 0; i < n; i++) {
 *         WorkCompletion wc = wcs.get(i);           // the same flyweight, repositioned
 *         if (!wc.ok()) handleError(wc.status(), wc.wrId());
 *     }
 * }
 * }</pre>
 *
 * <p>Polling and reading allocate nothing. The array lives in an automatic arena, freed when this object becomes
 * unreachable. Not thread-safe: one poller per instance.
 */
public final class WorkCompletions {
    /** {@code sizeof(struct ibv_wc)}: 48 on LP64. */
    static final long WC_SIZE = ibv_wc.layout().byteSize();
    /** The most completions one array holds: every byte offset into it is an {@code int} (the poll's retirement). */
    static final int MAX_CAPACITY = (int) (Integer.MAX_VALUE / WC_SIZE);

    /** The array: no arena acquire per {@code ibv_poll_cq} ({@link HotMemory}); kept alive by this object. */
    private final HotMemory memory;
    private final MemorySegment array;
    /**
     * The array's address and its power-of-two size - 1: the poll path and the flyweight read and write it through
     * {@link WorkRequests#NATIVE} at {@link #at} addresses (one {@code mov} each, inside the array by the mask).
     */
    private final long address;
    private final long mask;
    private final int capacity;
    private final WorkCompletion flyweight;
    private int count;

    private WorkCompletions(int capacity) {
        if (capacity < 1 || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("WorkCompletions.allocate: capacity must be 1.." + MAX_CAPACITY
                    + " (the array's byte offsets are ints), got " + capacity);
        }
        this.capacity = capacity;
        this.memory = HotMemory.allocate(MaskedMemory.maskableSize(capacity * WC_SIZE), 8);
        this.array = memory.segment.asSlice(0, capacity * WC_SIZE);
        this.address = array.address();
        this.mask = memory.segment.byteSize() - 1; // the whole (power-of-two) allocation
        MaskedMemory.checkMaskable(address);
        this.flyweight = new WorkCompletion(this);
    }

    /** A native array of {@code capacity} completions (the {@code num_entries} of each {@code ibv_poll_cq}). */
    public static WorkCompletions allocate(int capacity) {
        return new WorkCompletions(capacity);
    }

    /** The maximum number of completions one poll returns. */
    public int capacity() {
        return capacity;
    }

    /** The number of completions the last poll stored. */
    public int count() {
        return count;
    }

    /**
     * The flyweight positioned over completion {@code index} of the last poll. Every call returns the same object:
     * read what you need before calling {@code get} again.
     */
    public WorkCompletion get(int index) {
        if (index < 0 || index >= count) {
            throw outOfRange(index);
        }
        return flyweight.position(index * WC_SIZE);
    }

    private IndexOutOfBoundsException outOfRange(int index) {
        return new IndexOutOfBoundsException("WorkCompletions.get: completion " + index + " of " + count
                + " polled");
    }

    /** The native address of byte {@code offset} of the array (masked into it). */
    long at(long offset) {
        // MaskedMemory.masked written out: a leaf, so C2 cannot leave a call (and a bounds check per access) here
        return (address & MaskedMemory.ADDR_BITS) + (offset & mask & MaskedMemory.OFFSET_BITS);
    }

    /** {@link #at}'s base, for a loop that keeps it in a register: {@code at(o) == base() + (o & offsetMask())}. */
    long base() {
        return address & MaskedMemory.ADDR_BITS;
    }

    /** {@link #at}'s offset mask (see {@link #base}). */
    long offsetMask() {
        return mask & MaskedMemory.OFFSET_BITS;
    }

    MemorySegment array() {
        return array;
    }

    /** The array's native address (for {@code ibv_poll_cq}; {@link #keepAlive} after the call). */
    long address() {
        return address;
    }

    /** Keeps the array allocated up to this point (after the downcall that filled it). */
    void keepAlive() {
        memory.keepAlive();
    }

    /**
     * Sets the number of completions the last poll stored: at most the capacity, which {@link #get} relies on (the
     * flyweight reads a whole struct from the slot's address); a provider that claims more is refused.
     */
    void count(int n) {
        if (n > capacity) {
            this.count = 0;
            throw new IllegalStateException("the provider returned " + n + " completions into an array of "
                    + capacity + " (num_entries): it misbehaves");
        }
        this.count = n;
    }
}
