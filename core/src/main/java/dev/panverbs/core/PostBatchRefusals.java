package dev.panverbs.core;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.verbs.ibv_data_buf;
import dev.panverbs.core.internal.Errors;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The cold refusals of {@link PostBatch}, its destination and address-handle checks at submit, what its stale-key
 * refusal looks up, and its inline list setter's copy.
 */
final class PostBatchRefusals {
    private PostBatchRefusals() {
    }

    /**
     * The first of the batch's {@code n} WRs whose address handle is closing or closed, or -1: read by submit after
     * its fence (the post side of {@link AddressHandle#close()}'s handshake).
     */
    static int firstClosedAh(AddressHandle[] ahs, int n) {
        AddressHandle previous = null;
        for (int i = 0; i < n; i++) {
            AddressHandle ah = ahs[i];
            if (ah != previous) {
                if (ah.isClosing()) {
                    return i;
                }
                previous = ah;
            }
        }
        return -1;
    }

    static IllegalStateException ahClosed(QueuePair qp, int index, AddressHandle ah) {
        return new IllegalStateException("ibv_wr_complete: work request " + index + " of the batch of " + qp
                + " names " + ah + ", closed since " + (qp.type == QueuePairType.DC_INITIATOR
                ? "DcInitiator.setDcAddr(batch, ah, ...)" : "setUdAddr(ah, ...)") + ": the batch was aborted (ibv_wr_abort), nothing "
                + "was posted; address the WRs with an open AH");
    }

    static IllegalStateException startRefused(QueuePair qp, CallGuard guard) {
        Thread holder = guard.holder();
        if (holder == Thread.currentThread()) {
            return new IllegalStateException("ibv_wr_start: a batch is already open on " + qp
                    + " in this thread (submit or close it first; a second ibv_wr_start would spin forever on the "
                    + "send-queue lock)");
        }
        if (qp.resource.isClosed()) {
            return qp.resource.closedException("ibv_wr_start");
        }
        return new IllegalStateException("ibv_wr_start: " + qp + " is being posted to by "
                + WorkQueue.holderName(holder) + " at the same time; the send side has one producer "
                + "at a time");
    }

    /** A list setter's {@code n}: at most {@code maxSge}, and inside its arrays (the shortest holds {@code length}). */
    /** An atomic's remote address must be 8-byte aligned. */
    static void checkAligned(WorkRequestRules rules, long remoteAddr) {
        if ((remoteAddr & 7) != 0) {
            throw rules.unalignedAtomic(remoteAddr);
        }
    }

    static void checkList(WorkRequestRules rules, int maxSge, String verb, int n, int length) {
        if (n < 0 || n > maxSge) {
            throw rules.tooManySges(maxSge);
        }
        if (length < n) {
            throw shortList(verb, n, length);
        }
    }

    /**
     * {@link PostBatch#setInlineDataList}'s copy of the first {@code n} segments of {@code data} into {@code area},
     * each checked against {@code max_inline_data}, and their {@code struct ibv_data_buf[]} in {@code bufList}.
     */
    static void copyInlineList(WorkRequestRules rules, MemorySegment[] data, int n, MemorySegment area,
                               MemorySegment bufList) {
        long bufSize = ibv_data_buf.layout().byteSize();
        int used = 0;
        for (int i = 0; i < n; i++) {
            int len = rules.checkInline(data[i], used);
            if (len > 0) { // the provider reads the copy: no arena of the caller's can free it during the call
                try {
                    MemorySegment.copy(data[i], 0, area, used, len);
                } catch (WrongThreadException e) {
                    throw Errors.wrongThread("ibv_wr_set_inline_data_list", "inline data segment " + i, e);
                }
            }
            bufList.set(ValueLayout.JAVA_LONG, i * bufSize, area.address() + used);
            bufList.set(ValueLayout.JAVA_LONG, i * bufSize + 8, len);
            used += len;
        }
    }

    /** A list setter asked for the first {@code n} entries of arrays holding only {@code length}. Cold. */
    static IllegalArgumentException shortList(String verb, int n, int length) {
        return new IllegalArgumentException(verb + ": n = " + n + " entries asked for, but the arrays hold only "
                + length + ". Nothing was set");
    }

    /** Every WR of an XRC initiator's or UD QP's batch names its destination (set in batch number {@code batch}). */
    static void checkDestinations(QueuePair qp, WorkRequestRules rules, int[] destSetIn, int count, int batch) {
        for (int i = 0; i < count; i++) {
            if (destSetIn[i] != batch) {
                throw noDestination(qp, rules, i);
            }
        }
    }

    /**
     * Work request {@code index} owes {@code owed} data setters: 1, it got none; -1, two. libmlx5 finishes a WQE in
     * its data setter only: without one the WR is overwritten by the next or never rung, with two its slot is finished
     * twice. Nothing was published. {@code next}: the operation refused (null: the submit).
     */
    static IllegalStateException dataSetters(QueuePair qp, SendOperation next, int index, int owed) {
        String verb = next == null ? "ibv_wr_complete" : "ibv_wr_* (" + next + ")";
        return new IllegalStateException(verb + ": work request " + index + " of the batch of " + qp
                + (owed > 0 ? " was given no data" : " was given data twice (or an operation that carries none was)")
                + ": each operation but localInv and bindMw takes exactly one of setSge, setSgeList, setInlineData, "
                + "setInlineDataList (ibv_wr_post(3)'s DATA setters; a zero-length message is setSge(key, 0, 0)). "
                + "Nothing was posted; " + (owed > 0 ? "the batch stays open (close() aborts it)"
                        : "close() aborts the batch"));
    }

