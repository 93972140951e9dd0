package dev.panverbs.core;

import dev.panverbs.bindings.verbs.ibv_send_wr;
import dev.panverbs.bindings.verbs.ibv_sge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * A queue pair's reusable chain of send work requests for the classic {@code ibv_post_send(3)}: a native array of
 * {@code struct ibv_send_wr} and their {@code struct ibv_sge} lists, allocated once per QP
 * ({@link QueuePair#sendRequests()}), filled in place and posted in one call by {@link QueuePair#postSend}.
 *
 * <pre>{@code
 * SendRequests wrs = qp.sendRequests();
 * for (int i = 0; i < 16; i++) {
 *     wrs.rdmaWrite(i, i == 15 ? SendFlag.SIGNALED_BIT : 0, remoteAddr + i * 4096L, rkey)
 *        .sge(mr, i * 4096L, 4096);
 * }
 * int posted = qp.postSend(wrs);   // one ibv_post_send for the 16-WR chain
 * }</pre>
 *
 * <p>Each operation method starts a new WR (named as the {@code ibv_wr_*} builders of {@link PostBatch});
 * {@link #sge}, {@link #inline} and {@link #ud} complete the current one. Every WR is checked in Java as it is
 * written: the operation against the QP type and device capabilities, each SGE against its memory region's bounds,
 * its protection domain and whether it is still registered. Flags are the precomputed C bits of {@link SendFlag}.
 *
 * <p>Native layout written (x86_64; offsets from the generated {@code ibv_send_wr}):
 * <pre>
 *  0 wr_id | 8 next | 16 sg_list | 24 num_sge | 28 opcode | 32 send_flags | 36 imm_data (be32) / invalidate_rkey
 * 40 wr.rdma.remote_addr | 48 wr.rdma.rkey
 * 40 wr.atomic.remote_addr | 48 compare_add | 56 swap | 64 rkey
 * 40 wr.ud.ah | 48 remote_qpn | 52 remote_qkey
 * </pre>
 *
 * <p>Nothing here allocates. Not thread-safe: one producer per QP send queue (the QP's send side is
 * single-producer unless the caller synchronizes).
 */
public final class SendRequests {
    static final long WR_SIZE = ibv_send_wr.layout().byteSize();
    static final long SGE_SIZE = ibv_sge.layout().byteSize();

    /**
     * Unaligned twins of JAVA_LONG/JAVA_INT: every offset written is naturally aligned by the C layout, so the
     * per-access alignment check of the aligned layouts is redundant; dropping it keeps the hot methods small
     * enough for C2 to inline into the caller's loop.
     */
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final long WR_ID = ibv_send_wr.wr_id$offset();
    private static final long NEXT = ibv_send_wr.next$offset();
    private static final long SG_LIST = ibv_send_wr.sg_list$offset();
    private static final long NUM_SGE = ibv_send_wr.num_sge$offset();
    private static final long OPCODE = ibv_send_wr.opcode$offset();
    private static final long SEND_FLAGS = ibv_send_wr.send_flags$offset();
    private static final long IMM_DATA = ibv_send_wr.imm_data$offset();
    private static final long U = ibv_send_wr.wr$offset();
    private static final long RDMA_ADDR = U + ibv_send_wr.wr.rdma$offset() + ibv_send_wr.wr.rdma.remote_addr$offset();
    private static final long RDMA_RKEY = U + ibv_send_wr.wr.rdma$offset() + ibv_send_wr.wr.rdma.rkey$offset();
    private static final long ATOMIC = U + ibv_send_wr.wr.atomic$offset();
    private static final long ATOMIC_ADDR = ATOMIC + ibv_send_wr.wr.atomic.remote_addr$offset();
    private static final long ATOMIC_COMPARE_ADD = ATOMIC + ibv_send_wr.wr.atomic.compare_add$offset();
    private static final long ATOMIC_SWAP = ATOMIC + ibv_send_wr.wr.atomic.swap$offset();
    private static final long ATOMIC_RKEY = ATOMIC + ibv_send_wr.wr.atomic.rkey$offset();
    private static final long UD = U + ibv_send_wr.wr.ud$offset();
    private static final long UD_AH = UD + ibv_send_wr.wr.ud.ah$offset();
    private static final long UD_QPN = UD + ibv_send_wr.wr.ud.remote_qpn$offset();
    private static final long UD_QKEY = UD + ibv_send_wr.wr.ud.remote_qkey$offset();
    private static final long SGE_ADDR = ibv_sge.addr$offset();
    private static final long SGE_LENGTH = ibv_sge.length$offset();
    private static final long SGE_LKEY = ibv_sge.lkey$offset();
    private static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    final MemorySegment wrs;
    final long wrsAddress;
    private final MemorySegment sges;
    private final WorkRequestRules rules;
    private final int capacity;
    private final int maxSge;
    /**
     * The {@link MemoryRegion#trackingId} of each SGE (0 for inline data), by {@code wr * maxSge + sge}: recorded by
     * the QP's tracker at post. Primitive, so writing a WR stores no object reference.
     */
    final long[] sgeRegions;
    final boolean[] udAddressed;
    /** Java mirrors of each WR's {@code wr_id}, signaled flag and {@code num_sge}, read back when it is posted. */
    final long[] wrIds;
    final boolean[] signaled;
    final int[] numSges;
    private int count;
    /** WRs of this chain already accepted by the provider (a partial post left the rest pending). */
    int posted;
    private int inlineBytes;
    /** The current WR's SGEs are written by the NIC (RDMA READ, atomics): they need LOCAL_WRITE. */
    private boolean writesLocally;
    /**
     * The current WR was started with {@link SendFlag#INLINE_BIT}: the provider copies its SGEs into the WQE as
     * inline data, so they count against {@code max_inline_data} too (rxe sums their lengths in 32 bits: past 4 GiB
     * the sum wraps, its check passes and the copy runs off the WQE into the mapped send queue).
     */
    private boolean inlineWr;
    /** SGEs of the current (last) WR, mirrored from its native {@code num_sge}. */
    private int currentSges;

    SendRequests(WorkRequestRules rules, int capacity, int maxSge, Arena arena) {
        if (capacity < 1) {
            throw new IllegalArgumentException("a send chain needs at least one WR");
        }
        this.rules = rules;
        this.capacity = capacity;
        this.maxSge = Math.max(maxSge, 1);
        this.wrs = arena.allocate(ibv_send_wr.layout(), capacity);
        this.sges = arena.allocate(ibv_sge.layout(), (long) capacity * this.maxSge);
        this.wrsAddress = wrs.address();
        this.sgeRegions = new long[capacity * this.maxSge];
        this.udAddressed = new boolean[capacity];
        this.wrIds = new long[capacity];
        this.signaled = new boolean[capacity];
        this.numSges = new int[capacity];
        long sgesAddress = sges.address();
        for (int i = 0; i < capacity; i++) {
            wrs.set(LONG, i * WR_SIZE + SG_LIST, sgesAddress + i * this.maxSge * SGE_SIZE);
            relink(i); // pre-linked: posting n WRs only cuts the chain after WR n-1 for the duration of the call
        }
    }

    /** How many WRs the chain holds at most (the QP's granted {@code max_send_wr}, capped at creation). */
    public int capacity() {
        return capacity;
    }

    /** WRs written since the last {@link #clear()} (posted or not). */
    public int count() {
        return count;
    }

    /** WRs written but not yet accepted by {@link QueuePair#postSend}. */
    public int pending() {
        return count - posted;
    }

    /** Forgets every WR (after a full post this happens by itself). */
    public SendRequests clear() {
        count = 0;
        posted = 0;
        return this;
    }

    /** {@code IBV_WR_SEND}. */
    public SendRequests send(long wrId, int sendFlags) {
        start(WorkRequestOpcode.SEND, wrId, sendFlags);
        return this;
    }

    /** {@code IBV_WR_SEND_WITH_IMM}; {@code immData} in host order, the receiver's {@link WorkCompletion#immData()}. */
    public SendRequests sendWithImm(long wrId, int sendFlags, int immData) {
        long w = start(WorkRequestOpcode.SEND_WITH_IMM, wrId, sendFlags);
        wrs.set(BE32, w + IMM_DATA, immData);
        return this;
    }

    /** {@code IBV_WR_SEND_WITH_INV}: send and invalidate {@code invalidateRkey} at the receiver. */
    public SendRequests sendWithInv(long wrId, int sendFlags, int invalidateRkey) {
        long w = start(WorkRequestOpcode.SEND_WITH_INV, wrId, sendFlags);
        wrs.set(INT, w + IMM_DATA, invalidateRkey);
        return this;
    }

    /** {@code IBV_WR_RDMA_WRITE} to {@code remoteAddr} in the peer's MR {@code rkey}. */
    public SendRequests rdmaWrite(long wrId, int sendFlags, long remoteAddr, int rkey) {
        long w = start(WorkRequestOpcode.RDMA_WRITE, wrId, sendFlags);
        remote(w, remoteAddr, rkey);
        return this;
    }

    /** {@code IBV_WR_RDMA_WRITE_WITH_IMM}: consumes a receive WR at the peer, which sees {@code immData}. */
    public SendRequests rdmaWriteWithImm(long wrId, int sendFlags, long remoteAddr, int rkey, int immData) {
        long w = start(WorkRequestOpcode.RDMA_WRITE_WITH_IMM, wrId, sendFlags);
        remote(w, remoteAddr, rkey);
        wrs.set(BE32, w + IMM_DATA, immData);
        return this;
    }

    /** {@code IBV_WR_RDMA_READ} from {@code remoteAddr} into the SGEs. */
    public SendRequests rdmaRead(long wrId, int sendFlags, long remoteAddr, int rkey) {
        long w = start(WorkRequestOpcode.RDMA_READ, wrId, sendFlags);
        remote(w, remoteAddr, rkey);
        return this;
    }

    /**
     * {@code IBV_WR_ATOMIC_CMP_AND_SWP}: if the 8 bytes at {@code remoteAddr} (8-byte aligned) equal {@code compare},
     * replace them by {@code swap}; the original value lands in the (8-byte) SGE.
     */
    public SendRequests atomicCmpAndSwp(long wrId, int sendFlags, long remoteAddr, int rkey, long compare, long swap) {
        long w = start(WorkRequestOpcode.ATOMIC_CMP_AND_SWP, wrId, sendFlags);
        atomic(w, remoteAddr, rkey, compare, swap);
        return this;
    }

    /** {@code IBV_WR_ATOMIC_FETCH_AND_ADD}: add {@code add}; the original value lands in the (8-byte) SGE. */
    public SendRequests atomicFetchAndAdd(long wrId, int sendFlags, long remoteAddr, int rkey, long add) {
        long w = start(WorkRequestOpcode.ATOMIC_FETCH_AND_ADD, wrId, sendFlags);
        atomic(w, remoteAddr, rkey, add, 0L);
        return this;
    }

    /** {@code IBV_WR_LOCAL_INV}: invalidate local {@code rkey} (memory windows / fast-registered MRs). */
    public SendRequests localInv(long wrId, int sendFlags, int invalidateRkey) {
        long w = start(WorkRequestOpcode.LOCAL_INV, wrId, sendFlags);
        wrs.set(INT, w + IMM_DATA, invalidateRkey);
        return this;
    }

    /**
     * Appends one scatter/gather entry to the current WR: {@code length} bytes at {@code offset} in {@code region}
     * ({@code struct ibv_sge} with the region's lkey). Rejected in Java when it leaves the region, when the region is
     * closed, when it belongs to another protection domain than the QP, or when the NIC must write it (RDMA READ,
     * atomics) and the region lacks {@link Access#LOCAL_WRITE}.
     *
     * <p>DMA contract: the bytes must stay registered until the WR's completion has been polled; the QP keeps
     * the region referenced until then and {@link MemoryRegion#close()} refuses to deregister it meanwhile.
     */
    public SendRequests sge(MemoryRegion region, long offset, int length) {
        rules.checkSge(region, offset, length);
        if (writesLocally) {
            rules.checkLocalWrite(region, length, "an RDMA READ or atomic");
        }
        if (inlineWr) {
            inlineBytes = rules.checkInlineSge(length, inlineBytes);
        }
        appendSge(DataPathAccess.address(region) + offset, length, DataPathAccess.lkey(region), region.trackingId);
        return this;
    }

    /**
     * Appends {@code data} as inline payload of the current WR (sets {@code IBV_SEND_INLINE}): the provider copies
     * it into the WQE during {@code ibv_post_send}, so {@code data} is reusable as soon as the post returns and needs
     * no memory region. The WR's inline bytes may not exceed the QP's {@code max_inline_data}.
     */
    public SendRequests inline(MemorySegment data) {
        long w = current();
        int len = rules.checkInline(data, inlineBytes);
        inlineBytes += len;
        wrs.set(INT, w + SEND_FLAGS, wrs.get(INT, w + SEND_FLAGS) | SendFlag.INLINE_BIT);
        appendSge(data.address(), len, 0, 0L);
        return this;
    }

    /** Addresses the current WR of a UD QP ({@code wr.ud}): to {@code remoteQpn} with queue key {@code remoteQkey}. */
    public SendRequests ud(AddressHandle ah, int remoteQpn, int remoteQkey) {
        long w = current();
        rules.checkUd(ah);
        wrs.set(ValueLayout.ADDRESS_UNALIGNED, w + UD_AH, ah.resource.handle("ibv_post_send"));
        wrs.set(INT, w + UD_QPN, remoteQpn);
        wrs.set(INT, w + UD_QKEY, remoteQkey);
        udAddressed[count - 1] = true;
        return this;
    }

    /** Appends an SGE without checks (package-private: layout tests and already-checked callers). */
    void appendSge(long addr, int length, int lkey, long regionId) {
        long w = current();
        int n = currentSges;
        if (n == maxSge) {
            throw rules.tooManySges(maxSge);
        }
        int wr = count - 1;
        long s = ((long) wr * maxSge + n) * SGE_SIZE;
        sges.set(LONG, s + SGE_ADDR, addr);
        sges.set(INT, s + SGE_LENGTH, length);
        sges.set(INT, s + SGE_LKEY, lkey);
        sgeRegions[wr * maxSge + n] = regionId;
        wrs.set(INT, w + NUM_SGE, n + 1);
        currentSges = n + 1;
        numSges[wr] = n + 1;
    }

    private long start(WorkRequestOpcode opcode, long wrId, int sendFlags) {
        rules.checkOpen("ibv_post_send");
        rules.checkOpcode(opcode);
        if (count == capacity) {
            throw rules.chainFull(capacity);
        }
        int i = count++;
        long w = i * WR_SIZE;
        wrs.set(LONG, w + WR_ID, wrId);
        wrs.set(INT, w + NUM_SGE, 0);
        wrs.set(INT, w + OPCODE, opcode.value());
        wrs.set(INT, w + SEND_FLAGS, sendFlags);
        wrs.set(INT, w + IMM_DATA, 0);
        udAddressed[i] = false;
        wrIds[i] = wrId;
        signaled[i] = (sendFlags & SendFlag.SIGNALED_BIT) != 0;
        numSges[i] = 0;
        inlineBytes = 0;
        writesLocally = opcode == WorkRequestOpcode.RDMA_READ || opcode.isAtomic();
        inlineWr = (sendFlags & SendFlag.INLINE_BIT) != 0;
        currentSges = 0;
        return w;
    }

    private long current() {
        rules.checkOpen("ibv_post_send");
        if (count == posted) {
            throw rules.noCurrentWr();
        }
        return (count - 1) * WR_SIZE;
    }

    private void remote(long w, long remoteAddr, int rkey) {
        wrs.set(LONG, w + RDMA_ADDR, remoteAddr);
        wrs.set(INT, w + RDMA_RKEY, rkey);
    }

    private void atomic(long w, long remoteAddr, int rkey, long compareAdd, long swap) {
        if ((remoteAddr & 7) != 0) {
            throw rules.unalignedAtomic(remoteAddr);
        }
        wrs.set(LONG, w + ATOMIC_ADDR, remoteAddr);
        wrs.set(LONG, w + ATOMIC_COMPARE_ADD, compareAdd);
        wrs.set(LONG, w + ATOMIC_SWAP, swap);
        wrs.set(INT, w + ATOMIC_RKEY, rkey);
    }

    // ---- used by QueuePair's post path ----

    int maxSge() {
        return maxSge;
    }

    int opcodeValue(int i) {
        return wrs.get(INT, i * WR_SIZE + OPCODE);
    }

    /** Cuts the chain after WR {@code last} (for the duration of one post). */
    void terminate(int last) {
        wrs.set(LONG, last * WR_SIZE + NEXT, 0L);
    }

    /** Restores the pre-linked {@code next} of WR {@code last}. */
    void relink(int last) {
        wrs.set(LONG, last * WR_SIZE + NEXT, last + 1 < capacity ? wrsAddress + (last + 1) * WR_SIZE : 0L);
    }

    /** The chain starting at WR {@code i}; only a retry after a partial post slices (and may allocate). */
    MemorySegment chainFrom(int i) {
        return i == 0 ? wrs : wrs.asSlice(i * WR_SIZE);
    }

    /** The index of the WR at native address {@code badWr}, as {@code ibv_post_send} reports it. */
    int indexOf(long badWr) {
        return (int) ((badWr - wrsAddress) / WR_SIZE);
    }
}
