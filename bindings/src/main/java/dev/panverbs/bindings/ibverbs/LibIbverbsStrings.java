package dev.panverbs.bindings.ibverbs;

import dev.panverbs.bindings.Downcalls;
import java.lang.foreign.MemorySegment;

/**
 * Exported libibverbs enum-to-text and rate helpers (rdma-core 44, {@code <infiniband/verbs.h>}):
 * {@code ibv_*_str}, {@code ibv_rate_to_*}, {@code *_to_ibv_rate}, with the conventions of {@link LibIbverbs}. They
 * are pure and never fail; a string they return is static, never freed.
 */
public final class LibIbverbsStrings {

    private LibIbverbsStrings() {}

    /** {@code const char *ibv_event_type_str(enum ibv_event_type event)}: a static string. */
    public static MemorySegment ibv_event_type_str(int event) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_event_type_str, "ibv_event_type_str")
                    .invokeExact(event);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code const char *ibv_wc_status_str(enum ibv_wc_status status)}: a static string. */
    public static MemorySegment ibv_wc_status_str(int status) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_wc_status_str, "ibv_wc_status_str")
                    .invokeExact(status);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code const char *ibv_node_type_str(enum ibv_node_type node_type)}: a static string. */
    public static MemorySegment ibv_node_type_str(int nodeType) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_node_type_str, "ibv_node_type_str")
                    .invokeExact(nodeType);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code const char *ibv_port_state_str(enum ibv_port_state port_state)}: a static string. */
    public static MemorySegment ibv_port_state_str(int portState) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_port_state_str, "ibv_port_state_str")
                    .invokeExact(portState);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int ibv_rate_to_mbps(enum ibv_rate rate)}: -1 for an unknown rate. */
    public static int ibv_rate_to_mbps(int rate) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_rate_to_mbps, "ibv_rate_to_mbps").invokeExact(rate);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int ibv_rate_to_mult(enum ibv_rate rate)}: -1 for an unknown rate. */
    public static int ibv_rate_to_mult(int rate) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_rate_to_mult, "ibv_rate_to_mult").invokeExact(rate);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code enum ibv_rate mbps_to_ibv_rate(int mbps)}: {@code IBV_RATE_MAX} (0) when none matches. */
    public static int mbps_to_ibv_rate(int mbps) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.mbps_to_ibv_rate, "mbps_to_ibv_rate").invokeExact(mbps);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code enum ibv_rate mult_to_ibv_rate(int mult)}: {@code IBV_RATE_MAX} (0) when none matches. */
    public static int mult_to_ibv_rate(int mult) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.mult_to_ibv_rate, "mult_to_ibv_rate").invokeExact(mult);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }
}
