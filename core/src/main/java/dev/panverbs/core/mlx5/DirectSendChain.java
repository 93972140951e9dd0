package dev.panverbs.core.mlx5;

import static dev.panverbs.core.mlx5.DirectSendChecks.VERB;

import dev.panverbs.core.internal.DirectPath;
import dev.panverbs.core.internal.Handshake;

/**
 * {@link DirectSendQueue}'s chain lifecycle off the per-WR path: a chain's first WR takes the QP's producer guard
 * (as the core holds it across an {@code ibv_wr_start} batch) and reserves the tracker positions its records are
 * written at; a chain that reaches the room last read re-reads it; a WR on a chain whose guard this thread no longer
 * holds is refused. Static over the queue's package-private state, called once per chain or on a refusal, so the
 * one-call WR's inlined path stays as it was (its out-of-line {@code next()} calls these).
 */
final class DirectSendChain {
    private DirectSendChain() {}

    /** The first WR of a chain: takes the producer guard (held until post or clear) and reads where to write. */
    static void open(DirectSendQueue q) {
        DirectPath.SendSide s = q.side;
        if (!s.enter()) {
            throw s.busy(VERB);
        }
        WqeWriter w = q.writer;
        int r;
        try {
            Handshake.postSide(); // the handshake's post side: a close that found no mark is seen below
            s.checkOpen(VERB); // after the mark: a close that passed this waits for the post (CallGuard)
            if ((w.dbrecCounter() & 0xFFFF) != (w.curPost & 0xFFFF)) {
                // checked before any WQE is written: this queue's producer index is stale (another queue or
                // libmlx5 posted, or a RESET restarted the record), so writing at it could overwrite rung WQEs
                throw DirectSendChecks.staleRecord(q.qp);
            }
            r = s.room();
            if (r <= 0) {
                throw DirectSendChecks.full(q.qp, 0, q.capacity);
            }
        } catch (RuntimeException e) {
            s.exit();
            throw e;
        }
        q.room = r;
        long t = s.tail();
        q.chainTail = t;
        q.chainStart = w.curPost;
        q.reserved = r;
        s.reserve(t, r); // the records are written at [chainTail, +room): a classic chain moves after
    }

    /**
     * The chain reached the room last read: re-reads it (completions may have been retired since) and widens the
     * tracker reservation to it, or refuses WR {@code i} (the previous WR stays open: post() ends it).
     */
    static void moreRoom(DirectSendQueue q, int i) {
        int r = q.side.room();
        if (r <= i) {
            throw DirectSendChecks.full(q.qp, i, q.capacity);
        }
        q.room = r;
        q.reserved = r;
        q.side.reserve(q.chainTail, r); // a pending classic chain moves after the wider reservation
    }

    /**
     * Cold: this thread does not hold the chain's guard. A close of the QP took it (the ring is unmapped): the chain
     * is dropped. Otherwise the chain is another thread's and stays untouched (dropping it would leave that thread's
     * guard held for ever, and a close of the QP waiting for it).
     */
    static RuntimeException lost(DirectSendQueue q) {
        try {
            q.side.checkOpen(VERB);
        } catch (RuntimeException closed) {
            q.drop();
            return closed;
        }
        return DirectSendChecks.otherThread(q.qp, q.count);
    }
}
