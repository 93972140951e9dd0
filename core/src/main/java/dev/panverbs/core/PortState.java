package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;

/** The logical state of a port, C {@code enum ibv_port_state} ({@code ibv_query_port(3)}). */
public enum PortState {
    /** {@code IBV_PORT_NOP}: no state change (never reported by a query) */
    NOP(verbs_h.IBV_PORT_NOP()),
    /** {@code IBV_PORT_DOWN}: the physical link is down */
    DOWN(verbs_h.IBV_PORT_DOWN()),
    /** {@code IBV_PORT_INIT}: the link is up but the subnet manager has not configured the port: only MADs pass */
    INIT(verbs_h.IBV_PORT_INIT()),
    /** {@code IBV_PORT_ARMED}: configured, waiting for the neighbour; GIDs are valid */
    ARMED(verbs_h.IBV_PORT_ARMED()),
    /** {@code IBV_PORT_ACTIVE}: ready for traffic; GIDs are valid */
    ACTIVE(verbs_h.IBV_PORT_ACTIVE()),
    /** {@code IBV_PORT_ACTIVE_DEFER}: active, deferring state changes */
    ACTIVE_DEFER(verbs_h.IBV_PORT_ACTIVE_DEFER());

    private final int value;

    PortState(int value) {
        this.value = value;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    /** The constant for a C value. */
    public static PortState of(int value) {
        for (PortState c : values()) {
            if (c.value == value) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown ibv_port_state " + value);
    }
}
