package dev.panverbs.core;

import dev.panverbs.bindings.verbs.ibv_recv_wr;
import dev.panverbs.bindings.verbs.ibv_send_wr;
import dev.panverbs.bindings.verbs.ibv_sge;

import dev.panverbs.core.internal.HotMemory;

import java.lang.foreign.MemorySegment;

import static dev.panverbs.core.MaskedMemory.ADDR_BITS;
import static dev.panverbs.core.MaskedMemory.INT_AT;
import static dev.panverbs.core.MaskedMemory.LONG;
import static dev.panverbs.core.MaskedMemory.LONG_AT;
import static dev.panverbs.core.MaskedMemory.NATIVE;
import static dev.panverbs.core.MaskedMemory.OFFSET_BITS;
import static dev.panverbs.core.MaskedMemory.checkMaskable;
import static dev.panverbs.core.MaskedMemory.maskableSize;
import static dev.panverbs.core.MaskedMemory.pair;

/**
 * A work queue's reusable native chain of work requests: {@code struct ibv_send_wr} ({@link SendRequests}) or
 * {@code struct ibv_recv_wr} ({@link ReceiveRequests}) with their {@code struct ibv_sge} lists, allocated once per
 * queue, filled in place and posted by {@link #post()} in one provider call. Both structs begin with
 * {@code wr_id, next, sg_list, num_sge}; that shared head, the SGE list and the bookkeeping live here.
 *
 * <p>Nothing here allocates. Not thread-safe: one producer per work queue.
 *
 * @param <T> the concrete chain, returned by the fluent methods
 */
public abstract sealed class WorkRequests<T extends WorkRequests<T>> permits SendRequests, ReceiveRequests {
    static final long SGE_SIZE = ibv_sge.layout().byteSize();
    static final long WR_ID = ibv_send_wr.wr_id$offset();
    static final long NEXT = ibv_send_wr.next$offset();
    static final long SG_LIST = ibv_send_wr.sg_list$offset();
    static final long NUM_SGE = ibv_send_wr.num_sge$offset();
    private static final long SGE_ADDR = ibv_sge.addr$offset();
    private static final long SGE_LENGTH = ibv_sge.length$offset();
    private static final long SGE_LKEY = ibv_sge.lkey$offset();

    static {
        if (ibv_recv_wr.wr_id$offset() != WR_ID || ibv_recv_wr.next$offset() != NEXT
                || ibv_recv_wr.sg_list$offset() != SG_LIST || ibv_recv_wr.num_sge$offset() != NUM_SGE) {
            throw new ExceptionInInitializerError("ibv_send_wr and ibv_recv_wr no longer share their head");
        }
        // the pairs written as one long store: (opcode, send_flags), (num_sge, pad) of ibv_recv_wr, (length, lkey)
        if (ibv_send_wr.opcode$offset() != NUM_SGE + 4 || ibv_send_wr.send_flags$offset() != NUM_SGE + 8
                || ibv_recv_wr.layout().byteSize() < NUM_SGE + 8
                || SGE_LKEY != SGE_LENGTH + 4) {
            throw new ExceptionInInitializerError("ibv_send_wr/ibv_sge no longer pair opcode/send_flags, length/lkey");
        }
    }

