package dev.panverbs.core;

/**
 * The work queues that complete to one CQ, by route token: how a completion finds the queue that owns it. Each
 * work queue attached to the CQ gets a token (1..32767) that its tracker puts in the top 16 bits of every
 * {@code wr_id} it hands the provider ({@link WorkQueueTracker#encode}), so a completion of a QP whose send and
 * receive queues share this CQ and one {@code wr_id} space, an error completion (whose opcode is undefined) and,
 * a completion of a shared receive queue (through {@link SrqRoutes}) all reach their own queue without guessing.
 *
 * <p>Copy-on-write: attaching or detaching (control path) copies the array; the poll path reads one volatile
 * reference per poll and indexes it, with no hashing and no allocation. Tokens of detached queues are reused last
 * (a rotating cursor), so a stale completion of a destroyed QP that a provider left in the CQ does not reach the
 * queue that took its token at once; the tracker ignores positions it never handed out anyway.
 */
final class CompletionRoutes {
    /**
     * The most route tokens a CQ hands out: the lower half of the 16-bit token space; the upper half (the sign bit of
     * the {@code wr_id}) belongs to shared receive queues ({@link SrqRoutes}).
     */
    static final int MAX_CQ_TOKEN = 0x7FFF;
    private static final WorkQueue[] EMPTY = new WorkQueue[0];

    /** {@code queues[token - 1]}; null slots are free tokens. */
    private volatile WorkQueue[] queues = EMPTY;
    private int cursor;

    /** The queue of {@code token}, or null. Poll path: {@code table} is the caller's one read of {@link #table()}. */
    static WorkQueue route(WorkQueue[] table, long providerWrId) {
        int token = (int) (providerWrId >>> WorkQueueTracker.POSITION_BITS);
        return token != 0 && token <= table.length ? table[token - 1] : null;
    }

    /** The current table (one volatile read; the poll path reads it once per poll call). */
    WorkQueue[] table() {
        return queues;
    }

    /**
     * Retires what the completion with {@code providerWrId} covers and returns the caller's {@code wr_id} (unchanged
     * when no queue of this CQ owns it).
     */
    static long retire(WorkQueue[] table, long providerWrId) {
        WorkQueue q = route(table, providerWrId);
        if (q != null) {
            return q.tracker.retire(providerWrId);
        }
        return providerWrId < 0 ? SrqRoutes.retire(providerWrId) : providerWrId; // an SRQ's token, or not ours
    }

    /** Gives {@code queue} a token and returns it. */
    synchronized int attach(WorkQueue queue) {
        WorkQueue[] old = queues;
        int n = old.length;
        for (int k = 1; k <= n; k++) { // the first free token after the cursor, else grow
            int i = (cursor + k) % n;
            if (old[i] == null) {
                return place(old.clone(), i, queue);
            }
        }
        if (n == MAX_CQ_TOKEN) {
            throw new IllegalStateException("more than " + MAX_CQ_TOKEN + " work queues on one CQ");
        }
        WorkQueue[] grown = new WorkQueue[Math.min(Math.max(8, n * 2), MAX_CQ_TOKEN)];
        System.arraycopy(old, 0, grown, 0, n);
        return place(grown, n, queue);
    }

    private int place(WorkQueue[] table, int i, WorkQueue queue) {
        table[i] = queue;
        cursor = i;
        queues = table;
        return i + 1;
    }

    /** Frees {@code queue}'s token (its QP was destroyed). */
    synchronized void detach(WorkQueue queue) {
        WorkQueue[] copy = queues.clone();
        for (int i = 0; i < copy.length; i++) {
            if (copy[i] == queue) {
                copy[i] = null;
            }
        }
        queues = copy;
    }

    /** Attached queues (diagnostics and tests). */
    int size() {
        int n = 0;
        for (WorkQueue q : queues) {
            n += q != null ? 1 : 0;
        }
        return n;
    }
}
