package dev.panverbs.core.mlx5;

import static dev.panverbs.core.mlx5.WqeWriter.WR_ATOMIC_CMP_AND_SWP;
import static dev.panverbs.core.mlx5.WqeWriter.WR_ATOMIC_FETCH_AND_ADD;
import static dev.panverbs.core.mlx5.WqeWriter.WR_RDMA_READ;

import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.internal.DirectPath;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@link DirectSendQueue}'s rules that are not per-WR state: what a QP must be to open the path, the argument checks
 * of a WR (flags, atomic alignment, SGE range, inline data) and the refusals' messages. Static, so the hot checks
 * inline into the WR call as they did inside the queue; the refusals are cold.
 */
final class DirectSendChecks {
    static final String VERB = "mlx5 Direct WQE post";
    /**
     * One lock per BlueFlame register: QPs may share a register (libmlx5's {@code bf->need_lock}), and two BlueFlame
     * copies into one register must not interleave (an 8-byte doorbell is a single store and takes no lock).
     */
    private static final ConcurrentHashMap<Long, Object> BF_LOCKS = new ConcurrentHashMap<>();

    private DirectSendChecks() {}

    /** The lock every writer of the BlueFlame register at {@code address} shares. */
    static Object bfLock(long address) {
        return BF_LOCKS.computeIfAbsent(address, a -> new Object());
    }

    /** What the queue itself must be: an RC QP with 64-byte WQEBBs whose send CQ is {@code cq}'s. */
    static void checkQueue(QueuePair qp, Mlx5QueuePairView view, DirectCompletionQueue cq, QueuePairType type) {
        if (qp.type() != type) {
            throw new UnsupportedOperationException(type == QueuePairType.RC
                    ? "Direct WQE posting writes RC WQEs; " + qp + " is " + qp.type()
                    + (qp.type() == QueuePairType.DC_INITIATOR ? " (a DCI posts directly through DirectDcQueue)" : "")
                    : "DirectDcQueue writes DC initiator WQEs; " + qp + " is " + qp.type());
        }
        if (view.sqStride() != WqeWriter.WQEBB) {
            throw new IllegalArgumentException("send queue stride " + view.sqStride() + ", expected 64");
        }
        if (cq.completionQueue() != qp.sendCq()) {
            throw new IllegalArgumentException(cq.completionQueue() + " is not the send CQ of " + qp);
        }
    }

    /** What the QP's send side must be: no {@code sq_sig_all}, nothing outstanding, room for max_send_sge keys. */
    static void checkSide(QueuePair qp, DirectPath.SendSide side, int maxSge) {
        if (side.sigAll()) {
            // mlx5_ib enables requester scatter-to-CQE for sq_sig_all RC QPs: RDMA READ and atomic results of up to
            // 32 bytes then arrive inside the CQE and the provider copies them out at poll time, which this path
            // does not do
            throw new UnsupportedOperationException("Direct WQE posting on " + qp + ": the QP was created with "
                    + "sq_sig_all, for which the kernel enables requester scatter-to-CQE (small READ/atomic results "
                    + "land in the CQE); create it without sqSigAll and signal WRs with SendFlag.SIGNALED_BIT");
        }
        if (side.outstanding() != 0) {
            throw new IllegalStateException(qp + " has " + side.outstanding() + " outstanding send work requests; "
                    + "open the direct path before posting through the core, or after their completions were polled");
        }
        if (side.refsPerSlot() < maxSge) {
            throw new IllegalStateException(qp + ": its send tracker holds " + side.refsPerSlot() + " references per "
                    + "WR, fewer than max_send_sge=" + maxSge);
        }
    }

    /**
     * Routes the send completions of {@code view}'s QP polled through {@code cq} to {@code side}'s tracker: a CQE
     * names WQE {@code idx}, whose provider wr_id is {@code sq[idx]}; {@code never} (what a slot no WR was written at
     * holds) is refused.
     */
    static void routeCompletions(QueuePair qp, Mlx5QueuePairView view, DirectCompletionQueue cq,
                                 DirectPath.SendSide side, long[] sq, long never) {
        String pollVerb = "mlx5 direct CQE poll (send queue of " + qp + ")";
        cq.poller.target(view.qpNum()).send(sq, side.slots(), side.slotMask(), side.slotStride(),
                (idx, providerWrId) -> {
                    if (providerWrId == never) {
                        throw new IllegalStateException(pollVerb + ": a completion names send WQE " + idx + ", where "
                                + "no WR was written: the device misbehaves, or work was posted to this QP outside "
                                + "this path. Nothing was retired; its completions can no longer be attributed");
                    }
                    return side.retire(providerWrId);
                });
    }

    /** An atomic's remote address, refused (before the WR starts) unless 8-byte aligned, as the core's paths do. */
    static long aligned(long remoteAddr) {
        if ((remoteAddr & 7) != 0) {
            throw new IllegalArgumentException(VERB + ": atomic remote address 0x" + Long.toHexString(remoteAddr)
                    + " is not 8-byte aligned (IB atomics operate on aligned 64-bit words; the responder would reject "
                    + "the WR and the QP would go to ERR)");
        }
        return remoteAddr;
    }

    /** {@code [offset, offset + length)} inside {@code size} bytes (overflow-safe; the core's WorkRequestRules). */
    static boolean inBounds(long offset, int length, long size) {
        return (offset | length) >= 0 && offset <= size - length; // the OR is negative iff either is
    }

