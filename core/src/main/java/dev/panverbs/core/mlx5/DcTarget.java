package dev.panverbs.core.mlx5;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.LibIbverbsQueues;
import dev.panverbs.bindings.mlx5.LibMlx5;
import dev.panverbs.bindings.mlx5dv.mlx5dv_dc_init_attr;
import dev.panverbs.bindings.mlx5dv.mlx5dv_h;
import dev.panverbs.bindings.mlx5dv.mlx5dv_qp_init_attr;
import dev.panverbs.bindings.verbs.ibv_qp;
import dev.panverbs.bindings.verbs.ibv_qp_init_attr_ex;
import dev.panverbs.bindings.verbs.verbs_h;
import dev.panverbs.core.Access;
import dev.panverbs.core.AddressVector;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.Mtu;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePairAttributes;
import dev.panverbs.core.QueuePairState;
import dev.panverbs.core.SharedReceiveQueue;
import dev.panverbs.core.internal.DcPath;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.NativeHandles;
import dev.panverbs.core.internal.Resource;
import dev.panverbs.core.internal.ResourceKind;
import dev.panverbs.core.internal.Units;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.Set;

/**
 * A DC target (DCT): {@code mlx5dv_create_qp(3)} with {@code qp_type = IBV_QPT_DRIVER},
 * {@code dc_init_attr.dc_type = MLX5DV_DCTYPE_DCT} and {@code dc_init_attr.dct_access_key}. It has no work queue
 * of its own: what DC initiators send to it is received into its shared receive queue and completes on its CQ.
 * {@link #toInit} ({@code IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS}), then {@link #toRtr}
 * ({@code IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_MIN_RNR_TIMER}), which creates it in the device: its DCT number
 * ({@link #dctNumber()}, {@code ibv_qp.qp_num}) exists from then on. A DCT stays in RTR.
 *
 * <p>Lifetimes: a child of its PD, its CQ and its SRQ: closing any of them (or the context) closes the DCT first
 * ({@code ibv_destroy_qp}), so the SRQ and the CQ a DCT receives into are never destroyed under it. Control verbs;
 * not thread-safe.
 */
public final class DcTarget implements AutoCloseable {
    private static final String CREATE = "mlx5dv_create_qp";
    private final Resource resource;
    private final ProtectionDomain pd;
    private final CompletionQueue cq;
    private final SharedReceiveQueue srq;
    private final long accessKey;
    private final MemorySegment qp;
    private QueuePairState state = QueuePairState.RESET;
    private int port;

    private DcTarget(ProtectionDomain pd, CompletionQueue cq, SharedReceiveQueue srq, long accessKey,
                     MemorySegment handle) {
        this.pd = pd;
        this.cq = cq;
        this.srq = srq;
        this.accessKey = accessKey;
        this.qp = handle.reinterpret(ibv_qp.sizeof());
        this.resource = Resource.adopt(ResourceKind.PROVIDER_OBJECT, this, "DcTarget[" + Units.hex(handle.address())
                        + " on " + pd.context().device().name() + "]", handle, DcTarget::destroy,
                NativeHandles.resource(pd), NativeHandles.resource(cq), NativeHandles.resource(srq));
    }

