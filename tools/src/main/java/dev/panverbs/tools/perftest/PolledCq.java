package dev.panverbs.tools.perftest;

import dev.panverbs.core.CompletionChannel;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.WorkCompletionStatus;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.tools.perftest.VerbsEngine.Cq;

/**
 * What the two CQ paths of the perftest engine ({@link CoreCq}, {@link DirectWqe.DirectCq}) share: the preallocated
 * arrays of 1 and {@link #BATCH} work completions ({@code struct ibv_wc}) a poll fills, the reads of the last
 * poll's entries and the wait for a completion event.
 */
abstract class PolledCq implements Cq {
    private final WorkCompletions one = WorkCompletions.allocate(1);
    private final WorkCompletions batch = WorkCompletions.allocate(BATCH);
    private WorkCompletions last = batch;
    /** The channel of the send and receive CQs (-e), or null. */
    private final CompletionChannel channel;

    PolledCq(CompletionChannel channel) {
        this.channel = channel;
    }

    /** The array a poll of at most {@code max} entries fills; the accessors read it until the next poll. */
    final WorkCompletions arrayFor(int max) {
        WorkCompletions w = max <= 1 ? one : batch;
        last = w;
        return w;
    }

    @Override
    public final long wrId(int i) {
        return last.get(i).wrId();
    }

    @Override
    public final int status(int i) {
        return last.get(i).statusValue();
    }

    @Override
    public final int vendorErr(int i) {
        return last.get(i).vendorErr();
    }

    @Override
    public final String statusName(int status) {
        try {
            return WorkCompletionStatus.of(status).name();
        } catch (RuntimeException e) {
            return "status " + status;
        }
    }

    @Override
    public final boolean awaitEvent(long timeoutMillis) {
        if (channel == null) {
            return true;
        }
        CompletionQueue got = channel.getCqEvent(timeoutMillis);
        if (got == null) {
            return false;
        }
        rearm(got);
        return true;
    }

    /** Acknowledges the event that {@code got} (a CQ of the shared channel) raised and re-arms. */
    abstract void rearm(CompletionQueue got);
}
