package dev.panverbs.core.internal;

import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.LocalKey;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.MemorySegment;

/**
 * The bridge from post paths outside {@code dev.panverbs.core} (today {@code dev.panverbs.core.mlx5}'s Direct WQE
 * path) to the core's bookkeeping: the send queue's outstanding-WR tracker and producer guard (so DMA safety and
 * {@code MemoryRegion.close()}'s in-flight refusal hold on every path), the SGE rules and key snapshots, and the
 * native array behind {@link WorkCompletions}. Implemented by a package-private class of {@code dev.panverbs.core};
 * this package is not exported, so only the library's own packages reach it.
 */
public abstract class DirectPath {
    // abstract classes, not interfaces: each has one final implementation, so C2 binds a call through a field of
    // these types by class hierarchy analysis, with no receiver class check per call (an interface-typed receiver
    // gets one, the verifier does not check interface types)

    protected DirectPath() {}

    /** The implementation, installed when {@code dev.panverbs.core.DirectPathAccess} initialises. */
    public static DirectPath get() {
        return Holder.INSTANCE;
    }

    /** The send side of {@code qp}, for a post path that writes WQEs itself. */
    public abstract SendSide sendSide(QueuePair qp);

    /**
     * The receive side of {@code qp} (its own receive queue: refused for a QP on an SRQ), the same tracker and
     * guard protocol; {@link SendSide#sigAll()} is false.
     */
    public abstract SendSide receiveSide(QueuePair qp);

    /** The poll guard of {@code cq}, for a poll path that reads the CQ buffer itself. */
    public abstract PollSide pollSide(CompletionQueue cq);

    /**
     * A CQ's poll guard as {@code CompletionQueue.poll} uses it: {@link #enter()}, then {@link #checkOpen} (after
     * {@code close()} the CQ buffer is unmapped), read, {@link #exit()}; {@code close()} waits for a poll in progress.
     * Java-only: C leaves this ordering to the application.
     */
    public abstract static class PollSide {
        protected PollSide() {}

        public abstract boolean enter();

        public abstract void exit();

        /** Throws the CQ's closed exception naming {@code verb}. */
        public abstract void checkOpen(String verb);

        /** The refusal when {@link #enter()} failed (cold). */
        public abstract RuntimeException busy(String verb);
    }

    /**
     * Checks an SGE over {@code key} for a WR on {@code qp} (usable, same PD, inside the key, LOCAL_WRITE when the
     * NIC writes into it) and returns the key's current snapshot (opaque), which {@link #address}, {@link #lkey},
     * {@link #trackingId} and {@link #stale} read. Throws as {@code SendRequests.sge} does.
     */
    public abstract Object checkSge(QueuePair qp, LocalKey key, long offset, int length, boolean nicWrites,
                                    String use);

    /**
     * {@link #checkSge} for the next SGE of a chain whose previous SGE returned {@code previous}: the key's snapshot
     * is read once (plain, as {@code SendRequests.sge} reads it: the post re-reads it after its fence), and when it is
     * that same snapshot (immutable: open, in this PD and its memory allocated when the chain's first SGE of it was
     * checked) only the range is checked again, plus LOCAL_WRITE when the NIC writes: the key is validated once per
     * chain, as the core's {@code SendRequests.sge} does. The caller must re-check ({@link #stale}) every snapshot
     * its chain staged after the fence of its post, before the doorbell: a key closed, re-registered or whose arena
     * was closed between two SGEs of one chain is refused there.
     */
    public abstract Object checkNextSge(QueuePair qp, Object previous, LocalKey key, long offset, int length,
                                        boolean nicWrites, String use);

    public abstract long address(Object snapshot);

    public abstract int lkey(Object snapshot);

    public abstract long trackingId(Object snapshot);

    /** The snapshot's length in bytes (an SGE's range is checked against it). */
    public abstract long length(Object snapshot);

    /** Whether the snapshot's key grants LOCAL_WRITE (the NIC may write into it: RDMA READ, atomic results). */
    public abstract boolean localWrite(Object snapshot);

    /** Whether the key was closed, re-registered or its memory freed since {@code snapshot} was taken. */
    public abstract boolean stale(Object snapshot);

    /** The refusal of a post naming a stale key (cold). */
    public abstract IllegalStateException staleKey(QueuePair qp, Object snapshot, String verb);

    /** The {@code struct ibv_wc} array behind {@code completions}. */
    public abstract MemorySegment completionArray(WorkCompletions completions);

    /** Sets how many entries of {@code completions} are valid. */
    public abstract void completionCount(WorkCompletions completions, int n);

