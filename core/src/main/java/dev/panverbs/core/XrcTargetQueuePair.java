package dev.panverbs.core;

import static dev.panverbs.bindings.verbs.verbs_h.*;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.LibIbverbsQueues;
import dev.panverbs.bindings.ibverbs.VerbsContextInline;
import dev.panverbs.bindings.verbs.ibv_device_attr;
import dev.panverbs.bindings.verbs.ibv_device_attr_ex;
import dev.panverbs.bindings.verbs.ibv_qp;
import dev.panverbs.bindings.verbs.ibv_qp_init_attr_ex;
import dev.panverbs.bindings.verbs.ibv_qp_open_attr;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.ResourceKind;
import dev.panverbs.core.internal.Units;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * An XRC target queue pair ({@code IBV_QPT_XRC_RECV}, XRC_TGT: {@code ibv_create_qp_ex(3)} with
 * {@code IBV_QP_INIT_ATTR_XRCD}), made by {@link XrcDomain#createTargetQp()}. It has no protection domain, no CQs and
 * no work queues of its own: it only terminates the connection of a peer's XRC initiator ({@link QueuePairType#XRC_SEND}
 * queue pair), whose {@code XRC_SEND}s name an XRC shared receive queue of the same domain by number
 * ({@link SharedReceiveQueue#srqNum()}); the receives, and their completions, are that SRQ's. Only the state machine is
 * offered: {@code RESET → INIT → RTR} is all it needs (IB spec 9.7 XRC; the transitions are checked against the
 * spec's table before {@code ibv_modify_qp}).
 *
 * <p>Lifetime: a child of its XRC domain, which closes it before {@code ibv_close_xrcd}.
 */
public final class XrcTargetQueuePair extends VerbsObject {
    private final XrcDomain xrcd;
    private final int qpNum;
    private final int maxRdAtomic;
    private int portNum;

    private XrcTargetQueuePair(XrcDomain xrcd, MemorySegment qp, int maxRdAtomic) {
        super(ResourceKind.QUEUE_PAIR, "XrcTargetQueuePair[" + Units.hex(qp.address()) + " on "
                + xrcd.context().device().name() + "]", qp, XrcTargetQueuePair::destroy, xrcd.resource);
        this.xrcd = xrcd;
        this.qpNum = ibv_qp.qp_num(qp.reinterpret(ibv_qp.sizeof()));
        this.maxRdAtomic = maxRdAtomic;
    }

    private static void destroy(MemorySegment qp) {
        int rc = LibIbverbsQueues.ibv_destroy_qp(qp);
        if (rc != 0) {
            throw Errors.failure(Errors.call("ibv_destroy_qp", "qp", Units.hex(qp.address())), rc);
        }
    }

    /** {@code ibv_create_qp_ex} of an {@code IBV_QPT_XRC_RECV} QP in {@code xrcd}. */
    static XrcTargetQueuePair create(XrcDomain xrcd) {
        Context context = xrcd.context();
        String call = Errors.call("ibv_create_qp_ex", "type", QueuePairType.XRC_RECV, "xrcd", xrcd);
        MemorySegment ctx = context.resource.handle("ibv_create_qp_ex");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_qp_init_attr_ex.layout());
            ibv_qp_init_attr_ex.qp_type(attr, QueuePairType.XRC_RECV.value());
            ibv_qp_init_attr_ex.comp_mask(attr, IBV_QP_INIT_ATTR_XRCD());
            ibv_qp_init_attr_ex.xrcd(attr, xrcd.resource.handle("ibv_create_qp_ex"));
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment qp = VerbsContextInline.ibv_create_qp_ex(errno, ctx, attr);
            if (qp.address() == 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
            MemorySegment dev = arena.allocate(ibv_device_attr_ex.layout());
            int maxRd = 1;
            if (VerbsContextInline.ibv_query_device_ex(ctx, MemorySegment.NULL, dev) == 0) {
                MemorySegment orig = ibv_device_attr_ex.orig_attr(dev);
                maxRd = Math.max(1, Math.min(16, ibv_device_attr.max_qp_rd_atom(orig)));
            }
            return new XrcTargetQueuePair(xrcd, qp, maxRd);
        }
    }

    /**
     * {@code ibv_open_qp(3)}: another handle to the existing XRC target QP {@code qpNum} of {@code xrcd} (its
     * creator may be another handle of the same domain). Closing the handle ({@code ibv_destroy_qp}) releases only
     * it; the QP lives until its last handle is closed.
     */
    static XrcTargetQueuePair open(XrcDomain xrcd, int qpNum) {
        Context context = xrcd.context();
        String call = Errors.call("ibv_open_qp", "qp_num", qpNum, "xrcd", xrcd);
        MemorySegment ctx = context.resource.handle("ibv_open_qp");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_qp_open_attr.layout());
            ibv_qp_open_attr.comp_mask(attr, IBV_QP_OPEN_ATTR_NUM() | IBV_QP_OPEN_ATTR_XRCD()
                    | IBV_QP_OPEN_ATTR_TYPE());
            ibv_qp_open_attr.qp_num(attr, qpNum);
            ibv_qp_open_attr.xrcd(attr, xrcd.resource.handle("ibv_open_qp"));
            ibv_qp_open_attr.qp_type(attr, QueuePairType.XRC_RECV.value());
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment qp = VerbsContextInline.ibv_open_qp(errno, ctx, attr);
            if (qp.address() == 0) {
                int e = Errno.get(errno);
                throw Errors.failure(call, e, "qp_num must name a live XRC target QP of this domain");
            }
            return new XrcTargetQueuePair(xrcd, qp, 1);
        }
    }

    /** The domain it was created in. */
    public XrcDomain xrcDomain() {
        return xrcd;
    }

    /** The QP number ({@code ibv_qp.qp_num}) the initiator connects to. */
    public int qpNum() {
        resource.checkOpen("ibv_qp.qp_num");
        return qpNum;
    }

    /**
     * Modifies the QP ({@code ibv_modify_qp(3)}) after checking the attributes against the spec's transition table for
     * XRC_TGT and the current state (queried). Errors as {@link QueuePair#modify}.
     */
    public void modify(QueuePairAttributes attrs) {
        QueuePairState current = state();
        QueuePairState next = attrs.qpState() != null ? attrs.qpState() : current;
        QueuePairTransitions.check(QueuePairType.XRC_RECV, current, next, attrs.mask());
        String call = Errors.call("ibv_modify_qp", "qp", this, "transition", current + "->" + next,
                "attributes", attrs.attributes());
        DeviceChecks.modifyQp(xrcd.context(), call, attrs, portNum);
        int rc = LibIbverbsQueues.ibv_modify_qp(resource.handle("ibv_modify_qp"), attrs.segment(), attrs.mask());
        if (rc != 0) {
            throw Errors.failure(call, rc);
        }
        if (attrs.isSet(QueuePairAttribute.PORT)) {
            portNum = attrs.portNumValue();
        }
    }

    /** RESET → INIT: port {@code portNum}, partition index 0, and the remote operations it accepts as responder. */
    public void toInit(int portNum, Set<Access> remoteAccess) {
        modify(new QueuePairAttributes().qpState(QueuePairState.INIT).pkeyIndex(0).portNum(portNum)
                .qpAccessFlags(remoteAccess));
    }

    /**
     * INIT → RTR: connected to the initiator {@code destQpNum} through {@code path}, first expected PSN {@code rqPsn};
     * {@code max_dest_rd_atomic} = the device's {@code max_qp_rd_atom} (at most 16), {@code min_rnr_timer} 12.
     */
    public void toRtr(AddressVector path, Mtu pathMtu, int destQpNum, int rqPsn) {
        modify(new QueuePairAttributes().qpState(QueuePairState.RTR).ahAttr(path).pathMtu(pathMtu)
                .destQpNum(destQpNum).rqPsn(rqPsn).maxDestRdAtomic(maxRdAtomic).minRnrTimer(12));
    }

    /** Moves to ERR. */
    public void toErr() {
        modify(new QueuePairAttributes().qpState(QueuePairState.ERR));
    }

    /** The current state ({@code ibv_query_qp(3)} with {@code IBV_QP_STATE}). */
    public QueuePairState state() {
        return QueuePair.queryState(this);
    }
}
