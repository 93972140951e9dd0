package dev.panverbs.core;

/**
 * Where a {@link WorkRequests} chain posts: a queue pair's {@link WorkQueue} ({@code ibv_post_send},
 * {@code ibv_post_recv}) or a shared receive queue's {@link SrqQueue} ({@code ibv_post_srq_recv}). The two keep their
 * outstanding work differently (a FIFO ring; per-slot retirement, since an SRQ's receives complete in any order), so
 * each owns its post loop; the chain only needs this one call.
 */
abstract sealed class PostTarget permits WorkQueue, SrqQueue, ChainWindowOps {

    /** Posts the pending WRs of {@code wrs}; see {@link WorkRequests#post()}. */
    abstract int post(WorkRequests<?> wrs);
}
