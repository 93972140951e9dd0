package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;

/** The link layer of a port ({@code ibv_port_attr.link_layer}, {@code IBV_LINK_LAYER_*}). */
public enum LinkLayer {
    /** {@code IBV_LINK_LAYER_UNSPECIFIED}: the provider does not say (legacy; treated as InfiniBand) */
    UNSPECIFIED(verbs_h.IBV_LINK_LAYER_UNSPECIFIED()),
    /** {@code IBV_LINK_LAYER_INFINIBAND}: an InfiniBand port: addressed by LID, GRH optional */
    INFINIBAND(verbs_h.IBV_LINK_LAYER_INFINIBAND()),
    /** {@code IBV_LINK_LAYER_ETHERNET}: a RoCE port (including rxe): LID is 0, every address needs a GRH with a GID index */
    ETHERNET(verbs_h.IBV_LINK_LAYER_ETHERNET());

    private final int value;

    LinkLayer(int value) {
        this.value = value;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    /** The constant for a C value. */
    public static LinkLayer of(int value) {
        for (LinkLayer c : values()) {
            if (c.value == value) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown link layer " + value);
    }
}
