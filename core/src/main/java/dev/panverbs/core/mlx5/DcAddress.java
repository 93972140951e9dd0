package dev.panverbs.core.mlx5;

import dev.panverbs.bindings.mlx5.LibMlx5;
import dev.panverbs.bindings.mlx5dv.mlx5dv_ah;
import dev.panverbs.bindings.mlx5dv.mlx5dv_h;
import dev.panverbs.bindings.mlx5dv.mlx5dv_obj;
import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.NativeHandles;
import dev.panverbs.core.internal.Resource;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;

/**
 * A DC target as a Direct WQE names it, resolved once: the 48-byte address vector of an mlx5 address handle
 * ({@code struct mlx5_wqe_av}, read through {@code mlx5dv_init_obj(MLX5DV_OBJ_AH)}) with the remote DCT number
 * ({@code dqp_dct |= remote_dctn | MLX5_EXTENDED_UD_AV}) and the DC access key ({@code key.dc_key}) folded in, exactly
 * the datagram segment libmlx5's {@code mlx5dv_wr_set_dc_addr} copies into a WQE. {@link DirectDcQueue} stores these
 * six words after each control segment: no lookup and no native read of the AH per work request. {@link #onStream}
 * gives the same address on a DCI stream, which {@code mlx5dv_wr_set_dc_addr_stream} also writes into the control
 * segment.
 *
 * <p>The address handle stays named: every WR posted with this address is tracked by the DCI's send queue like a UD
 * send's AH ({@link AddressHandle#close()} is refused until its completion is polled), and a WR started with the
 * address of an AH closed since is refused. Immutable; may be shared by queues of the AH's protection domain.
 */
public final class DcAddress {
    /** {@code MLX5_EXTENDED_UD_AV}: the top bit of {@code dqp_dct}. */
    static final int EXTENDED_UD_AV = 0x8000_0000;

    final AddressHandle ah;
    final Resource ahResource;
    final long ahTrackingId;
    final int remoteDctn;
    final long remoteDcKey;
    /** The datagram segment as six native-order words (WQE bytes 16-63 after the control segment). */
    final long[] av;
    /** The DCI stream ({@code mlx5dv_wr_set_dc_addr_stream}'s {@code stream_id}); 0 without streams. */
    final int streamId;

    DcAddress(AddressHandle ah, long ahTrackingId, byte[] ahAv, int remoteDctn, long remoteDcKey) {
        if (ahAv.length != 48) {
            throw new IllegalArgumentException("struct mlx5_wqe_av is 48 bytes, got " + ahAv.length);
        }
        if ((remoteDctn & 0xFF00_0000) != 0) {
            throw new IllegalArgumentException("mlx5dv_wr_set_dc_addr: remote DCT number 0x"
                    + Integer.toHexString(remoteDctn) + " is not a 24-bit QP number");
        }
        this.ah = ah;
        this.ahResource = ah == null ? null : NativeHandles.resource(ah);
        this.ahTrackingId = ahTrackingId;
        this.remoteDctn = remoteDctn;
        this.remoteDcKey = remoteDcKey;
        MemorySegment b = MemorySegment.ofArray(ahAv.clone());
        // memcpy(&dseg->av, &mah->av, 48); dseg->av.dqp_dct |= htobe32(dctn | EXT); dseg->av.key.dc_key = htobe64(key)
        b.set(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), 0, remoteDcKey);
        var be32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN);
        b.set(be32, 8, b.get(be32, 8) | remoteDctn | EXTENDED_UD_AV);
        this.av = new long[6];
        for (int i = 0; i < 6; i++) {
            av[i] = b.get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * i); // native order: one store puts these bytes
        }
        this.streamId = 0;
    }

    private DcAddress(DcAddress of, int streamId) {
        this.ah = of.ah;
        this.ahResource = of.ahResource;
        this.ahTrackingId = of.ahTrackingId;
        this.remoteDctn = of.remoteDctn;
        this.remoteDcKey = of.remoteDcKey;
        this.av = of.av; // never written after construction: shared
        this.streamId = streamId;
    }

    /**
     * This address on DCI stream {@code streamId}: the WQE also carries the stream in its control segment, as
     * {@code mlx5dv_wr_set_dc_addr_stream(3)} writes it. {@code streamId} must be below the DCI's
     * {@code 2^logNumConcurrent} ({@link DcInitiator.Builder#dciStreams}); a DCI built without streams takes stream 0
     * only, the plain address ({@link DirectDcQueue} refuses the WR otherwise, as
     * {@link DcInitiator#setDcAddrStream} does). Resolve once per stream, not per WR.
     *
     * @throws IllegalArgumentException {@code streamId} outside 0..65535 (a {@code uint16_t})
     */
    public DcAddress onStream(int streamId) {
        if ((streamId & ~0xFFFF) != 0) {
            throw new IllegalArgumentException("mlx5dv_wr_set_dc_addr_stream: stream_id " + streamId
                    + " is not a uint16_t (0..65535)");
        }
        return new DcAddress(this, streamId);
    }

    /** The DCI stream this address names (0 unless made by {@link #onStream}). */
    public int streamId() {
        return streamId;
    }

    /**
     * The address of DCT {@code remoteDctn} with access key {@code remoteDcKey} through {@code ah} (an address handle of
     * an mlx5 device; refused by name otherwise).
     *
     * @throws IllegalStateException a closed AH, naming the verb
     */
    public static DcAddress of(AddressHandle ah, int remoteDctn, long remoteDcKey) {
        Objects.requireNonNull(ah, "mlx5dv_init_obj(MLX5DV_OBJ_AH): ah");
        DynamicConnect.requireMlx5(ah.protectionDomain().context(), "mlx5dv_init_obj(MLX5DV_OBJ_AH)");
        synchronized (ah) { // AddressHandle.close() holds it: ibv_destroy_ah cannot free mlx5_ah.av during the read
            return resolve(ah, remoteDctn, remoteDcKey);
        }
    }

    private static DcAddress resolve(AddressHandle ah, int remoteDctn, long remoteDcKey) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment obj = arena.allocate(mlx5dv_obj.layout());
            MemorySegment out = arena.allocate(mlx5dv_ah.layout());
            MemorySegment in = mlx5dv_obj.ah(obj);
            mlx5dv_obj.ah.in(in, NativeHandles.handle(ah, "mlx5dv_init_obj(MLX5DV_OBJ_AH)"));
            mlx5dv_obj.ah.out(in, out);
            int rc = LibMlx5.mlx5dv_init_obj(obj, mlx5dv_h.MLX5DV_OBJ_AH());
            if (rc != 0) {
                throw Errors.failure("mlx5dv_init_obj(MLX5DV_OBJ_AH)", rc);
            }
            byte[] bytes = mlx5dv_ah.av(out).reinterpret(48).toArray(ValueLayout.JAVA_BYTE);
            return new DcAddress(ah, DirectDcQueue.trackingId(ah), bytes, remoteDctn, remoteDcKey);
        }
    }

    /** The address handle. */
    public AddressHandle addressHandle() {
        return ah;
    }

    /** The remote DCT number. */
    public int remoteDctn() {
        return remoteDctn;
    }

    /** The DC access key presented to the target. */
    public long remoteDcKey() {
        return remoteDcKey;
    }

    @Override
    public String toString() {
        return "DcAddress[DCT 0x" + Integer.toHexString(remoteDctn) + " via " + ah
                + (streamId != 0 ? " on stream " + streamId : "") + "]";
    }
}
