package dev.panverbs.core;

import dev.panverbs.core.internal.Handshake;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The outstanding work requests of one work queue (a QP's send queue or receive queue) and the keys they
 * reference, so that memory is never deregistered while the NIC may still DMA through it. Post-path neutral: the
 * classic chains, {@code ibv_wr_*} batches and any later path (mlx5 Direct WQE, a DCI pool) record and retire the
 * same way.
 *
 * <p>A ring with two slots per work request the queue can hold: the outstanding WRs occupy at most half of it, so
 * a chain can be written straight into the slots after the tail while it is built ({@link #stageWr},
 * {@link #stageRef}) and posting it only moves the tail: no mirror arrays, no copy per WR. Each WR gets a
 * <em>position</em> (a 48-bit
 * counter) when it is recorded; the {@code wr_id} handed to the provider is {@link #encode(long) the position and
 * the queue's route token}, and the caller's own {@code wr_id} stays in the slot. A completion therefore names its
 * queue and its slot exactly, whatever the caller's ids are: {@link #retire} is O(1) and returns the caller's
 * {@code wr_id}, which the CQ writes back into the completion. Completions of a work queue arrive in posting order,
 * so a completion at position {@code p} retires every WR up to {@code p}: unsignaled sends before a signaled one
 * completed too (IB spec 10.8.3), and errors and flushes report the WR they concern. Moving the QP to RESET, or
 * destroying it, retires everything.
 *
 * <p>The post protocol, the same for every path: {@link #tail()} → {@link #put} each WR → {@link #publish} (a
 * release store, then the post side of the close/post handshake) → re-check the keys → ring the doorbell; then {@link #rollback} whatever
 * the provider refused. References are visible to {@link #references} before the NIC can see the WR.
 *
 * <p>A slot is one record in one array, {@link #slotStride()} longs: the caller's {@code wr_id}, the reference count,
 * then the references. One array, so writing or reading a WR's record costs one range check, not one per field; a
 * direct post path writes the records of its chain straight into {@link #slots()} (at positions it reserved, not yet
 * published) instead of staging them elsewhere and copying them here at post.
 *
 * <p>Nothing here allocates. Thread-safety: single producer (the posting thread) and single consumer (the thread
 * polling the CQ) may run concurrently; {@code head}/{@code tail} are published with release/acquire, the slots
 * between them belong to whichever side owns that range.
 */
final class WorkQueueTracker {
    /** Positions are 48 bits wide inside the provider's {@code wr_id}; the route token takes the top 16. */
    static final int POSITION_BITS = 48;
    static final long POSITION_MASK = (1L << POSITION_BITS) - 1;

    private static final VarHandle HEAD;
    private static final VarHandle TAIL;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            // not withInvokeExactBehavior(): every call site is typed exactly anyway, and the exact check parses
            // VarHandle.accessModeType into each access (~120 C2 nodes: the per-WR path's inlining budget)
            HEAD = l.findVarHandle(WorkQueueTracker.class, "head", long.class);
            TAIL = l.findVarHandle(WorkQueueTracker.class, "tail", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int capacity;
    private final int mask;
    private final int refsPerSlot;
    /**
     * Longs per slot: {@code [WR_ID]} the caller's wr_id, {@code [COUNT]} the reference count, then the references;
     * a power of two (the slack after the last reference is unused).
     */
    private final int stride;
    /**
     * The slots, {@link #stride} longs each; the references are {@link KeySnapshot#trackingId}s: primitives, so
     * recording stores no reference (no GC write barrier).
     */
    private final long[] slots;
    /**
     * UD send queues only (else null): per slot, the {@link AddressHandle#trackingId} the WR names (0: none), so that
     * {@link AddressHandle#close()} is refused while an outstanding send names it, as a region's close is.
     */
    private long[] ahRefs;
    /** The route token shifted into place: {@code wr_id = tokenBits | position}. 0 until attached to a CQ. */
    private long tokenBits;
    /** Ordered accesses through HEAD; the consumer's own plain read ({@link #head()}) directly. */
    private long head;
    /** Ordered accesses through TAIL; the producer's own plain read ({@link #tail()}) directly. */
    private long tail;

    /**
     * @param capacity    the most WRs the queue holds at once
     * @param refsPerSlot the most SGEs (hence key references) one WR carries
     */
    WorkQueueTracker(int capacity, int refsPerSlot) {
        if (capacity < 1 || refsPerSlot < 0 || refsPerSlot > 127) {
            throw new IllegalArgumentException("capacity " + capacity + ", refsPerSlot " + refsPerSlot);
        }
        // a power of two >= 2 * capacity: the outstanding WRs [head, tail) and a chain staged after the tail
        // [tail, tail + capacity) never share a slot
        int n = Math.max(Integer.highestOneBit(capacity - 1) << 2, 2);
        this.capacity = capacity;
        this.mask = n - 1;
        this.refsPerSlot = Math.max(refsPerSlot, 1);
        // a power of two, so the array's length is one too: the poll's retirement indexes it as
        // ((int) position * stride) & (length - 1), which C2 compiles without a range check (CompletionQueue.retireRun)
        this.stride = Integer.highestOneBit(REFS + this.refsPerSlot - 1) << 1;
        this.slots = new long[n * stride];
    }

    /** Offsets in a slot: the caller's wr_id, the reference count, the first reference. */
    static final int WR_ID = 0, COUNT = 1, REFS = 2;

    /**
     * The slot records, for a direct post path that writes its chain's records in place (producer only, at positions
     * from {@link #tail()} on, before {@link #publish}): the record of position {@code p} starts at
     * {@code ((int) p & slotMask()) * slotStride()}.
     */
    long[] slots() {
        return slots;
    }

    int slotMask() {
        return mask;
    }

    int slotStride() {
        return stride;
    }

    /** How many references one slot holds (a WR's SGEs at most). */
    int refsPerSlot() {
        return refsPerSlot;
    }

    /** Makes this tracker record the address handle of each WR ({@link #stageAh}): a UD send queue, at creation. */
    void trackAddressHandles() {
        ahRefs = new long[mask + 1];
    }

    /**
     * Stages the address handle {@code ahId} ({@link AddressHandle#trackingId}) of the WR at {@code position} (at or
     * after the tail, not yet published). UD send queues only (see {@link #trackAddressHandles}). Producer only.
     */
    void stageAh(long position, long ahId) {
        ahRefs[(int) position & mask] = ahId;
    }

    /** Sets the route token of the CQ this queue completes to (at creation, before any post). */
    void routeToken(int token) {
        this.tokenBits = (long) token << POSITION_BITS;
    }

    int capacity() {
        return capacity;
    }

    /** Whether the WR at {@code position} was published and is not yet retired (any thread). */
    boolean isOutstanding(long position) {
        return position >= (long) HEAD.getAcquire(this) && position < (long) TAIL.getAcquire(this);
    }

    /** WRs posted and not yet retired. */
    int outstanding() {
        return (int) ((long) TAIL.getAcquire(this) - (long) HEAD.getAcquire(this));
    }

    /** How many more WRs the queue can take now. */
    int room() {
        return capacity - outstanding();
    }

    /** {@link #room()} given the producer's own {@link #tail()} (read once by a caller that needs both). */
    int room(long tail) {
        return capacity - (int) (tail - (long) HEAD.getAcquire(this));
    }

    /** The next free position (producer only). */
    long tail() {
        return tail; // a plain read, as TAIL.get: the field is not volatile (no VarHandle parse in the hot path)
    }

    /** The {@code wr_id} the provider carries for the WR at {@code position}: the route token and the position. */
    long encode(long position) {
        return tokenBits | (position & POSITION_MASK);
    }

    /**
     * Writes the WR at {@code position} (from {@link #tail()}, not yet published): the caller's {@code wrId} and the
     * tracking ids of the keys its SGEs name, {@code keyIds[from .. from+count-1]} (0 entries: inline data).
     * Whether it is signaled does not matter: its position is what a completion names. Producer only.
     */
    void put(long position, long wrId, long[] keyIds, int from, int count) {
        long[] r = slots;
        int b = ((int) position & mask) * stride;
        r[b + WR_ID] = wrId;
        r[b + COUNT] = count;
        for (int i = 0; i < count; i++) { // usually 1 or 2: cheaper than System.arraycopy's setup
            r[b + REFS + i] = keyIds[from + i];
        }
    }

    /**
     * Stages the WR at {@code position} (at or after the tail, not yet published) while its chain is built: the
     * caller's {@code wrId}, no key reference yet. Producer only.
     */
    void stageWr(long position, long wrId) {
        long[] r = slots;
        int b = ((int) position & mask) * stride;
        r[b + WR_ID] = wrId;
        r[b + COUNT] = 0;
    }

    /** Stages key reference {@code n} (its SGE index) of the WR at {@code position}: {@code keyId} 0 for inline. */
    void stageRef(long position, int n, long keyId) {
        long[] r = slots;
        int b = ((int) position & mask) * stride;
        r[b + REFS + n] = keyId;
        r[b + COUNT] = n + 1;
    }

    /** The index of {@code position}'s record in the slots: a producer staging several fields of one WR keeps it. */
    int slot(long position) {
        return ((int) position & mask) * stride;
    }

    /** {@link #stageRef} into the record at {@code slot} (from {@link #slot}). */
    void stageRefAt(int slot, int n, long keyId) {
        long[] r = slots;
        r[slot + REFS + n] = keyId;
        r[slot + COUNT] = n + 1;
    }

    /** Sets how many key references the staged WR at {@code position} carries (a list setter, inline data). */
    void stageRefCount(long position, int n) {
        slots[((int) position & mask) * stride + COUNT] = n;
    }

    /** The caller's {@code wr_id} in the slot of {@code position} (a staged WR; tests and messages). */
    long wrIdAt(long position) {
        return slots[((int) position & mask) * stride + WR_ID];
    }

    /** How many key references the WR at {@code position} carries (a staged WR). */
    int refCountAt(long position) {
        return (int) slots[((int) position & mask) * stride + COUNT];
    }

    /** Key reference {@code n} of the WR at {@code position} (a staged WR; 0 for inline data). */
    long refAt(long position, int n) {
        return slots[((int) position & mask) * stride + REFS + n];
    }

    /**
     * Moves {@code n} staged (unpublished) WRs from positions {@code from..} to {@code to..} (overlap-safe): another
     * path posted, or rolled back, between a chain's first WR and its post. Producer only; rare.
     */
    void moveStaged(long from, long to, int n) {
        if (from == to || n <= 0) {
            return;
        }
        boolean up = to > from;
        for (int k = 0; k < n; k++) {
            int i = up ? n - 1 - k : k;
            int src = ((int) (from + i) & mask) * stride;
            int dst = ((int) (to + i) & mask) * stride;
            System.arraycopy(slots, src, slots, dst, REFS + (int) slots[src + COUNT]);
            if (ahRefs != null) {
                ahRefs[(int) (to + i) & mask] = ahRefs[(int) (from + i) & mask];
            }
        }
    }

    /** {@link #put} of one WR with a single key reference (or none: {@code keyId} 0). Producer only. */
    void put(long position, long wrId, long keyId) {
        long[] r = slots;
        int b = ((int) position & mask) * stride;
        r[b + WR_ID] = wrId;
        r[b + COUNT] = keyId == 0 ? 0 : 1;
        r[b + REFS] = keyId;
    }

    /**
     * Makes the WRs {@link #put} up to {@code newTail} visible to the poller and to {@link #references}, then runs the
     * post side of the close/post handshake ({@link Handshake#postSide()}: a compiler barrier where the closer runs
     * {@code membarrier}, else a full fence): the caller's following reads of the keys' state are ordered after this
     * store (see {@link MemoryRegion#close()}). Producer only.
     */
    void publish(long newTail) {
        TAIL.setRelease(this, newTail);
        Handshake.postSide();
    }

    /**
     * {@link #retire} for a queue whose completions come one per WR, in order (a receive queue): the {@code wr_id}
     * must name the oldest outstanding WR, else nothing is retired and {@link IllegalStateException} starts with
     * {@code verb} (which names the queue): the device completed a WR that was not posted (or was posted elsewhere).
     * Consumer only; O(1): the compare replaces {@link #retire}'s.
     */
    long retireNext(long providerWrId, String verb) {
        long t = (long) TAIL.getAcquire(this);
        long p = position(providerWrId, t);
        if (p < 0 || p != (long) HEAD.get(this)) {
            throw notOutstanding(verb, t);
        }
        HEAD.setRelease(this, p + 1);
        return slots[((int) p & mask) * stride + WR_ID];
    }

    private IllegalStateException notOutstanding(String verb, long t) {
        long h = (long) HEAD.get(this);
        return new IllegalStateException(verb + ": a completion names a work request that is not the oldest "
                + "outstanding one (" + (t - h) + " outstanding): the device misbehaves, or work was "
                + "posted to this queue outside this path. Nothing was retired; its completions can no longer be "
                + "attributed");
    }

    /**
     * Forgets the published WRs from {@code position} on: the provider refused them (bad_wr), or a re-check refused
     * the post before the doorbell. Producer only.
     */
    void rollback(long position) {
        TAIL.setRelease(this, position);
    }

    /**
     * Retires through the WR that the provider's {@code wr_id} names and returns the caller's {@code wr_id} for it;
     * a {@code wr_id} of another queue, or of a WR retired long ago, retires nothing and is returned unchanged.
     * Consumer only; O(1).
     */
    long retire(long providerWrId) {
        long t = (long) TAIL.getAcquire(this);
        long p = position(providerWrId, t);
        if (p < 0) {
            return providerWrId;
        }
        long wrId = slots[((int) p & mask) * stride + WR_ID];
        if (p >= (long) HEAD.get(this)) {
            HEAD.setRelease(this, p + 1); // slots behind the head are dead: references() never reads them
        }
        return wrId;
    }

    /**
     * The position the provider's {@code wr_id} names, given the published tail {@code t}, or -1 when it was never
     * outstanding (the slot may hold a staged WR). Consumer only.
     */
    long position(long providerWrId, long t) {
        long back = (t - 1 - providerWrId) & POSITION_MASK; // how far behind the newest WR (mod 2^48)
        return back >= capacity || back >= t ? -1 : t - 1 - back;
    }

    // ---- retirement batched over one poll (the classic CQ's poll): one tail read and one head store per queue ----

    /** The published tail, for {@link #position} over one poll's completions (all were posted before it). */
    long publishedTail() {
        return (long) TAIL.getAcquire(this);
    }

    /** The head (consumer only: its own field). */
    long head() {
        return head; // a plain read, as HEAD.get (the field is not volatile)
    }

    /** The caller's {@code wr_id} of the outstanding WR at {@code position} (from {@link #position}). */
    long callerWrId(long position) {
        return slots[((int) position & mask) * stride + WR_ID];
    }

    /** Retires every WR before {@code newHead} (a poll's last completion of this queue + 1). Consumer only. */
    void advanceHead(long newHead) {
        if (newHead > (long) HEAD.get(this)) {
            HEAD.setRelease(this, newHead); // slots behind the head are dead: references() never reads them
        }
    }

    /** Retires every outstanding WR (the QP went to RESET or was destroyed). */
    synchronized void retireAll() {
        HEAD.setRelease(this, (long) TAIL.getAcquire(this));
    }

    /**
     * How many outstanding WRs reference the key (or, on a UD send queue, the address handle) with {@code trackingId}
     * (control path: a linear scan).
     */
    int references(long trackingId) {
        long h = (long) HEAD.getAcquire(this);
        long t = (long) TAIL.getAcquire(this);
        int n = 0;
        long[] ah = ahRefs;
        for (long p = h; p < t; p++) {
            if (ah != null && ah[(int) p & mask] == trackingId) {
                n++;
                continue;
            }
            int b = ((int) p & mask) * stride;
            int c = (int) slots[b + COUNT];
            for (int i = 0; i < c; i++) {
                if (slots[b + REFS + i] == trackingId) {
                    n++;
                    break;
                }
            }
        }
        return n;
    }
}
