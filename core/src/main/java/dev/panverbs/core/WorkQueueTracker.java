package dev.panverbs.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The outstanding work requests of one work queue (a QP's send queue or receive queue) and the memory regions they
 * reference, so that a {@link MemoryRegion} is never deregistered while the NIC may still DMA through it.
 *
 * <p>A ring with one slot per work request the queue can hold ({@code max_send_wr}/{@code max_recv_wr} as granted):
 * posting records each WR (its {@code wr_id}, whether it is signaled, and the MRs its SGEs name) at the tail;
 * polling its completions retires from the head. Completions of a work queue arrive in posting order, so:
 * <ul>
 *   <li>a successful send completion retires every WR up to and including the first signaled WR with the same
 *       {@code wr_id}: unsignaled WRs before it completed too (IB spec 10.8.3, in-order completion);</li>
 *   <li>an error completion (a failed WR, or a flush after the QP entered ERR) retires through the first WR with
 *       its {@code wr_id}, signaled or not, since errors always complete;</li>
 *   <li>every receive WR completes, so a receive completion retires through its own WR.</li>
 * </ul>
 * Moving the QP to RESET, or destroying it, retires everything.
 *
 * <p>Retirement is conservative: a reference may outlive its WR (e.g. two outstanding WRs sharing a {@code wr_id}),
 * never the reverse. The ring also mirrors the queue's occupancy, so a post that would overflow it is refused as
 * back-pressure before the provider sees it.
 *
 * <p>Nothing here allocates. Thread-safety: single producer (the posting thread) and single consumer (the thread
 * polling the CQ) may run concurrently; {@code head}/{@code tail} are published with release/acquire, the slots
 * between them belong to whichever side owns that range.
 */
final class WorkQueueTracker {
    private static final VarHandle HEAD;
    private static final VarHandle TAIL;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            HEAD = l.findVarHandle(WorkQueueTracker.class, "head", long.class).withInvokeExactBehavior();
            TAIL = l.findVarHandle(WorkQueueTracker.class, "tail", long.class).withInvokeExactBehavior();
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int capacity;
    private final int mask;
    private final int refsPerSlot;
    private final long[] wrIds;
    private final boolean[] signaled;
    private final byte[] refCounts;
    /** {@link MemoryRegion#trackingId}s: primitives, so recording stores no reference (no GC write barrier). */
    private final long[] refs;
    @SuppressWarnings("unused") // through HEAD
    private long head;
    @SuppressWarnings("unused") // through TAIL
    private long tail;

    /**
     * @param capacity    the most WRs the queue holds at once
     * @param refsPerSlot the most SGEs (hence MR references) one WR carries
     */
    WorkQueueTracker(int capacity, int refsPerSlot) {
        if (capacity < 1 || refsPerSlot < 0 || refsPerSlot > 127) {
            throw new IllegalArgumentException("capacity " + capacity + ", refsPerSlot " + refsPerSlot);
        }
        int slots = Integer.highestOneBit(capacity - 1) << 1;
        slots = Math.max(slots, 1);
        this.capacity = capacity;
        this.mask = slots - 1;
        this.refsPerSlot = Math.max(refsPerSlot, 1);
        this.wrIds = new long[slots];
        this.signaled = new boolean[slots];
        this.refCounts = new byte[slots];
        this.refs = new long[slots * this.refsPerSlot];
    }

    int capacity() {
        return capacity;
    }

    /** WRs posted and not yet retired. */
    int outstanding() {
        return (int) ((long) TAIL.getAcquire(this) - (long) HEAD.getAcquire(this));
    }

    /** How many more WRs the queue can take now. */
    int room() {
        return capacity - outstanding();
    }

    /**
     * Records one posted WR whose SGEs reference {@code count} MRs, by tracking id, from {@code staged[from ...]}
     * (0: inline data, no region). Producer only.
     */
    void record(long wrId, boolean isSignaled, long[] staged, int from, int count) {
        long t = (long) TAIL.get(this);
        put(t, wrId, isSignaled, staged, from, count);
        TAIL.setRelease(this, t + 1);
    }

    /**
     * The next free position, for recording a chain with {@link #put} and one {@link #publish}: the poller sees
     * none of the chain's WRs until the release store of the tail. Producer only.
     */
    long tail() {
        return (long) TAIL.get(this);
    }

    /** Writes the WR at {@code position} (from {@link #tail()}, not yet published). Producer only. */
    void put(long position, long wrId, boolean isSignaled, long[] staged, int from, int count) {
        int slot = (int) position & mask;
        wrIds[slot] = wrId;
        signaled[slot] = isSignaled;
        refCounts[slot] = (byte) count;
        int base = slot * refsPerSlot;
        for (int i = 0; i < count; i++) { // usually 1 or 2: cheaper than System.arraycopy's setup
            refs[base + i] = staged[from + i];
        }
    }

    /** Makes the WRs {@link #put} up to {@code newTail} visible to the poller (release). Producer only. */
    void publish(long newTail) {
        TAIL.setRelease(this, newTail);
    }

    /**
     * Retires through the first outstanding WR with {@code wrId} (only signaled ones unless {@code anyWr}).
     * Consumer only.
     *
     * @return the number of WRs retired (0 when none matched)
     */
    int retire(long wrId, boolean anyWr) {
        long h = (long) HEAD.get(this);
        long t = (long) TAIL.getAcquire(this);
        for (long p = h; p < t; p++) {
            int slot = (int) p & mask;
            if (wrIds[slot] == wrId && (anyWr || signaled[slot])) {
                HEAD.setRelease(this, p + 1); // slots behind the head are dead: references() never reads them
                return (int) (p + 1 - h);
            }
        }
        return 0;
    }

    /** Whether the oldest outstanding WR has {@code wrId} (receive completions arrive in posting order). */
    boolean headIs(long wrId) {
        long h = (long) HEAD.get(this);
        return h < (long) TAIL.getAcquire(this) && wrIds[(int) h & mask] == wrId;
    }

    /** Retires every outstanding WR (the QP went to RESET or was destroyed). */
    synchronized void retireAll() {
        HEAD.setRelease(this, (long) TAIL.getAcquire(this));
    }

    /** How many outstanding WRs reference the region with {@code trackingId} (control path: a linear scan). */
    int references(long trackingId) {
        long h = (long) HEAD.getAcquire(this);
        long t = (long) TAIL.getAcquire(this);
        int n = 0;
        for (long p = h; p < t; p++) {
            int slot = (int) p & mask;
            int base = slot * refsPerSlot;
            for (int i = 0; i < refCounts[slot]; i++) {
                if (refs[base + i] == trackingId) {
                    n++;
                    break;
                }
            }
        }
        return n;
    }
}
