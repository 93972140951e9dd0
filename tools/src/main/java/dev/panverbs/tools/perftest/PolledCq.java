package dev.panverbs.tools.perftest;

import dev.panverbs.core.WorkCompletionStatus;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.tools.perftest.VerbsEngine.Cq;

/**
 * What the two CQ paths of the perftest engine ({@link CoreCq}, {@link DirectWqe.DirectCq}) share: the preallocated
 * arrays of 1 and {@link #BATCH} work completions ({@code struct ibv_wc}) a poll fills, and the reads of the last
 * poll's entries.
 */
abstract class PolledCq implements Cq {
    private final WorkCompletions one = WorkCompletions.allocate(1);
    private final WorkCompletions batch = WorkCompletions.allocate(BATCH);
    private WorkCompletions last = batch;

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
}
