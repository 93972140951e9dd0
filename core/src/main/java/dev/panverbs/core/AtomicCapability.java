package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;

/** How atomic operations are supported, C {@code enum ibv_atomic_cap} ({@code ibv_device_attr.atomic_cap}). */
public enum AtomicCapability {
    /** {@code IBV_ATOMIC_NONE}: no atomics; REMOTE_ATOMIC MRs and atomic work requests are refused. */
    NONE(verbs_h.IBV_ATOMIC_NONE()),
    /** {@code IBV_ATOMIC_HCA}: atomic among operations through this HCA only (not against the CPU). */
    HCA(verbs_h.IBV_ATOMIC_HCA()),
    /** {@code IBV_ATOMIC_GLOB}: atomic against every other agent, the CPU included. */
    GLOB(verbs_h.IBV_ATOMIC_GLOB());

    private final int value;

    AtomicCapability(int value) {
        this.value = value;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    /** The constant for a C value. */
    public static AtomicCapability of(int value) {
        for (AtomicCapability c : values()) {
            if (c.value == value) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown ibv_atomic_cap " + value);
    }
}
