package dev.panverbs.core;

import static dev.panverbs.bindings.verbs.verbs_h.*;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.ContextOps;
import dev.panverbs.bindings.ibverbs.LibIbverbsQueues;
import dev.panverbs.bindings.ibverbs.VerbsContextInline;
import dev.panverbs.bindings.verbs.ibv_srq;
import dev.panverbs.bindings.verbs.ibv_srq_attr;
import dev.panverbs.bindings.verbs.ibv_srq_init_attr;
import dev.panverbs.bindings.verbs.ibv_srq_init_attr_ex;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.ResourceKind;
import dev.panverbs.core.internal.Units;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A shared receive queue ({@code struct ibv_srq}, {@code ibv_create_srq(3)} / {@code ibv_create_srq_ex(3)}): one pool
 * of receive work requests that several queue pairs consume. Made by {@link ProtectionDomain#createSrq(int)}; a QP
 * uses it when built with {@link QueuePairBuilder#srq(SharedReceiveQueue)}, and then has no receive queue of its own.
 *
 * <h2>Posting</h2>
 * {@link #receiveRequests()} is the same reusable chain as a QP's ({@code ibv_post_srq_recv(3)}): fill it with
 * {@code recv(wrId).sge(...)} and {@link ReceiveRequests#post()}; allocation-free, single-producer. Each receive is
 * consumed by whichever attached QP receives the next message; its completion arrives on that QP's receive CQ
 * (with {@link WorkCompletion#qpNum()} naming the QP) and carries back the caller's {@code wr_id}. Completions of
 * different QPs, on different CQs and poller threads, retire their receives independently.
 *
 * <h2>The limit</h2>
 * {@link #armLimit(int)} ({@code ibv_modify_srq} with {@code IBV_SRQ_LIMIT}) asks the device for one
 * {@link AsyncEventType#SRQ_LIMIT_REACHED} event ({@link Context#getAsyncEvent()}, its element this object) when
 * the number of posted receives falls below the limit; the limit then disarms (reads 0) until armed again. An SRQ in
 * error raises {@link AsyncEventType#SRQ_ERR} where the device reports it.
 *
 * <h2>DMA safety and closing</h2>
 * Every posted receive keeps its regions referenced until its completion has been polled on any CQ, so
 * {@link MemoryRegion#close()} is refused meanwhile (as for a QP's receives). Closing the SRQ closes the QPs attached
 * to it first (they cannot outlive it: {@code ibv_destroy_srq} would fail with {@code EBUSY}), then destroys it; its
 * outstanding receives are then forgotten and their regions released. A post on another thread is waited for (up to
 * 5 s) before the destroy.
 *
 * <p>Thread safety: one producer at a time; completions may be polled on any threads. {@link #armLimit} and
 * {@link #query()} may run concurrently with posting.
 */
public final class SharedReceiveQueue extends VerbsObject {
    private final ProtectionDomain pd;
    private final MemorySegment srq;
    private volatile int maxWr;
    private final int maxSge;
    /** The most WRs a {@link #resize} may ask for: the chain and the tracker's slots were made for it. */
    private final int reservedWr;
    final SrqQueue queue;
    /** The XRC domain of an XRC SRQ ({@code IBV_SRQT_XRC}), else null. */
    private final XrcDomain xrcd;

    private SharedReceiveQueue(ProtectionDomain pd, MemorySegment srq, int maxWr, int reservedWr, int maxSge,
                               Cleanup cleanup, String description, XrcDomain xrcd, CompletionQueue xrcCq) {
        super(ResourceKind.SHARED_RECEIVE_QUEUE, description, srq, cleanup::destroy, xrcd == null
                ? new dev.panverbs.core.internal.Resource[] {pd.resource}
                : new dev.panverbs.core.internal.Resource[] {pd.resource, xrcd.resource, xrcCq.resource});
        this.xrcd = xrcd;
        this.pd = pd;
        this.srq = srq.reinterpret(ibv_srq.sizeof());
        this.maxWr = maxWr;
        this.maxSge = maxSge;
        this.reservedWr = Math.max(maxWr, reservedWr);
        this.queue = new SrqQueue(pd, resource, description, ContextOps.of(ibv_srq.context(this.srq)), maxWr,
                this.reservedWr, maxSge);
        queue.attach();
        cleanup.owner = this;
    }

    /** Runs when the resource is destroyed (by close or by a parent's cascade), after the attached QPs. */
    private static final class Cleanup {
        SharedReceiveQueue owner;

        void destroy(MemorySegment handle) {
            SharedReceiveQueue s = owner;
            if (s != null) {
                Thread busy = s.queue.guard.awaitIdle(); // a post on another thread leaves the provider first
                if (busy != null) {
                    throw CallGuard.stillInUse(s.toString(), "ibv_destroy_srq", busy);
                }
            }
            int rc = LibIbverbsQueues.ibv_destroy_srq(handle);
            if (rc != 0) { // the SRQ may still deliver: its receives stay tracked, their regions referenced
                throw Errors.failure(Errors.call("ibv_destroy_srq", "srq", Units.hex(handle.address())), rc,
                        rc == EBUSY() ? "a QP still uses this SRQ (one not created through this library?)" : null);
            }
            if (s != null) {
                s.queue.detach();
            }
        }
    }

    /** The protection domain: receives' regions, and the QPs attached, must belong to it. */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /**
     * The most outstanding receives ({@code max_wr}, at least the number asked for): as granted at creation or by the
     * last {@link #resize}.
     */
    public int maxWr() {
        return maxWr;
    }

    /** The most SGEs per receive, as granted at creation ({@code max_sge}). */
    public int maxSge() {
        return maxSge;
    }

    /** Receives posted and not yet retired by a polled completion (a snapshot). */
    public int outstanding() {
        return queue.tracker.outstanding();
    }

    /**
     * The SRQ's reusable chain for {@code ibv_post_srq_recv(3)}: fill it, then {@link ReceiveRequests#post()}.
     * Single-producer, see {@link ReceiveRequests}.
     */
    public ReceiveRequests receiveRequests() {
        resource.checkOpen(SrqQueue.VERB);
        return queue.requests;
    }

    /**
     * Arms the limit ({@code ibv_modify_srq(3)} with {@code IBV_SRQ_LIMIT}): one
     * {@link AsyncEventType#SRQ_LIMIT_REACHED} event when fewer than {@code limit} receives remain posted. 0 disarms.
     *
     * <p>Errors: {@code limit} above {@link #maxWr()} → {@code EINVAL} refused before the call; others →
     * {@link VerbsException}.
     */
    public void armLimit(int limit) {
        String call = Errors.call("ibv_modify_srq", "srq", this, "srq_limit", limit);
        if (limit < 0) {
            throw new IllegalArgumentException(call + ": the limit must not be negative");
        }
        DeviceChecks.atMost(call, "srq_limit", limit, "max_wr of this SRQ", maxWr, "SharedReceiveQueue.maxWr()");
        MemorySegment h = resource.handle("ibv_modify_srq");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_srq_attr.layout());
            ibv_srq_attr.srq_limit(attr, limit);
            int rc = LibIbverbsQueues.ibv_modify_srq(h, attr, IBV_SRQ_LIMIT());
            if (rc != 0) {
                throw Errors.failure(call, rc);
            }
        }
    }

    /**
     * Resizes the SRQ ({@code ibv_modify_srq(3)} with {@code IBV_SRQ_MAX_WR}) to hold at least {@code newMaxWr}
     * receives, up to the {@link Builder#resizableTo} given at creation (the receive chain and the outstanding-receive
     * slots are allocated once, for that size). Must not run concurrently with a post to this SRQ.
     *
     * <p>Errors: {@link UnsupportedVerbException} when the device lacks {@code IBV_DEVICE_SRQ_RESIZE}; above
     * {@code resizableTo}, below the receives now posted, or below the armed limit → refused before the call
     * ({@link IllegalArgumentException}); the provider's refusal → {@link VerbsException}.
     */
    public void resize(int newMaxWr) {
        String call = Errors.call("ibv_modify_srq", "srq", this, "max_wr", newMaxWr);
        resource.checkOpen("ibv_modify_srq"); // closed first: not "unsupported" or a range error of a dead SRQ
        Context context = pd.context();
        if (!context.attributes().has(DeviceCapability.SRQ_RESIZE)) {
            throw Errors.unsupported(call, "SRQ resizing (IBV_DEVICE_SRQ_RESIZE)", context.device().name()
                    + " does not report IBV_DEVICE_SRQ_RESIZE in device_cap_flags");
        }
        if (newMaxWr < 1 || newMaxWr > reservedWr) {
            throw new IllegalArgumentException(call + ": max_wr must be 1.." + reservedWr + ", the size this SRQ was "
                    + "made resizable to (SharedReceiveQueue.Builder.resizableTo)");
        }
        int posted = queue.tracker.outstanding();
        if (newMaxWr < posted) {
            throw new IllegalArgumentException(call + ": " + posted + " receives are posted; poll their completions "
                    + "before shrinking below that");
        }
        MemorySegment h = resource.handle("ibv_modify_srq");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_srq_attr.layout());
            ibv_srq_attr.max_wr(attr, newMaxWr);
            int rc = LibIbverbsQueues.ibv_modify_srq(h, attr, IBV_SRQ_MAX_WR());
            if (rc != 0) {
                throw Errors.failure(call, rc, rc == EINVAL() ? "the device refuses max_wr below the armed limit or "
                        + "above max_srq_wr (DeviceLimits.maxSrqWr())" : null);
            }
        }
        int granted = Math.min(Math.max(query().maxWr(), newMaxWr), reservedWr);
        queue.tracker.resize(granted);
        maxWr = granted;
    }

    /**
     * Queries the SRQ ({@code ibv_query_srq(3)}): its sizes and the armed limit (0 once the limit event fired).
     *
     * <p>Errors → {@link VerbsException}.
     */
    public SharedReceiveQueueAttributes query() {
        MemorySegment h = resource.handle("ibv_query_srq");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_srq_attr.layout());
            int rc = LibIbverbsQueues.ibv_query_srq(h, attr);
            if (rc != 0) {
                throw Errors.failure(Errors.call("ibv_query_srq", "srq", this), rc);
            }
            return new SharedReceiveQueueAttributes(ibv_srq_attr.max_wr(attr), ibv_srq_attr.max_sge(attr),
                    ibv_srq_attr.srq_limit(attr));
        }
    }

    /**
     * Closes the QPs attached to this SRQ, then destroys it ({@code ibv_destroy_srq(3)}); its outstanding receives are
     * forgotten (and their regions released). Idempotent.
     */
    @Override
    public void close() {
        super.close();
    }

    /** The XRC domain of an XRC SRQ (built with {@link Builder#xrc}), or empty for a basic SRQ. */
    public java.util.Optional<XrcDomain> xrcDomain() {
        return java.util.Optional.ofNullable(xrcd);
    }

    /**
     * The SRQ number ({@code ibv_get_srq_num(3)}) that a peer's XRC initiator names in its sends
     * ({@link SendRequests#xrcSrqn}, {@link PostBatch#setXrcSrqn}). Only XRC SRQs have one: a basic SRQ is refused
     * before the call.
     */
    public int srqNum() {
        String call = Errors.call("ibv_get_srq_num", "srq", this);
        if (xrcd == null) {
            throw new IllegalStateException(call + ": only an XRC SRQ (IBV_SRQT_XRC) has a number that peers "
                    + "address; build it with createSrq(n).xrc(xrcd, cq)");
        }
        MemorySegment h = resource.handle("ibv_get_srq_num");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment num = arena.allocate(java.lang.foreign.ValueLayout.JAVA_INT);
            int rc = VerbsContextInline.ibv_get_srq_num(h, num);
            if (rc != 0) {
                throw Errors.failure(call, rc);
            }
            return num.get(java.lang.foreign.ValueLayout.JAVA_INT, 0);
        }
    }

    /**
     * Options of a new shared receive queue, from {@link ProtectionDomain#createSrq(int)}: {@link #build()} calls
     * {@code ibv_create_srq(3)}, {@link #buildEx()} {@code ibv_create_srq_ex(3)} (type {@code IBV_SRQT_BASIC}).
     * Not thread-safe; use once.
     */
    public static final class Builder {
        private final ProtectionDomain pd;
        private final int maxWr;
        private int maxSge = 1;
        private int srqLimit;
        private int resizableTo;
        private XrcDomain xrcd;
        private CompletionQueue xrcCq;

        Builder(ProtectionDomain pd, int maxWr) {
            if (maxWr < 1) {
                throw new IllegalArgumentException("ibv_create_srq(max_wr=" + maxWr + "): an SRQ needs at least 1 WR");
            }
            this.pd = pd;
            this.maxWr = maxWr;
        }

        /** SGEs per receive ({@code max_sge}, default 1). */
        public Builder maxSge(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("maxSge must be at least 1, got " + n);
            }
            this.maxSge = n;
            return this;
        }

        /**
         * The limit armed at creation ({@code srq_limit}; default 0, not armed). Most providers ignore it at creation
         * (the man page: "srq_limit is ignored"); arm it with {@link SharedReceiveQueue#armLimit(int)}.
         */
        public Builder srqLimit(int limit) {
            if (limit < 0) {
                throw new IllegalArgumentException("srqLimit must not be negative, got " + limit);
            }
            this.srqLimit = limit;
            return this;
        }

        /**
         * Allows {@link SharedReceiveQueue#resize} up to {@code maxWr} receives (default: no growth beyond the
         * created size): the receive chain and the tracker's slots are allocated for this many once.
         */
        public Builder resizableTo(int maxWr) {
            if (maxWr < this.maxWr) {
                throw new IllegalArgumentException("resizableTo(" + maxWr + ") is below the SRQ's max_wr " + this.maxWr);
            }
            this.resizableTo = maxWr;
            return this;
        }

        /**
         * Makes an XRC SRQ ({@code ibv_create_srq_ex(3)} with {@code IBV_SRQT_XRC}, {@code IBV_SRQ_INIT_ATTR_XRCD}
         * and {@code _CQ}): the shared receive queue of the domain {@code xrcd}, fed by the XRC target QPs of that
         * domain; its receives complete on {@code cq} (an XRC SRQ has its own CQ, its target QPs have none). Gated on
         * {@code IBV_DEVICE_XRC} (refused by name on rxe). The domain and the CQ outlive it: closing either closes
         * the SRQ first.
         */
        public Builder xrc(XrcDomain xrcd, CompletionQueue cq) {
            if (xrcd.context() != pd.context() || cq.context() != pd.context()) {
                throw new IllegalArgumentException("ibv_create_srq_ex(IBV_SRQT_XRC): " + xrcd + ", " + cq + " and "
                        + pd + " must belong to one context");
            }
            this.xrcd = xrcd;
            this.xrcCq = cq;
            return this;
        }

        /**
         * Creates the SRQ ({@code ibv_create_srq(3)}; {@code ibv_create_srq_ex(3)} for an XRC SRQ).
         *
         * <p>Errors: {@link UnsupportedVerbException} when the device has no SRQs ({@code max_srq = 0});
         * {@code max_wr}/{@code max_sge} above the device's {@code max_srq_wr}/{@code max_srq_sge} → {@code EINVAL}
         * refused before the call; {@code ENOMEM} → {@link VerbsException}.
         */
        public SharedReceiveQueue build() {
            return xrcd != null ? buildEx() : create("ibv_create_srq", false);
        }

        /** Creates the SRQ through {@code ibv_create_srq_ex(3)} ({@code IBV_SRQT_BASIC}, with its PD); as {@link #build()}. */
        public SharedReceiveQueue buildEx() {
            return create("ibv_create_srq_ex", true);
        }

        private SharedReceiveQueue create(String verb, boolean ex) {
            pd.context().attributes(); // cached once: the SRQ's post rules take the ODP capabilities from it
            Context context = pd.context();
            String call = Errors.call(verb, "maxWr", maxWr, "maxSge", maxSge, "srqLimit", srqLimit);
            checkDevice(context, call);
            if (xrcd != null && !context.attributes().supportsXrc()) { // (an XrcDomain implies it: defensive)
                throw Errors.unsupported(call, "XRC (IBV_DEVICE_XRC)", context.device().name()
                        + " does not report IBV_DEVICE_XRC in device_cap_flags");
            }
            MemorySegment pdHandle = pd.resource.handle(verb);
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment errno = Errno.allocateCapture(arena);
                MemorySegment attr;
                MemorySegment srq;
                if (ex) {
                    MemorySegment init = arena.allocate(ibv_srq_init_attr_ex.layout());
                    attr = ibv_srq_init_attr_ex.attr(init);
                    writeAttr(attr);
                    ibv_srq_init_attr_ex.comp_mask(init, IBV_SRQ_INIT_ATTR_TYPE() | IBV_SRQ_INIT_ATTR_PD()
                            | (xrcd == null ? 0 : IBV_SRQ_INIT_ATTR_XRCD() | IBV_SRQ_INIT_ATTR_CQ()));
                    ibv_srq_init_attr_ex.srq_type(init, xrcd == null ? IBV_SRQT_BASIC() : IBV_SRQT_XRC());
                    ibv_srq_init_attr_ex.pd(init, pdHandle);
                    if (xrcd != null) {
                        ibv_srq_init_attr_ex.xrcd(init, xrcd.resource.handle(verb));
                        ibv_srq_init_attr_ex.cq(init, xrcCq.resource.handle(verb));
                    }
                    srq = VerbsContextInline.ibv_create_srq_ex(errno, context.resource.handle(verb), init);
                } else {
                    MemorySegment init = arena.allocate(ibv_srq_init_attr.layout());
                    attr = ibv_srq_init_attr.attr(init);
                    writeAttr(attr);
                    srq = LibIbverbsQueues.ibv_create_srq(errno, pdHandle, init);
                }
                if (srq.address() == 0) {
                    throw Errors.failure(call, Errno.get(errno));
                }
                // the provider writes the granted sizes back into attr
                int grantedWr = Math.max(ibv_srq_attr.max_wr(attr), maxWr);
                int grantedSge = Math.max(ibv_srq_attr.max_sge(attr), maxSge);
                String description = "SharedReceiveQueue[" + (xrcd == null ? "" : "XRC ") + Units.hex(srq.address())
                        + " on " + context.device().name() + "]";
                return new SharedReceiveQueue(pd, srq, grantedWr, resizableTo, grantedSge, new Cleanup(), description,
                        xrcd, xrcCq);
            }
        }

        private void writeAttr(MemorySegment attr) {
            ibv_srq_attr.max_wr(attr, maxWr);
            ibv_srq_attr.max_sge(attr, maxSge);
            ibv_srq_attr.srq_limit(attr, srqLimit);
        }

        private void checkDevice(Context context, String call) {
            DeviceAttributes a = context.attributes();
            if (!a.supportsSrq()) {
                throw Errors.unsupported(call, "shared receive queues (max_srq > 0)",
                        context.device().name() + " reports max_srq = 0");
            }
            DeviceChecks.atMost(call, "maxWr", maxWr, "max_srq_wr", a.limits().maxSrqWr(),
                    "DeviceLimits.maxSrqWr()");
            DeviceChecks.atMost(call, "maxSge", maxSge, "max_srq_sge", a.limits().maxSrqSge(),
                    "DeviceLimits.maxSrqSge()");
            DeviceChecks.atMost(call, "srqLimit", srqLimit, "maxWr", maxWr, "Builder's maxWr");
            DeviceChecks.atMost(call, "resizableTo", resizableTo, "max_srq_wr", a.limits().maxSrqWr(),
                    "DeviceLimits.maxSrqWr()");
        }
    }
}
