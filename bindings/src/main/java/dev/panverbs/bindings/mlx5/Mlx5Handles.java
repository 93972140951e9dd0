package dev.panverbs.bindings.mlx5;

import dev.panverbs.bindings.Downcalls;
import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.NativeLibraries;
import dev.panverbs.bindings.mlx5dv.mlx5dv_h;
import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;
import java.util.function.Supplier;

/**
 * One {@code static final} downcall handle per libmlx5 function of {@link LibMlx5}, linked on its first use, as
 * {@code ibverbs.IbverbsHandles} does for libibverbs. Descriptors are jextract's ({@code mlx5dv_h.X$descriptor()}),
 * so they follow the installed header. Handles whose C contract is "NULL, reason in errno" capture {@code errno}
 * ({@link Errno#CAPTURE}). None is critical: these are control-path functions that enter the kernel.
 *
 * <p>A field is {@code null} when libmlx5 or the symbol cannot be resolved; {@link #linked} turns that into a
 * {@link dev.panverbs.bindings.NativeLibraryException} naming {@code ibverbs-providers} at the call.
 */
final class Mlx5Handles {

    private Mlx5Handles() {}

    // devices and contexts
    static final MethodHandle mlx5dv_is_supported =
            link("mlx5dv_is_supported", mlx5dv_h::mlx5dv_is_supported$descriptor, false);
    static final MethodHandle mlx5dv_open_device =
            link("mlx5dv_open_device", mlx5dv_h::mlx5dv_open_device$descriptor, true);
    static final MethodHandle mlx5dv_query_device =
            link("mlx5dv_query_device", mlx5dv_h::mlx5dv_query_device$descriptor, false);
    static final MethodHandle mlx5dv_init_obj =
            link("mlx5dv_init_obj", mlx5dv_h::mlx5dv_init_obj$descriptor, false);
    static final MethodHandle mlx5dv_set_context_attr =
            link("mlx5dv_set_context_attr", mlx5dv_h::mlx5dv_set_context_attr$descriptor, false);
    static final MethodHandle mlx5dv_get_clock_info =
            link("mlx5dv_get_clock_info", mlx5dv_h::mlx5dv_get_clock_info$descriptor, false);

    // queue pairs, completion queues, device memory
    static final MethodHandle mlx5dv_create_qp =
            link("mlx5dv_create_qp", mlx5dv_h::mlx5dv_create_qp$descriptor, true);
    static final MethodHandle mlx5dv_qp_ex_from_ibv_qp_ex =
            link("mlx5dv_qp_ex_from_ibv_qp_ex", mlx5dv_h::mlx5dv_qp_ex_from_ibv_qp_ex$descriptor, false);
    static final MethodHandle mlx5dv_dci_stream_id_reset =
            link("mlx5dv_dci_stream_id_reset", mlx5dv_h::mlx5dv_dci_stream_id_reset$descriptor, false);
    static final MethodHandle mlx5dv_map_ah_to_qp =
            link("mlx5dv_map_ah_to_qp", mlx5dv_h::mlx5dv_map_ah_to_qp$descriptor, false);
    static final MethodHandle mlx5dv_query_qp_lag_port =
            link("mlx5dv_query_qp_lag_port", mlx5dv_h::mlx5dv_query_qp_lag_port$descriptor, false);
    static final MethodHandle mlx5dv_modify_qp_lag_port =
            link("mlx5dv_modify_qp_lag_port", mlx5dv_h::mlx5dv_modify_qp_lag_port$descriptor, false);
    static final MethodHandle mlx5dv_modify_qp_udp_sport =
            link("mlx5dv_modify_qp_udp_sport", mlx5dv_h::mlx5dv_modify_qp_udp_sport$descriptor, false);
    static final MethodHandle mlx5dv_reserved_qpn_alloc =
            link("mlx5dv_reserved_qpn_alloc", mlx5dv_h::mlx5dv_reserved_qpn_alloc$descriptor, false);
    static final MethodHandle mlx5dv_reserved_qpn_dealloc =
            link("mlx5dv_reserved_qpn_dealloc", mlx5dv_h::mlx5dv_reserved_qpn_dealloc$descriptor, false);
    static final MethodHandle mlx5dv_create_cq =
            link("mlx5dv_create_cq", mlx5dv_h::mlx5dv_create_cq$descriptor, true);
    static final MethodHandle mlx5dv_alloc_dm =
            link("mlx5dv_alloc_dm", mlx5dv_h::mlx5dv_alloc_dm$descriptor, true);

    // memory keys
    static final MethodHandle mlx5dv_create_mkey =
            link("mlx5dv_create_mkey", mlx5dv_h::mlx5dv_create_mkey$descriptor, true);
    static final MethodHandle mlx5dv_destroy_mkey =
            link("mlx5dv_destroy_mkey", mlx5dv_h::mlx5dv_destroy_mkey$descriptor, false);

    // size-taking functions behind mlx5dv.h inlines
    static final MethodHandle _mlx5dv_query_port =
            link("_mlx5dv_query_port", mlx5dv_h::_mlx5dv_query_port$descriptor, false);
    static final MethodHandle _mlx5dv_mkey_check =
            link("_mlx5dv_mkey_check", mlx5dv_h::_mlx5dv_mkey_check$descriptor, false);

    /** {@link Downcalls#link} in libmlx5. */
    static MethodHandle link(String symbol, Supplier<FunctionDescriptor> descriptor, boolean captureErrno) {
        return Downcalls.link(NativeLibraries::mlx5Symbol, symbol, descriptor, captureErrno);
    }

    /** {@link Downcalls#linked} in libmlx5: {@code handle}, or the exception naming the missing library or symbol. */
    static MethodHandle linked(MethodHandle handle, String symbol) {
        return Downcalls.linked(handle, NativeLibraries::mlx5Symbol, symbol);
    }
}
