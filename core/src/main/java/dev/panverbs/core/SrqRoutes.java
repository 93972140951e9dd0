package dev.panverbs.core;

/**
 * The route tokens of shared receive queues, process-wide: how a receive completion finds the SRQ that owns it. A
 * QP's queues take tokens from their own CQ ({@link CompletionRoutes}, 1..{@value CompletionRoutes#MAX_CQ_TOKEN});
 * an SRQ cannot, because the QPs attached to it may complete to different CQs and the {@code wr_id} is fixed when the
 * receive is posted, before anyone knows which QP, hence which CQ, will consume it. So SRQs take the upper half of
 * the 16-bit token space ({@value #FIRST_TOKEN}..0xFFFF, the sign bit of the {@code wr_id}) from this one table,
 * valid on every CQ.
 *
 * <p>Copy-on-write like {@link CompletionRoutes}: the poll path reads one volatile reference and indexes it, only for
 * a {@code wr_id} with the sign bit set. Freed tokens are reused last (a rotating cursor).
 */
final class SrqRoutes {
    /** The first SRQ token: bit 15 of the token, bit 63 of the {@code wr_id}. */
    static final int FIRST_TOKEN = CompletionRoutes.MAX_CQ_TOKEN + 1;
    /** How many SRQs may be live in one process. */
    static final int MAX_SRQS = 0xFFFF - CompletionRoutes.MAX_CQ_TOKEN;

    private static final SrqTracker[] EMPTY = new SrqTracker[0];
    private static volatile SrqTracker[] queues = EMPTY;
    private static int cursor;

    private SrqRoutes() {
    }

    /**
     * Retires what the completion with {@code providerWrId} (sign bit set) covers and returns the caller's
     * {@code wr_id}, unchanged when no live SRQ owns it. Poll path: one volatile read, no allocation.
     */
    static long retire(long providerWrId) {
        int i = (int) (providerWrId >>> WorkQueueTracker.POSITION_BITS) - FIRST_TOKEN;
        SrqTracker[] table = queues;
        if (i < 0 || i >= table.length) {
            return providerWrId;
        }
        SrqTracker t = table[i];
        return t == null ? providerWrId : t.retire(providerWrId);
    }

    /** Gives the tracker of an SRQ a token and returns it. */
    static synchronized int attach(SrqTracker queue) {
        SrqTracker[] old = queues;
        int n = old.length;
        for (int k = 1; k <= n; k++) {
            int i = (cursor + k) % n;
            if (old[i] == null) {
                return place(old.clone(), i, queue);
            }
        }
        if (n == MAX_SRQS) {
            throw new IllegalStateException("more than " + MAX_SRQS + " shared receive queues in one process");
        }
        SrqTracker[] grown = new SrqTracker[Math.min(Math.max(8, n * 2), MAX_SRQS)];
        System.arraycopy(old, 0, grown, 0, n);
        return place(grown, n, queue);
    }

    private static int place(SrqTracker[] table, int i, SrqTracker queue) {
        table[i] = queue;
        cursor = i;
        queues = table;
        return FIRST_TOKEN + i;
    }

    /** Frees {@code queue}'s token (its SRQ was destroyed). */
    static synchronized void detach(SrqTracker queue) {
        SrqTracker[] copy = queues.clone();
        for (int i = 0; i < copy.length; i++) {
            if (copy[i] == queue) {
                copy[i] = null;
            }
        }
        queues = copy;
    }

    /** Whether {@code queue} holds a token (tests). */
    static boolean isAttached(SrqTracker queue) {
        for (SrqTracker q : queues) {
            if (q == queue) {
                return true;
            }
        }
        return false;
    }
}
