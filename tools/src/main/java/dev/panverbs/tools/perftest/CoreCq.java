package dev.panverbs.tools.perftest;

import dev.panverbs.core.CompletionChannel;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.VerbsException;

/** A CQ polled through the verbs ({@code ibv_poll_cq}) into preallocated arrays of 1 and 16 work completions. */
final class CoreCq extends PolledCq {
    private final CompletionQueue cq;

    CoreCq(CompletionQueue cq, CompletionChannel channel) {
        super(channel);
        this.cq = cq;
    }

    @Override
    public int poll(int max) {
        try {
            return cq.poll(arrayFor(max));
        } catch (VerbsException e) {
            return -Math.max(1, e.errno());
        }
    }

    @Override
    public void requestNotify() {
        cq.reqNotify(false);
    }

    @Override
    void rearm(CompletionQueue got) {
        got.reqNotify(false);
    }
}
