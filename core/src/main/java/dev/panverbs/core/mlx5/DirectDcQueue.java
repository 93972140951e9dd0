package dev.panverbs.core.mlx5;

import static dev.panverbs.core.mlx5.WqeWriter.WR_ATOMIC_CMP_AND_SWP;
import static dev.panverbs.core.mlx5.WqeWriter.WR_ATOMIC_FETCH_AND_ADD;
import static dev.panverbs.core.mlx5.WqeWriter.WR_RDMA_READ;
import static dev.panverbs.core.mlx5.WqeWriter.WR_RDMA_WRITE;
import static dev.panverbs.core.mlx5.WqeWriter.WR_RDMA_WRITE_WITH_IMM;
import static dev.panverbs.core.mlx5.WqeWriter.WR_SEND;
import static dev.panverbs.core.mlx5.WqeWriter.WR_SEND_WITH_IMM;

import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.LocalKey;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.internal.DcPath;
import java.lang.foreign.MemorySegment;

/**
 * Direct WQE posting on a DC initiator ({@link DcInitiator}): Java writes each WQE into the DCI's send ring (control
 * segment, the 48-byte datagram segment of a {@link DcAddress}: the AH's address vector with the DCT number and DC
 * key, then the remote-address/atomic and data segments or inline data) and rings the doorbell, with no downcall: the
 * bytes of libmlx5's {@code ibv_wr_<op>} + {@code mlx5dv_wr_set_dc_addr} + {@code ibv_wr_set_sge*} /
 * {@code ibv_wr_set_inline_data*} + {@code ibv_wr_complete} (rdma-core 44), verified against that code on fake memory
 * ({@code Mlx5DcOracleTest}); a {@link DcAddress#onStream} address also writes its DCI stream, as
 * {@code mlx5dv_wr_set_dc_addr_stream} does. Builds like {@link DirectSendQueue}'s builder form: an opcode method names its target
 * and starts a WR, {@link #sge} and {@link #inline} add its data, {@link #post()} rings.
 *
 * <p>DMA safety is {@link DirectSendQueue}'s (the same tracker, key checks, guard and completion retirement through
 * {@link DirectCompletionQueue}); each WR also records its address handle, so once posted {@link AddressHandle#close()}
 * is refused until the WR's completion is polled, and a WR naming the address of an AH closed before it starts is
 * refused then. A close on another thread racing the start or the post is not ordered against them (no re-check
 * after the post's fence, unlike a key's) and may succeed while the WR goes out: harmless, since the address vector was
 * copied when the {@link DcAddress} was made and the NIC and this path never read the {@code ibv_ah} of a WR.
 * Single producer; allocation-free per WR.
 */
public final class DirectDcQueue {
    private static final String VERB = "mlx5 Direct WQE post (DCI)";
    private static final DcPath DC = DcPath.get();
    private final DirectSendQueue queue;
    private final DcPath.AhStage ahStage;
    private final QueuePair qp;
    /** {@code 2^logNumConcurrent} of a DCI built with streams, else 0. */
    private final int streams;
    /** Stream ids below this are taken: {@code max(streams, 1)}, stream 0 of a plain DCI being a plain WQE. */
    private final int streamLimit;

    DirectDcQueue(DirectSendQueue queue, int streams) {
        this.queue = queue;
        this.qp = queue.queuePair();
        this.ahStage = DC.ahStage(qp);
        this.streams = streams;
        this.streamLimit = Math.max(streams, 1);
    }

    /**
     * The direct send path of {@code dci} (in a state that can post, with no outstanding send WRs) whose completions
     * are read through {@code sendCq} (the direct view of its send CQ). Refuses a non-mlx5 device by name.
     */
    public static DirectDcQueue open(DcInitiator dci, DirectCompletionQueue sendCq) {
        QueuePair qp = dci.queuePair();
        Mlx5QueuePairView view = Mlx5.queuePairView(qp);
        return new DirectDcQueue(new DirectSendQueue(qp, view, sendCq, view.blueFlameSize() != 0, Mlx5.preferBf(),
                Mlx5.shutUpBf(), QueuePairType.DC_INITIATOR), dci.streams());
    }

    /** Over a view the caller built (fake memory in tests), a DCI without streams. */
    static DirectDcQueue over(QueuePair dci, Mlx5QueuePairView view, DirectCompletionQueue sendCq, boolean preferBf,
                              boolean shutUpBf) {
        return over(dci, view, sendCq, preferBf, shutUpBf, 0);
    }

    /** The same for a DCI with {@code streams} concurrent streams (0: built without streams). */
    static DirectDcQueue over(QueuePair dci, Mlx5QueuePairView view, DirectCompletionQueue sendCq, boolean preferBf,
                              boolean shutUpBf, int streams) {
        return new DirectDcQueue(new DirectSendQueue(dci, view, sendCq, view.blueFlameSize() != 0, preferBf, shutUpBf,
                QueuePairType.DC_INITIATOR), streams);
    }

    /** What {@link DcAddress} records for {@code ah}. */
    static long trackingId(AddressHandle ah) {
        return DC.trackingId(ah);
    }

    /** The DCI's queue pair. */
    public QueuePair queuePair() {
        return qp;
    }

