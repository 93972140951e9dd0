package dev.panverbs.core;

import dev.panverbs.bindings.mlx5.Mlx5dvInlineWr;
import dev.panverbs.core.internal.DcPath;
import java.lang.foreign.MemorySegment;

/**
 * The DC step of a {@link PostBatch} ({@code mlx5dv_wr_set_dc_addr(3)}, {@code mlx5dv_wr_set_dc_addr_stream}),
 * reached from {@code dev.panverbs.core.mlx5.DcInitiator} through {@link DcPath}: kept out of {@code PostBatch}
 * itself, which holds only the tracking it shares with {@link PostBatch#setUdAddr}.
 */
final class DcAddressing extends DcPath {
    private static final String VERB = "mlx5dv_wr_set_dc_addr";

    static {
        DcPath.Holder.install(new DcAddressing());
    }

    private DcAddressing() {}

    @Override
    public void setDcAddr(PostBatch batch, QueuePair dci, MemorySegment mqp, AddressHandle ah, int remoteDctn,
                          long remoteDcKey, int streamId) {
        if (batch == null || ah == null) {
            throw new NullPointerException(VERB + ": " + (batch == null ? "the batch" : "the address handle")
                    + " is null");
        }
        batch.setDcAddr(dci, mqp, ah, remoteDctn, remoteDcKey, streamId);
    }

    @Override
    public int modifyTarget(Context context, MemorySegment qp, String name, QueuePairState current,
                             QueuePairAttributes attrs, int port) {
        QueuePairState next = attrs.qpState() != null ? attrs.qpState() : current;
        QueuePairTransitions.check(QueuePairType.DC_TARGET, current, next, attrs.mask());
        String call = dev.panverbs.core.internal.Errors.call("ibv_modify_qp", "qp", name,
                "transition", current + "->" + next, "attributes", attrs.attributes());
        DeviceChecks.modifyQp(context, call, attrs, port);
        int rc = dev.panverbs.bindings.ibverbs.LibIbverbsQueues.ibv_modify_qp(qp, attrs.segment(), attrs.mask());
        if (rc != 0) {
            throw dev.panverbs.core.internal.Errors.failure(call, rc, attrs.isSet(QueuePairAttribute.AV)
                    ? "check the address vector's port and GID index; " + DeviceChecks.validGids(context,
                    attrs.avPortNum()) : null);
        }
        return attrs.isSet(QueuePairAttribute.PORT) ? attrs.portNumValue() : port;
    }

    @Override
    public long trackingId(AddressHandle ah) {
        return ah.trackingId;
    }

    @Override
    public AhStage ahStage(QueuePair dci) {
        if (dci.type != QueuePairType.DC_INITIATOR) {
            throw new IllegalArgumentException(dci + " is " + dci.type + ", not a DC initiator");
        }
        WorkQueueTracker tracker = dci.sendQueue.tracker;
        return new AhStage() {
            @Override
            public void stage(long position, long ahId) {
                tracker.stageAh(position, ahId);
            }
        };
    }

    /** Before the provider's setter: the batch is the DCI's, the AH is open and of its PD. */
    static void check(QueuePair batchQp, QueuePair dci, AddressHandle ah) {
        if (batchQp != dci) {
            throw new IllegalArgumentException(VERB + ": the batch belongs to " + batchQp + ", not to " + dci
                    + (batchQp.type != QueuePairType.DC_INITIATOR ? " (" + batchQp.type + " QPs address their work "
                    + "requests otherwise: setUdAddr, setXrcSrqn, or at connection)" : ""));
        }
        if (ah.protectionDomain() != dci.protectionDomain()) {
            throw new IllegalArgumentException(VERB + ": " + ah + " belongs to another protection domain than " + dci
                    + " (the AH and the QP must share a PD); create the AH in the DCI's PD");
        }
        ah.resource.checkOpen(VERB);
    }

    /**
     * The provider's setter: copies the AH's {@code struct mlx5_ah.av} into the WQE's datagram segment, under the AH's
     * monitor, which {@link AddressHandle#close()} holds: {@code ibv_destroy_ah} cannot free it during the copy.
     */
    static void set(MemorySegment mqp, AddressHandle ah, int remoteDctn, long remoteDcKey, int streamId) {
        synchronized (ah) {
            if (streamId < 0) {
                Mlx5dvInlineWr.mlx5dv_wr_set_dc_addr(mqp, ah.resource.handle(VERB), remoteDctn, remoteDcKey);
            } else {
                Mlx5dvInlineWr.mlx5dv_wr_set_dc_addr_stream(mqp, ah.resource.handle(VERB), remoteDctn, remoteDcKey,
                        streamId);
            }
        }
    }
}
