package dev.panverbs.tools.perftest;

import dev.panverbs.core.CompletionChannel;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.VerbsException;

/** A CQ polled through the verbs ({@code ibv_poll_cq}) into preallocated arrays of 1 and 16 work completions. */
final class CoreCq extends PolledCq {
    private final CompletionQueue cq;
    private final CompletionChannel channel;

    CoreCq(CompletionQueue cq, CompletionChannel channel) {
        this.cq = cq;
        this.channel = channel;
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
    public boolean awaitEvent(long timeoutMillis) {
        if (channel == null) {
            return true;
        }
        CompletionQueue got = channel.getCqEvent(timeoutMillis);
        if (got == null) {
            return false;
        }
        got.reqNotify(false);
        return true;
    }
}