    /**
     * A work queue's call guard ({@code CallGuard}) as the direct paths check it per WR: held by the caller or not.
     * Reached from the direct queue itself, not through its {@link SendSide} (one dependent load less per WR).
     * Java-only: C leaves concurrent posting to the application.
     */
    public abstract static class Guard {
        protected Guard() {}

        /** Whether this thread holds the mark (its own open chain; a close on this thread took it away). */
        public abstract boolean heldByMe();
    }

    /**
     * One work queue's tracker and guard, as {@code WorkQueue}'s post loop uses them: {@link #tail()} → {@link #put}
     * → {@link #publish} → re-check the keys → ring; {@link #rollback} what was not rung; the poller {@link #retire}s.
     * Java-only: the bookkeeping behind the DMA-safety promise, which C leaves to the application.
     */
    public abstract static class SendSide {
        protected SendSide() {}

        /** The work queue's call guard, held by a direct chain from its first WR to its post or clear. */
        public abstract Guard guard();

        /** Marks this thread as posting (one producer; close waits for it); false if another call holds it. */
        public abstract boolean enter();

        public abstract void exit();

        /** The refusal when {@link #enter()} failed or the QP is closed (cold). */
        public abstract RuntimeException busy(String verb);

        /** Throws the QP's closed exception naming {@code verb}: after close the send ring is unmapped. */
        public abstract void checkOpen(String verb);

        /**
         * Refuses a post in a state that cannot take it (sends: RTS/SQD, receives: INIT and later), as the core's
         * own post paths do: one volatile read of the tracked state.
         */
        public abstract void checkState(String verb);

        public abstract int room();

        public abstract long tail();

        public abstract long encode(long position);

        /**
         * Moves a chain pending on this queue's core {@code WorkRequests} (built, not posted) to start at
         * {@code first}: call once before {@link #put}ting the positions below it.
         */
        public abstract void restage(long first);

        public abstract void put(long position, long wrId, long[] keyIds, int from, int count);

        /**
         * The tracker's slot records, for a path that writes its chain's records in place instead of {@link #put}ting
         * them at post: the record of position {@code p} starts at {@code ((int) p & slotMask()) * slotStride()} and
         * holds the caller's wr_id, the reference count, then up to {@link #refsPerSlot()} references (key tracking
         * ids). Only positions from {@link #tail()} on, reserved by {@link #reserve}, before {@link #publish}.
         */
        public abstract long[] slots();

        public abstract int slotMask();

        public abstract int slotStride();

        public abstract int refsPerSlot();

        /**
         * Reserves the {@code n} positions from {@code tail} for a chain written in place: a classic chain pending on
         * this queue moves after them, and one started before {@link #release} is staged after them. Producer only;
         * may be called again with a larger {@code n} (more room).
         */
        public abstract void reserve(long tail, int n);

        /** Ends {@link #reserve}: a pending classic chain moves to start at {@code first} (after what was posted). */
        public abstract void release(long first);

        /** {@link #put} of a WR with one key reference ({@code keyId}; 0: none). */
        public abstract void put(long position, long wrId, long keyId);

        /**
         * Whether this thread still holds the mark taken by {@link #enter()}: a chain built across calls holds it
         * from its first WR to its post, and a {@code close()} of the QP on the same thread takes it away (the send
         * ring is unmapped then, so nothing may be written into it).
         */
        public abstract boolean heldByMe();

        public abstract void publish(long newTail);

        public abstract void rollback(long position);

        public abstract long retire(long providerWrId);

        /**
         * {@link #retire} for a queue completed one WR at a time, in order (a receive queue): refuses
         * ({@link IllegalStateException} starting with {@code verb}, which names the queue; nothing retired) a
         * {@code wr_id} that is not the oldest outstanding WR's.
         */
        public abstract long retireNext(long providerWrId, String verb);

        public abstract int outstanding();

        /** Whether the WR at {@code position} ({@link #tail()} when it was put) was published and is not retired. */
        public abstract boolean isOutstanding(long position);

        /** {@code ibv_qp_init_attr.sq_sig_all}. */
        public abstract boolean sigAll();
    }

    /** Lazy holder: loading the implementation class installs it. Java-only. */
    public static final class Holder {
        private static DirectPath installed;
        static final DirectPath INSTANCE = load();

        private Holder() {}

        /** Called once from the implementation's static initialiser. */
        public static void install(DirectPath implementation) {
            installed = implementation;
        }

        private static DirectPath load() {
            try {
                Class.forName("dev.panverbs.core.DirectPathAccess", true, DirectPath.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException("dev.panverbs.core.DirectPathAccess is missing", e);
            }
            return installed;
        }
    }
}
