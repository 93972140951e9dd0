package dev.panverbs.core;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.VerbsContextInline;
import dev.panverbs.bindings.verbs.ibv_xrcd_init_attr;
import dev.panverbs.bindings.verbs.verbs_h;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.ResourceKind;
import dev.panverbs.core.internal.Units;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * An XRC domain ({@code struct ibv_xrcd}, {@code ibv_open_xrcd(3)}): the scope in which XRC target QPs and XRC shared
 * receive queues meet. Made by {@link Context#openXrcd()}; gated on {@code IBV_DEVICE_XRC} (refused up front, naming
 * it, where the device has no XRC: rxe). Closing it ({@code ibv_close_xrcd}) closes what was created in it first.
 *
 * <p>In it: XRC shared receive queues ({@code pd.createSrq(n).xrc(xrcd, cq).build()}, {@code IBV_SRQT_XRC}) and XRC
 * target queue pairs ({@link #createTargetQp()}); the initiators are ordinary {@link QueuePairType#XRC_SEND} queue
 * pairs of a protection domain ({@code pd.createQp(XRC_SEND, cq, cq)}) whose sends name the remote XRC SRQ by number
 * ({@link SendRequests#xrcSrqn}, {@link PostBatch#setXrcSrqn}). The domain outlives all of them: closing it closes its
 * SRQs (and their QPs) and target QPs first.
 */
public final class XrcDomain extends VerbsObject {
    private final Context context;

    private XrcDomain(Context context, MemorySegment xrcd) {
        super(ResourceKind.XRC_DOMAIN, "XrcDomain[" + Units.hex(xrcd.address()) + " on " + context.device().name()
                + "]", xrcd, XrcDomain::closeXrcd, context.resource);
        this.context = context;
    }

    private static void closeXrcd(MemorySegment xrcd) {
        int rc = VerbsContextInline.ibv_close_xrcd(xrcd);
        if (rc != 0) {
            throw Errors.failure(Errors.call("ibv_close_xrcd", "xrcd", Units.hex(xrcd.address())), rc);
        }
    }

    /** {@code ibv_open_xrcd} of a private domain (no file: {@code fd = -1}, {@code O_CREAT}). */
    static XrcDomain open(Context context) {
        String call = Errors.call("ibv_open_xrcd", "device", context.device().name());
        if (!context.attributes().supportsXrc()) {
            throw Errors.unsupported(call, "XRC (IBV_DEVICE_XRC)", context.device().name()
                    + " does not report IBV_DEVICE_XRC in device_cap_flags");
        }
        MemorySegment ctx = context.resource.handle("ibv_open_xrcd");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_xrcd_init_attr.layout());
            ibv_xrcd_init_attr.comp_mask(attr, verbs_h.IBV_XRCD_INIT_ATTR_FD() | verbs_h.IBV_XRCD_INIT_ATTR_OFLAGS());
            ibv_xrcd_init_attr.fd(attr, -1);
            ibv_xrcd_init_attr.oflags(attr, 0100); // O_CREAT
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment xrcd = VerbsContextInline.ibv_open_xrcd(errno, ctx, attr);
            if (xrcd.address() == 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
            return new XrcDomain(context, xrcd);
        }
    }

    /**
     * Creates an XRC target queue pair in this domain ({@code ibv_create_qp_ex(3)}, {@code IBV_QPT_XRC_RECV} with
     * {@code IBV_QP_INIT_ATTR_XRCD}). Errors from the provider → {@link VerbsException}.
     */
    public XrcTargetQueuePair createTargetQp() {
        resource.checkOpen("ibv_create_qp_ex");
        return XrcTargetQueuePair.create(this);
    }

    /**
     * Opens another handle to the XRC target QP {@code qpNum} of this domain ({@code ibv_open_qp(3)} with
     * {@code IBV_QP_OPEN_ATTR_NUM | _XRCD | _TYPE}); the QP lives until its last handle is closed.
     */
    public XrcTargetQueuePair openTargetQp(int qpNum) {
        resource.checkOpen("ibv_open_qp");
        return XrcTargetQueuePair.open(this, qpNum);
    }

    /** The context it was opened on. */
    public Context context() {
        return context;
    }
}
