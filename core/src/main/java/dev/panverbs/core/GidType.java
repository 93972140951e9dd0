package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;

/** The type of a GID table entry, C {@code enum ibv_gid_type} ({@code ibv_query_gid_ex(3)}). */
public enum GidType {
    /** {@code IBV_GID_TYPE_IB}: an InfiniBand port GID. */
    IB(verbs_h.IBV_GID_TYPE_IB()),
    /** {@code IBV_GID_TYPE_ROCE_V1}: RoCE v1, carried directly over Ethernet (ethertype 0x8915), not routable. */
    ROCE_V1(verbs_h.IBV_GID_TYPE_ROCE_V1()),
    /** {@code IBV_GID_TYPE_ROCE_V2}: RoCE v2, over UDP/IP (port 4791), routable; what rxe and modern fabrics use. */
    ROCE_V2(verbs_h.IBV_GID_TYPE_ROCE_V2());

    private final int value;

    GidType(int value) {
        this.value = value;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    /** The constant for a C value. */
    public static GidType of(int value) {
        for (GidType t : values()) {
            if (t.value == value) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown ibv_gid_type " + value);
    }
}
