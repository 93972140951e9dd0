package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;

/** The type of a memory window, C {@code enum ibv_mw_type} ({@code ibv_alloc_mw(3)}). */
public enum MemoryWindowType {
    /**
     * {@code IBV_MW_TYPE_1}: bound with {@code ibv_bind_mw(3)} ({@link MemoryWindow#bind}); the provider picks the
     * new rkey. Needs {@code IBV_DEVICE_MEM_WINDOW}.
     */
    TYPE_1(verbs_h.IBV_MW_TYPE_1(), DeviceCapability.MEM_WINDOW),
    /**
     * {@code IBV_MW_TYPE_2}: bound by an {@code IBV_WR_BIND_MW} work request on a QP's send queue
     * ({@link PostBatch#bindMw}) with an rkey the caller chooses, invalidated by {@code IBV_WR_LOCAL_INV} or by the
     * peer's {@code SEND_WITH_INV}. Needs {@code IBV_DEVICE_MEM_WINDOW_TYPE_2A} or {@code _2B}.
     */
    TYPE_2(verbs_h.IBV_MW_TYPE_2(), DeviceCapability.MEM_WINDOW_TYPE_2B);

    private final int value;
    private final DeviceCapability capability;

    MemoryWindowType(int value, DeviceCapability capability) {
        this.value = value;
        this.capability = capability;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    /** Whether a device with {@code a} can allocate windows of this type. */
    boolean supportedBy(DeviceAttributes a) {
        if (a.limits().maxMw() <= 0) {
            return false;
        }
        return this == TYPE_1 ? a.has(DeviceCapability.MEM_WINDOW)
                : a.has(DeviceCapability.MEM_WINDOW_TYPE_2A) || a.has(capability);
    }

    /** The capability flag(s) named in a refusal. */
    String capabilityName() {
        return this == TYPE_1 ? "IBV_DEVICE_MEM_WINDOW" : "IBV_DEVICE_MEM_WINDOW_TYPE_2A or _2B";
    }
}
