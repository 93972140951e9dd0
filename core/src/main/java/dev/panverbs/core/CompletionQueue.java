package dev.panverbs.core;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.ContextOps;
import dev.panverbs.bindings.ibverbs.LibIbverbsQueues;
import dev.panverbs.bindings.verbs.ibv_cq;
import dev.panverbs.bindings.verbs.ibv_wc;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.ResourceKind;
import dev.panverbs.core.internal.Units;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A completion queue ({@code struct ibv_cq}, {@code ibv_create_cq(3)}): where work requests report their
 * completion. Made by {@link Context#createCq(int)}; {@link Builder#buildEx()} makes the extended kind
 * ({@link ExtendedCompletionQueue}).
 *
 * <p>{@link #poll(WorkCompletions)} ({@code ibv_poll_cq(3)}) fills a reusable native {@code ibv_wc} array and
 * returns the count; nothing is allocated per poll or per completion. The function pointer
 * {@code ibv_context.ops.poll_cq} is read once, at creation.
 *
 * <p>Polling also retires the work requests the completions cover from their work queue's outstanding set (see
 * {@link QueuePair} on DMA safety): poll every completion of a QP through its {@code CompletionQueue}.
 *
 * <p><b>Events</b>: with a {@link CompletionChannel}, {@link #reqNotify(boolean)} arms the CQ
 * ({@code ibv_req_notify_cq(3)}); {@link CompletionChannel#getCqEvent(long)} waits for the event and acknowledges
 * it at once ({@code ibv_ack_cq_events(3)}), so destroying the CQ never waits for unacknowledged events.
 *
 * <p><b>Overrun</b>: when more completions arrive than the CQ holds, the provider raises the asynchronous event
 * {@code IBV_EVENT_CQ_ERR} and moves the affected QPs to the error state; a failing {@code ibv_poll_cq} is thrown
 * as {@link VerbsException}. Size the CQ for every outstanding WR of every QP that uses it.
 *
 * <p>Thread safety: one poller at a time per CQ (polling retires WRs from single-consumer rings); a second poller
 * caught polling at the same time gets {@link IllegalStateException} (best effort: the check is not atomic). Arming
 * may happen on another thread. {@link #close()} from another thread while a poll is inside the provider waits for
 * it to return (up to 5 s) before {@code ibv_destroy_cq}; the poller's next call then throws
 * {@link IllegalStateException}.
 */
public class CompletionQueue extends VerbsObject {
    private static final int WC_SIZE = (int) ibv_wc.layout().byteSize();
    private static final int WC_WR_ID = (int) ibv_wc.wr_id$offset();

    final Context context;
    final CompletionChannel channel;
    final MemorySegment cq;
    /** {@link #cq}'s address, for {@code ibv_poll_cq}: the poll guard keeps the CQ from being destroyed under it. */
    private final long cqAddress;
    /** {@code ibv_context.ops.poll_cq}/{@code req_notify_cq}, read once. */
    private final ContextOps ops;
    private final int cqe;
    /** The work queues completing here, by the route token in the provider's {@code wr_id}. */
    final CompletionRoutes routes = new CompletionRoutes();

    /** Marks the poller inside {@code ibv_poll_cq} or an open poll pass; see {@link CallGuard}. */
    final CallGuard pollGuard;

    CompletionQueue(Context context, CompletionChannel channel, MemorySegment cq, String kind) {
        this(context, channel, cq, kind + "[" + Units.hex(cq.address()) + " on " + context.device().name() + "]",
                new CallGuard());
    }

    private CompletionQueue(Context context, CompletionChannel channel, MemorySegment cq, String description,
                            CallGuard pollGuard) {
        super(ResourceKind.COMPLETION_QUEUE, description, cq, h -> destroy(h, description, pollGuard),
                channel == null ? new dev.panverbs.core.internal.Resource[] {context.resource}
                        : new dev.panverbs.core.internal.Resource[] {context.resource, channel.resource});
        this.pollGuard = pollGuard;
        this.context = context;
        this.channel = channel;
        this.cq = cq.reinterpret(ibv_cq.sizeof());
        this.cqAddress = cq.address();
        this.ops = ContextOps.of(ibv_cq.context(this.cq));
        this.cqe = ibv_cq.cqe(this.cq);
    }

    private static void destroy(MemorySegment cq, String description, CallGuard pollGuard) {
        Thread busy = pollGuard.awaitIdle(); // a poller on another thread must leave the provider first
        if (busy != null) {
            throw CallGuard.stillInUse(description, "ibv_destroy_cq", busy);
        }
        int rc = LibIbverbsQueues.ibv_destroy_cq(cq);
        if (rc != 0) {
            throw Errors.failure(Errors.call("ibv_destroy_cq", "cq", Units.hex(cq.address())), rc,
                    "EBUSY: a QP still uses this CQ, or completion events are unacknowledged");
        }
    }

    /** The context the CQ belongs to. */
    public Context context() {
        return context;
    }

    /** The completion channel it reports events to, or {@code null}. */
    public CompletionChannel channel() {
        return channel;
    }

    /** The number of entries the provider granted ({@code ibv_cq.cqe}), at least the number asked for. */
    public int cqe() {
        return cqe;
    }

    /**
     * Polls up to {@code completions.capacity()} completions into {@code completions} ({@code ibv_poll_cq(3)}) and
     * returns how many were stored (0 when the CQ is empty). Read them with {@link WorkCompletions#get(int)}.
     * Allocation-free.
     *
     * <p>Errors: a negative return of the provider (CQ in error, e.g. after an overrun) → {@link VerbsException}.
     */
    public int poll(WorkCompletions completions) {
        CallGuard guard = pollGuard;
        if (!guard.enter(Thread.currentThread())) {
            throw pollRefused(guard, "ibv_poll_cq");
        }
        int n;
        try {
            resource.checkOpen("ibv_poll_cq");
            // addresses: no segment for the linker to check per call (the guard keeps the CQ, keepAlive the array)
            n = ops.ibv_poll_cq(cqAddress, completions.capacity(), completions.address());
        } finally {
            guard.exit();
            completions.keepAlive();
        }
        if (n < 0) {
            completions.count(0);
            throw pollFailed(n);
        }
        completions.count(n);
        retire(completions, n);
        return n;
    }

    /**
     * Retires what the {@code n} polled completions cover and gives each back the caller's {@code wr_id}. Once per
     * run of completions of one work queue (usually once per poll), not per completion: the queue's published tail
     * is read once (every polled WR was published before its doorbell) and its head is stored once, after the run
     * (the head only moves forward: until then its WRs count as outstanding, which is the safe side for
     * {@link MemoryRegion#close()}). Byte offsets into the array are ints ({@link WorkCompletions#MAX_CAPACITY}).
     */
    void retire(WorkCompletions completions, int n) { // package-private: CompletionRetirementHostTest
        WorkQueue[] table = routes.table();
        long base = completions.base();
        long mask = completions.offsetMask();
        int end = n * WC_SIZE; // n <= capacity (WorkCompletions.count refused more)
        int offset = 0;
        while (offset < end) {
            long at = base + ((offset + WC_WR_ID) & mask); // one mov per access, inside the array (masked)
            long providerWrId = MaskedMemory.NATIVE.get(ValueLayout.JAVA_LONG_UNALIGNED, at);
            WorkQueue q = CompletionRoutes.route(table, providerWrId);
            if (q == null) {
                retireOther(at, providerWrId);
                offset += WC_SIZE;
            } else {
                offset = retireRun(q.tracker, providerWrId, base, mask, offset, end);
            }
        }
    }

    /**
     * {@link #retire} of the completions from byte {@code offset} on while they carry the route token of
     * {@code first}, the {@code wr_id} of the one at {@code offset} ({@code tracker}'s queue): returns the offset of
     * the first one that does not. A loop with no call and no field read (each native read and write here is an
     * unsafe access C2 orders against every field, so a field read in the loop would be read again per completion).
     *
     * <p>The outstanding WRs are the {@code limit} positions up to the newest: their {@code wr_id}s are the range
     * {@code (newestWrId - limit, newestWrId]}, so one unsigned compare of {@code newestWrId - wrId} tests the token
     * and {@link WorkQueueTracker#position}'s two bounds at once, exactly while that range does not wrap the 48-bit
     * position (the newest position mod 2^48 is at least {@code limit - 1}: the first 2^48 WRs, and all but
     * {@code limit} positions of each lap after). Else, and for a completion outside the range, the token is
     * compared and the position taken mod 2^48. The slot index {@code ((int) wrId * stride) & (length - 1)} is
     * {@code ((int) position & slotMask) * stride} (stride and length are powers of two; the {@code wr_id}'s low 32
     * bits are the position's), a form C2 proves inside the array without a range check.
     */
    private static int retireRun(WorkQueueTracker tracker, long first, long base, long mask, int offset, int end) {
        long[] slots = tracker.slots();
        int stride = tracker.slotStride();
        long tail = tracker.publishedTail();
        long newest = tail - 1;
        long limit = Math.min(tracker.capacity(), tail); // how far behind the newest an outstanding WR can be
        long newestWrId = (first & ~WorkQueueTracker.POSITION_MASK) | (newest & WorkQueueTracker.POSITION_MASK);
        boolean contiguous = (newest & WorkQueueTracker.POSITION_MASK) >= limit - 1;
        long nearest = limit; // the least 'back' retired: none yet
        for (; offset < end; offset += WC_SIZE) {
            long at = base + ((offset + WC_WR_ID) & mask);
            long providerWrId = MaskedMemory.NATIVE.get(ValueLayout.JAVA_LONG_UNALIGNED, at);
            long back = newestWrId - providerWrId;
            if (Long.compareUnsigned(back, limit) >= 0 || !contiguous) {
                if ((providerWrId ^ first) >>> WorkQueueTracker.POSITION_BITS != 0) {
                    break; // another queue's
                }
                back &= WorkQueueTracker.POSITION_MASK; // mod 2^48
                if (back >= limit) {
                    continue; // never outstanding (or retired long ago): left as it is
                }
            }
            long wrId = slots[(((int) providerWrId * stride) & (slots.length - 1)) + WorkQueueTracker.WR_ID];
            MaskedMemory.NATIVE.set(ValueLayout.JAVA_LONG_UNALIGNED, at, wrId);
            nearest = Math.min(nearest, back);
        }
        if (nearest < limit) {
            tracker.advanceHead(newest - nearest + 1);
        }
        return offset;
    }

    /**
     * {@link #retire} of a completion no queue of this CQ's table owns: a shared receive queue's token, or not ours.
     * Its own method: it keeps {@code retire} under C2's inlining size, so {@code poll} keeps it inlined.
     */
    private static void retireOther(long at, long providerWrId) {
        long wrId = providerWrId < 0 ? SrqRoutes.retire(providerWrId) : providerWrId;
        if (wrId != providerWrId) {
            MaskedMemory.NATIVE.set(ValueLayout.JAVA_LONG_UNALIGNED, at, wrId);
        }
    }

    /**
     * Arms the CQ ({@code ibv_req_notify_cq(3)}): the next completion (with {@code solicitedOnly}, the next
     * solicited or error completion) produces one event on the {@link #channel()}. Re-arm after each event, then
     * poll again: completions that arrived before arming produce no event.
     */
    public void reqNotify(boolean solicitedOnly) {
        resource.checkOpen("ibv_req_notify_cq");
        if (channel == null) {
            throw new IllegalStateException("ibv_req_notify_cq: " + this + " was created without a "
                    + "CompletionChannel; pass one to Context.createCq(..).channel(ch)");
        }
        int rc = ops.ibv_req_notify_cq(cq, solicitedOnly ? 1 : 0);
        if (rc != 0) {
            throw Errors.failure(Errors.call("ibv_req_notify_cq", "cq", this, "solicitedOnly", solicitedOnly), rc);
        }
    }

    // ---- cold ----

    /** Why {@code verb} cannot start: an open pass of this thread, a poller on another thread, or closed. */
    final RuntimeException pollRefused(CallGuard guard, String verb) {
        Thread holder = guard.holder();
        if (holder == Thread.currentThread()) {
            return new IllegalStateException(verb + ": a poll pass is open on " + this + " in this thread "
                    + "(startPoll() returned true and endPoll() was not called); the provider holds the CQ lock until "
                    + "ibv_end_poll, so this call would spin forever: call endPoll() first");
        }
        if (resource.isClosed()) {
            return resource.closedException(verb);
        }
        return new IllegalStateException(verb + ": " + this + " is being polled by "
                + WorkQueue.holderName(holder) + " at the same time; a CQ has one poller at a time "
                + "(its completions retire work requests from single-consumer rings): poll it from one thread, or "
                + "give each thread its own CQ");
    }

    private VerbsException pollFailed(int rc) {
        return Errors.failure(Errors.call("ibv_poll_cq", "cq", this), -rc,
                "the CQ is in error; if it overran (more outstanding completions than cqe=" + cqe
                        + "), the context's async events report IBV_EVENT_CQ_ERR; create a larger CQ");
    }

    /**
     * Options of a new completion queue, from {@link Context#createCq(int)}: {@link #build()} calls
     * {@code ibv_create_cq(3)}, {@link #buildEx()} {@code ibv_create_cq_ex(3)}. Not thread-safe; use once.
     */
    public static final class Builder {
        private final Context context;
        private final int cqe;
        private CompletionChannel channel;
        private int compVector;
        private long wcFlags;
        private boolean singleThreaded;

        Builder(Context context, int cqe) {
            if (cqe < 1) {
                throw new IllegalArgumentException("ibv_create_cq(cqe=" + cqe + "): a CQ needs at least 1 entry");
            }
            this.context = context;
            this.cqe = cqe;
        }

        /** Report completion events to {@code channel} ({@code channel} argument). */
        public Builder channel(CompletionChannel channel) {
            if (channel != null && channel.context() != context) {
                throw new IllegalArgumentException("ibv_create_cq: " + channel + " belongs to another Context than "
                        + context + "; create the channel with the CQ's context");
            }
            this.channel = channel;
            return this;
        }

        /** {@code cqe <= max_cqe}: the kernel's bare EINVAL, refused naming the limit. */
        private void checkCqe(String verb) {
            context.resource.checkOpen(verb);
            DeviceChecks.atMost(Errors.call(verb, "cqe", cqe), "cqe", cqe, "max_cqe",
                    context.attributes().maxCqe(), "DeviceAttributes.maxCqe()");
        }

        /** The completion vector (interrupt) for events, {@code 0 .. context.numCompVectors()-1}. */
        public Builder compVector(int compVector) {
            if (compVector < 0 || compVector >= context.numCompVectors()) {
                throw new IllegalArgumentException("compVector must be 0.." + (context.numCompVectors() - 1)
                        + " (ibv_context.num_comp_vectors), got " + compVector);
            }
            this.compVector = compVector;
            return this;
        }

        /**
         * The fields an extended CQ reports ({@code wc_flags}); {@link #buildEx()} only. Timestamps are refused up
         * front when the device has no completion clock.
         */
        public Builder wcFlags(java.util.Set<CompletionField> fields) {
            this.wcFlags = CompletionField.bits(fields);
            return this;
        }

        /**
         * Promise that one thread polls the CQ ({@code IBV_CREATE_CQ_ATTR_SINGLE_THREADED}): the provider may skip
         * its lock. {@link #buildEx()} only.
         */
        public Builder singleThreaded() {
            this.singleThreaded = true;
            return this;
        }

        /**
         * Creates a classic CQ ({@code ibv_create_cq(3)}).
         *
         * <p>Errors: {@code EINVAL} ({@code cqe} above the device's {@code max_cqe}), {@code ENOMEM} (pinned
         * memory limit) → {@link VerbsException}.
         */
        public CompletionQueue build() {
            if (wcFlags != 0 || singleThreaded) {
                throw new IllegalStateException("wcFlags and singleThreaded apply to extended CQs: call buildEx()");
            }
            checkCqe("ibv_create_cq");
            MemorySegment ctx = context.resource.handle("ibv_create_cq");
            MemorySegment ch = channel == null ? MemorySegment.NULL : channel.resource.handle("ibv_create_cq");
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment errno = Errno.allocateCapture(arena);
                MemorySegment cq = LibIbverbsQueues.ibv_create_cq(errno, ctx, cqe, MemorySegment.NULL, ch, compVector);
                if (cq.equals(MemorySegment.NULL)) {
                    throw Errors.failure(Errors.call("ibv_create_cq", "cqe", cqe, "compVector", compVector),
                            Errno.get(errno));
                }
                return new CompletionQueue(context, channel, cq, "CompletionQueue");
            }
        }

        /**
         * Creates an extended CQ ({@code ibv_create_cq_ex(3)}) reporting the {@link #wcFlags} fields, polled with
         * {@link ExtendedCompletionQueue#startPoll()}.
         *
         * <p>Errors: {@link UnsupportedVerbException} when the device lacks extended CQs or a requested
         * timestamp clock; otherwise those of {@link #build()}.
         */
        public ExtendedCompletionQueue buildEx() {
            checkCqe("ibv_create_cq_ex");
            return ExtendedCompletionQueue.create(context, channel, cqe, compVector, wcFlags, singleThreaded);
        }
    }
}
