package dev.panverbs.core.mlx5;

import dev.panverbs.bindings.mlx5.LibMlx5;
import dev.panverbs.bindings.mlx5dv.mlx5dv_context;
import dev.panverbs.bindings.mlx5dv.mlx5dv_dci_streams_caps;
import dev.panverbs.bindings.mlx5dv.mlx5dv_h;
import dev.panverbs.bindings.verbs.verbs_h;
import dev.panverbs.core.Context;
import dev.panverbs.core.UnsupportedVerbException;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.NativeHandles;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * mlx5's Dynamically Connected transport ({@code mlx5dv_create_qp(3)} with {@code MLX5DV_QP_INIT_ATTR_MASK_DC}):
 * a {@link DcInitiator} (DCI, {@code MLX5DV_DCTYPE_DCI}) sends to any {@link DcTarget} (DCT,
 * {@code MLX5DV_DCTYPE_DCT}) named per work request by an address handle, the DCT number and the DCT's access key
 * ({@code mlx5dv_wr_set_dc_addr}), with RC's operations and reliability and no connection per peer. Any device
 * libmlx5 does not drive is refused up front, naming it ("rxe0 is not an mlx5 device").
 */
public final class DynamicConnect {
    /** The capability a device without DC lacks, as {@link UnsupportedVerbException#capability()} names it. */
    public static final String CAPABILITY = "mlx5 Dynamically Connected transport (DCI/DCT, mlx5dv_create_qp)";

    private DynamicConnect() {}

    /** {@code mlx5dv_query_device(3)}'s DC fields; refuses a non-mlx5 device by name. */
    public static DcCapabilities capabilities(Context context) {
        requireMlx5(context, "mlx5dv_query_device");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attrs = arena.allocate(mlx5dv_context.layout());
            mlx5dv_context.comp_mask(attrs, mlx5dv_h.MLX5DV_CONTEXT_MASK_DC_ODP_CAPS()
                    | mlx5dv_h.MLX5DV_CONTEXT_MASK_DCI_STREAMS());
            int rc = LibMlx5.mlx5dv_query_device(NativeHandles.context(context, "mlx5dv_query_device"), attrs);
            if (rc != 0) {
                throw Errors.failure("mlx5dv_query_device", rc);
            }
            long mask = mlx5dv_context.comp_mask(attrs);
            boolean odp = (mask & mlx5dv_h.MLX5DV_CONTEXT_MASK_DC_ODP_CAPS()) != 0;
            boolean streams = (mask & mlx5dv_h.MLX5DV_CONTEXT_MASK_DCI_STREAMS()) != 0;
            MemorySegment caps = mlx5dv_context.dci_streams_caps(attrs);
            return new DcCapabilities(context.device().name(), odp ? mlx5dv_context.dc_odp_caps(attrs) : 0, streams,
                    streams ? Byte.toUnsignedInt(mlx5dv_dci_streams_caps.max_log_num_concurent(caps)) : 0,
                    streams ? Byte.toUnsignedInt(mlx5dv_dci_streams_caps.max_log_num_errored(caps)) : 0);
        }
    }

    /** The capability {@link DcInitiator.Builder#dciStreams} needs, as {@link UnsupportedVerbException} names it. */
    public static final String STREAMS_CAPABILITY = "mlx5 DCI streams (mlx5dv_query_device dci_streams_caps, "
            + "MLX5DV_CONTEXT_MASK_DCI_STREAMS)";

    /**
     * Refuses, before {@code mlx5dv_create_qp}, DCI streams the device does not report ({@code comp_mask} without
     * {@code MLX5DV_CONTEXT_MASK_DCI_STREAMS}: {@link UnsupportedVerbException}) or smaller maxima than asked
     * ({@code IllegalArgumentException}; libmlx5 would fail with a bare EINVAL).
     */
    static void requireDciStreams(Context context, int logNumConcurrent, int logNumErrored) {
        DcCapabilities caps = capabilities(context);
        String name = context.device().name();
        if (!caps.dciStreams()) {
            throw new UnsupportedVerbException("mlx5dv_create_qp", name + " reports no DCI streams "
                    + "(mlx5dv_query_device left MLX5DV_CONTEXT_MASK_DCI_STREAMS clear: rdma-core, kernel or firmware "
                    + "too old); build the DCI without dciStreams", STREAMS_CAPABILITY);
        }
        if (logNumConcurrent > caps.maxLogNumConcurrent() || logNumErrored > caps.maxLogNumErrored()) {
            throw new IllegalArgumentException("mlx5dv_create_qp: dci_streams log_num_concurent=" + logNumConcurrent
                    + ", log_num_errored=" + logNumErrored + " exceed " + name + "'s dci_streams_caps "
                    + "(max_log_num_concurent=" + caps.maxLogNumConcurrent() + ", max_log_num_errored="
                    + caps.maxLogNumErrored() + ")");
        }
    }

    /** Refuses a context whose device libmlx5 does not drive ({@code mlx5dv_is_supported}), naming it. */
    static void requireMlx5(Context context, String verb) {
        if (!Mlx5.isSupported(context)) {
            String name = context.device().name();
            throw new UnsupportedVerbException(verb, name + " is not an mlx5 device (mlx5dv_is_supported returned "
                    + "false): DC initiators and targets are mlx5 queue pairs; use RC or UD queue pairs on " + name,
                    CAPABILITY);
        }
    }

    /** A NULL from {@code mlx5dv_create_qp}: EOPNOTSUPP names the missing DC support, EINVAL the usual suspects. */
    static RuntimeException createFailed(String call, String device, int errno, String dcType) {
        return createFailed(call, device, errno, dcType, false);
    }

    /**
     * The same; {@code atomicsOff}: a DCI asked for atomics on a device whose {@code atomic_cap} is NONE, which
     * libmlx5 refuses with EOPNOTSUPP itself ({@code mlx5_qp_fill_wr_pfns}), DC support or not. (Every
     * {@link dev.panverbs.core.SendOperation} is in {@code MLX5_SUPPORTED_SEND_OPS_FLAGS_DCI}: no other is refused.)
     */
    static RuntimeException createFailed(String call, String device, int errno, String dcType, boolean atomicsOff) {
        String hint = atomicsOff && errno == verbs_h.EOPNOTSUPP()
                ? device + " has no atomics (atomic_cap IBV_ATOMIC_NONE) and libmlx5 refuses a QP with "
                + "ATOMIC_CMP_AND_SWP or ATOMIC_FETCH_AND_ADD in sendOps: leave them out"
                : errno == verbs_h.EOPNOTSUPP() || errno == verbs_h.EPROTONOSUPPORT()
                ? device + " (its kernel driver or firmware) does not create " + dcType + " queue pairs: no DC support"
                : errno == verbs_h.EINVAL() ? "check the queue sizes against the device's limits (DeviceAttributes)"
                + " and that the CQ" + (dcType.endsWith("DCT") ? ", the SRQ" : "") + " and the PD share the context"
                : null;
        return Errors.failure(call, errno, hint);
    }
}
