package dev.panverbs.core;

import dev.panverbs.bindings.ibverbs.QpExOps;
import dev.panverbs.bindings.verbs.ibv_data_buf;
import dev.panverbs.bindings.verbs.ibv_sge;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.Handshake;
import dev.panverbs.core.internal.HotMemory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A batch of send work requests built with the extended {@code ibv_wr_*} API ({@code ibv_wr_post(3)}), from
 * {@link QueuePair#startSend()} ({@code ibv_wr_start}). Each operation method ({@link #send}, {@link #rdmaWrite},
 * ...) builds one WR with its {@code wr_id} and flags; {@link #setSge}, {@link #setInlineData} and their list
 * forms give its data: exactly one for every operation but {@code localInv} and {@code bindMw} (a zero-length
 * message is {@code setSge(key, 0, 0)}); a WR without one, or with two, is refused by the next operation or
 * {@code submit} naming it. {@link #submit()} posts the batch ({@code ibv_wr_complete}); {@link #close()} without
 * submit aborts it ({@code ibv_wr_abort}), so try-with-resources is the safe shape:
 *
 * <pre>{@code
 * try (PostBatch b = qp.startSend()) {
 *     b.rdmaWrite(1, 0, rkey, remoteAddr).setSge(mr, 0, 4096);
 *     b.sendWithImm(2, SendFlag.SIGNALED_BIT, 42).setInlineData(header);
 *     b.submit();
 * }
 * }</pre>
 *
 * <p>Operations not requested in {@link QueuePairBuilder#sendOps} (or that the type or device lacks) are refused
 * naming them, before the provider's function pointer (NULL for those) is reached. SGEs are checked against their
 * regions as in {@link SendRequests}. Method names mirror {@code ibv_wr_*} one to one, as pyverbs does.
 *
 * <p>One object per QP, reused by every {@code startSend}: nothing is allocated. Not thread-safe: between
 * {@code startSend} and {@code submit}/{@code close} the provider holds the send-queue lock, and all calls must come
 * from that thread: a second {@code startSend} or a classic send post on the same QP, which would spin forever on that
 * lock, and a {@code submit} from another thread throw {@link IllegalStateException}; the operations and setters,
 * per WR, check only that a batch is open. Closing the QP on the batch's thread aborts the batch; closing it on
 * another thread waits (up to 5 s) for the batch to be submitted or closed.
 */
public final class PostBatch implements AutoCloseable {
    private static final long SGE_SIZE = ibv_sge.layout().byteSize();

    private final SendQueue queue;
    private final QueuePair qp;
    private final QpExOps ops;
    /**
     * The enabled operations ({@code IBV_QP_EX_WITH_*} of {@code sendOps}) as bit {@code ordinal()} each: the per-WR
     * test shifts by the operation's ordinal, which C2 folds (an enum's own {@code bit} field it does not).
     */
    private final int enabledOps;
    private final WorkRequestRules rules;
    private final WorkQueueTracker tracker;
    private final int capacity;
    private final int maxSge;
    /**
     * Key snapshot per SGE ({@code wr * maxSge + sge}), re-checked at submit; written only once the batch names a
     * second key (until then every SGE's is {@link #lastKey}: {@link #stage}). The WRs' caller {@code wr_id}s and key
     * tracking ids go straight into the tracker's slots after its tail as they are built ({@link #begin},
     * {@link #stage}): submit only publishes the tail, no copy per WR.
     */
    private final KeySnapshot[] keys;
    /** {@code struct ibv_sge[]} / {@code struct ibv_data_buf[]} of the list setters: no arena acquire per call. */
    private final HotMemory lists;
    private final MemorySegment sgeList;
    private final MemorySegment bufList;
    /** The inline setters' copy of the data ({@code max_inline_data} bytes), as {@link SendRequests#inline}'s. */
    private final MemorySegment inlineArea;
    /** The window operations of the open batch; made on the QP's first one. */
    private WindowOps windowOps;
    /** Open on the thread holding {@code qp.sendGuard}; written by that thread only. */
    private boolean active;
    /** The current WR's SGEs are written by the NIC (RDMA READ, atomics). */
    private boolean writesLocally;
    /** The current WR's operation ({@link SendOperation#ordinal()}), for the ODP check of its SGEs. */
    private int currentOp;
    /** The current WR's send flags (its inline setters check {@link SendFlag#INLINE_BIT}). */
    private int currentFlags;
    private int count;
    /** Data setters the current WR still owes (1 per data operation, -1 per setter): non-zero is refused (mlx5). */
    private int dataOwed;
    /** The current WR's record in the tracker ({@link WorkQueueTracker#slot}), from begin: stage computes no index. */
    private int slot;
    private int room;
    /** The tracker position of the batch's first WR. */
    private long base;
    /**
     * XRC initiators and UD QPs only (else null): the batch number ({@link #batch}) in which WR {@code i} was given
     * its destination (remote SRQ number, or UD address); submit refuses a WR of the batch without one, as the classic
     * post does.
     */
    private final int[] destSetIn;
    /** UD only (else null): the AH each WR of the batch was addressed with, re-checked at submit after the fence. */
    private final AddressHandle[] udAh;
    /** UD only (else null): keeps the AH of {@link #setUdAddr} alive over the provider's copy of its address. */
    final AddressCopyGuard addressCopy;
    private int batch;
    /**
     * The key of the newest staged SGE (kept across batches: a reference store only when it changes, no G1 barrier per
     * batch), whether the open batch staged any key, and whether every key it staged is this one: submit then
     * re-checks one key instead of walking the SGE slots.
     */
    private KeySnapshot lastKey;
    private boolean anyKey;
    private boolean oneKey;

    PostBatch(SendQueue queue, QpExOps ops, long sendOps) {
        this.queue = queue;
        this.qp = queue.qp;
        this.ops = ops;
        this.enabledOps = PostBatchRefusals.ordinalBits(sendOps);
        this.rules = queue.rules;
        this.tracker = queue.tracker;
        this.capacity = Math.max(qp.capabilities().maxSendWr(), 1);
        this.maxSge = Math.max(qp.capabilities().maxSendSge(), 1);
        this.keys = new KeySnapshot[capacity * maxSge];
        long sgeBytes = ibv_sge.layout().byteSize() * maxSge;
        long bufBytes = ibv_data_buf.layout().byteSize() * maxSge;
        long inlineCap = Math.max(rules.maxInlineData(), 0);
        this.lists = HotMemory.allocate(sgeBytes + bufBytes + inlineCap, 8);
        this.sgeList = lists.segment.asSlice(0, sgeBytes);
        this.bufList = lists.segment.asSlice(sgeBytes, bufBytes);
        this.inlineArea = lists.segment.asSlice(sgeBytes + bufBytes, inlineCap);
        QueuePairType type = rules.type();
        boolean byAh = type == QueuePairType.UD || type == QueuePairType.DC_INITIATOR; // each WR names an AH
        this.destSetIn = type == QueuePairType.XRC_SEND || byAh ? new int[capacity] : null;
        this.udAh = byAh ? new AddressHandle[capacity] : null; // the tracker records them too
        this.addressCopy = type == QueuePairType.UD ? new AddressCopyGuard(queue.guard) : null;
    }

    PostBatch start() {
        CallGuard guard = queue.guard;
        if (!guard.enter(Thread.currentThread())) {
            throw PostBatchRefusals.startRefused(qp, guard);
        }
        try {
            Handshake.postSide(); // the post side of the close/post handshake (Handshake): a close that found no mark sees its closing state here
            qp.resource.checkOpen("ibv_wr_start");
            ops.ibv_wr_start();
        } catch (RuntimeException | Error e) {
            guard.exit();
            throw e;
        }
        long tail = tracker.tail(); // one read of the producer's own tail, for the room and the base
        int free = tracker.room(tail); // the fields below after its acquire: begin takes them from these stores
        active = true;
        batch++;
        count = 0;
        dataOwed = 0;
        anyKey = false;
        oneKey = true;
        room = free;
        base = tail;
        queue.requests.reserve(tail, free); // the batch is staged at the tail: a classic chain moves after it
        return this;
    }

    /** How many more WRs fit in this batch (the send queue's free slots when the batch started, minus those built). */
    public int room() {
        return room - count;
    }

    /** {@code ibv_wr_send}. */
    public PostBatch send(long wrId, int sendFlags) {
        begin(SendOperation.SEND, wrId, sendFlags);
        ops.ibv_wr_send();
        return this;
    }

    /** {@code ibv_wr_send_imm}; {@code immData} in host order (the receiver's {@link WorkCompletion#immData()}). */
    public PostBatch sendWithImm(long wrId, int sendFlags, int immData) {
        begin(SendOperation.SEND_WITH_IMM, wrId, sendFlags);
        ops.ibv_wr_send_imm(Integer.reverseBytes(immData)); // __be32 on a little-endian host
        return this;
    }

    /** {@code ibv_wr_send_inv}: send and invalidate {@code invalidateRkey} at the receiver. */
    public PostBatch sendWithInv(long wrId, int sendFlags, int invalidateRkey) {
        begin(SendOperation.SEND_WITH_INV, wrId, sendFlags);
        ops.ibv_wr_send_inv(invalidateRkey);
        return this;
    }

    /** {@code ibv_wr_rdma_write} to {@code remoteAddr} in the peer's region {@code rkey}. */
    public PostBatch rdmaWrite(long wrId, int sendFlags, int rkey, long remoteAddr) {
        begin(SendOperation.RDMA_WRITE, wrId, sendFlags);
        ops.ibv_wr_rdma_write(rkey, remoteAddr);
        return this;
    }

    /** {@code ibv_wr_rdma_write_imm}: consumes a receive WR at the peer, which sees {@code immData}. */
    public PostBatch rdmaWriteWithImm(long wrId, int sendFlags, int rkey, long remoteAddr, int immData) {
        begin(SendOperation.RDMA_WRITE_WITH_IMM, wrId, sendFlags);
        ops.ibv_wr_rdma_write_imm(rkey, remoteAddr, Integer.reverseBytes(immData));
        return this;
    }

    /** {@code ibv_wr_rdma_read} from {@code remoteAddr} into this WR's SGEs. */
    public PostBatch rdmaRead(long wrId, int sendFlags, int rkey, long remoteAddr) {
        begin(SendOperation.RDMA_READ, wrId, sendFlags);
        ops.ibv_wr_rdma_read(rkey, remoteAddr);
        return this;
    }

    /** {@code ibv_wr_atomic_cmp_swp} on the 8-byte aligned {@code remoteAddr}; the old value lands in the SGE. */
    public PostBatch atomicCmpSwp(long wrId, int sendFlags, int rkey, long remoteAddr, long compare, long swap) {
        begin(SendOperation.ATOMIC_CMP_AND_SWP, wrId, sendFlags);
        PostBatchRefusals.checkAligned(rules, remoteAddr);
        ops.ibv_wr_atomic_cmp_swp(rkey, remoteAddr, compare, swap);
        return this;
    }

    /** {@code ibv_wr_atomic_fetch_add}; the old value lands in the SGE. */
    public PostBatch atomicFetchAdd(long wrId, int sendFlags, int rkey, long remoteAddr, long add) {
        begin(SendOperation.ATOMIC_FETCH_AND_ADD, wrId, sendFlags);
        PostBatchRefusals.checkAligned(rules, remoteAddr);
        ops.ibv_wr_atomic_fetch_add(rkey, remoteAddr, add);
        return this;
    }

    /** {@code ibv_wr_local_inv}: invalidate local {@code invalidateRkey}. */
    public PostBatch localInv(long wrId, int sendFlags, int invalidateRkey) {
        begin(SendOperation.LOCAL_INV, wrId, sendFlags);
        ops.ibv_wr_local_inv(invalidateRkey);
        return this;
    }

    /**
     * {@code ibv_wr_local_inv} of a memory window: invalidates {@code mw}'s current rkey; once the batch is submitted
     * the window counts as unbound, so its region may be closed (after this WR's completion).
     */
    public PostBatch localInv(long wrId, int sendFlags, MemoryWindow mw) {
        windowOps().localInv(this, wrId, sendFlags, mw);
        return this;
    }

    /**
     * {@code ibv_wr_bind_mw(3)}: binds the type 2 window {@code mw} to {@code length} bytes at {@code offset} in
     * {@code mr} with the remote rights {@code access}, under the new remote key {@code rkey} (usually
     * {@code MemoryWindow.nextRkey(mw.rkey())}: its low byte must change). The WR references {@code mr} until its
     * completion; once the batch is submitted the window reports {@code rkey} and its new range, and {@code mr}
     * refuses to close while it stays bound. Checks as {@link MemoryWindow#bind}.
     */
    public PostBatch bindMw(long wrId, int sendFlags, MemoryWindow mw, int rkey, MemoryRegion mr, long offset,
                            long length, java.util.Set<Access> access) {
        windowOps().bindMw(this, wrId, sendFlags, mw, rkey, mr, offset, length, access);
        return this;
    }

    private WindowOps windowOps() {
        if (windowOps == null) { // the QP's first window operation
            windowOps = new WindowOps(qp, ops, capacity);
        }
        return windowOps;
    }

    /**
     * {@code ibv_wr_set_sge}: the current WR's data is {@code length} bytes at {@code offset} in {@code region};
     * checked like {@link SendRequests#sge}.
     */
    public PostBatch setSge(LocalKey key, long offset, int length) {
        current();
        KeySnapshot k = DataPathAccess.stagedSnapshot(key); // submit() re-reads it, ordered, after its fence
        rules.checkSge(k, offset, length);
        if (k.odp) {
            rules.checkOdp(k, OdpSupport.operationOfBatch(currentOp));
        }
        if (writesLocally) {
            rules.checkLocalWrite(k, length, "an RDMA READ or atomic");
        }
        stage(k, 0); // before the call, while the batch's fields are still in registers (a downcall clobbers them)
        dataOwed--;
        ops.ibv_wr_set_sge(k.lkey, k.address + offset, length);
        return this;
    }

    /**
     * {@code ibv_wr_set_sge_list}: the current WR's data is the first {@code n} triples of the caller's
     * (reusable) arrays; at most {@code max_send_sge}.
     */
    public PostBatch setSgeList(LocalKey[] regions, long[] offsets, int[] lengths, int n) {
        current();
        PostBatchRefusals.checkList(rules, maxSge, "ibv_wr_set_sge_list", n,
                Math.min(regions.length, Math.min(offsets.length, lengths.length)));
        for (int i = 0; i < n; i++) {
            KeySnapshot k = DataPathAccess.stagedSnapshot(regions[i]);
            rules.checkSge(k, offsets[i], lengths[i]);
            if (k.odp) {
                rules.checkOdp(k, OdpSupport.operationOfBatch(currentOp));
            }
            if (writesLocally) {
                rules.checkLocalWrite(k, lengths[i], "an RDMA READ or atomic");
            }
            long s = i * SGE_SIZE;
            sgeList.set(ValueLayout.JAVA_LONG, s, k.address + offsets[i]);
            sgeList.set(ValueLayout.JAVA_INT, s + 8, lengths[i]);
            sgeList.set(ValueLayout.JAVA_INT, s + 12, k.lkey);
            stage(k, i);
        }
        tracker.stageRefCount(base + count - 1, n);
        dataOwed--;
        ops.ibv_wr_set_sge_list(n, sgeList);
        lists.keepAlive();
        return this;
    }

    /**
     * {@code ibv_wr_set_inline_data}: the provider copies {@code data} into the WQE now; it needs no memory region
     * and is reusable on return. At most {@code max_inline_data} bytes; the operation must have been started with
     * {@link SendFlag#INLINE_BIT} in its flags.
     */
    public PostBatch setInlineData(MemorySegment data) {
        currentInline();
        int len = rules.checkInline(data, 0);
        try { // the copy checks the segment's arena and owner thread, as the linker's acquire did
            MemorySegment.copy(data, 0, inlineArea, 0, len);
        } catch (WrongThreadException e) {
            throw Errors.wrongThread("ibv_wr_set_inline_data", "the inline data segment", e);
        }
        dataOwed--;
        ops.ibv_wr_set_inline_data(inlineArea, len); // the provider copies it into the WQE now
        lists.keepAlive();
        tracker.stageRefCount(base + count - 1, 0);
        return this;
    }

    /** {@code ibv_wr_set_inline_data_list}: the first {@code n} segments of the caller's array, copied now. */
    public PostBatch setInlineDataList(MemorySegment[] data, int n) {
        currentInline();
        PostBatchRefusals.checkList(rules, maxSge, "ibv_wr_set_inline_data_list", n, data.length);
        PostBatchRefusals.copyInlineList(rules, data, n, inlineArea, bufList);
        dataOwed--;
        ops.ibv_wr_set_inline_data_list(n, bufList);
        lists.keepAlive();
        tracker.stageRefCount(base + count - 1, 0);
        return this;
    }

    /** {@code ibv_wr_set_ud_addr}: addresses the current WR of a UD QP to {@code remoteQpn}/{@code remoteQkey}. */
    public PostBatch setUdAddr(AddressHandle ah, int remoteQpn, int remoteQkey) {
        current();
        rules.checkUd(ah);
        addressCopy.setUdAddr(ah, ops, remoteQpn, remoteQkey); // the AH's close() waits for the copy
        destSetIn[count - 1] = batch; // checkUd passed: a UD QP
        udAh[count - 1] = ah;
        tracker.stageAh(base + count - 1, ah.trackingId); // published at submit: the AH's close then refuses
        return this;
    }

    /**
     * {@code mlx5dv_wr_set_dc_addr} (or {@code _stream} when {@code streamId >= 0}) of a DC initiator
     * ({@link DcAddressing}), tracked as {@link #setUdAddr}.
     */
    void setDcAddr(QueuePair dci, MemorySegment mqp, AddressHandle ah, int remoteDctn, long remoteDcKey,
                   int streamId) {
        current();
        DcAddressing.check(qp, dci, ah);
        DcAddressing.set(mqp, ah, remoteDctn, remoteDcKey, streamId);
        destSetIn[count - 1] = batch;
        udAh[count - 1] = ah;
        tracker.stageAh(base + count - 1, ah.trackingId);
    }

    /**
     * {@code ibv_wr_set_xrc_srqn(3)}: the current WR of an XRC initiator goes to the remote XRC SRQ number
     * {@code remoteSrqn} (the peer's {@link SharedReceiveQueue#srqNum()}).
     */
    public PostBatch setXrcSrqn(int remoteSrqn) {
        current();
        if (rules.type() != QueuePairType.XRC_SEND) {
            throw rules.notXrc("ibv_wr_set_xrc_srqn");
        }
        ops.ibv_wr_set_xrc_srqn(remoteSrqn);
        destSetIn[count - 1] = batch;
        return this;
    }

    /**
     * Posts the batch ({@code ibv_wr_complete(3)}): rings the doorbell and releases the send-queue lock. The WRs'
     * key references are published first, then every key is re-checked: one closed, re-registered or whose memory's
     * arena was closed since its {@code setSge} (or a window of {@link #bindMw}/{@link #localInv(long, int,
     * MemoryWindow)} deallocated since by its region's arena tie or its PD's cascade) aborts the whole batch
     * ({@code ibv_wr_abort}) with {@link IllegalStateException} naming it.
     *
     * <p>A WR without its data setter (or with two), an XRC initiator's WR without {@link #setXrcSrqn}, or a UD QP's
     * without {@link #setUdAddr}, is refused ({@link IllegalStateException} naming it) before anything is published
     * or reaches the provider; the batch stays open.
     *
     * <p>Errors: a non-zero return (the provider rolled back every WR of the batch) → {@link VerbsException};
     * {@code ENOMEM}: the send queue overflowed.
     */
    public void submit() {
        if (!active || !queue.guard.heldBy(Thread.currentThread())) {
            throw notOpen("ibv_wr_complete");
        }
        if (dataOwed != 0) { // nothing published or rung when these throw: the batch stays open
            throw PostBatchRefusals.dataSetters(qp, null, count - 1, dataOwed);
        }
        if (destSetIn != null) { // XRC/UD: the provider would send to whatever SRQ number or address its WQE slot held
            PostBatchRefusals.checkDestinations(qp, rules, destSetIn, count, batch);
        }
        boolean single = oneKey; // the batch's own fields, read before the publish's fence: no reload after it
        KeySnapshot only = anyKey ? lastKey : null;
        queue.requests.release(base + count); // a chain being built on this queue is staged after the batch
        tracker.publish(base + count); // the WRs were staged in the tracker as they were built
        int stale = firstStaleKey(single, only);
        int closedAh = udAh == null ? -1 : PostBatchRefusals.firstClosedAh(udAh, count);
        MemoryWindow closedMw = windowOps == null ? null : windowOps.firstClosed(); // deallocated by a forced close
        active = false;
        if (stale >= 0 || closedAh >= 0 || closedMw != null) {
            throw abortStale(stale, closedAh, closedMw);
        }
        complete();
        if (windowOps != null) {
            windowOps.apply();
        }
        clearStaged();
    }

    // submit's parts out of line: its bytecode stays under C2's FreqInlineSize (325), so it inlines into a hot caller

    /** {@code ibv_wr_complete}, then the guard's exit (a close on another thread waits for it). */
    private void complete() {
        try {
            int rc = ops.ibv_wr_complete();
            if (rc != 0) { // the provider rolled the batch back: so does the catch
                throw PostBatchRefusals.completeFailed(qp, count, rc);
            }
        } catch (RuntimeException | Error e) { // nothing reached the doorbell: the references must not linger
            tracker.rollback(base);
            clearStaged(); // and the windows' pins
            throw e;
        } finally {
            queue.guard.exit(); // after the call: a close on another thread waits for it
        }
    }

    /**
     * A key, AH or window closed since it was staged: aborts the batch ({@code ibv_wr_abort}) and returns the refusal.
     */
    private IllegalStateException abortStale(int stale, int closedAh, MemoryWindow closedMw) {
        KeySnapshot key = stale < 0 ? null : oneKey ? lastKey : keys[stale]; // before clearStaged
        try {
            ops.ibv_wr_abort();
        } finally {
            queue.guard.exit();
            tracker.rollback(base);
            clearStaged();
        }
        return PostBatchRefusals.stale(qp, rules, key, stale / maxSge, closedAh, udAh, closedMw);
    }

    /** The first stale SGE slot, or -1; {@code single}: a one-key batch, its key {@code only} (null: none). */
    private int firstStaleKey(boolean single, KeySnapshot only) {
        if (single) {
            if (only == null || DataPathAccess.snapshot(only.owner) == only && only.memoryAlive()) {
                return -1;
            }
            // every SGE names it: the first is the one to name (-1: none left, as the walk)
            return PostBatchRefusals.firstKeySlot(tracker, base, count, maxSge);
        }
        KeySnapshot previous = null;
        for (int i = 0; i < count; i++) {
            for (int j = 0, n = tracker.refCountAt(base + i); j < n; j++) {
                KeySnapshot k = keys[i * maxSge + j];
                if (k != previous) {
                    if (DataPathAccess.snapshot(k.owner) != k || !k.memoryAlive()) {
                        return i * maxSge + j;
                    }
                    previous = k;
                }
            }
        }
        return -1;
    }

    /** Aborts the batch if it was not submitted ({@code ibv_wr_abort(3)}): none of its WRs is posted. */
    @Override
    public void close() {
        if (active) {
            active = false;
            queue.requests.release(base); // nothing of the batch is published: a pending chain goes back to the tail
            try {
                ops.ibv_wr_abort();
            } finally {
                queue.guard.exit();
            }
            clearStaged();
        }
    }

    /**
     * Aborts this thread's open batch while its QP is being destroyed (the provider's send-queue lock is released
     * before {@code ibv_destroy_qp}). A batch open on another thread is left to it: the QP's close waits for it.
     */
    void abandon() {
        if (active && queue.guard.heldBy(Thread.currentThread())) {
            close();
        }
    }

    /** Whether the batch is open (started, neither submitted nor closed). */
    public boolean isOpen() {
        return active;
    }

    void begin(SendOperation op, long wrId, int sendFlags) {
        if (!active) {
            throw notOpen("ibv_wr_*");
        }
        if ((enabledOps & 1 << op.ordinal()) == 0) {
            throw PostBatchRefusals.notEnabled(qp, op);
        }
        if (dataOwed != 0) { // the previous WR's data setters (1: none, -1: two)
            throw PostBatchRefusals.dataSetters(qp, op, count - 1, dataOwed);
        }
        if (count == room) {
            throw PostBatchRefusals.full(qp, room);
        }
        int i = count++;
        tracker.stageWr(base + i, wrId); // no key reference yet
        slot = tracker.slot(base + i); // the same index as stageWr's: C2 computes it once
        currentFlags = sendFlags;
        currentOp = op.ordinal();
        writesLocally = op == SendOperation.RDMA_READ || op == SendOperation.ATOMIC_CMP_AND_SWP
                || op == SendOperation.ATOMIC_FETCH_AND_ADD;
        dataOwed = op == SendOperation.LOCAL_INV || op == SendOperation.BIND_MW ? 0 : 1; // ibv_wr_post(3): NONE
        ops.wr_id(tracker.encode(base + i)); // the completion names the slot; the caller's id is returned by poll
        ops.wr_flags(sendFlags);
    }

    IllegalStateException notOpen(String verb) {
        return PostBatchRefusals.notOpen(verb, qp, queue.guard, active);
    }

    /** The tracker position of the current WR. */
    long position() {
        return base + count - 1;
    }

    private void current() {
        if (!active) {
            throw notOpen("ibv_wr_*");
        }
        if (count == 0) {
            throw PostBatchRefusals.noCurrentWr();
        }
    }

    /** Providers build the WQE from the operation's flags (rxe fails a non-INLINE WR with LOC_QP_OP_ERR). */
    private void currentInline() {
        current();
        if ((currentFlags & SendFlag.INLINE_BIT) == 0) {
            throw PostBatchRefusals.notInline();
        }
    }

    void stage(KeySnapshot key, int k) {
        tracker.stageRefAt(slot, k, key.trackingId);
        if (key != lastKey || !oneKey) { // a one-key batch stores no per-SGE key: every one is lastKey
            stageOther(key, k);
        }
        anyKey = true;
    }

    /**
     * {@link #stage} of a key other than {@link #lastKey}, or in a batch that named two already: from the second key
     * on, {@link #keys} holds every SGE's (those staged before it get {@link #lastKey} now).
     */
    private void stageOther(KeySnapshot key, int k) {
        if (oneKey && anyKey) { // the batch's second key: its earlier SGEs all named lastKey
            int current = count - 1;
            for (int i = 0; i <= current; i++) {
                for (int j = 0, n = i == current ? k : tracker.refCountAt(base + i); j < n; j++) {
                    setKey(i * maxSge + j, lastKey);
                }
            }
            oneKey = false;
        }
        if (!oneKey) {
            setKey((count - 1) * maxSge + k, key);
        }
        if (key != lastKey) {
            lastKey = key; // the batch's first key may differ from the previous batch's
        }
    }

    private void setKey(int i, KeySnapshot key) {
        if (keys[i] != key) { // no reference store (G1 barrier: a StoreLoad fence) when the slot holds it already
            keys[i] = key;
        }
    }

    private void clearStaged() {
        count = 0;
        if (windowOps != null) {
            windowOps.clear(); // after apply(), or an aborted batch: its window operations never happened
        }
    }
}
