package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;

/**
 * An InfiniBand path MTU ({@code enum ibv_mtu}): the payload size of one packet. Used for
 * {@link QueuePairAttributes#pathMtu(Mtu)}; must not exceed the port's active MTU.
 */
public enum Mtu {
    /** {@code IBV_MTU_256}. */
    MTU_256(verbs_h.IBV_MTU_256(), 256),
    /** {@code IBV_MTU_512}. */
    MTU_512(verbs_h.IBV_MTU_512(), 512),
    /** {@code IBV_MTU_1024}. */
    MTU_1024(verbs_h.IBV_MTU_1024(), 1024),
    /** {@code IBV_MTU_2048}. */
    MTU_2048(verbs_h.IBV_MTU_2048(), 2048),
    /** {@code IBV_MTU_4096}. */
    MTU_4096(verbs_h.IBV_MTU_4096(), 4096);

    private final int value;
    private final int bytes;

    Mtu(int value, int bytes) {
        this.value = value;
        this.bytes = bytes;
    }

    /** The C value ({@code IBV_MTU_*}, 1 for 256 up to 5 for 4096). */
    public int value() {
        return value;
    }

    /** The MTU in bytes. */
    public int bytes() {
        return bytes;
    }

    /** The constant for a C {@code enum ibv_mtu} value. */
    public static Mtu of(int value) {
        for (Mtu m : values()) {
            if (m.value == value) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown ibv_mtu " + value);
    }
}