    /** {@code IBV_WR_RDMA_WRITE} to {@code remoteAddr} in region {@code rkey} at the DC target {@code to}. */
    public DirectDcQueue rdmaWrite(DcAddress to, long wrId, int sendFlags, int rkey, long remoteAddr) {
        return start(to, WR_RDMA_WRITE, wrId, sendFlags, 0, remoteAddr, rkey, 0, 0);
    }

    /** {@code IBV_WR_RDMA_WRITE_WITH_IMM}; {@code immData} in host order. */
    public DirectDcQueue rdmaWriteWithImm(DcAddress to, long wrId, int sendFlags, int rkey, long remoteAddr,
                                          int immData) {
        return start(to, WR_RDMA_WRITE_WITH_IMM, wrId, sendFlags, immData, remoteAddr, rkey, 0, 0);
    }

    /** {@code IBV_WR_SEND} to the DC target {@code to} (received into its SRQ). */
    public DirectDcQueue send(DcAddress to, long wrId, int sendFlags) {
        return start(to, WR_SEND, wrId, sendFlags, 0, 0, 0, 0, 0);
    }

    /** {@code IBV_WR_SEND_WITH_IMM}; {@code immData} in host order. */
    public DirectDcQueue sendWithImm(DcAddress to, long wrId, int sendFlags, int immData) {
        return start(to, WR_SEND_WITH_IMM, wrId, sendFlags, immData, 0, 0, 0, 0);
    }

    /** {@code IBV_WR_RDMA_READ} from {@code remoteAddr} in region {@code rkey} into the SGEs. */
    public DirectDcQueue rdmaRead(DcAddress to, long wrId, int sendFlags, int rkey, long remoteAddr) {
        return start(to, WR_RDMA_READ, wrId, sendFlags, 0, remoteAddr, rkey, 0, 0);
    }

    /** {@code IBV_WR_ATOMIC_CMP_AND_SWP}; the original 8 bytes land in the (single, 8-byte) SGE. */
    public DirectDcQueue atomicCmpSwp(DcAddress to, long wrId, int sendFlags, int rkey, long remoteAddr,
                                      long compare, long swapValue) {
        return start(to, WR_ATOMIC_CMP_AND_SWP, wrId, sendFlags, 0, DirectSendChecks.aligned(remoteAddr), rkey,
                swapValue, compare);
    }

    /** {@code IBV_WR_ATOMIC_FETCH_AND_ADD}; the original 8 bytes land in the (single, 8-byte) SGE. */
    public DirectDcQueue atomicFetchAdd(DcAddress to, long wrId, int sendFlags, int rkey, long remoteAddr, long add) {
        return start(to, WR_ATOMIC_FETCH_AND_ADD, wrId, sendFlags, 0, DirectSendChecks.aligned(remoteAddr), rkey, 0,
                add);
    }

    private DirectDcQueue start(DcAddress to, int op, long wrId, int flags, int imm, long ra, int rk, long sw,
                                long ca) {
        if (to == null) {
            throw new NullPointerException(VERB + ": the DC address is null");
        }
        if (to.ahResource.isClosedRelaxed()) {
            throw to.ahResource.closedException(VERB);
        }
        if (to.ah.protectionDomain() != qp.protectionDomain()) {
            throw new IllegalArgumentException(VERB + ": " + to.ah + " belongs to another protection domain than "
                    + qp + " (the AH and the QP must share a PD)");
        }
        if (to.streamId >= streamLimit) {
            throw badStream(to.streamId);
        }
        long position = queue.startDc(op, wrId, flags, imm, ra, rk, sw, ca, to.av, to.streamId);
        ahStage.stage(position, to.ahTrackingId); // published with the WR at post: the AH's close then refuses
        return this;
    }

    private RuntimeException badStream(int streamId) {
        return new IllegalArgumentException(VERB + ": " + qp + (streams == 0 ? " has no DCI streams (built without "
                + "DcInitiator.Builder.dciStreams)" : " has " + streams + " DCI streams (0.." + (streams - 1) + ")")
                + ": stream " + streamId + " refused; use DcAddress.onStream with a stream of this DCI");
    }

    /** Adds an SGE of {@code key} to the current WR (see {@link DirectSendQueue#sge}). */
    public DirectDcQueue sge(LocalKey key, long offset, int length) {
        queue.sge(key, offset, length);
        return this;
    }

    /** Adds inline data to the current WR, which must carry {@code SendFlag.INLINE_BIT} (see {@link DirectSendQueue#inline}). */
    public DirectDcQueue inline(MemorySegment data) {
        queue.inline(data);
        return this;
    }

    /** Rings the WRs started since the last post ({@link DirectSendQueue#post()}); returns how many. */
    public int post() {
        return queue.post();
    }

    /** Drops the WRs started and not yet posted. */
    public void clear() {
        queue.clear();
    }

    /** WRs started and not yet posted. */
    public int pending() {
        return queue.pending();
    }

    /** How many more WRs can be started now. */
    public int room() {
        return queue.room();
    }

    /** The writer, for the oracle tests. */
    WqeWriter writer() {
        return queue.writer;
    }
}
