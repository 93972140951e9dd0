package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;

/** Automatic path migration state of a QP ({@code enum ibv_mig_state}, {@code ibv_modify_qp(3)}). */
public enum PathMigrationState {
    /** {@code IBV_MIG_MIGRATED}. */
    MIGRATED(verbs_h.IBV_MIG_MIGRATED()),
    /** {@code IBV_MIG_REARM}. */
    REARM(verbs_h.IBV_MIG_REARM()),
    /** {@code IBV_MIG_ARMED}. */
    ARMED(verbs_h.IBV_MIG_ARMED());

    private final int value;

    PathMigrationState(int value) {
        this.value = value;
    }

    /** The C value ({@code IBV_MIG_*}). */
    public int value() {
        return value;
    }

    /** The constant for a C {@code enum ibv_mig_state} value. */
    public static PathMigrationState of(int value) {
        for (PathMigrationState m : values()) {
            if (m.value == value) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown ibv_mig_state " + value);
    }
}
