package dev.panverbs.core;

import dev.panverbs.core.internal.Resource;

/**
 * One work queue: a QP's send queue ({@code ibv_post_send}) or receive queue ({@code ibv_post_recv}), later a shared
 * receive queue. It owns what posting to it needs: its {@link WorkQueueTracker} (outstanding WRs and the keys they
 * name), its {@link CallGuard} (one producer at a time, and no destroy under a post), its reusable chain and the
 * {@code bad_wr} cell, and the post loop that every chain of it runs. It routes its own completions: attached to its
 * CQ under a token ({@link CompletionRoutes}), registered with its protection domain for
 * {@link MemoryRegion#close()}'s in-flight scan.
 */
abstract sealed class WorkQueue extends PostTarget permits SendQueue, ReceiveQueue {
    static final int ENOMEM = dev.panverbs.bindings.verbs.verbs_h.ENOMEM();

    final WorkQueueTracker tracker;
    final CallGuard guard = new CallGuard();
    final CompletionQueue cq;
    final ProtectionDomain pd;
    /** The lifecycle of the object the queue belongs to (the QP), for its handle and its closed messages. */
    final Resource owner;
    final String ownerName;
    final WorkRequestRules rules;
    /**
     * A UD send queue: every WR names an {@link AddressHandle} (the provider reads the destroyed {@code ibv_ah} of a
     * closed one), re-checked by the post after its fence like a key. Set once by the send queue's constructor.
     */
    boolean addressHandles;
    /**
     * The owner's native handle, for the provider call: read once here, not through {@link Resource#handle} per post
     * (two volatile reads, each making C2 reload the fields read after it). A closed owner is refused by the post's
     * check after its fence, before the provider is reached; the guard then keeps it from being destroyed.
     */
    private final long handleAddress;

    WorkQueue(WorkQueueTracker tracker, CompletionQueue cq, ProtectionDomain pd, Resource owner, String ownerName,
              WorkRequestRules rules) {
        this.tracker = tracker;
        this.cq = cq;
        this.pd = pd;
        this.owner = owner;
        this.ownerName = ownerName;
        this.rules = rules;
        this.handleAddress = owner.rawHandle().address();
    }

    /** Starts routing: a token on the CQ, a place in the PD's in-flight scan. Before the first post. */
    final void attach() {
        tracker.routeToken(cq.routes.attach(this));
        pd.workQueues.add(this);
    }

    /** Stops routing, after the owner was destroyed (nothing can complete any more). */
    final void detach() {
        tracker.retireAll();
        cq.routes.detach(this);
        pd.workQueues.remove(this);
    }

    // ---- the post loop shared by every chain ----

    /** Posts the pending WRs of this queue's own chain under the producer guard; see {@link WorkRequests#post()}. */
    @Override
    final int post(WorkRequests<?> wrs) {
        CallGuard g = guard;
        if (!g.enter(Thread.currentThread())) {
            throw postRefused(verb());
        }
        try {
            return postChain(wrs);
        } finally {
            g.exit();
        }
    }