    static void checkFlags(int sendFlags) {
        if ((sendFlags & ~(SendFlag.SIGNALED_BIT | SendFlag.SOLICITED_BIT | SendFlag.FENCE_BIT)) != 0) {
            throw new IllegalArgumentException(VERB + ": send flags 0x" + Integer.toHexString(sendFlags)
                    + " (SIGNALED, SOLICITED and FENCE apply; inline data is added with inline())");
        }
    }

    /** The builder's current WR {@code i} can take one more piece (SGE or inline data). */
    static void checkExtensible(int i, boolean open, int pieces, int maxSge) {
        if (!open) {
            throw new IllegalStateException(VERB + ": WR " + i + " was written whole by the one-call form; start it "
                    + "with the builder form (rdmaWrite(...).sge(...)) to add more SGEs or inline data");
        }
        if (pieces == maxSge) {
            throw new IllegalArgumentException(VERB + ": WR " + i + " already has max_send_sge=" + maxSge + " SGEs");
        }
    }

    /** An SGE for WR {@code i} of opcode {@code op} with {@code pieces} SGEs so far; returns whether it is atomic. */
    static boolean checkSgeShape(int i, int op, boolean inline, int pieces, int length) {
        if (inline) {
            throw new IllegalArgumentException(VERB + ": WR " + i + " carries inline data; it cannot also name SGEs");
        }
        boolean atomic = op == WR_ATOMIC_CMP_AND_SWP || op == WR_ATOMIC_FETCH_AND_ADD;
        if (atomic && (length != 8 || pieces != 0)) {
            throw new IllegalArgumentException(VERB + ": an atomic WR takes one 8-byte SGE, not " + length + " bytes");
        }
        return atomic;
    }

    /**
     * Inline {@code data} for WR {@code i} of opcode {@code op} on {@code qp}, whose {@code pieces} so far are SGEs
     * unless {@code inline}: returns the WR's inline total with it, refused above {@code maxInline}.
     */
    static long checkInline(QueuePair qp, int i, int op, boolean inline, int pieces, int inlineBytes,
                            MemorySegment data, int maxInline) {
        if (op == WR_RDMA_READ || op == WR_ATOMIC_CMP_AND_SWP || op == WR_ATOMIC_FETCH_AND_ADD) {
            throw new IllegalArgumentException(VERB + ": inline data applies to RDMA WRITE and SEND, not opcode " + op);
        }
        if (pieces > 0 && !inline) {
            throw new IllegalArgumentException(VERB + ": WR " + i + " names SGEs; it cannot also carry inline data");
        }
        if (!data.isNative()) {
            throw new IllegalArgumentException(VERB + ": inline data must be a native segment");
        }
        if (!data.scope().isAlive()) {
            throw new IllegalStateException(VERB + ": the inline data of WR " + i + " on " + qp + " is a segment "
                    + "whose arena is closed (its memory is freed); copy the data before closing its arena");
        }
        long total = inlineBytes + data.byteSize();
        if (total > maxInline) {
            throw new IllegalArgumentException(VERB + ": " + total + " inline bytes on WR " + i + " exceed "
                    + "max_inline_data=" + maxInline + " of " + qp);
        }
        return total;
    }

    static IllegalStateException noCurrent(QueuePair qp, String what) {
        return new IllegalStateException(VERB + ": " + what + " before any WR was started on " + qp);
    }

    static IllegalStateException otherThread(QueuePair qp, int pending) {
        return new IllegalStateException(VERB + ": a chain of " + pending + " WRs on " + qp + " is open on another "
                + "thread, which holds the QP's producer guard until its post() or clear(); a DirectSendQueue has "
                + "one producer thread: build, post and clear each chain on one thread. Nothing was changed");
    }

    static IllegalStateException staleRecord(QueuePair qp) {
        return new IllegalStateException(VERB + ": the doorbell record of " + qp + " no longer holds this queue's "
                + "producer counter: the QP went through RESET (libmlx5 restarts its counters), was posted through "
                + "libmlx5 or through another DirectSendQueue; nothing was written; open a new DirectSendQueue");
    }

    /** The offset of a burst's last SGE, {@code offset + (n - 1) * stride}; refuses {@code n < 1} and overflow. */
    static long burstEnd(int n, long offset, long stride) {
        if (n < 1) {
            throw new IllegalArgumentException(VERB + ": a burst of " + n + " WRs (at least 1)");
        }
        try {
            return Math.addExact(offset, Math.multiplyExact(n - 1L, stride));
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(VERB + ": a burst of " + n + " WRs from offset " + offset
                    + " with a local stride of " + stride + " overflows 64 bits");
        }
    }

    static IllegalStateException burstFull(QueuePair qp, int pending, int n, int capacity) {
        return new IllegalStateException(VERB + ": the send queue of " + qp + " has no room for a burst of " + n
                + " WRs (" + pending + " WRs pending, max_send_wr=" + capacity + "); nothing of the burst was "
                + "written; post() the chain and poll completions first");
    }

    static IllegalStateException full(QueuePair qp, int pending, int capacity) {
        return new IllegalStateException(VERB + ": the send queue of " + qp + " is full (" + pending + " WRs pending, "
                + "max_send_wr=" + capacity + "); post() them and poll completions first");
    }
}
