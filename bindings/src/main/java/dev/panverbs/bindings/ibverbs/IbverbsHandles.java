package dev.panverbs.bindings.ibverbs;

import dev.panverbs.bindings.Downcalls;
import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.NativeLibraries;
import dev.panverbs.bindings.verbs.verbs_h;
import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;
import java.util.function.Supplier;

/**
 * One {@code static final} downcall handle per exported libibverbs function, linked on first use of
 * {@link LibIbverbs}, {@link LibIbverbsQueues} or {@link LibIbverbsStrings}. Descriptors are jextract's
 * ({@code verbs_h.X$descriptor()}), so they follow the installed header. Handles whose C contract is "NULL or -1,
 * reason in errno" capture {@code errno} ({@link Errno#CAPTURE}). None is critical: these are control-path verbs
 * that enter the kernel, and two of them ({@code ibv_get_cq_event}, {@code ibv_get_async_event}) block.
 *
 * <p>A field is {@code null} when its symbol cannot be resolved; {@link #linked} turns that into a
 * {@link dev.panverbs.bindings.NativeLibraryException} at the call.
 */
final class IbverbsHandles {

    private IbverbsHandles() {}

    // devices and contexts
    static final MethodHandle ibv_get_device_list =
            link("ibv_get_device_list", verbs_h::ibv_get_device_list$descriptor, true);
    static final MethodHandle ibv_free_device_list =
            link("ibv_free_device_list", verbs_h::ibv_free_device_list$descriptor, false);
    static final MethodHandle ibv_get_device_name =
            link("ibv_get_device_name", verbs_h::ibv_get_device_name$descriptor, false);
    static final MethodHandle ibv_get_device_guid =
            link("ibv_get_device_guid", verbs_h::ibv_get_device_guid$descriptor, false);
    static final MethodHandle ibv_get_device_index =
            link("ibv_get_device_index", verbs_h::ibv_get_device_index$descriptor, false);
    static final MethodHandle ibv_open_device = link("ibv_open_device", verbs_h::ibv_open_device$descriptor, true);
    static final MethodHandle ibv_close_device = link("ibv_close_device", verbs_h::ibv_close_device$descriptor, false);
    static final MethodHandle ibv_import_device =
            link("ibv_import_device", verbs_h::ibv_import_device$descriptor, true);
    static final MethodHandle ibv_fork_init = link("ibv_fork_init", verbs_h::ibv_fork_init$descriptor, false);
    static final MethodHandle ibv_is_fork_initialized =
            link("ibv_is_fork_initialized", verbs_h::ibv_is_fork_initialized$descriptor, false);

    // device, port, GID and P_Key queries
    static final MethodHandle ibv_query_device = link("ibv_query_device", verbs_h::ibv_query_device$descriptor, false);
    static final MethodHandle ibv_query_port = link("ibv_query_port", verbs_h::ibv_query_port$descriptor, false);
    static final MethodHandle ibv_query_gid = link("ibv_query_gid", verbs_h::ibv_query_gid$descriptor, true);
    static final MethodHandle _ibv_query_gid_ex =
            link("_ibv_query_gid_ex", verbs_h::_ibv_query_gid_ex$descriptor, false);
    static final MethodHandle _ibv_query_gid_table =
            link("_ibv_query_gid_table", verbs_h::_ibv_query_gid_table$descriptor, false);
    static final MethodHandle ibv_query_pkey = link("ibv_query_pkey", verbs_h::ibv_query_pkey$descriptor, true);
    static final MethodHandle ibv_get_pkey_index =
            link("ibv_get_pkey_index", verbs_h::ibv_get_pkey_index$descriptor, true);

    // protection domains
    static final MethodHandle ibv_alloc_pd = link("ibv_alloc_pd", verbs_h::ibv_alloc_pd$descriptor, true);
    static final MethodHandle ibv_dealloc_pd = link("ibv_dealloc_pd", verbs_h::ibv_dealloc_pd$descriptor, false);
    static final MethodHandle ibv_import_pd = link("ibv_import_pd", verbs_h::ibv_import_pd$descriptor, true);
    static final MethodHandle ibv_unimport_pd = link("ibv_unimport_pd", verbs_h::ibv_unimport_pd$descriptor, false);

