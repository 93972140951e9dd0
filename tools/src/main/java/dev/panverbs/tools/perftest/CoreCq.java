package dev.panverbs.tools.perftest;

import dev.panverbs.core.CompletionChannel;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.VerbsException;
import dev.panverbs.core.WorkCompletionStatus;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.tools.perftest.VerbsEngine.Cq;

/** A CQ polled into preallocated arrays of 1 and 16 work completions. */
final class CoreCq implements Cq {
    private final CompletionQueue cq;
    private final CompletionChannel channel;
    private final WorkCompletions one = WorkCompletions.allocate(1);
    private final WorkCompletions batch = WorkCompletions.allocate(BATCH);
    private WorkCompletions last = batch;

    CoreCq(CompletionQueue cq, CompletionChannel channel) {
        this.cq = cq;
        this.channel = channel;
    }

    @Override
    public int poll(int max) {
        WorkCompletions w = max <= 1 ? one : batch;
        last = w;
        try {
            return cq.poll(w);
        } catch (VerbsException e) {
            return -Math.max(1, e.errno());
        }
    }

    @Override
    public long wrId(int i) {
        return last.get(i).wrId();
    }

    @Override
    public int status(int i) {
        return last.get(i).statusValue();
    }

    @Override
    public int vendorErr(int i) {
        return last.get(i).vendorErr();
    }

    @Override
    public String statusName(int status) {
        try {
            return WorkCompletionStatus.of(status).name();
        } catch (RuntimeException e) {
            return "status " + status;
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
