package dev.panverbs.core;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Benchmark-only bridge (perf module, class path): builds the data-path pieces a {@link QueuePair} and a
 * {@link CompletionQueue} run on every post and poll, around a fake provider, without a device. Not part of the
 * library: it lives in the perf module and works only on the class path (split package).
 */
public final class PerfAccess {
    private final SendRequests sends;
    private final WorkQueueTracker tracker;
    private final WorkCompletions completions;

    public PerfAccess(int capacity, Arena arena) {
        WorkRequestRules rules = new WorkRequestRules("QP#bench", QueuePairType.RC, true, 64, new Object());
        this.sends = new SendRequests(rules, capacity, 1, arena);
        this.tracker = new WorkQueueTracker(capacity, 1);
        this.completions = WorkCompletions.allocate(16);
    }

    public SendRequests sends() {
        return sends;
    }

    public WorkCompletions completions() {
        return completions;
    }

    /** What QueuePair.postSend does around the provider call (cut, call, relink, record, clear). */
    public int postSend(dev.panverbs.bindings.ContextOps ops, MemorySegment qp, MemorySegment badWr) {
        SendRequests wrs = sends;
        int n = wrs.count();
        int last = n - 1;
        wrs.terminate(last);
        int rc;
        try {
            rc = ops.ibv_post_send(qp, wrs.chainFrom(0), badWr);
        } finally {
            wrs.relink(last);
        }
        for (int i = 0; i < n; i++) {
            tracker.record(wrs.wrId(i), (wrs.sendFlags(i) & SendFlag.SIGNALED_BIT) != 0, wrs.sgeRegions, i,
                    wrs.numSge(i));
        }
        wrs.clear();
        return rc;
    }

    /** Appends one SGE as SendRequests.sge does after its checks. */
    public void sge(long addr, int length, int lkey, Object region) {
        sends.appendSge(addr, length, lkey, region);
    }

    /** Retires as CompletionQueue.poll does for one completion. */
    public int retire(long wrId) {
        return tracker.retire(wrId, false);
    }

    public void polled(int n) {
        completions.count(n);
    }

    public MemorySegment wcArray() {
        return completions.array();
    }
}
