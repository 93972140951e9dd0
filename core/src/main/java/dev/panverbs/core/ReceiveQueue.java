package dev.panverbs.core;

import dev.panverbs.bindings.ibverbs.ContextOps;

import java.lang.foreign.MemorySegment;

/**
 * A queue pair's receive queue: its {@link ReceiveRequests} chain for {@code ibv_post_recv(3)} and its tracker.
 * Package-private: users reach it through {@link QueuePair#receiveRequests()}. A QP on a shared receive queue has
 * none; its receive completions belong to the SRQ's queue.
 */
final class ReceiveQueue extends WorkQueue {
    final QueuePair qp;
    private final ContextOps ops;
    final ReceiveRequests requests;

    ReceiveQueue(QueuePair qp, ContextOps ops) {
        this(qp, ops, new ReceiveRequests(qp.rules, Math.max(qp.capabilities().maxRecvWr(), 1),
                qp.capabilities().maxRecvSge()));
    }

    private ReceiveQueue(QueuePair qp, ContextOps ops, ReceiveRequests requests) {
        super(requests.tracker, qp.recvCq(), qp.protectionDomain(), qp.resource, qp.toString(), qp.rules);
        this.qp = qp;
        this.ops = ops;
        this.requests = requests;
        requests.queue = this;
    }

    @Override
    ReceiveRequests requests() {
        return requests;
    }

    @Override
    String verb() {
        return "ibv_post_recv";
    }

    @Override
    void checkReady(WorkRequests<?> wrs, int from, int n) {
        if (!qp.trackedState.acceptsReceives()) {
            owner.checkOpen("ibv_post_recv"); // a closed QP is refused as closed, not by the state it had
            qp.checkReceiveState(from);
        }
    }

    @Override
    int callProvider(long handle, long chain, long badWr) {
        return ops.ibv_post_recv(handle, chain, badWr);
    }

    @Override
    RuntimeException refused(int rc, WorkRequests<?> wrs, int index) {
        return PostException.of("ibv_post_recv", qp, rc, index, null, 0);
    }
}