    // memory regions and device memory import
    static final MethodHandle ibv_reg_mr = link("ibv_reg_mr", verbs_h::ibv_reg_mr$descriptor, true);
    static final MethodHandle ibv_reg_mr_iova = link("ibv_reg_mr_iova", verbs_h::ibv_reg_mr_iova$descriptor, true);
    static final MethodHandle ibv_reg_mr_iova2 = link("ibv_reg_mr_iova2", verbs_h::ibv_reg_mr_iova2$descriptor, true);
    static final MethodHandle ibv_reg_dmabuf_mr =
            link("ibv_reg_dmabuf_mr", verbs_h::ibv_reg_dmabuf_mr$descriptor, true);
    static final MethodHandle ibv_rereg_mr = link("ibv_rereg_mr", verbs_h::ibv_rereg_mr$descriptor, true);
    static final MethodHandle ibv_dereg_mr = link("ibv_dereg_mr", verbs_h::ibv_dereg_mr$descriptor, false);
    static final MethodHandle ibv_import_mr = link("ibv_import_mr", verbs_h::ibv_import_mr$descriptor, true);
    static final MethodHandle ibv_unimport_mr = link("ibv_unimport_mr", verbs_h::ibv_unimport_mr$descriptor, false);
    static final MethodHandle ibv_import_dm = link("ibv_import_dm", verbs_h::ibv_import_dm$descriptor, true);
    static final MethodHandle ibv_unimport_dm = link("ibv_unimport_dm", verbs_h::ibv_unimport_dm$descriptor, false);

    // completion channels and completion queues
    static final MethodHandle ibv_create_comp_channel =
            link("ibv_create_comp_channel", verbs_h::ibv_create_comp_channel$descriptor, true);
    static final MethodHandle ibv_destroy_comp_channel =
            link("ibv_destroy_comp_channel", verbs_h::ibv_destroy_comp_channel$descriptor, false);
    static final MethodHandle ibv_create_cq = link("ibv_create_cq", verbs_h::ibv_create_cq$descriptor, true);
    static final MethodHandle ibv_resize_cq = link("ibv_resize_cq", verbs_h::ibv_resize_cq$descriptor, false);
    static final MethodHandle ibv_destroy_cq = link("ibv_destroy_cq", verbs_h::ibv_destroy_cq$descriptor, false);
    static final MethodHandle ibv_get_cq_event = link("ibv_get_cq_event", verbs_h::ibv_get_cq_event$descriptor, true);
    static final MethodHandle ibv_ack_cq_events =
            link("ibv_ack_cq_events", verbs_h::ibv_ack_cq_events$descriptor, false);

    // queue pairs
    static final MethodHandle ibv_create_qp = link("ibv_create_qp", verbs_h::ibv_create_qp$descriptor, true);
    static final MethodHandle ibv_query_qp = link("ibv_query_qp", verbs_h::ibv_query_qp$descriptor, false);
    static final MethodHandle ibv_modify_qp = link("ibv_modify_qp", verbs_h::ibv_modify_qp$descriptor, false);
    static final MethodHandle ibv_destroy_qp = link("ibv_destroy_qp", verbs_h::ibv_destroy_qp$descriptor, false);
    static final MethodHandle ibv_qp_to_qp_ex = link("ibv_qp_to_qp_ex", verbs_h::ibv_qp_to_qp_ex$descriptor, false);
    static final MethodHandle ibv_query_qp_data_in_order =
            link("ibv_query_qp_data_in_order", verbs_h::ibv_query_qp_data_in_order$descriptor, false);
    static final MethodHandle ibv_query_ece = link("ibv_query_ece", verbs_h::ibv_query_ece$descriptor, false);
    static final MethodHandle ibv_set_ece = link("ibv_set_ece", verbs_h::ibv_set_ece$descriptor, false);
    static final MethodHandle ibv_attach_mcast = link("ibv_attach_mcast", verbs_h::ibv_attach_mcast$descriptor, false);
    static final MethodHandle ibv_detach_mcast = link("ibv_detach_mcast", verbs_h::ibv_detach_mcast$descriptor, false);

