package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;
import java.util.EnumSet;

/**
 * A device capability bit: C {@code enum ibv_device_cap_flags} ({@code ibv_device_attr.device_cap_flags}) and
 * the 64-bit extensions in {@code ibv_device_attr_ex.device_cap_flags_ex}. Numeric values come from the
 * generated constants.
 */
public enum DeviceCapability {
    /** {@code IBV_DEVICE_RESIZE_MAX_WR}. */
    RESIZE_MAX_WR(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_RESIZE_MAX_WR())),
    /** {@code IBV_DEVICE_BAD_PKEY_CNTR}. */
    BAD_PKEY_CNTR(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_BAD_PKEY_CNTR())),
    /** {@code IBV_DEVICE_BAD_QKEY_CNTR}. */
    BAD_QKEY_CNTR(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_BAD_QKEY_CNTR())),
    /** {@code IBV_DEVICE_RAW_MULTI}. */
    RAW_MULTI(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_RAW_MULTI())),
    /** {@code IBV_DEVICE_AUTO_PATH_MIG}: automatic path migration. */
    AUTO_PATH_MIG(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_AUTO_PATH_MIG())),
    /** {@code IBV_DEVICE_CHANGE_PHY_PORT}. */
    CHANGE_PHY_PORT(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_CHANGE_PHY_PORT())),
    /** {@code IBV_DEVICE_UD_AV_PORT_ENFORCE}. */
    UD_AV_PORT_ENFORCE(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_UD_AV_PORT_ENFORCE())),
    /** {@code IBV_DEVICE_CURR_QP_STATE_MOD}. */
    CURR_QP_STATE_MOD(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_CURR_QP_STATE_MOD())),
    /** {@code IBV_DEVICE_SHUTDOWN_PORT}. */
    SHUTDOWN_PORT(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_SHUTDOWN_PORT())),
    /** {@code IBV_DEVICE_INIT_TYPE}. */
    INIT_TYPE(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_INIT_TYPE())),
    /** {@code IBV_DEVICE_PORT_ACTIVE_EVENT}: the device generates PORT_ACTIVE async events. */
    PORT_ACTIVE_EVENT(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_PORT_ACTIVE_EVENT())),
    /** {@code IBV_DEVICE_SYS_IMAGE_GUID}. */
    SYS_IMAGE_GUID(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_SYS_IMAGE_GUID())),
    /** {@code IBV_DEVICE_RC_RNR_NAK_GEN}: RC receivers generate RNR NAKs. */
    RC_RNR_NAK_GEN(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_RC_RNR_NAK_GEN())),
    /** {@code IBV_DEVICE_SRQ_RESIZE}: SRQs can be resized. */
    SRQ_RESIZE(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_SRQ_RESIZE())),
    /** {@code IBV_DEVICE_N_NOTIFY_CQ}: CQs can be armed for N completions. */
    N_NOTIFY_CQ(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_N_NOTIFY_CQ())),
    /** {@code IBV_DEVICE_MEM_WINDOW}: memory windows (type 1). */
    MEM_WINDOW(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_MEM_WINDOW())),
    /** {@code IBV_DEVICE_UD_IP_CSUM}: UD IP checksum offload. */
    UD_IP_CSUM(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_UD_IP_CSUM())),
    /** {@code IBV_DEVICE_XRC}: eXtended Reliable Connected transport. */
    XRC(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_XRC())),
    /** {@code IBV_DEVICE_MEM_MGT_EXTENSIONS}: memory management extensions (fast registration, local invalidate). */
    MEM_MGT_EXTENSIONS(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_MEM_MGT_EXTENSIONS())),
    /** {@code IBV_DEVICE_MEM_WINDOW_TYPE_2A}: type 2A memory windows. */
    MEM_WINDOW_TYPE_2A(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_MEM_WINDOW_TYPE_2A())),
    /** {@code IBV_DEVICE_MEM_WINDOW_TYPE_2B}: type 2B memory windows. */
    MEM_WINDOW_TYPE_2B(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_MEM_WINDOW_TYPE_2B())),
    /** {@code IBV_DEVICE_RC_IP_CSUM}. */
    RC_IP_CSUM(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_RC_IP_CSUM())),
    /** {@code IBV_DEVICE_RAW_IP_CSUM}: raw packet IP checksum offload. */
    RAW_IP_CSUM(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_RAW_IP_CSUM())),
    /** {@code IBV_DEVICE_MANAGED_FLOW_STEERING}: flow steering. */
    MANAGED_FLOW_STEERING(Integer.toUnsignedLong(verbs_h.IBV_DEVICE_MANAGED_FLOW_STEERING())),
    /** {@code IBV_DEVICE_RAW_SCATTER_FCS} (extended flag): raw packet QPs can scatter the FCS. */
    RAW_SCATTER_FCS(verbs_h.IBV_DEVICE_RAW_SCATTER_FCS()),
    /** {@code IBV_DEVICE_PCI_WRITE_END_PADDING} (extended flag). */
    PCI_WRITE_END_PADDING(verbs_h.IBV_DEVICE_PCI_WRITE_END_PADDING());

    private final long value;

    DeviceCapability(long value) {
        this.value = value;
    }

    /** The C bit (as in {@code device_cap_flags_ex}). */
    public long value() {
        return value;
    }

    /** The capabilities set in a 64-bit {@code device_cap_flags_ex}-style mask. */
    public static EnumSet<DeviceCapability> fromMask(long mask) {
        EnumSet<DeviceCapability> set = EnumSet.noneOf(DeviceCapability.class);
        for (DeviceCapability c : values()) {
            if ((mask & c.value) != 0) {
                set.add(c);
            }
        }
        return set;
    }
}