    /**
     * The chain, its SGE lists and the {@code bad_wr} cell, in one allocation whose downcalls acquire nothing
     * ({@link HotMemory}); {@link WorkQueue#post} keeps it alive across the provider call.
     */
    final HotMemory memory;
    final MemorySegment wrs;
    /** {@code struct ibv_send_wr **bad_wr} / {@code ibv_recv_wr **}: one cell after the SGE lists. */
    final MemorySegment badWr;
    /** Where {@link #badWr} is in {@link #wrs}: the post clears and reads it through {@code wrs} (one checked segment). */
    private final long badWrAt;
    /** The native address of {@link #badWr}, for the provider call. */
    final long badWrAddress;
    final long wrsAddress;
    /** The allocation's size (a power of two) - 1: {@link #at} masks every offset with it. */
    private final long memMask;
    /**
     * {@link #memMask} without the low bits of a WR's slot: {@link #wrAt} yields an aligned slot start at most
     * {@code size - wrSize} into the allocation, so a store at it plus an offset inside the slot (a field of the
     * struct, or of an SGE of its list: {@link #appendSge} checks the SGE index first) stays inside the allocation;
     * one masked address per WR, its fields and its SGEs are then written at displacements from it (one {@code mov}
     * each, constant ones for the first SGE).
     */
    private final long wrMask;
    /**
     * The stride of the WRs in the allocation (a power of two): each WR's slot holds its struct
     * ({@code structSize} bytes) and then its own SGE list ({@code maxSge} entries), so an SGE's address is its WR's
     * address plus a constant, with no multiply, mask or field load per SGE.
     */
    private final long wrSize;
    /** log2 of {@link #wrSize}: the hot offsets shift instead of multiplying by a field. */
    private final int wrShift;
    final WorkRequestRules rules;
    private final int capacity;
    final int maxSge;
    /**
     * The keys staged since {@link #clear()}, a consecutive repeat stored once (one reference store per change of
     * key, not per SGE), with the first and last WR that named each: the post re-checks those its WRs use.
     */
    private final KeySnapshot[] stagedKeys;
    private final int[] stagedFirst;
    private final int[] stagedLast;
    private int nStaged;
    /**
     * The newest staged entry (index {@code nStaged - 1}) lives in these fields, the older ones in the arrays: a
     * chain of one key (the common case) touches no array, and a same-key SGE updates one field. {@code topKey} is
     * never nulled, so a chain that reuses the previous chain's key stores no reference.
     */
    private KeySnapshot topKey;
    /**
     * {@link #topKey} when it is not an on-demand-paging key, else null (updated with it): a send SGE naming it needs
     * no per-SGE ODP check ({@link SendRequests#sge}: the check depends on each WR's opcode).
     */
    private KeySnapshot plainTopKey;
    private int topFirst;
    private int topLast;
    /**
     * The last snapshot an SGE of this chain named and that passed the full {@link WorkRequestRules#checkSge} (open,
     * in this QP's PD: immutable facts of that object), kept across {@link #clear()}: {@code sge(...)} skips those
     * two checks for it. Neither this field nor {@link #stagedKeys} is rewritten with the same reference: a
     * reference store into this long-lived object runs G1's post-write barrier, whose StoreLoad fence costs as much
     * as a full fence, once per post when the chain reuses the previous chain's key.
     */
    KeySnapshot lastStaged;
    /**
     * The queue's outstanding-WR tracker (created here, shared with the queue and its other post paths). Each WR is
     * staged straight into its slot as it is written, at position {@link #base} + its index, so a post only
     * publishes the tail.
     */
    final WorkQueueTracker tracker;
    /** The tracker position of WR 0 of the current chain (taken from the tail when the chain starts). */
    long base;
    /**
     * Positions after the tail that an open {@link PostBatch} stages its WRs at (0 otherwise): a chain started while
     * the batch is open starts after them. Producer only.
     */
    private int reserved;
    /** The WR whose inline bytes {@link SendRequests} counts (-1: none of this chain); per chain, not reset per WR. */
    int inlineWr = -1;
    /** The WR whose {@code next} is cut ({@link #cutAfter}), -1 when the chain is fully linked. */
    private int cut = -1;
    /** {@link #chainFrom} slices, made on first use. */
    private final MemorySegment[] heads;
    int count;
    /** WRs of this chain already accepted by the provider (a partial post left the rest pending). */
    int posted;
    /**
     * SGEs of the current (last) WR; -1 when there is none ({@code count == posted}: set by {@link #clear()}, which a
     * full post runs): the SGE path tests this one field, which C2 knows right after {@link #startWr}.
     */
    int currentSges = -1;
    /** The queue this chain posts to (a QP's work queue or an SRQ); set once by the queue. */
    PostTarget queue;
    /** {@code ibv_post_send} or {@code ibv_post_recv}, for messages. */
    private final String verb;

