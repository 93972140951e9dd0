package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;

/** The node type of a device, C {@code enum ibv_node_type} ({@code ibv_node_type_str(3)}). */
public enum NodeType {
    /** {@code IBV_NODE_UNKNOWN}. */
    UNKNOWN(verbs_h.IBV_NODE_UNKNOWN()),
    /** {@code IBV_NODE_CA}: a channel adapter (HCA, also every RoCE NIC and rxe). */
    CA(verbs_h.IBV_NODE_CA()),
    /** {@code IBV_NODE_SWITCH}. */
    SWITCH(verbs_h.IBV_NODE_SWITCH()),
    /** {@code IBV_NODE_ROUTER}. */
    ROUTER(verbs_h.IBV_NODE_ROUTER()),
    /** {@code IBV_NODE_RNIC}: an iWARP NIC. */
    RNIC(verbs_h.IBV_NODE_RNIC()),
    /** {@code IBV_NODE_USNIC}. */
    USNIC(verbs_h.IBV_NODE_USNIC()),
    /** {@code IBV_NODE_USNIC_UDP}. */
    USNIC_UDP(verbs_h.IBV_NODE_USNIC_UDP()),
    /** {@code IBV_NODE_UNSPECIFIED}: a device that is none of the above (e.g. EFA). */
    UNSPECIFIED(verbs_h.IBV_NODE_UNSPECIFIED());

    private final int value;

    NodeType(int value) {
        this.value = value;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    /** The constant for a C value; {@link #UNKNOWN} for values this version does not know. */
    public static NodeType of(int value) {
        for (NodeType t : values()) {
            if (t.value == value) {
                return t;
            }
        }
        return UNKNOWN;
    }
}