    /**
     * Posts the pending WRs of {@code wrs}: checks, records them (published before the doorbell), re-checks the
     * owner's state and the keys, calls the provider, rolls back what it refused. Runs inside {@link #guard}.
     * Allocation-free.
     *
     * <p>One barrier (the post side of {@code internal.Handshake}: a compiler barrier when the closers run
     * {@code membarrier}, else a full fence) serves two handshakes: the guard's mark and the tracker's tail are stored
     * before it, the owner's state and the keys' snapshots are read after it. A {@code close()} of the QP (state
     * first, then its barrier, then it reads the mark) or of a region (snapshot first, then its barrier, then it reads
     * the tails) therefore either sees this post or is seen by it: the QP is never destroyed, nor a region deregistered, under the provider call.
     */
    private int postChain(WorkRequests<?> wrs) {
        String verb = verb();
        int from = wrs.posted;
        int n = wrs.count() - from;
        if (n <= 0) {
            owner.checkOpen(verb); // cold: nothing to post, but a closed QP refuses as before
            return 0;
        }
        checkReady(wrs, from, n);
        int take = Math.min(n, tracker.room());
        if (take <= 0) {
            owner.checkOpen(verb);
            return 0;
        }
        // the WRs were staged in the tracker as they were written: posting publishes the tail
        long t = tracker.tail();
        if (wrs.base + from != t) { // a batch posted (or rolled back) since this chain started
            wrs.restage(t);
        }
        tracker.publish(t + take); // release store + the handshake's post-side barrier
        if (owner.isClosed()) { // the open check: its close() waits for this post's mark to clear
            tracker.rollback(t);
            throw owner.closedException(verb);
        }
        int stale = wrs.firstStaleKey(from, take);
        if (stale >= 0) {
            tracker.rollback(t);
            throw wrs.staleKey(verb, stale, from);
        }
        if (addressHandles) { // an AH closed since ud(...): its close() scans after its mark, as a region's
            int closed = ((SendRequests) wrs).firstClosedAh(from, take);
            if (closed >= 0) {
                tracker.rollback(t);
                throw rules.ahClosed(closed, ((SendRequests) wrs).udAh[closed]);
            }
        }
        int last = from + take - 1;
        wrs.cutAfter(last); // usually already cut there (the previous post's length)
        int rc;
        wrs.clearBadWr();
        try {
            rc = callProvider(handleAddress, wrs.chainAddress(from), wrs.badWrAddress);
        } catch (RuntimeException | Error e) { // the provider was not reached (e.g. a missing slot): no reference
            tracker.rollback(t);
            throw e;
        } finally {
            wrs.memory.keepAlive();
        }
        int accepted = rc == 0 ? take : accepted(wrs.badIndex(), from, take);
        if (accepted < take) {
            tracker.rollback(t + accepted);
        }
        if (rc != 0 && rc != ENOMEM) {
            wrs.posted = from + accepted;
            throw refused(rc, wrs, from + accepted);
        }
        // all pending WRs posted (from + n is the count read above: the provider call cannot change it, and C2
        // would re-read the field after the call); clear() resets posted itself
        if (accepted == n) {
            wrs.clear();
        } else {
            wrs.posted = from + accepted;
        }
        return accepted;
    }

    /** WRs accepted before {@code bad_wr}; a provider that left bad_wr unset (or out of the chain) posted none. */
    private static int accepted(int badIndex, int from, int take) {
        return badIndex >= from && badIndex < from + take ? badIndex - from : 0;
    }

    /** {@code ibv_post_send} or {@code ibv_post_recv}. */
    abstract String verb();

    /** The queue's own classic chain (it stages into {@link #tracker}). */
    abstract WorkRequests<?> requests();

    /**
     * Refuses the post before anything is recorded (state, addressing). A closed owner may pass it (its tracked state
     * is not reset by the close): the post's check after its fence refuses it.
     */
    abstract void checkReady(WorkRequests<?> wrs, int from, int n);

    /**
     * The provider's post slot, given addresses: the QP (kept by the guard the post holds), the chain and its
     * {@code bad_wr} cell (kept alive by the post): no segment for the linker to check per call.
     */
    abstract int callProvider(long handle, long chain, long badWr);

    /** The exception for a provider's refusal {@code rc} of WR {@code index}. */
    abstract RuntimeException refused(int rc, WorkRequests<?> wrs, int index);

    // ---- cold: refusals shared by the queues ----

    final RuntimeException postRefused(String verb) {
        Thread holder = guard.holder();
        if (holder == Thread.currentThread()) {
            // the mark is this thread's: an open ibv_wr_start batch, or an mlx5 DirectSendQueue chain whose WQEs
            // sit unrung beyond the producer index (both hold the guard until they end)
            return new IllegalStateException(verb + ": a PostBatch is open on " + ownerName + " in this thread "
                    + "(startSend() without submit() or close()), or an mlx5 DirectSendQueue chain (started, not "
                    + "post()ed or clear()ed): the provider holds the send-queue lock until "
                    + "ibv_wr_complete/ibv_wr_abort, so this call would spin forever, and a direct chain's WQEs are "
                    + "where this post would write; submit or close the batch, or post or clear the chain, first");
        }
        if (owner.isClosed()) {
            return owner.closedException(verb);
        }
        return new IllegalStateException(verb + ": " + ownerName + " is being posted to by "
                + holderName(holder) + " at the same time; each side of a QP (send, "
                + "receive) has one producer at a time (its chain and outstanding-WR ring are not thread-safe): post "
                + "from one thread, or synchronize");
    }

    /** "thread \"name\"", or "another thread" when the holder left before the (cold) message was built. */
    static String holderName(Thread holder) {
        return holder == null ? "another thread" : "thread \"" + holder.getName() + "\"";
    }
}
