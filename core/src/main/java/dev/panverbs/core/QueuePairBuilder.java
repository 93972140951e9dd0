package dev.panverbs.core;

import static dev.panverbs.bindings.verbs.verbs_h.*;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.LibIbverbsQueues;
import dev.panverbs.bindings.ibverbs.VerbsContextInline;
import dev.panverbs.bindings.verbs.ibv_device_attr;
import dev.panverbs.bindings.verbs.ibv_device_attr_ex;
import dev.panverbs.bindings.verbs.ibv_qp;
import dev.panverbs.bindings.verbs.ibv_qp_attr;
import dev.panverbs.bindings.verbs.ibv_qp_init_attr;
import dev.panverbs.bindings.verbs.ibv_qp_init_attr_ex;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.Units;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * Options of a new queue pair, from {@link ProtectionDomain#createQp}: queue sizes, signaling, and the send
 * operations of the {@code ibv_wr_*} API. {@link #build()} calls {@code ibv_create_qp(3)}, or
 * {@code ibv_create_qp_ex(3)} when {@link #sendOps} were requested (as sideway's {@code build}/{@code build_ex}).
 * Not thread-safe; use once.
 */
public final class QueuePairBuilder {
    private final ProtectionDomain pd;
    private final QueuePairType type;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private int maxSendWr = 128;
    private int maxRecvWr = 128;
    private int maxSendSge = 1;
    private int maxRecvSge = 1;
    private int maxInlineData;
    private boolean sqSigAll;
    private Set<SendOperation> sendOps = EnumSet.noneOf(SendOperation.class);
    private SharedReceiveQueue srq;

    QueuePairBuilder(ProtectionDomain pd, QueuePairType type, CompletionQueue sendCq, CompletionQueue recvCq) {
        if (type == QueuePairType.XRC_SEND || type == QueuePairType.XRC_RECV) {
            String call = Errors.call("ibv_create_qp_ex", "type", type);
            if (!pd.context().attributes().supportsXrc()) {
                throw Errors.unsupported(call, "XRC (IBV_DEVICE_XRC)", pd.context().device().name()
                        + " does not report IBV_DEVICE_XRC in device_cap_flags");
            }
            if (type == QueuePairType.XRC_RECV) {
                throw new IllegalArgumentException(call + ": an XRC target QP belongs to an XRC domain, not to a "
                        + "protection domain: XrcDomain.createTargetQp()");
            }
        }
        if (type != QueuePairType.RC && type != QueuePairType.UC && type != QueuePairType.UD
                && type != QueuePairType.XRC_SEND) {
            throw new IllegalArgumentException("panverbs creates RC, UC and UD queue pairs, not " + type
                    + (type == QueuePairType.DC_INITIATOR || type == QueuePairType.DC_TARGET
                    ? " (mlx5dv_create_qp: dev.panverbs.core.mlx5.DynamicConnect)" : ""));
        }
        sameContext(pd, sendCq, recvCq);
        this.pd = pd;
        this.type = type;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
    }

    /** Outstanding send WRs ({@code cap.max_send_wr}, default 128). */
    public QueuePairBuilder maxSendWr(int n) {
        this.maxSendWr = positive("maxSendWr", n);
        return this;
    }

    /** Outstanding receive WRs ({@code cap.max_recv_wr}, default 128). */
    public QueuePairBuilder maxRecvWr(int n) {
        this.maxRecvWr = positive("maxRecvWr", n);
        return this;
    }

    /** SGEs per send WR ({@code cap.max_send_sge}, default 1). */
    public QueuePairBuilder maxSendSge(int n) {
        this.maxSendSge = positive("maxSendSge", n);
        return this;
    }

    /** SGEs per receive WR ({@code cap.max_recv_sge}, default 1). */
    public QueuePairBuilder maxRecvSge(int n) {
        this.maxRecvSge = positive("maxRecvSge", n);
        return this;
    }

    /** Inline payload bytes per send WR ({@code cap.max_inline_data}, default 0). */
    public QueuePairBuilder maxInlineData(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("maxInlineData must not be negative, got " + n);
        }
        this.maxInlineData = n;
        return this;
    }

    /** Generate a completion for every send WR, signaled or not ({@code sq_sig_all}). */
    public QueuePairBuilder sqSigAll(boolean all) {
        this.sqSigAll = all;
        return this;
    }

    /**
     * Enables the {@code ibv_wr_*} API ({@link QueuePair#startSend()}) for these operations
     * ({@code send_ops_flags}); the QP is then created with {@code ibv_create_qp_ex}. Operations the QP type or
     * the device cannot do are refused by {@link #build()}, naming the capability.
     */
    public QueuePairBuilder sendOps(Set<SendOperation> ops) {
        this.sendOps = ops.isEmpty() ? EnumSet.noneOf(SendOperation.class) : EnumSet.copyOf(ops);
        return this;
    }

    /**
     * Attaches the QP to a shared receive queue ({@code ibv_qp_init_attr.srq}): its receives are taken from
     * {@code srq}, so it has no receive queue of its own ({@link #maxRecvWr}/{@link #maxRecvSge} are ignored and
     * {@link QueuePair#receiveRequests()} refuses). The QP becomes a dependant of the SRQ: closing the SRQ closes it.
     * The SRQ must be of the QP's protection domain. Not for UC on devices without SRQ support for it.
     */
    public QueuePairBuilder srq(SharedReceiveQueue srq) {
        if (srq != null && srq.protectionDomain() != pd) {
            throw new IllegalArgumentException("ibv_create_qp: " + srq + " belongs to " + srq.protectionDomain()
                    + ", not to the QP's " + pd + "; the NIC checks the receives' keys against the QP's PD");
        }
        this.srq = srq;
        return this;
    }

    /**
     * Creates the QP in RESET.
     *
     * <p>Errors: {@link UnsupportedVerbException} for a send operation the type or device lacks (e.g. atomics
     * when {@code atomic_cap} is {@code IBV_ATOMIC_NONE}, RDMA READ on UC); {@code EINVAL} (a size above the
     * device's limits), {@code ENOMEM} (pinned memory) → {@link VerbsException}.
     */
    public QueuePair build() {
        Context context = pd.context();
        MemorySegment ctx = context.resource.handle("ibv_create_qp");
        long opsBits = SendOperation.bits(sendOps);
        String verb = sendOps.isEmpty() ? "ibv_create_qp" : "ibv_create_qp_ex";
        String call = Errors.call(verb, "type", type, "maxSendWr", maxSendWr, "maxRecvWr", srq != null ? 0 : maxRecvWr,
                "maxSendSge", maxSendSge, "maxRecvSge", srq != null ? 0 : maxRecvSge, "maxInlineData", maxInlineData,
                "sendOps", sendOps, "srq", srq);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment orig = queryDevice(context, ctx, arena);
            int maxQpWr = ibv_device_attr.max_qp_wr(orig);
            int maxSge = ibv_device_attr.max_sge(orig);
            DeviceChecks.atMost(call, "maxSendWr", maxSendWr, "max_qp_wr", maxQpWr, "DeviceAttributes.maxQpWr()");
            if (srq == null) {
                DeviceChecks.atMost(call, "maxRecvWr", maxRecvWr, "max_qp_wr", maxQpWr, "DeviceAttributes.maxQpWr()");
            }
            DeviceChecks.atMost(call, "maxSendSge", maxSendSge, "max_sge", maxSge, "DeviceAttributes.maxSge()");
            if (srq == null) {
                DeviceChecks.atMost(call, "maxRecvSge", maxRecvSge, "max_sge", maxSge, "DeviceAttributes.maxSge()");
            }
            boolean atomics = ibv_device_attr.atomic_cap(orig) != IBV_ATOMIC_NONE();
            int maxRdAtomic = maxRdAtomic(orig);
            checkSendOps(call, context, type, sendOps, atomics);
            MemorySegment attr = arena.allocate(ibv_qp_init_attr_ex.layout());
            ibv_qp_init_attr_ex.send_cq(attr, sendCq.resource.handle(verb));
            ibv_qp_init_attr_ex.recv_cq(attr, recvCq.resource.handle(verb));
            boolean noRecv = srq != null || type == QueuePairType.XRC_SEND; // an XRC initiator only sends
            new QueuePairCapabilities(maxSendWr, noRecv ? 0 : maxRecvWr, maxSendSge, noRecv ? 0 : maxRecvSge,
                    maxInlineData).writeTo(ibv_qp_init_attr_ex.cap(attr));
            if (srq != null) {
                ibv_qp_init_attr_ex.srq(attr, srq.resource.handle(verb));
            }
            ibv_qp_init_attr_ex.qp_type(attr, type.value());
            ibv_qp_init_attr_ex.sq_sig_all(attr, sqSigAll ? 1 : 0);
            MemorySegment pdHandle = pd.resource.handle(verb);
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment qp;
            if (sendOps.isEmpty() && type != QueuePairType.XRC_SEND) { // XRC QPs exist only through the _ex verb
                // struct ibv_qp_init_attr is the first 64 bytes of ibv_qp_init_attr_ex
                qp = LibIbverbsQueues.ibv_create_qp(errno, pdHandle, attr);
            } else {
                ibv_qp_init_attr_ex.pd(attr, pdHandle);
                ibv_qp_init_attr_ex.comp_mask(attr, IBV_QP_INIT_ATTR_PD()
                        | (sendOps.isEmpty() ? 0 : IBV_QP_INIT_ATTR_SEND_OPS_FLAGS()));
                ibv_qp_init_attr_ex.send_ops_flags(attr, opsBits);
                qp = VerbsContextInline.ibv_create_qp_ex(errno, ctx, attr);
            }
            if (qp.address() == 0) {
                int e = Errno.get(errno);
                throw Errors.failure(call, e, e == EINVAL() ? "the sizes are within the device's max_qp_wr="
                        + maxQpWr + " and max_sge=" + maxSge + (maxInlineData > 0 ? "; maxInlineData=" + maxInlineData
                        + " may exceed the provider's inline limit, which ibv_query_device does not report: ask "
                        + "for less (the granted value is in QueuePair.capabilities())" : "") : null);
            }
            MemorySegment qpEx = sendOps.isEmpty() ? MemorySegment.NULL : LibIbverbsQueues.ibv_qp_to_qp_ex(qp);
            QueuePairCapabilities granted = QueuePairCapabilities.readFrom(ibv_qp_init_attr_ex.cap(attr));
            String description = "QueuePair[" + type + " " + Units.hex(qp.address()) + " on "
                    + context.device().name() + "]";
            return new QueuePair(new Created(pd, sendCq, recvCq, type, granted, sqSigAll, atomics,
                    Math.max(maxRdAtomic, 1), qp, qpEx, opsBits, noRecv, srq, new QueuePair.Cleanup(),
                    description));
        }
    }

    /**
     * {@link dev.panverbs.core.internal.NativeHandles.Access#adoptQueuePair}: what {@link #build()} does after the
     * create verb, for a QP another API created. On an exception the caller still owns {@code qp}.
     */
    static QueuePair adopt(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, QueuePairType type,
                           MemorySegment qp, Set<SendOperation> sendOps, String destroyVerb,
                           dev.panverbs.core.internal.Destroyer destroy) {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(destroyVerb, "destroyVerb");
        Objects.requireNonNull(destroy, "destroy");
        sameContext(pd, sendCq, recvCq);
        if (qp == null || qp.address() == 0) {
            throw new IllegalArgumentException("adoptQueuePair: the ibv_qp handle is NULL");
        }
        Context context = pd.context();
        String call = Errors.call("adoptQueuePair", "type", type, "qp", Units.hex(qp.address()), "sendOps", sendOps,
                "destroyVerb", destroyVerb);
        MemorySegment ctx = context.resource.handle("adoptQueuePair");
        MemorySegment q = qp.reinterpret(ibv_qp.sizeof());
        expect(call, "context", ibv_qp.context(q), ctx, context.toString());
        expect(call, "pd", ibv_qp.pd(q), pd.resource.handle("adoptQueuePair"), pd.toString());
        expect(call, "send_cq", ibv_qp.send_cq(q), sendCq.resource.handle("adoptQueuePair"), sendCq.toString());
        expect(call, "recv_cq", ibv_qp.recv_cq(q), recvCq.resource.handle("adoptQueuePair"), recvCq.toString());
        if (ibv_qp.qp_type(q) != type.value()) {
            throw new IllegalArgumentException(call + ": the QP's qp_type is " + ibv_qp.qp_type(q) + ", not " + type);
        }
        // its receives are the SRQ's, or it has none (a DCI only sends): no receive queue of its own
        boolean onSrq = ibv_qp.srq(q).address() != 0 || type == QueuePairType.DC_INITIATOR;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment orig = queryDevice(context, ctx, arena);
            boolean atomics = ibv_device_attr.atomic_cap(orig) != IBV_ATOMIC_NONE();
            checkSendOps(call, context, type, sendOps, atomics);
            long opsBits = SendOperation.bits(sendOps);
            MemorySegment qpEx = MemorySegment.NULL;
            if (!sendOps.isEmpty()) {
                qpEx = LibIbverbsQueues.ibv_qp_to_qp_ex(qp);
                if (qpEx.address() == 0) {
                    throw new IllegalArgumentException(call + ": ibv_qp_to_qp_ex returned NULL: the QP was not "
                            + "created with send_ops_flags; adopt it with no sendOps");
                }
            }
            MemorySegment attr = arena.allocate(ibv_qp_attr.layout());
            MemorySegment init = arena.allocate(ibv_qp_init_attr.layout());
            int rc = LibIbverbsQueues.ibv_query_qp(qp, attr, IBV_QP_STATE() | IBV_QP_CAP() | IBV_QP_PORT(), init);
            if (rc != 0) {
                throw Errors.failure(Errors.call("ibv_query_qp", "qp", Units.hex(qp.address())), rc);
            }
            QueuePairCapabilities granted = QueuePairCapabilities.readFrom(ibv_qp_init_attr.cap(init));
            QueuePairState state = QueuePairState.of(ibv_qp_attr.qp_state(attr));
            String description = "QueuePair[" + type + " " + Units.hex(qp.address()) + " on "
                    + context.device().name() + ", adopted]";
            QueuePair wrapped = new QueuePair(new Created(pd, sendCq, recvCq, type, granted,
                    ibv_qp_init_attr.sq_sig_all(init) != 0, atomics, Math.max(maxRdAtomic(orig), 1), qp, qpEx,
                    opsBits, onSrq, ibv_qp.srq(q).address() != 0 ? srqOf(context, ibv_qp.srq(q)) : null,
                    new QueuePair.Cleanup(destroyVerb, destroy), description));
            int port = state == QueuePairState.RESET ? 0 : Byte.toUnsignedInt(ibv_qp_attr.port_num(attr));
            wrapped.adoptedIn(state, port);
            return wrapped;
        }
    }

    /** The SRQ object of {@code handle} if it was created through this library, else null. */
    private static SharedReceiveQueue srqOf(Context context, MemorySegment handle) {
        return context.resource.findOwner(dev.panverbs.core.internal.ResourceKind.SHARED_RECEIVE_QUEUE,
                handle.address()) instanceof SharedReceiveQueue s ? s : null;
    }

    private static void expect(String call, String field, MemorySegment actual, MemorySegment expected, String what) {
        if (actual.address() != expected.address()) {
            throw new IllegalArgumentException(call + ": the QP's " + field + " is " + Units.hex(actual.address())
                    + ", not that of " + what);
        }
    }

    private static void sameContext(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq) {
        for (CompletionQueue cq : new CompletionQueue[] {sendCq, recvCq}) {
            if (cq.context != pd.context()) {
                throw new IllegalArgumentException(cq + " belongs to another context than " + pd);
            }
        }
    }

    /** {@code ibv_query_device_ex}'s {@code orig_attr}, allocated in {@code arena}. */
    private static MemorySegment queryDevice(Context context, MemorySegment ctx, Arena arena) {
        context.attributes(); // cached once: the QP's post rules take the ODP capabilities from it
        MemorySegment dev = arena.allocate(ibv_device_attr_ex.layout());
        int rc = VerbsContextInline.ibv_query_device_ex(ctx, MemorySegment.NULL, dev);
        if (rc != 0) {
            throw Errors.failure(Errors.call("ibv_query_device_ex", "context", context.device().name()), rc);
        }
        return ibv_device_attr_ex.orig_attr(dev);
    }

    private static int maxRdAtomic(MemorySegment orig) {
        return Math.min(16, Math.min(ibv_device_attr.max_qp_rd_atom(orig), ibv_device_attr.max_qp_init_rd_atom(orig)));
    }

    private static void checkSendOps(String call, Context context, QueuePairType type, Set<SendOperation> sendOps,
                                     boolean atomics) {
        for (SendOperation op : sendOps) {
            WorkRequestOpcode opcode = WorkRequestOpcode.valueOf(op.name());
            if (!WorkRequestRules.typeAllows(type, opcode)) {
                throw new UnsupportedVerbException(call, "a " + type + " QP cannot post " + op,
                        op + " on " + type + " queue pairs");
            }
            if (opcode.isAtomic() && !atomics) {
                throw new UnsupportedVerbException(call, context.device().name()
                        + " reports atomic_cap = IBV_ATOMIC_NONE", "atomic operations (" + op + ")");
            }
        }
    }

    private static int positive(String what, int n) {
        if (n < 1) {
            throw new IllegalArgumentException(what + " must be at least 1, got " + n);
        }
        return n;
    }

    record Created(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, QueuePairType type,
                   QueuePairCapabilities caps, boolean sqSigAll, boolean atomics, int maxRdAtomic,
                   MemorySegment qp, MemorySegment qpEx, long sendOps, boolean onSrq, SharedReceiveQueue srq,
                   QueuePair.Cleanup cleanup, String description) {
        /** A QP with its own receive queue (no SRQ). */
        Created(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, QueuePairType type,
                QueuePairCapabilities caps, boolean sqSigAll, boolean atomics, int maxRdAtomic, MemorySegment qp,
                MemorySegment qpEx, long sendOps, boolean onSrq, QueuePair.Cleanup cleanup, String description) {
            this(pd, sendCq, recvCq, type, caps, sqSigAll, atomics, maxRdAtomic, qp, qpEx, sendOps, onSrq, null,
                    cleanup, description);
        }
    }
}
