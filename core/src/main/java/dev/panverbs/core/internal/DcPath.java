package dev.panverbs.core.internal;

import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.PostBatch;
import dev.panverbs.core.QueuePair;
import java.lang.foreign.MemorySegment;

/**
 * The route from {@code dev.panverbs.core.mlx5}'s DC initiator into a {@link PostBatch}'s package-private state:
 * addressing the batch's current work request to a DC target with {@code mlx5dv_wr_set_dc_addr} while the batch
 * records the address handle as it records a UD send's (pinned until the WR's completion retires). Implemented by
 * {@code dev.panverbs.core.DcAddressing}; Java-only plumbing, as {@link DirectPath}. Also the checked
 * {@code ibv_modify_qp} of a DC target, which is no {@code QueuePair} (it has no work queue of its own).
 */
public abstract class DcPath {

    protected DcPath() {}

    /** The implementation, installed when {@code dev.panverbs.core.DcAddressing} initialises. */
    public static DcPath get() {
        return Holder.INSTANCE;
    }

    /**
     * {@code mlx5dv_wr_set_dc_addr(mqp, ah, remoteDctn, remoteDcKey)} on the current WR of {@code batch}, which must be
     * the open batch of {@code dci}; the AH is checked (open, the DCI's PD) and staged in the send queue's tracker.
     * {@code streamId} 0..65535: {@code mlx5dv_wr_set_dc_addr_stream} on that DCI stream instead; -1: none.
     */
    public abstract void setDcAddr(PostBatch batch, QueuePair dci, MemorySegment mqp, AddressHandle ah,
                                   int remoteDctn, long remoteDcKey, int streamId);

    /**
     * {@code ibv_modify_qp(3)} of a DC target ({@code qp}, a {@code struct ibv_qp *} of {@code context}) in state
     * {@code current}: {@code attrs} checked against {@link dev.panverbs.core.QueuePairTransitions} for
     * {@code DC_TARGET} and the device's limits first. {@code port} is the port set at INIT (0 before); returns the
     * port after the call.
     */
    public abstract int modifyTarget(dev.panverbs.core.Context context, MemorySegment qp, String name,
                                      dev.panverbs.core.QueuePairState current,
                                      dev.panverbs.core.QueuePairAttributes attrs, int port);

    /** What the send queues' trackers record for {@code ah} ({@code AddressHandle.trackingId}). */
    public abstract long trackingId(AddressHandle ah);

    /** The send queue tracker of {@code dci} as a stager of each WR's AH (the Direct WQE path's twin of the batch's). */
    public abstract AhStage ahStage(QueuePair dci);

    /** Records the AH a WR at a tracker position names (staged, published with the WR); Java-only. */
    public abstract static class AhStage {
        protected AhStage() {}

        /** The WR at {@code position} (not yet published) names the AH whose tracking id is {@code ahId}. */
        public abstract void stage(long position, long ahId);
    }

    /** Holds the implementation (its class initialiser installs it); Java-only. */
    public static final class Holder {
        private static DcPath installed;
        static final DcPath INSTANCE = load();

        private Holder() {}

        /** Called once from the implementation's static initialiser. */
        public static void install(DcPath implementation) {
            installed = implementation;
        }

        private static DcPath load() {
            try {
                Class.forName("dev.panverbs.core.DcAddressing", true, DcPath.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException("dev.panverbs.core.DcAddressing is missing", e);
            }
            return installed;
        }
    }
}
