package dev.panverbs.core;

import dev.panverbs.core.internal.Handshake;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The outstanding receive work requests of one shared receive queue and the keys they reference (the SRQ's twin of
 * {@link WorkQueueTracker}): memory named by a posted receive is never deregistered while the NIC may still write it.
 *
 * <p>Unlike a QP's queues, an SRQ's receives do not complete in posting order: each QP attached to the SRQ takes
 * the next free WQE when a message arrives, completions of several QPs interleave, and they may arrive on several
 * CQs polled by different threads. So every WR owns a <em>slot</em> until its own completion retires it
 * (per-slot retirement; no "everything up to here"). The {@code wr_id} the provider carries is the SRQ's route token
 * (top 16 bits, {@link SrqRoutes}) and a 48-bit <em>stamp</em>: a sequence number above the slot index, so a stale
 * completion (a slot already retired and reused, or a destroyed SRQ whose token was reused) does not match the
 * slot's current stamp and retires nothing.
 *
 * <p>Post protocol, as the FIFO tracker's: {@link #claim} each WR (records its {@code wr_id} and keys, then marks the
 * slot live with a release store) → {@link #publish} (the handshake's post side) → re-check the keys → doorbell →
 * {@link #release} what the provider refused. Retirement is a compare-and-set of the slot's stamp to 0, so any number
 * of pollers may retire concurrently, and a completion retires at most once.
 *
 * <p>Nothing here allocates. One producer (the posting thread); any number of consumers (pollers).
 */
final class SrqTracker {
    /** The live bit of a slot's state ({@code stamp | LIVE}); 0 is a free slot. */
    private static final long LIVE = 1L << 62;
    private static final VarHandle STATE = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle RETIRED;
    /** Spreads the first stamps of successive SRQs, so a reused token rarely meets an equal stamp. */
    private static final AtomicLong SEED = new AtomicLong(System.nanoTime());

    static {
        try {
            RETIRED = MethodHandles.lookup().findVarHandle(SrqTracker.class, "retired", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The most receives the SRQ takes now: its granted {@code max_wr}, changed by a resize. */
    private volatile int capacity;
    private final int slots;
    private final int slotBits;
    private final int mask;
    private final int refsPerSlot;
    /** {@code stamp | LIVE} of each live slot, 0 for a free one; through {@link #STATE}. */
    private final long[] state;
    private final long[] wrIds;
    private final byte[] refCounts;
    /** {@link KeySnapshot#trackingId}s of each slot's SGEs. */
    private final long[] refs;
    /** The route token shifted into place, from {@link SrqRoutes}. */
    private long tokenBits;
    /** Producer only: the next sequence number, and where the free-slot scan resumes. */
    private long seq;
    private int cursor;
    /** Producer only: WRs claimed so far (minus those released by the producer). */
    private long claimed;
    /** WRs retired by completions or by {@link #retireAll()} (any thread; through {@link #RETIRED}). */
    @SuppressWarnings("unused")
    private volatile long retired;

    /**
     * @param capacity    the most receives the SRQ holds at once (its granted {@code max_wr})
     * @param refsPerSlot the most SGEs one receive carries ({@code max_sge})
     */
    SrqTracker(int capacity, int refsPerSlot) {
        this(capacity, capacity, refsPerSlot);
    }

    /**
     * @param reserved the most receives any later {@link #resize} may allow (slots are allocated for it once)
     */
    SrqTracker(int capacity, int reserved, int refsPerSlot) {
        if (capacity < 1 || reserved < capacity || refsPerSlot < 0 || refsPerSlot > 127) {
            throw new IllegalArgumentException("capacity " + capacity + ", reserved " + reserved + ", refsPerSlot "
                    + refsPerSlot);
        }
        int n = Math.max(Integer.highestOneBit(reserved - 1) << 1, 1);
        this.capacity = capacity;
        this.slots = n;
        this.slotBits = Integer.numberOfTrailingZeros(n);
        this.mask = n - 1;
        this.refsPerSlot = Math.max(refsPerSlot, 1);
        this.state = new long[n];
        this.wrIds = new long[n];
        this.refCounts = new byte[n];
        this.refs = new long[n * this.refsPerSlot];
        this.seq = SEED.getAndAdd(0x9E3779B97F4A7C15L) >>> 20;
    }

    /** Sets the SRQ's route token (at creation, before any post). */
    void routeToken(int token) {
        this.tokenBits = (long) token << WorkQueueTracker.POSITION_BITS;
    }

    int capacity() {
        return capacity;
    }

    /** The most receives a {@link #resize} may allow: the slots allocated. */
    int reserved() {
        return slots;
    }

    /** Admits up to {@code newCapacity} outstanding receives (after {@code ibv_modify_srq} changed max_wr). */
    void resize(int newCapacity) {
        if (newCapacity < 1 || newCapacity > slots) {
            throw new IllegalArgumentException("capacity " + newCapacity + " outside 1.." + slots);
        }
        capacity = newCapacity;
    }

    /** Receives posted and not yet retired. Exact for the producer; a snapshot for others. */
    int outstanding() {
        return (int) (claimed - (long) RETIRED.getVolatile(this));
    }

    /** How many more receives the SRQ can take now (producer). */
    int room() {
        return capacity - outstanding();
    }

    /**
     * Records one WR in a free slot: the caller's {@code wrId} and the tracking ids of its keys
     * ({@code keyIds[from .. from+count-1]}), then marks the slot live. Returns the slot; {@link #providerWrId}
     * gives the {@code wr_id} to hand the provider. Only when {@link #room()} is positive. Producer only.
     */
    int claim(long wrId, long[] keyIds, int from, int count) {
        int slot = freeSlot();
        wrIds[slot] = wrId;
        refCounts[slot] = (byte) count;
        int base = slot * refsPerSlot;
        for (int i = 0; i < count; i++) {
            refs[base + i] = keyIds[from + i];
        }
        return live(slot);
    }

    /**
     * {@link #claim(long, long[], int, int)} of the WR that a chain staged at {@code position} of its staging
     * tracker ({@link WorkRequests#tracker}): its {@code wr_id} and key references are copied from there.
     */
    int claim(WorkQueueTracker staged, long position) {
        int slot = freeSlot();
        wrIds[slot] = staged.wrIdAt(position);
        int count = staged.refCountAt(position);
        refCounts[slot] = (byte) count;
        int base = slot * refsPerSlot;
        for (int i = 0; i < count; i++) {
            refs[base + i] = staged.refAt(position, i);
        }
        return live(slot);
    }

    private int freeSlot() {
        int slot = cursor;
        while ((long) STATE.getAcquire(state, slot) != 0L) { // room() > 0, so a free slot exists
            slot = (slot + 1) & mask;
        }
        cursor = (slot + 1) & mask;
        return slot;
    }

    private int live(int slot) {
        long stamp = ((seq++ << slotBits) | slot) & WorkQueueTracker.POSITION_MASK;
        STATE.setRelease(state, slot, stamp | LIVE);
        claimed++;
        return slot;
    }

    /** The {@code wr_id} the provider carries for the WR in {@code slot} (claimed and not released). */
    long providerWrId(int slot) {
        return tokenBits | ((long) STATE.get(state, slot) & WorkQueueTracker.POSITION_MASK);
    }

    /**
     * Orders the claims before the caller's following reads of the keys' state (the post side of the close/post
     * handshake, {@link Handshake#postSide()}; see {@link MemoryRegion#close()}). Producer only.
     */
    void publish() {
        Handshake.postSide();
    }

    /** Frees {@code slots[from .. to-1]}, claimed by this post and refused before the NIC saw them. Producer only. */
    void release(int[] claimedSlots, int from, int to) {
        for (int i = from; i < to; i++) {
            STATE.setRelease(state, claimedSlots[i], 0L);
            claimed--;
        }
    }

    /**
     * Retires the WR the provider's {@code wr_id} names and returns the caller's {@code wr_id}; a {@code wr_id} whose
     * stamp is not live (retired already, or never handed out) retires nothing and is returned unchanged. Any
     * thread; O(1).
     */
    long retire(long providerWrId) {
        long stamp = providerWrId & WorkQueueTracker.POSITION_MASK;
        int slot = (int) stamp & mask;
        long wrId = wrIds[slot]; // read before the slot is freed: the producer reuses it only after the CAS
        if (STATE.compareAndSet(state, slot, stamp | LIVE, 0L)) {
            RETIRED.getAndAdd(this, 1L);
            return wrId;
        }
        return providerWrId;
    }

    /** Retires every outstanding WR (the SRQ was destroyed: nothing can complete any more). */
    void retireAll() {
        for (int slot = 0; slot < slots; slot++) {
            long s = (long) STATE.getVolatile(state, slot);
            if (s != 0L && STATE.compareAndSet(state, slot, s, 0L)) {
                RETIRED.getAndAdd(this, 1L);
            }
        }
    }

    /** How many outstanding WRs reference the key with {@code trackingId} (control path: a linear scan). */
    int references(long trackingId) {
        int n = 0;
        for (int slot = 0; slot < slots; slot++) {
            if ((long) STATE.getAcquire(state, slot) == 0L) {
                continue;
            }
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
