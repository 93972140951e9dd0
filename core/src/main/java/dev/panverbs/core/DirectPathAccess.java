package dev.panverbs.core;

import dev.panverbs.core.internal.DirectPath;
import java.lang.foreign.MemorySegment;

/** Implements {@link DirectPath} over the package-private tracker, guard, rules and snapshots. */
final class DirectPathAccess extends DirectPath {

    static {
        DirectPath.Holder.install(new DirectPathAccess());
    }

    private DirectPathAccess() {}

    @Override
    public SendSide sendSide(QueuePair qp) {
        return new Side(qp.sendQueue, qp.sendQueue.sigAll, qp, true);
    }

    @Override
    public SendSide receiveSide(QueuePair qp) {
        if (qp.receiveQueue == null) {
            throw new UnsupportedOperationException(qp + (qp.type() == QueuePairType.XRC_SEND
                    ? " is an XRC initiator: it has no receive queue (its peers' XRC SRQs receive)"
                    : " takes its receives from a shared receive queue") + "; direct receive posting writes the QP's "
                    + "own receive queue");
        }
        return new Side(qp.receiveQueue, false, qp, false);
    }

    @Override
    public PollSide pollSide(CompletionQueue cq) {
        return new Poll(cq);
    }

    private static final class Poll extends PollSide {
        private final CompletionQueue cq;

        Poll(CompletionQueue cq) {
            this.cq = cq;
        }

        @Override
        public boolean enter() {
            return cq.pollGuard.enter(Thread.currentThread());
        }

        @Override
        public void exit() {
            cq.pollGuard.exit();
        }

        @Override
        public void checkOpen(String verb) {
            cq.resource.checkOpen(verb);
        }

        @Override
        public RuntimeException busy(String verb) {
            return cq.pollRefused(cq.pollGuard, verb);
        }
    }

    @Override
    public Object checkSge(QueuePair qp, LocalKey key, long offset, int length, boolean nicWrites, String use) {
        KeySnapshot k = DataPathAccess.snapshot(key);
        qp.rules.checkSge(k, offset, length);
        if (nicWrites) {
            qp.rules.checkLocalWrite(k, length, use);
        }
        return k;
    }

    @Override
    public Object checkNextSge(QueuePair qp, Object previous, LocalKey key, long offset, int length,
                               boolean nicWrites, String use) {
        KeySnapshot k = DataPathAccess.stagedSnapshot(key);
        if (k == previous) { // the chain's key: checked in full at its first SGE; the post re-checks it after its fence
            if (!WorkRequestRules.inBounds(offset, length, k.length)) { // static: no load of qp.rules when it passes
                qp.rules.checkSgeRange(k, offset, length); // throws
            }
        } else {
            qp.rules.checkSge(k, offset, length);
        }
        if (nicWrites) {
            qp.rules.checkLocalWrite(k, length, use);
        }
        return k;
    }

    @Override
    public long address(Object snapshot) {
        return ((KeySnapshot) snapshot).address;
    }

    @Override
    public int lkey(Object snapshot) {
        return ((KeySnapshot) snapshot).lkey;
    }

    @Override
    public long trackingId(Object snapshot) {
        return ((KeySnapshot) snapshot).trackingId;
    }

    @Override
    public long length(Object snapshot) {
        return ((KeySnapshot) snapshot).length;
    }

    @Override
    public boolean localWrite(Object snapshot) {
        return ((KeySnapshot) snapshot).localWrite();
    }

    @Override
    public boolean stale(Object snapshot) {
        KeySnapshot k = (KeySnapshot) snapshot;
        return DataPathAccess.snapshot(k.owner) != k || !k.memoryAlive();
    }

    @Override
    public IllegalStateException staleKey(QueuePair qp, Object snapshot, String verb) {
        return qp.rules.staleKey(verb, (KeySnapshot) snapshot, -1);
    }

    @Override
    public MemorySegment completionArray(WorkCompletions completions) {
        return completions.array();
    }

    @Override
    public void completionCount(WorkCompletions completions, int n) {
        completions.count(n);
    }

    private static final class Side extends SendSide {
        private final WorkQueue q;
        /** {@code q.guard}: one load less per {@link #heldByMe()} (a check of every direct WR). */
        private final CallGuard guard;
        private final boolean sigAll;
        private final QueuePair qp;
        private final boolean send;

        Side(WorkQueue q, boolean sigAll, QueuePair qp, boolean send) {
            this.q = q;
            this.guard = q.guard;
            this.sigAll = sigAll;
            this.qp = qp;
            this.send = send;
        }

        @Override
        public boolean sigAll() {
            return sigAll;
        }

        @Override
        public void checkState(String verb) {
            if (send) {
                qp.checkSendState(verb, 0, -1);
            } else {
                qp.checkReceiveState(0);
            }
        }

        @Override
        public boolean enter() {
            return q.guard.enter(Thread.currentThread());
        }

        @Override
        public void exit() {
            q.guard.exit();
        }

        @Override
        public RuntimeException busy(String verb) {
            if (q.owner.isClosed()) {
                return q.owner.closedException(verb);
            }
            return q.postRefused(verb);
        }

        @Override
        public void checkOpen(String verb) {
            q.owner.checkOpen(verb);
        }

        @Override
        public int room() {
            return q.tracker.room();
        }

        @Override
        public long tail() {
            return q.tracker.tail();
        }

        @Override
        public long encode(long position) {
            return q.tracker.encode(position);
        }

        @Override
        public void restage(long first) {
            q.requests().restage(first); // a classic chain pending on this queue moves after the direct WRs
        }

        @Override
        public void put(long position, long wrId, long[] keyIds, int from, int count) {
            q.tracker.put(position, wrId, keyIds, from, count);
        }

        @Override
        public long[] slots() {
            return q.tracker.slots();
        }

        @Override
        public int slotMask() {
            return q.tracker.slotMask();
        }

        @Override
        public int slotStride() {
            return q.tracker.slotStride();
        }

        @Override
        public int refsPerSlot() {
            return q.tracker.refsPerSlot();
        }

        @Override
        public void reserve(long tail, int n) {
            q.requests().reserve(tail, n);
        }

        @Override
        public void release(long first) {
            q.requests().release(first);
        }

        @Override
        public void put(long position, long wrId, long keyId) {
            q.tracker.put(position, wrId, keyId);
        }

        @Override
        public boolean heldByMe() {
            return guard.heldBy(Thread.currentThread());
        }

        @Override
        public DirectPath.Guard guard() {
            return guard;
        }

        @Override
        public void publish(long newTail) {
            q.tracker.publish(newTail);
        }

        @Override
        public void rollback(long position) {
            q.tracker.rollback(position);
        }

        @Override
        public long retire(long providerWrId) {
            return q.tracker.retire(providerWrId);
        }

        @Override
        public long retireNext(long providerWrId, String verb) {
            return q.tracker.retireNext(providerWrId, verb);
        }

        @Override
        public int outstanding() {
            return q.tracker.outstanding();
        }

        @Override
        public boolean isOutstanding(long position) {
            return q.tracker.isOutstanding(position);
        }
    }
}