    // shared receive queues
    static final MethodHandle ibv_create_srq = link("ibv_create_srq", verbs_h::ibv_create_srq$descriptor, true);
    static final MethodHandle ibv_modify_srq = link("ibv_modify_srq", verbs_h::ibv_modify_srq$descriptor, false);
    static final MethodHandle ibv_query_srq = link("ibv_query_srq", verbs_h::ibv_query_srq$descriptor, false);
    static final MethodHandle ibv_destroy_srq = link("ibv_destroy_srq", verbs_h::ibv_destroy_srq$descriptor, false);

    // address handles
    static final MethodHandle ibv_create_ah = link("ibv_create_ah", verbs_h::ibv_create_ah$descriptor, true);
    static final MethodHandle ibv_destroy_ah = link("ibv_destroy_ah", verbs_h::ibv_destroy_ah$descriptor, false);
    static final MethodHandle ibv_init_ah_from_wc =
            link("ibv_init_ah_from_wc", verbs_h::ibv_init_ah_from_wc$descriptor, true);
    static final MethodHandle ibv_create_ah_from_wc =
            link("ibv_create_ah_from_wc", verbs_h::ibv_create_ah_from_wc$descriptor, true);
    static final MethodHandle ibv_resolve_eth_l2_from_gid =
            link("ibv_resolve_eth_l2_from_gid", verbs_h::ibv_resolve_eth_l2_from_gid$descriptor, false);

    // asynchronous events
    static final MethodHandle ibv_get_async_event =
            link("ibv_get_async_event", verbs_h::ibv_get_async_event$descriptor, true);
    static final MethodHandle ibv_ack_async_event =
            link("ibv_ack_async_event", verbs_h::ibv_ack_async_event$descriptor, false);

    // enum-to-text and rate helpers (pure, never fail)
    static final MethodHandle ibv_event_type_str =
            link("ibv_event_type_str", verbs_h::ibv_event_type_str$descriptor, false);
    static final MethodHandle ibv_wc_status_str =
            link("ibv_wc_status_str", verbs_h::ibv_wc_status_str$descriptor, false);
    static final MethodHandle ibv_node_type_str =
            link("ibv_node_type_str", verbs_h::ibv_node_type_str$descriptor, false);
    static final MethodHandle ibv_port_state_str =
            link("ibv_port_state_str", verbs_h::ibv_port_state_str$descriptor, false);
    static final MethodHandle ibv_rate_to_mbps = link("ibv_rate_to_mbps", verbs_h::ibv_rate_to_mbps$descriptor, false);
    static final MethodHandle ibv_rate_to_mult = link("ibv_rate_to_mult", verbs_h::ibv_rate_to_mult$descriptor, false);
    static final MethodHandle mbps_to_ibv_rate = link("mbps_to_ibv_rate", verbs_h::mbps_to_ibv_rate$descriptor, false);
    static final MethodHandle mult_to_ibv_rate = link("mult_to_ibv_rate", verbs_h::mult_to_ibv_rate$descriptor, false);

    /** {@link Downcalls#link} in libibverbs. */
    static MethodHandle link(String symbol, Supplier<FunctionDescriptor> descriptor, boolean captureErrno) {
        return Downcalls.link(NativeLibraries::ibverbsSymbol, symbol, descriptor, captureErrno);
    }

    /** {@link Downcalls#linked} in libibverbs: {@code handle}, or the exception naming the missing library or symbol. */
    static MethodHandle linked(MethodHandle handle, String symbol) {
        return Downcalls.linked(handle, NativeLibraries::ibverbsSymbol, symbol);
    }
}