    WorkRequests(String verb, WorkRequestRules rules, int capacity, int maxSge) {
        this.verb = verb;
        if (capacity < 1) {
            throw new IllegalArgumentException("a work-request chain needs at least one WR");
        }
        this.rules = rules;
        this.capacity = capacity;
        this.maxSge = Math.max(maxSge, 1);
        long structSize = structSize(); // a subclass constant (its static WR_SIZE), safe to call here
        long slot = maskableSize(structSize + this.maxSge * SGE_SIZE); // the struct, then its SGE list
        this.wrSize = slot;
        this.wrShift = Long.numberOfTrailingZeros(slot);
        long chainBytes = capacity * slot;
        long bytes = chainBytes + Long.BYTES;
        long size = maskableSize(bytes); // a power of two: at() keeps any offset inside
        this.memory = HotMemory.allocate(size, Long.BYTES);
        this.memMask = size - 1;
        this.wrMask = memMask & -slot; // slot is a power of two <= size
        this.wrs = memory.segment; // spans the WRs, their SGE lists and the bad_wr cell
        this.badWrAt = chainBytes;
        this.badWr = memory.segment.asSlice(chainBytes, Long.BYTES);
        this.wrsAddress = wrs.address();
        this.badWrAddress = badWr.address();
        checkMaskable(wrsAddress);
        this.stagedKeys = new KeySnapshot[capacity * this.maxSge];
        this.stagedFirst = new int[capacity * this.maxSge];
        this.stagedLast = new int[capacity * this.maxSge];
        this.tracker = new WorkQueueTracker(capacity, this.maxSge);
        this.heads = new MemorySegment[capacity];
        for (int i = 0; i < capacity; i++) {
            wrs.set(LONG, i * slot + SG_LIST, wrsAddress + i * slot + structSize);
            relink(i); // pre-linked: a post of WRs ..n-1 cuts the chain after WR n-1 only (cutAfter)
        }
    }

    /**
     * The native address of byte {@code offset} of this chain's allocation, for a store through {@link MaskedMemory#NATIVE}: inside
     * the allocation whatever {@code offset} is (the mask), and for C2 provably below {@code NATIVE}'s size (the
     * constant masks), so the store needs no bounds branch.
     */
    final long at(long offset) {
        return (wrsAddress & ADDR_BITS) + (offset & memMask & OFFSET_BITS); // masked(), written out: see wrAt
    }

    /**
     * The native address of the WR at {@code offset} (a multiple of the WR size), for stores of its fields.
     * {@link MaskedMemory#masked} written out, here and in {@link #at}: a leaf has no call site for C2 to refuse
     * to inline (it refused {@code masked} as "low call site frequency" in some compilations of the per-WR loop, and
     * every store then paid a bounds check, the masks' ranges unknown to it).
     */
    final long wrAt(long offset) {
        return (wrsAddress & ADDR_BITS) + (offset & wrMask & OFFSET_BITS);
    }

    /** Where WR {@code i}'s struct starts in {@link #wrs} (cold accesses through the checked segment). */
    final long wrOffset(int i) {
        return (long) i << wrShift;
    }

    @SuppressWarnings("unchecked")
    private T self() {
        return (T) this;
    }

    /** How many WRs the chain holds at most (the queue's granted {@code max_send_wr}/{@code max_recv_wr}). */
    public final int capacity() {
        return capacity;
    }

    /** WRs written since the last {@link #clear()} (posted or not). */
    public final int count() {
        return count;
    }

    /** WRs written but not yet accepted by {@link #post()}. */
    public final int pending() {
        return count - posted;
    }

    /** Forgets every WR (after a full post this happens by itself). */
    public final T clear() {
        count = 0;
        posted = 0;
        nStaged = 0;
        currentSges = -1;
        return self();
    }

    /**
     * Posts the pending WRs as one chain to the queue that owns this chain ({@code ibv_post_send(3)} /
     * {@code ibv_post_recv(3)}) and returns how many the provider accepted. When all were, the chain is cleared for
     * reuse. Fewer means the queue is full (back-pressure, {@code ENOMEM}, or the queue's own count of outstanding
     * WRs): poll completions, then call again to post the rest. Allocation-free.
     *
     * <p>Every key the pending WRs name is re-checked after their references are published and before the
     * provider sees them: a region closed, re-registered, or whose memory's arena was closed since its
     * {@code sge(...)} makes the whole call refuse ({@link IllegalStateException} naming it), nothing posted.
     *
     * <p>Errors: the queue's state forbids posting (a QP in RESET; sends also in INIT and RTR: IB spec 10.3.1) →
     * {@link PostException} with {@code EINVAL} naming the state, before the provider sees the chain (some
     * providers, rxe, would queue the WRs and run them later). Other errnos ({@code EINVAL}: malformed WR) →
     * {@link PostException} carrying the index of the refused WR ({@code bad_wr}). A concurrent producer, or an open
     * {@link PostBatch} of this thread → {@link IllegalStateException}. In ERR the WRs are accepted and complete
     * with {@code WR_FLUSH_ERR}.
     */
    public final int post() {
        if (currentSges == 0) { // the last WR carries no SGE: its num_sge 0, deferred by startWr
            zeroSges(count - 1);
        }
        return queue.post(this);
    }