    static IllegalStateException noDestination(QueuePair qp, WorkRequestRules rules, int index) {
        if (rules.type() == QueuePairType.DC_INITIATOR) {
            return new IllegalStateException("ibv_wr_complete: work request " + index + " of the batch of " + qp
                    + " names no DC target: a DCI work request needs DcInitiator.setDcAddr(batch, ah, remoteDctn, "
                    + "remoteDcKey) (mlx5dv_wr_set_dc_addr) after its operation. Nothing was posted; the batch stays "
                    + "open (close() aborts it)");
        }
        if (rules.type() == QueuePairType.UD) {
            return new IllegalStateException("ibv_wr_complete: work request " + index + " of the batch of " + qp
                    + " names no destination: a UD send needs setUdAddr(ah, remoteQpn, remoteQkey) "
                    + "(ibv_wr_set_ud_addr) after its operation. Nothing was posted; the batch stays open (close() "
                    + "aborts it)");
        }
        return new IllegalStateException("ibv_wr_complete: work request " + index + " of the batch of " + qp
                + " names no remote XRC SRQ: an XRC send needs setXrcSrqn(remoteSrqn) (ibv_wr_set_xrc_srqn) after "
                + "its operation. Nothing was posted; the batch stays open (close() aborts it)");
    }

    static UnsupportedVerbException notEnabled(QueuePair qp, SendOperation op) {
        return new UnsupportedVerbException("ibv_wr_" + op.name().toLowerCase() + "(" + qp + ")",
                "the QP was created without " + op + " in sendOps (send_ops_flags); add it to "
                        + "QueuePairBuilder.sendOps", op + " through the ibv_wr_* API");
    }

    static IllegalStateException notOpen(String verb, QueuePair qp, CallGuard guard, boolean active) {
        if (qp.resource.isClosed()) {
            return qp.resource.closedException(verb + " (its PostBatch was aborted)");
        }
        Thread holder = guard.holder();
        if (active && holder != Thread.currentThread()) {
            return new IllegalStateException(verb + ": the batch of " + qp + " was started by "
                    + WorkQueue.holderName(holder) + "; the provider holds the send-queue lock for "
                    + "that thread: build and submit a batch on the thread that started it");
        }
        return new IllegalStateException(verb + ": the batch of " + qp + " is not open: startSend() first");
    }

    static IllegalStateException full(QueuePair qp, int room) {
        return new IllegalStateException("ibv_wr_*: the send queue of " + qp + " had room for " + room
                + " more WR(s) at ibv_wr_start, and this batch holds them: submit it and poll completions before"
                + " adding more");
    }

    static VerbsException completeFailed(QueuePair qp, int count, int rc) {
        return Errors.failure(Errors.call("ibv_wr_complete", "qp", qp, "wrs", count), rc,
                rc == Errno.EINVAL ? "the batch was rolled back; the QP may not be in RTS"
                        : "the batch was rolled back");
    }

    static IllegalStateException noCurrentWr() {
        return new IllegalStateException("ibv_wr_set_*: no current work request: call an operation (send, "
                + "rdmaWrite, ...) before its data (setSge, setInlineData)");
    }

    static IllegalStateException notInline() {
        return new IllegalStateException("inline data needs SendFlag.INLINE_BIT in the operation's flags "
                + "(ibv_wr_set_inline_data(3): the WR must be posted with IBV_SEND_INLINE)");
    }

    static IllegalArgumentException typeOneWindow(MemoryWindow mw) {
        return new IllegalArgumentException("ibv_wr_bind_mw: " + mw + " is a type 1 window: bind it with "
                + "MemoryWindow.bind (ibv_bind_mw)");
    }

    /** The enabled operations of {@code sendOps} ({@code IBV_QP_EX_WITH_*}) as bit {@code ordinal()} each. */
    static int ordinalBits(long sendOps) {
        int enabled = 0;
        for (SendOperation op : SendOperation.values()) {
            if ((sendOps & op.bit()) != 0) {
                enabled |= 1 << op.ordinal();
            }
        }
        return enabled;
    }

    /**
     * The SGE slot of the first key reference of the batch's {@code count} WRs from tracker position {@code base}, or
     * -1 (a stale one-key batch, whose per-SGE keys are not written: every SGE names the key).
     */
    static int firstKeySlot(WorkQueueTracker tracker, long base, int count, int maxSge) {
        for (int i = 0; i < count; i++) {
            if (tracker.refCountAt(base + i) > 0) {
                return i * maxSge;
            }
        }
        return -1;
    }

    /** The refusal of an aborted batch: WR {@code wr}'s stale {@code key}, else AH {@code closedAh}, else the MW. */
    static IllegalStateException stale(QueuePair qp, WorkRequestRules rules, KeySnapshot key, int wr, int closedAh,
                                       AddressHandle[] udAh, MemoryWindow closedMw) {
        return key != null ? rules.staleKey("ibv_wr_complete", key, wr)
                : closedAh >= 0 ? ahClosed(qp, closedAh, udAh[closedAh])
                : closedMw.resource.closedException("ibv_wr_complete (its batch names it; aborted)");
    }
}
