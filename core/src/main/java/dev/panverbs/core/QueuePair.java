package dev.panverbs.core;

import static dev.panverbs.bindings.verbs.verbs_h.*;

import dev.panverbs.bindings.ibverbs.ContextOps;
import dev.panverbs.bindings.ibverbs.LibIbverbsQueues;
import dev.panverbs.bindings.ibverbs.QpExOps;
import dev.panverbs.bindings.verbs.ibv_qp;
import dev.panverbs.bindings.verbs.ibv_qp_attr;
import dev.panverbs.bindings.verbs.ibv_qp_init_attr;
import dev.panverbs.core.internal.Destroyer;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.ResourceKind;
import dev.panverbs.core.internal.Units;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * A queue pair ({@code struct ibv_qp}, {@code ibv_create_qp(3)}): a send queue and a receive queue of one RC, UC or
 * UD endpoint. Made by {@link ProtectionDomain#createQp}; the builder chooses {@code ibv_create_qp} or, when send
 * operations are requested for the {@code ibv_wr_*} API, {@code ibv_create_qp_ex}.
 *
 * <h2>State machine</h2>
 * A QP starts in RESET. {@link #toInit}, {@link #toRtr} and {@link #toRts} move it along with the attributes the
 * IB spec requires for its type; {@link #modify} takes any {@link QueuePairAttributes}. Every modification is checked
 * against the spec's table ({@link QueuePairTransitions}) first, so a wrong transition or a missing/extra attribute
 * throws {@link InvalidTransitionException} naming them instead of the kernel's bare {@code EINVAL}. Recovery:
 * {@link #toErr()} flushes outstanding work requests, {@link #toReset()} forgets them, then {@code toInit} again.
 *
 * <h2>Posting</h2>
 * Two APIs, both allocation-free after warm-up: the classic native WR chains that each work queue owns,
 * filled and posted in place ({@code qp.sendRequests().rdmaWrite(...).sge(...).post()}, {@link #receiveRequests()}),
 * and the extended {@link #startSend()} ({@code ibv_wr_start} ... {@code ibv_wr_complete}). Both use the names and
 * argument order of the {@code ibv_wr_*} builders. Operations the QP type or the
 * device cannot do are refused up front with {@link UnsupportedVerbException} naming the capability. Sends posted in
 * RESET, INIT or RTR, and receives posted in RESET, are refused before the provider sees them
 * ({@link PostException}, {@code EINVAL}, naming the state; IB spec 10.3.1), since some providers (rxe) would queue
 * them and run them later.
 *
 * <h2>DMA safety</h2>
 * Every SGE is checked against its {@link LocalKey} when it is added: inside its range, in this QP's protection
 * domain, not closed, its memory not freed. The post re-checks every staged key after publishing the work requests'
 * references and before ringing the doorbell, and refuses the whole call if one was closed, re-registered or lost
 * its memory since. From then on the work queue keeps each key referenced until the completion that covers the work
 * request has been polled (unsignaled sends retire with the next signaled completion); meanwhile
 * {@link MemoryRegion#close()} is <b>refused</b> with {@link IllegalStateException}: poll the completions (or move
 * the QP to ERR and poll the flushes, or close the QP) first. Closing the arena of a region registered with
 * {@code deregisterWith(arena)} cannot be refused: the region is deregistered before the memory is freed, so the NIC
 * fails the outstanding work requests with a protection error instead of touching freed memory.
 *
 * <h2>Thread safety</h2>
 * The send queue (sendRequests/post/startSend) is single-producer, the receive queue (receiveRequests/post)
 * too; the two sides may run on different threads, and the CQs may be polled on others. A second producer caught
 * posting at the same time gets {@link IllegalStateException} (best effort), as does a send post while this
 * thread's {@link PostBatch} is open (the provider would spin forever on its own send-queue lock).
 * {@link #close()} from another thread waits (up to 5 s) for a post or batch in progress to leave the provider before
 * {@code ibv_destroy_qp}; closing on the thread of an open batch aborts it. Control verbs (modify, query) must not
 * race with posting or closing.
 */
public final class QueuePair extends VerbsObject {
    final int qpNum;
    final QueuePairType type;
    private final ProtectionDomain pd;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final QueuePairCapabilities capabilities;
    private final MemorySegment qp;
    private final boolean sqSigAll;
    private final int maxRdAtomic;
    final WorkRequestRules rules;
    final SendQueue sendQueue;
    /** Null for a QP on a shared receive queue: its receives belong to the SRQ. */
    final ReceiveQueue receiveQueue;
    /** The shared receive queue the QP takes its receives from, or null. */
    private final SharedReceiveQueue srq;
    /** The port set at INIT (0 until then), for the path-MTU check of later transitions. */
    private int portNum;
    /**
     * The state the last successful {@link #modify} set (RESET at creation). The device moves a QP on its own only
     * to SQE or ERR, never into RESET, INIT or RTR, so this is enough to refuse posts those states forbid without a
     * query per post; the refusal itself re-queries (see {@link #refusedState}).
     */
    volatile QueuePairState trackedState = QueuePairState.RESET;

    QueuePair(QueuePairBuilder.Created c) {
        super(ResourceKind.QUEUE_PAIR, c.description(), c.qp(), c.cleanup()::destroy, parents(c));
        this.pd = c.pd();
        this.sendCq = c.sendCq();
        this.recvCq = c.recvCq();
        this.type = c.type();
        this.capabilities = c.caps();
        this.sqSigAll = c.sqSigAll();
        this.maxRdAtomic = c.maxRdAtomic();
        this.srq = c.srq();
        this.qp = c.qp().reinterpret(ibv_qp.sizeof());
        this.qpNum = ibv_qp.qp_num(qp);
        ContextOps ops = ContextOps.of(ibv_qp.context(qp));
        this.rules = new WorkRequestRules(toString(), type, c.atomics(), capabilities.maxInlineData(), pd, resource);
        DeviceAttributes attrs = pd.context().knownAttributes();
        if (attrs != null) {
            rules.odp(attrs.odp(), pd.context().device().name());
        }
        this.sendQueue = new SendQueue(this, ops, c.qpEx().address() == 0 ? null : QpExOps.of(c.qpEx()),
                c.sendOps(), sqSigAll);
        this.receiveQueue = c.onSrq() ? null : new ReceiveQueue(this, ops);
        sendQueue.attach();
        if (receiveQueue != null) {
            receiveQueue.attach();
        }
        c.cleanup().owner = this;
    }

    /** The PD, the CQs and, when attached to one, the SRQ: closing any of them closes the QP first. */
    private static dev.panverbs.core.internal.Resource[] parents(QueuePairBuilder.Created c) {
        return c.srq() == null
                ? new dev.panverbs.core.internal.Resource[] {c.pd().resource, c.sendCq().resource, c.recvCq().resource}
                : new dev.panverbs.core.internal.Resource[] {c.pd().resource, c.sendCq().resource, c.recvCq().resource,
                        c.srq().resource};
    }

    /** Runs when the resource is destroyed (by close or by a parent's cascade). */
    static final class Cleanup {
        private final String destroyVerb;
        private final Destroyer destroyer;
        QueuePair owner;

        Cleanup() {
            this("ibv_destroy_qp", LibIbverbsQueues::ibv_destroy_qp);
        }

        /** For an adopted QP: {@code destroyer} is the verb of the API that created it. */
        Cleanup(String destroyVerb, Destroyer destroyer) {
            this.destroyVerb = destroyVerb;
            this.destroyer = destroyer;
        }

        void destroy(MemorySegment handle) {
            QueuePair q = owner;
            if (q != null) {
                if (q.sendQueue.batch != null) {
                    q.sendQueue.batch.abandon(); // this thread's open batch: ibv_wr_abort releases the SQ lock
                }
                // posts and batches of other threads leave the provider first (the QP is already marked closing)
                Thread busy = q.sendQueue.guard.awaitIdle();
                if (busy == null && q.receiveQueue != null) {
                    busy = q.receiveQueue.guard.awaitIdle();
                }
                if (busy != null) {
                    throw CallGuard.stillInUse(q.toString(), destroyVerb, busy);
                }
            }
            int rc = destroyer.destroy(handle);
            if (rc != 0) { // the QP may still run: its work stays tracked, its keys referenced
                throw Errors.failure(Errors.call(destroyVerb, "qp", Units.hex(handle.address())), rc);
            }
            if (q != null) { // nothing can complete any more: the NIC forgot the QP
                q.sendQueue.detach();
                if (q.receiveQueue != null) {
                    q.receiveQueue.detach();
                }
            }
        }
    }

    /** An adopted QP starts in the state its creator left it in (rdma_cm moves it to INIT). */
    void adoptedIn(QueuePairState state, int port) {
        trackedState = state;
        portNum = port;
    }

    /** The QP number ({@code ibv_qp.qp_num}) that peers put in {@code destQpNum}. */
    public int qpNum() {
        return qpNum;
    }

    /** The transport type. */
    public QueuePairType type() {
        return type;
    }

    /** The queue sizes the provider granted (at least those requested). */
    public QueuePairCapabilities capabilities() {
        return capabilities;
    }

    /** The protection domain the QP was created in. */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** The CQ of the send queue. */
    public CompletionQueue sendCq() {
        return sendCq;
    }

    /** The CQ of the receive queue. */
    public CompletionQueue recvCq() {
        return recvCq;
    }

    /**
     * The shared receive queue the QP takes its receives from ({@code ibv_qp.srq}), if it was built with one (an
     * adopted QP on an SRQ created elsewhere reports none, yet has no receive queue of its own either).
     */
    public java.util.Optional<SharedReceiveQueue> srq() {
        return java.util.Optional.ofNullable(srq);
    }

    /** Whether send WRs complete without {@link SendFlag#SIGNALED} ({@code sq_sig_all}). */
    public boolean sqSigAll() {
        return sqSigAll;
    }

    boolean sharesCq() {
        return sendCq == recvCq;
    }

    // ---- state machine ----

    /**
     * Modifies the QP ({@code ibv_modify_qp(3)}) after checking the attributes against the spec's transition table
     * for the QP's current state (queried) and type.
     *
     * <p>Errors: {@link InvalidTransitionException} before the call; {@code EINVAL} (a value out of the device's
     * range, e.g. {@code maxRdAtomic} above {@code max_qp_rd_atom}), {@code ENOMEM} → {@link VerbsException}.
     */
    public void modify(QueuePairAttributes attrs) {
        QueuePairState current = state();
        QueuePairState next = attrs.qpState() != null ? attrs.qpState() : current;
        QueuePairTransitions.check(type, current, next, attrs.mask());
        String call = Errors.call("ibv_modify_qp", "qp", this, "transition", current + "->" + next,
                "attributes", attrs.attributes());
        DeviceChecks.modifyQp(pd.context(), call, attrs, portNum);
        int rc = LibIbverbsQueues.ibv_modify_qp(resource.handle("ibv_modify_qp"), attrs.segment(), attrs.mask());
        if (rc != 0) {
            throw Errors.failure(call, rc, attrs.isSet(QueuePairAttribute.AV) && (rc == EINVAL() || rc == ENODATA())
                    ? "check the address vector's port and GID index; " + DeviceChecks.validGids(pd.context(),
                    attrs.avPortNum()) : null);
        }
        if (attrs.isSet(QueuePairAttribute.PORT)) {
            portNum = attrs.portNumValue();
        }
        trackedState = next;
        if (next == QueuePairState.RESET) { // RESET discards both queues without completions
            sendQueue.tracker.retireAll();
            if (receiveQueue != null) {
                receiveQueue.tracker.retireAll();
            }
        }
    }

    /**
     * RESET → INIT for an RC or UC QP: port {@code portNum}, partition index 0, and the remote operations the QP
     * accepts as responder ({@link Access#REMOTE_WRITE}, {@link Access#REMOTE_READ}, {@link Access#REMOTE_ATOMIC}).
     */
    public void toInit(int portNum, Set<Access> remoteAccess) {
        if (type == QueuePairType.UD) {
            throw new IllegalArgumentException("a UD QP takes a Q_Key, not access flags: toInit(portNum, qkey)");
        }
        modify(new QueuePairAttributes().qpState(QueuePairState.INIT).pkeyIndex(0).portNum(portNum)
                .qpAccessFlags(remoteAccess));
    }

    /** RESET → INIT for a UD QP: port {@code portNum}, partition index 0, queue key {@code qkey}. */
    public void toInit(int portNum, int qkey) {
        if (type != QueuePairType.UD) {
            throw new IllegalArgumentException("ibv_modify_qp(INIT) on " + this + ": only UD QPs take a Q_Key; use "
                    + "toInit(portNum, remoteAccess)");
        }
        modify(new QueuePairAttributes().qpState(QueuePairState.INIT).pkeyIndex(0).portNum(portNum).qkey(qkey));
    }

    /** Moves to INIT with the caller's attributes (the state is set here). */
    public void toInit(QueuePairAttributes attrs) {
        modify(attrs.qpState(QueuePairState.INIT));
    }

    /**
     * INIT → RTR for an RC or UC QP, connecting it to remote QP {@code destQpNum} reached through {@code path}, its
     * first expected PSN being {@code rqPsn} (the peer's {@code sqPsn}). RC also gets {@code max_dest_rd_atomic} =
     * the device's {@code max_qp_rd_atom} (at most 16) and {@code min_rnr_timer} = 12 (0.64 ms); use
     * {@link #toRtr(QueuePairAttributes)} for other values. For UD use {@link #toRtr()}.
     */
    public void toRtr(AddressVector path, Mtu pathMtu, int destQpNum, int rqPsn) {
        QueuePairAttributes a = new QueuePairAttributes().qpState(QueuePairState.RTR).ahAttr(path).pathMtu(pathMtu)
                .destQpNum(destQpNum).rqPsn(rqPsn);
        if (type == QueuePairType.RC) {
            a.maxDestRdAtomic(maxRdAtomic).minRnrTimer(12);
        }
        modify(a);
    }

    /** INIT → RTR for a UD QP (nothing is required). */
    public void toRtr() {
        modify(new QueuePairAttributes().qpState(QueuePairState.RTR));
    }

    /** Moves to RTR with the caller's attributes (the state is set here). */
    public void toRtr(QueuePairAttributes attrs) {
        modify(attrs.qpState(QueuePairState.RTR));
    }

    /**
     * RTR → RTS with first send PSN {@code sqPsn}. RC also gets {@code timeout} 14 (~67 ms), {@code retry_cnt} 7,
     * {@code rnr_retry} 7 (infinite) and {@code max_rd_atomic} = the device's {@code max_qp_init_rd_atom} (at most
     * 16); use {@link #toRts(QueuePairAttributes)} for other values.
     */
    public void toRts(int sqPsn) {
        QueuePairAttributes a = new QueuePairAttributes().qpState(QueuePairState.RTS).sqPsn(sqPsn);
        if (type == QueuePairType.RC || type == QueuePairType.XRC_SEND) {
            a.timeout(14).retryCnt(7).rnrRetry(7).maxRdAtomic(maxRdAtomic);
        }
        modify(a);
    }

    /** Moves to RTS with the caller's attributes (the state is set here). */
    public void toRts(QueuePairAttributes attrs) {
        modify(attrs.qpState(QueuePairState.RTS));
    }

    /** Moves to ERR: outstanding WRs complete with {@code WR_FLUSH_ERR} (poll them to release their regions). */
    public void toErr() {
        modify(new QueuePairAttributes().qpState(QueuePairState.ERR));
    }

    /** Moves to RESET: both queues are emptied without completions; then {@code toInit} again. */
    public void toReset() {
        modify(new QueuePairAttributes().qpState(QueuePairState.RESET));
    }

    /** The current state, as the provider reports it ({@code ibv_query_qp(3)} with {@code IBV_QP_STATE}). */
    public QueuePairState state() {
        return queryState(this);
    }

    /** {@code ibv_query_qp(3)} with {@code IBV_QP_STATE}, for this and {@link XrcTargetQueuePair} alike. */
    static QueuePairState queryState(VerbsObject qp) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_qp_attr.layout());
            MemorySegment init = arena.allocate(ibv_qp_init_attr.layout());
            int rc = LibIbverbsQueues.ibv_query_qp(qp.resource.handle("ibv_query_qp"), attr, IBV_QP_STATE(), init);
            if (rc != 0) {
                throw Errors.failure(Errors.call("ibv_query_qp", "qp", qp), rc);
            }
            return QueuePairState.of(ibv_qp_attr.qp_state(attr));
        }
    }

    /** Queries the QP's attributes ({@code ibv_query_qp(3)}) into an immutable record. */
    public QueuePairInfo query() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_qp_attr.layout());
            MemorySegment init = arena.allocate(ibv_qp_init_attr.layout());
            int all = 0;
            for (QueuePairAttribute a : QueuePairAttribute.values()) {
                all |= a.bit();
            }
            all &= ~IBV_QP_RATE_LIMIT(); // beyond the legacy query mask: the kernel answers EOPNOTSUPP
            int rc = LibIbverbsQueues.ibv_query_qp(resource.handle("ibv_query_qp"), attr, all, init);
            if (rc != 0) {
                throw Errors.failure(Errors.call("ibv_query_qp", "qp", this), rc);
            }
            return QueuePairInfo.readFrom(qpNum, type, attr, init);
        }
    }

    // ---- posting ----

    /**
     * The send queue's reusable chain for {@code ibv_post_send(3)}: fill it, then {@link SendRequests#post()}.
     * Single-producer, see {@link SendRequests}.
     */
    public SendRequests sendRequests() {
        resource.checkOpen("ibv_post_send");
        if (type == QueuePairType.DC_INITIATOR) { // struct ibv_send_wr cannot name a DCT: libmlx5 builds no DC AV
            throw new UnsupportedVerbException("ibv_post_send(" + this + ")", "a DC initiator's work requests name "
                    + "their target with mlx5dv_wr_set_dc_addr, which ibv_post_send has no field for: post through "
                    + "DcInitiator.startSend() and DcInitiator.setDcAddr", "ibv_post_send on DC initiators");
        }
        return sendQueue.requests;
    }

    /**
     * The receive queue's reusable chain for {@code ibv_post_recv(3)}: fill it, then {@link ReceiveRequests#post()}.
     * Single-producer, see {@link ReceiveRequests}.
     *
     * @throws IllegalStateException for a QP on a shared receive queue (post receives to the SRQ)
     */
    public ReceiveRequests receiveRequests() {
        resource.checkOpen("ibv_post_recv");
        if (receiveQueue == null) {
            throw new IllegalStateException("ibv_post_recv: " + this + (type == QueuePairType.DC_INITIATOR
                    ? " is a DC initiator: it has no receive queue (receives go to the SRQ of the DC target)"
                    : type == QueuePairType.XRC_SEND
                    ? " is an XRC initiator: it has no receive queue (receives go to the XRC SRQ at the target)"
                    : " receives through a shared receive queue (ibv_qp_init_attr.srq); post receives to the SRQ"));
        }
        return receiveQueue.requests;
    }

    /** Send side's state check (hot: one volatile read unless the tracked state refuses). */
    void checkSendState(String verb, int index, int opcode) {
        QueuePairState refused;
        if (!trackedState.acceptsSends() && (refused = refusedState(true)) != null) {
            throw PostException.notReady(verb, this, refused, index, opcode < 0 ? null : WorkRequestOpcode.class,
                    Math.max(opcode, 0));
        }
    }

    /** Receive side's state check. */
    void checkReceiveState(int index) {
        QueuePairState refused;
        if (!trackedState.acceptsReceives() && (refused = refusedState(false)) != null) {
            throw PostException.notReady("ibv_post_recv", this, refused, index, null, 0);
        }
    }

    /**
     * The state that forbids the post, or {@code null} when the QP has left it after all (the device moved it to ERR
     * or SQE, where posts complete with flush errors). Cold: runs only when the tracked state refuses.
     */
    private QueuePairState refusedState(boolean send) {
        QueuePairState actual = state();
        if (send ? actual.acceptsSends() : actual.acceptsReceives()) {
            trackedState = actual;
            return null;
        }
        return actual;
    }

    /**
     * Starts a batch of work requests with the {@code ibv_wr_*} API ({@code ibv_wr_start(3)}); the batch must be
     * {@link PostBatch#submit() submitted} ({@code ibv_wr_complete}) or closed, which aborts it
     * ({@code ibv_wr_abort}). Use try-with-resources. The same {@link PostBatch} object is reused: no allocation.
     *
     * @throws IllegalStateException if the QP was built without {@code sendOps} (no {@code ibv_qp_ex})
     * @throws PostException          ({@code EINVAL}) if the QP is in RESET, INIT or RTR, as a classic post
     */
    public PostBatch startSend() {
        PostBatch batch = sendQueue.batch;
        if (batch == null) {
            resource.checkOpen("ibv_wr_start"); // open checked by batch.start, after it marks the send side busy
            throw new IllegalStateException("ibv_wr_start: " + this + " was created without sendOps; build it with "
                    + "QueuePairBuilder.sendOps(...) to use the ibv_wr_* API");
        }
        checkSendState("ibv_wr_start", 0, -1);
        return batch.start();
    }

    /**
     * Destroys the QP ({@code ibv_destroy_qp(3)}); its outstanding WRs are forgotten (and their regions released).
     * Idempotent.
     */
    @Override
    public void close() {
        super.close();
    }
}
