package dev.panverbs.core.mlx5;

import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.core.internal.DirectPath;

/**
 * Direct CQE polling of an mlx5 CQ created by the core: reads the CQEs from the CQ buffer ({@code mlx5dv_init_obj})
 * into the same {@link WorkCompletions} ({@code struct ibv_wc}) that {@link CompletionQueue#poll} fills, with no
 * downcall: owner bit, CQE64 decoding (opcode, byte count, immediate, QP number, {@code wr_id} through the WQE
 * counter), error CQEs with their syndrome mapped to {@code WorkCompletionStatus}, the consumer-index doorbell
 * record, and {@link #reqNotify re-arming}; the work requests a completion covers are retired from their
 * {@link DirectSendQueue}'s tracker, which is what lets their memory regions close. The bytes and decisions are
 * libmlx5's {@code mlx5_poll_cq} and {@code mlx5_arm_cq} (rdma-core 44), verified against that code on fake memory.
 *
 * <p>Completions of send queues posted through {@link DirectSendQueue} and of receive queues posted through
 * {@link DirectReceiveQueue} are attributed; a completion of a queue posted through libmlx5, of an SRQ or of an
 * unknown QP is refused ({@link IllegalStateException}) because its {@code wr_id} lives in libmlx5's private state. Once a CQ is polled here, do not poll it through {@link CompletionQueue#poll} as well: the two would
 * consume the same ring. Single consumer; allocation-free per completion.
 */
public final class DirectCompletionQueue {
    private static final String VERB = "mlx5 direct CQE poll";
    final CqePoller poller;
    private final CompletionQueue cq;
    private final DirectPath path = DirectPath.get();
    private final DirectPath.PollSide guard;
    /** A CQE was refused after the completions the last poll returned: the next poll throws. */
    private boolean refusedPending;

    DirectCompletionQueue(CompletionQueue cq, Mlx5CompletionQueueView view, boolean cqeV1) {
        if (view.cqeSize() != 64) {
            throw new UnsupportedOperationException("direct CQE polling reads 64-byte CQEs; " + cq
                    + " has " + view.cqeSize() + "-byte CQEs (MLX5_CQE_SIZE=128 or mlx5dv_create_cq cqe_size)");
        }
        this.cq = cq;
        this.guard = path.pollSide(cq);
        this.poller = new CqePoller(view.buffer(), view.cqeCount(), view.doorbellRecord(), view.armDoorbell(),
                view.cqn(), view.doorbellRecord().get(WqeWriter.BE32, 0) & 0xFF_FFFF, cqeV1);
    }

    /**
     * The direct view of {@code cq} ({@code mlx5dv_init_obj}); refuses a non-mlx5 device ("rxe0 is not an mlx5
     * device"). The consumer index continues from the CQ's doorbell record.
     */
    public static DirectCompletionQueue open(CompletionQueue cq) {
        Mlx5CompletionQueueView view = Mlx5.completionQueueView(cq);
        return new DirectCompletionQueue(cq, view, Mlx5.query(cq.context()).cqeVersion() == 1);
    }

    /** Over a view the caller built (fake memory in tests, or a view obtained elsewhere). */
    static DirectCompletionQueue over(CompletionQueue cq, Mlx5CompletionQueueView view) {
        return new DirectCompletionQueue(cq, view, false);
    }

    /** The core CQ this reads. */
    public CompletionQueue completionQueue() {
        return cq;
    }

    /**
     * Reads up to {@code completions.capacity()} completions and returns how many ({@code ibv_poll_cq} semantics,
     * through the CQ buffer). Throws {@link IllegalStateException} for a CQE this path cannot attribute (consumed);
     * completions read before it in the same call are returned first, and the next call throws.
     */
    public int poll(WorkCompletions completions) {
        if (refusedPending) {
            refusedPending = false;
            path.completionCount(completions, 0);
            throw unattributable();
        }
        DirectPath.PollSide g = guard;
        if (!g.enter()) {
            throw g.busy(VERB);
        }
        int n;
        try {
            g.checkOpen(VERB); // after the mark: close() waits for this read of the CQ buffer to finish
            n = poller.poll(path.completionArray(completions), completions.capacity());
        } finally {
            g.exit();
        }
        if (n < 0) {
            // libmlx5 drops the completions before the refused CQE (their WRs are retired): returned here instead,
            // and the refusal comes with the next poll
            int before = poller.polledBeforeError;
            path.completionCount(completions, before);
            if (before > 0) {
                refusedPending = true;
                return before;
            }
            throw unattributable();
        }
        path.completionCount(completions, n);
        return n;
    }

    private IllegalStateException unattributable() {
        return new IllegalStateException(VERB + " of " + cq + ": a CQE names an SRQ, or a send or receive queue not "
                + "posted through DirectSendQueue/DirectReceiveQueue on this CQ; it was consumed (poll such CQs "
                + "through CompletionQueue.poll)");
    }

    /**
     * {@code ibv_req_notify_cq}: asks for a completion event for the next completion (or the next solicited one),
     * through the CQ's arm doorbell ({@code mlx5_arm_cq}).
     */
    public void reqNotify(boolean solicitedOnly) {
        DirectPath.PollSide g = guard;
        if (!g.enter()) {
            throw g.busy("mlx5 direct arm");
        }
        try {
            g.checkOpen("mlx5 direct arm");
            poller.arm(solicitedOnly);
        } finally {
            g.exit();
        }
    }

    /**
     * Tells the poller that a completion event of this CQ was received ({@code ibv_get_cq_event}, which makes
     * libmlx5 count it too): the next {@link #reqNotify} uses the next arm sequence number, as {@code mlx5_arm_cq}.
     */
    public void eventArrived() {
        poller.eventArrived();
    }
}
