package dev.panverbs.bindings.rdmacm;

import dev.panverbs.bindings.Downcalls;
import dev.panverbs.bindings.NativeLibraries;
import dev.panverbs.bindings.rdmacma.rdma_cma_h;
import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;
import java.util.function.Supplier;

/**
 * One {@code static final} downcall handle per librdmacm function that {@link LibRdmacm} binds, linked on its
 * first use with jextract's descriptors ({@code rdma_cma_h.X$descriptor()}). Functions that fail with -1 or NULL
 * and errno capture it ({@link dev.panverbs.bindings.Errno#CAPTURE}). None is critical: all enter the kernel
 * ({@code write(2)} on {@code /dev/infiniband/rdma_cm}), some block.
 *
 * <p>A field is {@code null} when librdmacm or the symbol is missing; {@link #linked} turns that into a
 * {@link dev.panverbs.bindings.NativeLibraryException} at the call.
 */
final class RdmacmHandles {

    private RdmacmHandles() {}

    static final MethodHandle rdma_create_event_channel = link("rdma_create_event_channel", rdma_cma_h::rdma_create_event_channel$descriptor, true);
    static final MethodHandle rdma_destroy_event_channel = link("rdma_destroy_event_channel", rdma_cma_h::rdma_destroy_event_channel$descriptor, false);
    static final MethodHandle rdma_create_id = link("rdma_create_id", rdma_cma_h::rdma_create_id$descriptor, true);
    static final MethodHandle rdma_destroy_id = link("rdma_destroy_id", rdma_cma_h::rdma_destroy_id$descriptor, true);
    static final MethodHandle rdma_bind_addr = link("rdma_bind_addr", rdma_cma_h::rdma_bind_addr$descriptor, true);
    static final MethodHandle rdma_resolve_addr = link("rdma_resolve_addr", rdma_cma_h::rdma_resolve_addr$descriptor, true);
    static final MethodHandle rdma_resolve_route = link("rdma_resolve_route", rdma_cma_h::rdma_resolve_route$descriptor, true);
    static final MethodHandle rdma_create_qp = link("rdma_create_qp", rdma_cma_h::rdma_create_qp$descriptor, true);
    static final MethodHandle rdma_destroy_qp = link("rdma_destroy_qp", rdma_cma_h::rdma_destroy_qp$descriptor, false);
    static final MethodHandle rdma_connect = link("rdma_connect", rdma_cma_h::rdma_connect$descriptor, true);
    static final MethodHandle rdma_establish = link("rdma_establish", rdma_cma_h::rdma_establish$descriptor, true);
    static final MethodHandle rdma_listen = link("rdma_listen", rdma_cma_h::rdma_listen$descriptor, true);
    static final MethodHandle rdma_accept = link("rdma_accept", rdma_cma_h::rdma_accept$descriptor, true);
    static final MethodHandle rdma_reject = link("rdma_reject", rdma_cma_h::rdma_reject$descriptor, true);
    static final MethodHandle rdma_notify = link("rdma_notify", rdma_cma_h::rdma_notify$descriptor, true);
    static final MethodHandle rdma_disconnect = link("rdma_disconnect", rdma_cma_h::rdma_disconnect$descriptor, true);
    static final MethodHandle rdma_join_multicast = link("rdma_join_multicast", rdma_cma_h::rdma_join_multicast$descriptor, true);
    static final MethodHandle rdma_leave_multicast = link("rdma_leave_multicast", rdma_cma_h::rdma_leave_multicast$descriptor, true);
    static final MethodHandle rdma_get_cm_event = link("rdma_get_cm_event", rdma_cma_h::rdma_get_cm_event$descriptor, true);
    static final MethodHandle rdma_ack_cm_event = link("rdma_ack_cm_event", rdma_cma_h::rdma_ack_cm_event$descriptor, true);
    static final MethodHandle rdma_get_src_port = link("rdma_get_src_port", rdma_cma_h::rdma_get_src_port$descriptor, false);
    static final MethodHandle rdma_get_dst_port = link("rdma_get_dst_port", rdma_cma_h::rdma_get_dst_port$descriptor, false);
    static final MethodHandle rdma_event_str = link("rdma_event_str", rdma_cma_h::rdma_event_str$descriptor, false);
    static final MethodHandle rdma_set_option = link("rdma_set_option", rdma_cma_h::rdma_set_option$descriptor, true);
    static final MethodHandle rdma_migrate_id = link("rdma_migrate_id", rdma_cma_h::rdma_migrate_id$descriptor, true);
    static final MethodHandle rdma_init_qp_attr = link("rdma_init_qp_attr", rdma_cma_h::rdma_init_qp_attr$descriptor, true);
    static final MethodHandle rdma_get_devices = link("rdma_get_devices", rdma_cma_h::rdma_get_devices$descriptor, true);
    static final MethodHandle rdma_free_devices = link("rdma_free_devices", rdma_cma_h::rdma_free_devices$descriptor, false);

    /** {@link Downcalls#link} in librdmacm. */
    static MethodHandle link(String symbol, Supplier<FunctionDescriptor> descriptor, boolean captureErrno) {
        return Downcalls.link(NativeLibraries::rdmacmSymbol, symbol, descriptor, captureErrno);
    }

    /** {@link Downcalls#linked} in librdmacm: {@code handle}, or the exception naming the missing library or symbol. */
    static MethodHandle linked(MethodHandle handle, String symbol) {
        return Downcalls.linked(handle, NativeLibraries::rdmacmSymbol, symbol);
    }
}