    /**
     * Creates a DCT in RESET receiving into {@code srq} (of {@code pd}), completing on {@code cq}; initiators must
     * present {@code accessKey} ({@code dct_access_key}). Refuses a non-mlx5 device by name; a device without DC gives
     * {@link dev.panverbs.core.UnsupportedVerbException}.
     *
     * @throws NullPointerException     a null PD, CQ or SRQ (a DCT receives only through an SRQ)
     * @throws IllegalArgumentException an SRQ of another PD, a CQ of another context
     */
    public static DcTarget create(ProtectionDomain pd, CompletionQueue cq, SharedReceiveQueue srq, long accessKey) {
        Objects.requireNonNull(pd, CREATE + "(MLX5DV_DCTYPE_DCT): pd");
        Objects.requireNonNull(cq, CREATE + "(MLX5DV_DCTYPE_DCT): cq");
        Objects.requireNonNull(srq, CREATE + "(MLX5DV_DCTYPE_DCT): srq is null: a DC target receives only into a "
                + "shared receive queue (ibv_qp_init_attr_ex.srq); create one with pd.createSrq(n).build()");
        Context context = pd.context();
        if (cq.context() != context) {
            throw new IllegalArgumentException(CREATE + ": " + cq + " belongs to another context than " + pd);
        }
        if (srq.protectionDomain() != pd) {
            throw new IllegalArgumentException(CREATE + ": " + srq + " belongs to " + srq.protectionDomain()
                    + ", not to " + pd + "; the NIC checks the receives' keys against the DCT's PD");
        }
        DynamicConnect.requireMlx5(context, CREATE);
        String call = Errors.call(CREATE, "dc_type", "MLX5DV_DCTYPE_DCT", "srq", srq, "cq", cq,
                "dct_access_key", Units.hex(accessKey));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_qp_init_attr_ex.layout());
            MemorySegment cqHandle = NativeHandles.handle(cq, CREATE);
            ibv_qp_init_attr_ex.send_cq(attr, cqHandle);
            ibv_qp_init_attr_ex.recv_cq(attr, cqHandle);
            ibv_qp_init_attr_ex.srq(attr, NativeHandles.handle(srq, CREATE));
            ibv_qp_init_attr_ex.qp_type(attr, verbs_h.IBV_QPT_DRIVER());
            ibv_qp_init_attr_ex.pd(attr, NativeHandles.pd(pd, CREATE));
            ibv_qp_init_attr_ex.comp_mask(attr, verbs_h.IBV_QP_INIT_ATTR_PD()); // libmlx5 refuses anything else
            MemorySegment dv = arena.allocate(mlx5dv_qp_init_attr.layout());
            mlx5dv_qp_init_attr.comp_mask(dv, mlx5dv_h.MLX5DV_QP_INIT_ATTR_MASK_DC());
            MemorySegment dc = mlx5dv_qp_init_attr.dc_init_attr(dv);
            mlx5dv_dc_init_attr.dc_type(dc, mlx5dv_h.MLX5DV_DCTYPE_DCT());
            mlx5dv_dc_init_attr.dct_access_key(dc, accessKey);
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment handle = LibMlx5.mlx5dv_create_qp(errno, NativeHandles.context(context, CREATE), attr, dv);
            if (handle.address() == 0) {
                throw DynamicConnect.createFailed(call, context.device().name(), Errno.get(errno),
                        "MLX5DV_DCTYPE_DCT");
            }
            return new DcTarget(pd, cq, srq, accessKey, handle); // a closed parent destroys it and throws
        }
    }

    private static void destroy(MemorySegment handle) {
        int rc = LibIbverbsQueues.ibv_destroy_qp(handle);
        if (rc != 0) {
            throw Errors.failure(Errors.call("ibv_destroy_qp", "dct", Units.hex(handle.address())), rc);
        }
    }

    /** RESET → INIT: port {@code portNum}, partition index 0, the remote operations initiators may perform. */
    public void toInit(int portNum, Set<Access> remoteAccess) {
        modify(new QueuePairAttributes().qpState(QueuePairState.INIT).pkeyIndex(0).portNum(portNum)
                .qpAccessFlags(remoteAccess));
    }

    /**
     * INIT → RTR: the path ({@code ah_attr}: port, and on RoCE the GRH with the local RoCE v2 GID index),
     * {@code path_mtu} and {@code min_rnr_timer}. The device creates the DCT here: {@link #dctNumber()} is valid after.
     */
    public void toRtr(AddressVector path, Mtu mtu, int minRnrTimer) {
        modify(new QueuePairAttributes().qpState(QueuePairState.RTR).ahAttr(path).pathMtu(mtu)
                .minRnrTimer(minRnrTimer));
    }

    /** {@code ibv_modify_qp(3)}, checked against the DCT's transitions (the kernel's {@code mlx5_ib_modify_dct}). */
    public void modify(QueuePairAttributes attrs) {
        MemorySegment handle = resource.handle("ibv_modify_qp");
        port = DcPath.get().modifyTarget(pd.context(), handle, resource.description(), state, attrs, port);
        if (attrs.qpState() != null) {
            state = attrs.qpState();
        }
    }

    /** The state the last {@link #modify} set (the kernel answers queries of a DCT only in RTR). */
    public QueuePairState state() {
        resource.checkOpen("ibv_query_qp");
        return state;
    }

    /**
     * The DCT number ({@code ibv_qp.qp_num}, set by libmlx5 when the DCT reaches RTR) that initiators pass to
     * {@link DcInitiator#setDcAddr}.
     *
     * @throws IllegalStateException before RTR (the device has not created it yet) or after close
     */
    public int dctNumber() {
        resource.checkOpen("dct_number");
        if (state != QueuePairState.RTR) {
            throw new IllegalStateException("dct_number: " + this + " is in " + state + "; the device assigns the DCT "
                    + "number at INIT -> RTR (toRtr)");
        }
        return ibv_qp.qp_num(qp);
    }

    /** The access key initiators present ({@code dct_access_key}). */
    public long accessKey() {
        return accessKey;
    }

    /** The protection domain. */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** The CQ its receives complete on. */
    public CompletionQueue completionQueue() {
        return cq;
    }

    /** The shared receive queue it receives into. */
    public SharedReceiveQueue srq() {
        return srq;
    }

    /** Whether it was closed (directly or by a parent's cascade). */
    public boolean isClosed() {
        return resource.isClosed();
    }

    /** {@code ibv_destroy_qp(3)}; idempotent. */
    @Override
    public void close() {
        resource.close();
    }

    @Override
    public String toString() {
        return resource.description();
    }
}
