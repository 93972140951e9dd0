package dev.panverbs.core;

import dev.panverbs.bindings.ibverbs.ContextOps;
import dev.panverbs.core.internal.Resource;

import java.lang.foreign.MemorySegment;

/**
 * A shared receive queue's posting side: its {@link ReceiveRequests} chain for {@code ibv_post_srq_recv(3)}, its
 * {@link SrqTracker} (outstanding receives, retired one by one as they complete on any CQ), its {@link CallGuard}
 * (one producer, no destroy under a post) and the post loop, the same protocol as {@link WorkQueue}'s: check,
 * record (published before the doorbell), re-check the keys, call the provider, release what it refused.
 * Package-private: users reach it through {@link SharedReceiveQueue#receiveRequests()}.
 */
final class SrqQueue extends PostTarget {
    static final String VERB = "ibv_post_srq_recv";

    final SrqTracker tracker;
    final CallGuard guard = new CallGuard();
    final ReceiveRequests requests;
    final ProtectionDomain pd;
    private final Resource owner;
    private final String ownerName;
    private final ContextOps ops;
    /** The slots claimed by the post in progress, for {@link SrqTracker#release}. */
    private final int[] claimedSlots;

    SrqQueue(ProtectionDomain pd, Resource owner, String ownerName, ContextOps ops, int maxWr, int reservedWr,
             int maxSge) {
        int capacity = Math.max(Math.max(maxWr, reservedWr), 1); // the chain and slots for the largest resize
        this.tracker = new SrqTracker(Math.max(maxWr, 1), capacity, maxSge);
        this.pd = pd;
        this.owner = owner;
        this.ownerName = ownerName;
        this.ops = ops;
        this.claimedSlots = new int[capacity];
        WorkRequestRules rules = new WorkRequestRules(ownerName, QueuePairType.RC, false, 0, pd, owner);
        DeviceAttributes attrs = pd.context().knownAttributes();
        if (attrs != null) {
            rules.odpForSrq(attrs.odp(), pd.context().device().name());
        }
        this.requests = new ReceiveRequests(VERB, rules, capacity, maxSge);
        requests.queue = this;
    }

    /** Starts routing (a token valid on every CQ) and joins the PD's in-flight scan. Before the first post. */
    void attach() {
        tracker.routeToken(SrqRoutes.attach(tracker));
        pd.srqQueues.add(this);
    }

    /** Stops routing, after the SRQ was destroyed (nothing can complete any more). */
    void detach() {
        tracker.retireAll();
        SrqRoutes.detach(tracker);
        pd.srqQueues.remove(this);
    }

    @Override
    int post(WorkRequests<?> wrs) {
        CallGuard g = guard;
        if (!g.enter(Thread.currentThread())) {
            throw postRefused();
        }
        try {
            return postChain(wrs);
        } finally {
            g.exit();
        }
    }

    /** {@link WorkQueue}'s post loop over per-slot claims. Runs inside {@link #guard}. Allocation-free. */
    private int postChain(WorkRequests<?> wrs) {
        MemorySegment h = owner.handle(VERB);
        int from = wrs.posted;
        int n = wrs.count() - from;
        if (n <= 0) {
            return 0;
        }
        int take = Math.min(n, tracker.room());
        if (take <= 0) {
            return 0;
        }
        int[] slots = claimedSlots;
        for (int k = 0; k < take; k++) { // the chain staged each WR in its own (never published) tracker
            int i = from + k;
            int slot = tracker.claim(wrs.tracker, wrs.base + i);
            slots[k] = slot;
            wrs.providerWrId(i, tracker.providerWrId(slot));
        }
        tracker.publish(); // the handshake's barrier: the SRQ's state and the keys are read after it
        if (owner.isClosed()) { // closed since the check above: its destroy waits for this post's mark to clear
            tracker.release(slots, 0, take);
            throw owner.closedException(VERB);
        }
        int stale = wrs.firstStaleKey(from, take);
        if (stale >= 0) {
            tracker.release(slots, 0, take);
            throw wrs.staleKey(VERB, stale, from);
        }
        int last = from + take - 1;
        wrs.cutAfter(last);
        int rc;
        MemorySegment badWr = wrs.badWr;
        wrs.clearBadWr();
        try {
            rc = ops.ibv_post_srq_recv(h, wrs.chainFrom(from), badWr);
        } catch (RuntimeException | Error e) { // the provider was not reached: nothing posted
            tracker.release(slots, 0, take);
            throw e;
        } finally {
            wrs.memory.keepAlive();
        }
        int accepted = take;
        if (rc != 0) {
            int bad = wrs.badIndex();
            accepted = bad >= from && bad < from + take ? bad - from : 0;
            tracker.release(slots, accepted, take);
        }
        wrs.posted = from + accepted;
        if (rc != 0 && rc != WorkQueue.ENOMEM) {
            throw PostException.of(VERB, ownerName, rc, from + accepted, null, 0);
        }
        if (wrs.posted == wrs.count()) {
            wrs.clear();
        }
        return accepted;
    }

    /** Why a post cannot start: closed, or another producer (cold). */
    private RuntimeException postRefused() {
        if (owner.isClosed()) {
            return owner.closedException(VERB);
        }
        return new IllegalStateException(VERB + ": " + ownerName + " is being posted to by "
                + WorkQueue.holderName(guard.holder()) + " at the same time; a shared receive queue has one producer "
                + "at a time (its chain and outstanding-receive slots are not thread-safe for producers): post from "
                + "one thread, or synchronize");
    }
}
