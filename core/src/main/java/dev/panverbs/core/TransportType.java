package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;

/** The transport of a device, C {@code enum ibv_transport_type}. RoCE devices (and rxe) report {@link #IB}. */
public enum TransportType {
    /** {@code IBV_TRANSPORT_UNKNOWN}. */
    UNKNOWN(verbs_h.IBV_TRANSPORT_UNKNOWN()),
    /** {@code IBV_TRANSPORT_IB}: InfiniBand transport, over an IB or Ethernet (RoCE) link. */
    IB(verbs_h.IBV_TRANSPORT_IB()),
    /** {@code IBV_TRANSPORT_IWARP}. */
    IWARP(verbs_h.IBV_TRANSPORT_IWARP()),
    /** {@code IBV_TRANSPORT_USNIC}. */
    USNIC(verbs_h.IBV_TRANSPORT_USNIC()),
    /** {@code IBV_TRANSPORT_USNIC_UDP}. */
    USNIC_UDP(verbs_h.IBV_TRANSPORT_USNIC_UDP()),
    /** {@code IBV_TRANSPORT_UNSPECIFIED}. */
    UNSPECIFIED(verbs_h.IBV_TRANSPORT_UNSPECIFIED());

    private final int value;

    TransportType(int value) {
        this.value = value;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    /** The constant for a C value; {@link #UNKNOWN} for values this version does not know. */
    public static TransportType of(int value) {
        for (TransportType t : values()) {
            if (t.value == value) {
                return t;
            }
        }
        return UNKNOWN;
    }
}
