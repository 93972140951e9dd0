package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;
import java.util.EnumSet;

/** A port capability bit ({@code ibv_port_attr.port_cap_flags}, C {@code enum ibv_port_cap_flags}). */
public enum PortCapability {
    /** {@code IBV_PORT_SM}: a subnet manager runs on this port */
    SM(verbs_h.IBV_PORT_SM()),
    /** {@code IBV_PORT_NOTICE_SUP}. */
    NOTICE_SUP(verbs_h.IBV_PORT_NOTICE_SUP()),
    /** {@code IBV_PORT_TRAP_SUP}. */
    TRAP_SUP(verbs_h.IBV_PORT_TRAP_SUP()),
    /** {@code IBV_PORT_OPT_IPD_SUP}. */
    OPT_IPD_SUP(verbs_h.IBV_PORT_OPT_IPD_SUP()),
    /** {@code IBV_PORT_AUTO_MIGR_SUP}: automatic path migration is supported */
    AUTO_MIGR_SUP(verbs_h.IBV_PORT_AUTO_MIGR_SUP()),
    /** {@code IBV_PORT_SL_MAP_SUP}. */
    SL_MAP_SUP(verbs_h.IBV_PORT_SL_MAP_SUP()),
    /** {@code IBV_PORT_MKEY_NVRAM}. */
    MKEY_NVRAM(verbs_h.IBV_PORT_MKEY_NVRAM()),
    /** {@code IBV_PORT_PKEY_NVRAM}. */
    PKEY_NVRAM(verbs_h.IBV_PORT_PKEY_NVRAM()),
    /** {@code IBV_PORT_LED_INFO_SUP}. */
    LED_INFO_SUP(verbs_h.IBV_PORT_LED_INFO_SUP()),
    /** {@code IBV_PORT_SYS_IMAGE_GUID_SUP}. */
    SYS_IMAGE_GUID_SUP(verbs_h.IBV_PORT_SYS_IMAGE_GUID_SUP()),
    /** {@code IBV_PORT_PKEY_SW_EXT_PORT_TRAP_SUP}. */
    PKEY_SW_EXT_PORT_TRAP_SUP(verbs_h.IBV_PORT_PKEY_SW_EXT_PORT_TRAP_SUP()),
    /** {@code IBV_PORT_EXTENDED_SPEEDS_SUP}. */
    EXTENDED_SPEEDS_SUP(verbs_h.IBV_PORT_EXTENDED_SPEEDS_SUP()),
    /** {@code IBV_PORT_CAP_MASK2_SUP}. */
    CAP_MASK2_SUP(verbs_h.IBV_PORT_CAP_MASK2_SUP()),
    /** {@code IBV_PORT_CM_SUP}: the port supports the communication manager */
    CM_SUP(verbs_h.IBV_PORT_CM_SUP()),
    /** {@code IBV_PORT_SNMP_TUNNEL_SUP}. */
    SNMP_TUNNEL_SUP(verbs_h.IBV_PORT_SNMP_TUNNEL_SUP()),
    /** {@code IBV_PORT_REINIT_SUP}. */
    REINIT_SUP(verbs_h.IBV_PORT_REINIT_SUP()),
    /** {@code IBV_PORT_DEVICE_MGMT_SUP}. */
    DEVICE_MGMT_SUP(verbs_h.IBV_PORT_DEVICE_MGMT_SUP()),
    /** {@code IBV_PORT_VENDOR_CLASS_SUP}. */
    VENDOR_CLASS_SUP(verbs_h.IBV_PORT_VENDOR_CLASS_SUP()),
    /** {@code IBV_PORT_DR_NOTICE_SUP}. */
    DR_NOTICE_SUP(verbs_h.IBV_PORT_DR_NOTICE_SUP()),
    /** {@code IBV_PORT_CAP_MASK_NOTICE_SUP}. */
    CAP_MASK_NOTICE_SUP(verbs_h.IBV_PORT_CAP_MASK_NOTICE_SUP()),
    /** {@code IBV_PORT_BOOT_MGMT_SUP}. */
    BOOT_MGMT_SUP(verbs_h.IBV_PORT_BOOT_MGMT_SUP()),
    /** {@code IBV_PORT_LINK_LATENCY_SUP}. */
    LINK_LATENCY_SUP(verbs_h.IBV_PORT_LINK_LATENCY_SUP()),
    /** {@code IBV_PORT_CLIENT_REG_SUP}. */
    CLIENT_REG_SUP(verbs_h.IBV_PORT_CLIENT_REG_SUP()),
    /** {@code IBV_PORT_IP_BASED_GIDS}: GIDs are derived from the netdev's IP addresses (RoCE) */
    IP_BASED_GIDS(verbs_h.IBV_PORT_IP_BASED_GIDS());

    private final int value;

    PortCapability(int value) {
        this.value = value;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    /** The flags set in a C mask (bits this version does not know are ignored). */
    public static EnumSet<PortCapability> fromMask(int mask) {
        EnumSet<PortCapability> set = EnumSet.noneOf(PortCapability.class);
        for (PortCapability f : values()) {
            if ((mask & f.value) != 0) {
                set.add(f);
            }
        }
        return set;
    }
}