    /**
     * The size of this chain's C struct ({@code sizeof(struct ibv_send_wr)} or {@code ibv_recv_wr}): a WR's SGE list
     * starts there in its slot. Each final subclass returns its constant, which C2 folds where it inlines this.
     */
    abstract long structSize();

    /** Appends an SGE to the current WR; {@code key} null for inline data. Checks done by the caller. */
    final void appendSge(long addr, int length, int lkey, KeySnapshot key) {
        int n = currentSges;
        if (n < 0) { // count == posted: no current WR (after a full post or clear())
            throw rules.noCurrentWr();
        }
        int wr = count - 1;
        if (n == maxSge) {
            throw rules.tooManySges(maxSge);
        }
        long wa = wrAt((long) wr << wrShift);
        long sa = wa + structSize() + n * SGE_SIZE; // n < maxSge: inside the WR's slot
        LONG_AT.set(NATIVE, sa + SGE_ADDR, addr);
        LONG_AT.set(NATIVE, sa + SGE_LENGTH, pair(length, lkey));
        INT_AT.set(NATIVE, wa + NUM_SGE, n + 1);
        tracker.stageRef(base + wr, n, key == null ? 0L : key.trackingId);
        if (key != null) {
            if (nStaged > 0 && topKey == key) { // the common case: the same key as the previous SGE
                topLast = wr;
            } else {
                stage(key, wr);
            }
        }
        currentSges = n + 1;
    }

    /**
     * Whether {@code key} is the newest staged key of this chain, or of the previous one when this chain has staged
     * none yet ({@code topKey} is kept across {@link #clear()}): an SGE of this queue named it and passed the full
     * checks then (open, in this PD: immutable facts of the snapshot; memory allocated), and the post re-checks it
     * after its fence. So its next SGEs check only their range ({@link #chainStarted()}: and, at a chain's first
     * SGE, its memory again), and {@link #appendChainKeySge} updates one or three fields: the key is validated once
     * per chain (and per change of key), not once per SGE, and a chain reusing the previous chain's key (the common
     * case) takes the same inlined path from its first SGE on.
     */
    final boolean isChainKey(KeySnapshot key) {
        return key == topKey;
    }

    /** {@link #isChainKey}, and {@code key} is not an ODP key: its SGEs need no ODP check. */
    final boolean isPlainChainKey(KeySnapshot key) {
        return key == plainTopKey;
    }

    /** Whether this chain staged a key already (an SGE or a window bind since {@link #clear()}). */
    final boolean chainStarted() {
        return nStaged > 0;
    }

    /** {@link #appendSge} of the key {@link #isChainKey} returned true for. Checks done by the caller. */
    final void appendChainKeySge(long addr, int length, int lkey, KeySnapshot key) {
        int n = currentSges;
        if (n < 0) { // count == posted: no current WR (after a full post or clear())
            throw rules.noCurrentWr();
        }
        int wr = count - 1;
        if (n == maxSge) {
            throw rules.tooManySges(maxSge);
        }
        long wa = wrAt((long) wr << wrShift);
        long sa = wa + structSize() + n * SGE_SIZE; // n < maxSge: inside the WR's slot
        LONG_AT.set(NATIVE, sa + SGE_ADDR, addr);
        LONG_AT.set(NATIVE, sa + SGE_LENGTH, pair(length, lkey));
        INT_AT.set(NATIVE, wa + NUM_SGE, n + 1);
        tracker.stageRef(base + wr, n, key.trackingId);
        if (nStaged == 0) { // the chain's first key: the previous chain's top key, staged again (stage() without
            nStaged = 1;    // the reference store: topKey is already this key)
            topFirst = wr;
        }
        topLast = wr;
        currentSges = n + 1;
    }

    /**
     * References {@code key} from the current WR without an SGE (a memory-window bind reads its region but carries no
     * scatter/gather entry): tracked until the WR's completion and re-checked by the post like an SGE's key. Cold.
     */
    final void stageKeyOnly(KeySnapshot key) {
        int wr = current();
        tracker.stageRef(base + wr, 0, key.trackingId);
        if (nStaged > 0 && topKey == key) {
            topLast = wr;
        } else {
            stage(key, wr);
        }
    }

