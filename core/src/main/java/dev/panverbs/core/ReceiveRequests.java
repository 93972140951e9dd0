package dev.panverbs.core;

import dev.panverbs.bindings.verbs.ibv_recv_wr;
import dev.panverbs.bindings.verbs.ibv_sge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A queue pair's reusable chain of receive work requests for {@code ibv_post_recv(3)}: a native array of
 * {@code struct ibv_recv_wr} and their SGE lists, allocated once per QP ({@link QueuePair#receiveRequests()}),
 * filled in place and posted in one call by {@link QueuePair#postRecv}.
 *
 * <pre>{@code
 * ReceiveRequests rwrs = qp.receiveRequests();
 * for (int i = 0; i < 64; i++) rwrs.recv(i).sge(mr, i * 4096L, 4096);
 * qp.postRecv(rwrs);
 * }</pre>
 *
 * <p>Native layout written: {@code 0 wr_id | 8 next | 16 sg_list | 24 num_sge} (32 bytes). On a UD QP the first
 * 40 bytes of each receive buffer receive the GRH (see {@link WorkCompletion#hasGrh()}): size buffers MTU + 40.
 *
 * <p>Nothing here allocates. Not thread-safe: one producer per receive queue.
 */
public final class ReceiveRequests {
    static final long WR_SIZE = ibv_recv_wr.layout().byteSize();
    private static final long SGE_SIZE = ibv_sge.layout().byteSize();
    /**
     * Unaligned twins of JAVA_LONG/JAVA_INT: every offset written is naturally aligned by the C layout, so the
     * per-access alignment check of the aligned layouts is redundant; dropping it keeps the hot methods small
     * enough for C2 to inline into the caller's loop.
     */
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final long WR_ID = ibv_recv_wr.wr_id$offset();
    private static final long NEXT = ibv_recv_wr.next$offset();
    private static final long SG_LIST = ibv_recv_wr.sg_list$offset();
    private static final long NUM_SGE = ibv_recv_wr.num_sge$offset();
    private static final long SGE_ADDR = ibv_sge.addr$offset();
    private static final long SGE_LENGTH = ibv_sge.length$offset();
    private static final long SGE_LKEY = ibv_sge.lkey$offset();

    final MemorySegment wrs;
    final long wrsAddress;
    private final MemorySegment sges;
    private final WorkRequestRules rules;
    private final int capacity;
    private final int maxSge;
    /** The {@link MemoryRegion#trackingId} of each SGE, by {@code wr * maxSge + sge} (as in SendRequests). */
    final long[] sgeRegions;
    /** Java mirrors of each WR's {@code wr_id} and {@code num_sge}, read back when it is posted. */
    final long[] wrIds;
    final int[] numSges;
    private int count;
    int posted;
    private int currentSges;

    ReceiveRequests(WorkRequestRules rules, int capacity, int maxSge, Arena arena) {
        if (capacity < 1) {
            throw new IllegalArgumentException("a receive chain needs at least one WR");
        }
        this.rules = rules;
        this.capacity = capacity;
        this.maxSge = Math.max(maxSge, 1);
        this.wrs = arena.allocate(ibv_recv_wr.layout(), capacity);
        this.sges = arena.allocate(ibv_sge.layout(), (long) capacity * this.maxSge);
        this.wrsAddress = wrs.address();
        this.sgeRegions = new long[capacity * this.maxSge];
        this.wrIds = new long[capacity];
        this.numSges = new int[capacity];
        long sgesAddress = sges.address();
        for (int i = 0; i < capacity; i++) {
            wrs.set(LONG, i * WR_SIZE + SG_LIST, sgesAddress + i * this.maxSge * SGE_SIZE);
            relink(i);
        }
    }

    /** How many WRs the chain holds at most (the QP's granted {@code max_recv_wr}, capped at creation). */
    public int capacity() {
        return capacity;
    }

    /** WRs written since the last {@link #clear()}. */
    public int count() {
        return count;
    }

    /** WRs written but not yet accepted by {@link QueuePair#postRecv}. */
    public int pending() {
        return count - posted;
    }

    /** Forgets every WR (after a full post this happens by itself). */
    public ReceiveRequests clear() {
        count = 0;
        posted = 0;
        return this;
    }

    /** Starts a receive WR with id {@code wrId}; add its buffers with {@link #sge}. */
    public ReceiveRequests recv(long wrId) {
        rules.checkOpen("ibv_post_recv");
        if (count == capacity) {
            throw rules.chainFull(capacity);
        }
        int i = count++;
        long w = i * WR_SIZE;
        wrs.set(LONG, w + WR_ID, wrId);
        wrs.set(INT, w + NUM_SGE, 0);
        wrIds[i] = wrId;
        numSges[i] = 0;
        currentSges = 0;
        return this;
    }

    /**
     * Appends a buffer to the current receive WR: {@code length} bytes at {@code offset} in {@code region}, checked
     * against the region's bounds, its protection domain, whether it is still registered and whether it grants
     * {@link Access#LOCAL_WRITE} (the NIC writes received data into it).
     *
     * <p>DMA contract: the bytes stay registered until the WR's completion is polled; {@link MemoryRegion#close()}
     * refuses to deregister the region meanwhile.
     */
    public ReceiveRequests sge(MemoryRegion region, long offset, int length) {
        rules.checkSge(region, offset, length);
        rules.checkLocalWrite(region, length, "a receive");
        appendSge(DataPathAccess.address(region) + offset, length, DataPathAccess.lkey(region), region.trackingId);
        return this;
    }

    void appendSge(long addr, int length, int lkey, long regionId) {
        rules.checkOpen("ibv_post_recv");
        if (count == posted) {
            throw rules.noCurrentWr();
        }
        int wr = count - 1;
        long w = wr * WR_SIZE;
        int n = currentSges;
        if (n == maxSge) {
            throw rules.tooManySges(maxSge);
        }
        long s = ((long) wr * maxSge + n) * SGE_SIZE;
        sges.set(LONG, s + SGE_ADDR, addr);
        sges.set(INT, s + SGE_LENGTH, length);
        sges.set(INT, s + SGE_LKEY, lkey);
        sgeRegions[wr * maxSge + n] = regionId;
        wrs.set(INT, w + NUM_SGE, n + 1);
        currentSges = n + 1;
        numSges[wr] = n + 1;
    }

    int maxSge() {
        return maxSge;
    }

    void terminate(int last) {
        wrs.set(LONG, last * WR_SIZE + NEXT, 0L);
    }

    void relink(int last) {
        wrs.set(LONG, last * WR_SIZE + NEXT, last + 1 < capacity ? wrsAddress + (last + 1) * WR_SIZE : 0L);
    }

    MemorySegment chainFrom(int i) {
        return i == 0 ? wrs : wrs.asSlice(i * WR_SIZE);
    }

    int indexOf(long badWr) {
        return (int) ((badWr - wrsAddress) / WR_SIZE);
    }
}
