package dev.panverbs.core.cm;

import dev.panverbs.bindings.rdmacma.rdma_cma_h;

/**
 * {@code enum rdma_cm_event_type} ({@code rdma_get_cm_event(3)}).
 */
public enum CmEventType {
    /** {@code RDMA_CM_EVENT_ADDR_RESOLVED}: {@code rdma_resolve_addr} found the local device and the peer's address. */
    ADDR_RESOLVED(rdma_cma_h.RDMA_CM_EVENT_ADDR_RESOLVED()),
    /** {@code RDMA_CM_EVENT_ADDR_ERROR}: address resolution failed (no route, no neighbour in time). */
    ADDR_ERROR(rdma_cma_h.RDMA_CM_EVENT_ADDR_ERROR()),
    /** {@code RDMA_CM_EVENT_ROUTE_RESOLVED}. */
    ROUTE_RESOLVED(rdma_cma_h.RDMA_CM_EVENT_ROUTE_RESOLVED()),
    /** {@code RDMA_CM_EVENT_ROUTE_ERROR}. */
    ROUTE_ERROR(rdma_cma_h.RDMA_CM_EVENT_ROUTE_ERROR()),
    /** {@code RDMA_CM_EVENT_CONNECT_REQUEST}: on a listener; the event's ID is the new passive-side ID. */
    CONNECT_REQUEST(rdma_cma_h.RDMA_CM_EVENT_CONNECT_REQUEST()),
    /** {@code RDMA_CM_EVENT_CONNECT_RESPONSE}: for an active ID without a QP ({@code rdma_establish} follows). */
    CONNECT_RESPONSE(rdma_cma_h.RDMA_CM_EVENT_CONNECT_RESPONSE()),
    /** {@code RDMA_CM_EVENT_CONNECT_ERROR}. */
    CONNECT_ERROR(rdma_cma_h.RDMA_CM_EVENT_CONNECT_ERROR()),
    /** {@code RDMA_CM_EVENT_UNREACHABLE}: the peer did not answer, or is not reachable. */
    UNREACHABLE(rdma_cma_h.RDMA_CM_EVENT_UNREACHABLE()),
    /** {@code RDMA_CM_EVENT_REJECTED}: the peer (or its CM: no listener) rejected the connection. */
    REJECTED(rdma_cma_h.RDMA_CM_EVENT_REJECTED()),
    /** {@code RDMA_CM_EVENT_ESTABLISHED}. */
    ESTABLISHED(rdma_cma_h.RDMA_CM_EVENT_ESTABLISHED()),
    /** {@code RDMA_CM_EVENT_DISCONNECTED}: either side called {@code rdma_disconnect}, or the connection was lost. */
    DISCONNECTED(rdma_cma_h.RDMA_CM_EVENT_DISCONNECTED()),
    /** {@code RDMA_CM_EVENT_DEVICE_REMOVAL}. */
    DEVICE_REMOVAL(rdma_cma_h.RDMA_CM_EVENT_DEVICE_REMOVAL()),
    /** {@code RDMA_CM_EVENT_MULTICAST_JOIN}. */
    MULTICAST_JOIN(rdma_cma_h.RDMA_CM_EVENT_MULTICAST_JOIN()),
    /** {@code RDMA_CM_EVENT_MULTICAST_ERROR}. */
    MULTICAST_ERROR(rdma_cma_h.RDMA_CM_EVENT_MULTICAST_ERROR()),
    /** {@code RDMA_CM_EVENT_ADDR_CHANGE}. */
    ADDR_CHANGE(rdma_cma_h.RDMA_CM_EVENT_ADDR_CHANGE()),
    /** {@code RDMA_CM_EVENT_TIMEWAIT_EXIT}: the QP left the CM's time-wait state and may be reused. */
    TIMEWAIT_EXIT(rdma_cma_h.RDMA_CM_EVENT_TIMEWAIT_EXIT());

    private static final CmEventType[] BY_VALUE = new CmEventType[32];

    static {
        for (CmEventType t : values()) {
            BY_VALUE[t.value] = t;
        }
    }

    private final int value;

    CmEventType(int value) {
        this.value = value;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    /** The type with C value {@code value}; {@link IllegalArgumentException} for one rdma-core 44 does not define. */
    public static CmEventType of(int value) {
        CmEventType t = value >= 0 && value < BY_VALUE.length ? BY_VALUE[value] : null;
        if (t == null) {
            throw new IllegalArgumentException("unknown rdma_cm_event_type " + value);
        }
        return t;
    }

    /** Whether the event reports a failure of the step it answers (address, route, connection). */
    public boolean isError() {
        return switch (this) {
            case ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED, MULTICAST_ERROR, DEVICE_REMOVAL -> true;
            default -> false;
        };
    }
}
