package dev.panverbs.core;

import dev.panverbs.bindings.ibverbs.ContextOps;
import dev.panverbs.bindings.ibverbs.QpExOps;

import java.lang.foreign.MemorySegment;

/**
 * A queue pair's send queue: its {@link SendRequests} chain for {@code ibv_post_send(3)}, its {@link PostBatch} for
 * the {@code ibv_wr_*} API ({@code ibv_qp_ex}), and the tracker both record into. Package-private: users reach it
 * through {@link QueuePair#sendRequests()} and {@link QueuePair#startSend()}.
 */
final class SendQueue extends WorkQueue {
    final QueuePair qp;
    private final ContextOps ops;
    final SendRequests requests;
    /** Null when the QP was built without send operations (no {@code ibv_qp_ex}). */
    final PostBatch batch;
    final boolean sigAll;

    SendQueue(QueuePair qp, ContextOps ops, QpExOps qpEx, long sendOps, boolean sigAll) {
        this(qp, ops, qpEx, sendOps, sigAll, new SendRequests(qp.rules, Math.max(qp.capabilities().maxSendWr(), 1),
                qp.capabilities().maxSendSge()));
    }

    private SendQueue(QueuePair qp, ContextOps ops, QpExOps qpEx, long sendOps, boolean sigAll,
                      SendRequests requests) {
        super(requests.tracker, qp.sendCq(), qp.protectionDomain(), qp.resource, qp.toString(), qp.rules);
        this.qp = qp;
        this.ops = ops;
        this.sigAll = sigAll;
        this.requests = requests;
        requests.queue = this;
        this.batch = qpEx == null ? null : new PostBatch(this, qpEx, sendOps);
        this.addressHandles = qp.rules.type() == QueuePairType.UD;
    }

    @Override
    SendRequests requests() {
        return requests;
    }

    @Override
    String verb() {
        return "ibv_post_send";
    }

    @Override
    void checkReady(WorkRequests<?> chain, int from, int n) {
        SendRequests wrs = (SendRequests) chain;
        if (!qp.trackedState.acceptsSends()) { // the opcode (a native read) only for the refusal's message
            owner.checkOpen("ibv_post_send"); // a closed QP is refused as closed, not by the state it had
            qp.checkSendState("ibv_post_send", from, wrs.opcodeValue(from));
        }
        if (rules.addressedSends) { // UD and XRC initiators: every WR names its destination
            for (int i = from; i < from + n; i++) {
                if (!wrs.udAddressed[i]) {
                    throw rules.udUnaddressed(i);
                }
            }
        }
    }

    @Override
    int callProvider(long handle, long chain, long badWr) {
        return ops.ibv_post_send(handle, chain, badWr);
    }

    @Override
    RuntimeException refused(int rc, WorkRequests<?> wrs, int index) {
        return PostException.of("ibv_post_send", qp, rc, index, WorkRequestOpcode.class,
                ((SendRequests) wrs).opcodeValue(index));
    }
}