    /** Records a key that differs from the previous SGE's (kept out of the inlined path). */
    private void stage(KeySnapshot key, int wr) {
        int s = nStaged;
        if (s > 0) { // a second key in this chain: the top entry moves into the arrays
            KeySnapshot top = topKey;
            if (stagedKeys[s - 1] != top) { // no reference store (and no G1 barrier) when a previous chain put it
                stagedKeys[s - 1] = top;
            }
            stagedFirst[s - 1] = topFirst;
            stagedLast[s - 1] = topLast;
        }
        if (topKey != key) {
            topKey = key;
            plainTopKey = key.odp ? null : key;
        }
        topFirst = wr;
        topLast = wr;
        nStaged = s + 1;
    }

    /** Staged key {@code i} (the top one is in the fields). */
    private KeySnapshot stagedKey(int i) {
        return i == nStaged - 1 ? topKey : stagedKeys[i];
    }

    /** The first WR that named staged key {@code i}. */
    private int stagedFirst(int i) {
        return i == nStaged - 1 ? topFirst : stagedFirst[i];
    }

    /** The last WR that named staged key {@code i}. */
    private int stagedLast(int i) {
        return i == nStaged - 1 ? topLast : stagedLast[i];
    }

    /**
     * Starts WR {@code count}: its native {@code wr_id} (its tracker position and route), the 8 bytes {@code head} at
     * {@code headAt} (a constant at each caller: the send WR's {@code opcode} and {@code send_flags} at 28, one
     * unaligned store; the receive WR's {@code num_sge} 0 and padding at 24) and its tracker slot (the caller's
     * {@code wrId}); returns its native address ({@link #wrAt}), for the stores of its other fields.
     *
     * <p>A send WR's {@code num_sge} is written by its SGEs only ({@link #appendSge}: n + 1 each), not zeroed here:
     * one native store fewer per WR (each store is ~800 C2 nodes of a caller's per-WR loop, whose compile passed
     * C2's inlining node cutoff; perf/README.md, issue 9, tenth round). A WR that ends with no SGE (an empty SEND,
     * LOCAL_INV, a window bind) gets its 0 when the next WR starts (here) or at {@link #post()}, so the provider
     * never reads a {@code num_sge} left by an earlier WR of the slot (whose SGEs would name keys this WR does not
     * hold: {@code WorkRequestLayoutTest.aWrWithoutAnSgeIsPostedWithNumSgeZeroWhateverItsSlotHeldBefore}).
     */
    final long startWr(long wrId, long headAt, long head) {
        if (count == capacity) {
            throw rules.chainFull(capacity);
        }
        rules.checkOwnerOpen(verb); // the chain's memory outlives the QP: a closed QP is refused by its state
        int i = count;
        if (i == 0) {
            base = tracker.tail() + reserved;
            inlineWr = -1;
        } else if (currentSges == 0) { // the previous WR ended with no SGE: its num_sge 0 now
            zeroSges(i - 1);
        }
        long p = base + i;
        long w = (long) i << wrShift;
        tracker.stageWr(p, wrId);
        long wa = wrAt(w);
        LONG_AT.set(NATIVE, wa + WR_ID, tracker.encode(p));
        LONG_AT.set(NATIVE, wa + headAt, head);
        count = i + 1;
        currentSges = 0;
        return wa;
    }

    /** Writes {@code num_sge} 0 into WR {@code i}: it ended with no SGE ({@link #startWr}). Rare. */
    final void zeroSges(int i) {
        INT_AT.set(NATIVE, wrAt((long) i << wrShift) + NUM_SGE, 0);
    }

    /**
     * Moves the pending WRs (not yet accepted) so that the first is at tracker position {@code first}, and
     * re-encodes their provider {@code wr_id}s: another post path (a {@link PostBatch}) is about to use, or has rolled
     * back, the positions they were staged at. Rare; producer only.
     */
    final void restage(long first) {
        if (count == posted) { // no pending WR (every batch's start and submit): first, before any position arithmetic
            return;
        }
        long from = base + posted;
        if (from == first) {
            return;
        }
        tracker.moveStaged(from, first, count - posted);
        base = first - posted;
        for (int i = posted; i < count; i++) {
            providerWrId(i, tracker.encode(base + i));
        }
    }

    /**
     * An {@link PostBatch} opened at tracker position {@code tail} and may stage up to {@code n} WRs there: the
     * pending WRs move after them, and a chain started before {@link #release} starts after them. Producer only.
     */
    final void reserve(long tail, int n) {
        restage(tail + n);
        reserved = n;
    }

    /** The batch of {@link #reserve} ended: the pending WRs move to {@code first} (after what it staged). */
    final void release(long first) {
        reserved = 0;
        restage(first);
    }

    /** Writes the {@code wr_id} the provider carries for WR {@code i} (its tracker position). */
    final void providerWrId(int i, long wrId) {
        wrs.set(LONG, ((long) i << wrShift) + WR_ID, wrId);
    }

    /**
     * The index (into the staged keys) of the first key that WRs {@code from .. from+n-1} name and that is no longer
     * usable as staged (closed, closing, re-registered, or its memory's arena closed), or -1. One volatile read per
     * staged key, not per SGE.
     */
    final int firstStaleKey(int from, int n) {
        int staged = nStaged;
        if (staged == 1) { // a one-key chain (the common case): its key, from the fields, no loop
            KeySnapshot k = topKey;
            return topLast >= from && topFirst < from + n
                    && (DataPathAccess.snapshot(k.owner) != k || !k.memoryAlive()) ? 0 : -1;
        }
        int end = from + n;
        for (int i = 0; i < staged; i++) {
            if (stagedLast(i) >= from && stagedFirst(i) < end) {
                KeySnapshot k = stagedKey(i);
                if (DataPathAccess.snapshot(k.owner) != k || !k.memoryAlive()) {
                    return i;
                }
            }
        }
        return -1;
    }

    /** The refusal for staged key {@code i} found stale by a post from WR {@code from} (cold). */
    final IllegalStateException staleKey(String verb, int i, int from) {
        return rules.staleKey(verb, stagedKey(i), Math.max(stagedFirst(i), from));
    }

    /**
     * Makes WR {@code last} the end of the chain a post hands the provider: restores the WR cut before (if another)
     * and cuts after {@code last}. The cut stays after the post (the provider reads the chain only inside its call,
     * and every other {@code next} stays pre-linked), so a queue posting chains of one length, the common case,
     * writes no {@code next} per post. Producer only.
     */
    final void cutAfter(int last) {
        int c = cut;
        if (c != last) {
            if (c >= 0) {
                relink(c);
            }
            terminate(last);
            cut = last;
        }
    }

    /** Cuts the chain after WR {@code last}. */
    final void terminate(int last) {
        NATIVE.set(LONG, at(last * wrSize + NEXT), 0L);
    }

    /** Restores the pre-linked {@code next} of WR {@code last}. */
    final void relink(int last) {
        NATIVE.set(LONG, at(last * wrSize + NEXT), last + 1 < capacity ? wrsAddress + (last + 1) * wrSize : 0L);
    }

    /**
     * The chain starting at WR {@code i}. A retry after a partial post (a full send queue) starts mid-chain; its slice
     * is made once per index and kept, so back-pressure does not allocate on the hot path either.
     */
    final MemorySegment chainFrom(int i) {
        if (i == 0) {
            return wrs;
        }
        MemorySegment s = heads[i];
        if (s == null) {
            s = wrs.asSlice(i * wrSize);
            heads[i] = s;
        }
        return s;
    }

    /** The native address of WR {@code i} (a post's first WR; {@code i < capacity}). */
    final long chainAddress(int i) {
        return wrsAddress + i * wrSize;
    }

    /**
     * Clears the {@code bad_wr} cell before a provider call: a store at its own fixed address (inside the allocation,
     * below 2^56: {@code checkMaskable}), one mask and no offset arithmetic per post.
     */
    final void clearBadWr() {
        LONG_AT.set(NATIVE, badWrAddress & ADDR_BITS, 0L);
    }

    /** The index of the WR the provider's {@code bad_wr} names (meaningful after a refusal). */
    final int badIndex() {
        return indexOf(wrs.get(LONG, badWrAt));
    }

    /** The index of the WR at native address {@code badWr}, as the provider reports it. */
    final int indexOf(long badWr) {
        return (int) ((badWr - wrsAddress) / wrSize);
    }

    /** The WR {@link #post()} would refuse next without a current one (cold helper of the subclasses). */
    final int current() {
        if (count == posted) {
            throw rules.noCurrentWr();
        }
        return count - 1;
    }
}
