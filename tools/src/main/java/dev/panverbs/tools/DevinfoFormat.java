package dev.panverbs.tools;

import dev.panverbs.core.DeviceAttributes;
import dev.panverbs.core.DeviceCapability;
import dev.panverbs.core.DeviceLimits;
import dev.panverbs.core.GidEntry;
import dev.panverbs.core.GidType;
import dev.panverbs.core.LinkLayer;
import dev.panverbs.core.PortAttributes;
import dev.panverbs.core.TransportType;

import java.util.List;
import java.util.Locale;

/**
 * The text of {@code ibv_devices} and {@code ibv_devinfo} (rdma-core 44 {@code libibverbs/examples/device_list.c}
 * and {@code devinfo.c}), built from panverbs' query records. Pure: no device access, unit-tested on values.
 */
final class DevinfoFormat {
    private DevinfoFormat() { }

    /** The two header lines of ibv_devices. */
    static String devicesHeader() {
        return "    " + pad("device", 16) + "\t   node GUID\n" + "    " + pad("------", 16) + "\t----------------\n";
    }

    static String devicesRow(String name, long guid) {
        return "    " + pad(name, 16) + "\t" + String.format("%016x", guid) + "\n";
    }

    private static String pad(String s, int w) {
        return s.length() >= w ? s : s + " ".repeat(w - s.length());
    }

    /** {@code guid_str}: four groups of 16 bits. */
    static String guid(long g) {
        return String.format("%04x:%04x:%04x:%04x", (g >>> 48) & 0xffff, (g >>> 32) & 0xffff, (g >>> 16) & 0xffff,
                g & 0xffff);
    }

    static String transport(TransportType t) {
        return switch (t) {
            case IB -> "InfiniBand";
            case IWARP -> "iWARP";
            case USNIC -> "usNIC";
            case USNIC_UDP -> "usNIC UDP";
            case UNSPECIFIED -> "unspecified";
            default -> "invalid transport";
        };
    }

    /** The device block of {@code print_hca_cap}, up to phys_port_cnt (and the verbose attributes). */
    static String device(String name, TransportType transport, DeviceAttributes a, String boardId, boolean verbose,
                         int numCompVectors) {
        StringBuilder s = new StringBuilder();
        s.append("hca_id:\t").append(name).append('\n');
        s.append("\ttransport:\t\t\t").append(transport(transport)).append(" (").append(transport.value())
                .append(")\n");
        if (!a.fwVer().isEmpty()) {
            s.append("\tfw_ver:\t\t\t\t").append(a.fwVer()).append('\n');
        }
        s.append("\tnode_guid:\t\t\t").append(guid(a.nodeGuid())).append('\n');
        s.append("\tsys_image_guid:\t\t\t").append(guid(a.sysImageGuid())).append('\n');
        s.append("\tvendor_id:\t\t\t0x").append(String.format("%04x", a.vendorId())).append('\n');
        s.append("\tvendor_part_id:\t\t\t").append(a.vendorPartId()).append('\n');
        s.append("\thw_ver:\t\t\t\t0x").append(Integer.toHexString(a.hwVer()).toUpperCase(Locale.ROOT)).append('\n');
        if (boardId != null && !boardId.isEmpty()) {
            s.append("\tboard_id:\t\t\t").append(boardId).append('\n');
        }
        s.append("\tphys_port_cnt:\t\t\t").append(a.physPortCnt()).append('\n');
        if (verbose) {
            DeviceLimits l = a.limits();
            s.append("\tmax_mr_size:\t\t\t0x").append(Long.toHexString(a.maxMrSize())).append('\n');
            s.append("\tpage_size_cap:\t\t\t0x").append(Long.toHexString(a.pageSizeCap())).append('\n');
            s.append("\tmax_qp:\t\t\t\t").append(l.maxQp()).append('\n');
            s.append("\tmax_qp_wr:\t\t\t").append(l.maxQpWr()).append('\n');
            long flags = 0;
            for (DeviceCapability c : a.capabilities()) {
                if (c.ordinal() <= DeviceCapability.MANAGED_FLOW_STEERING.ordinal()) {
                    flags |= c.value();
                }
            }
            s.append("\tdevice_cap_flags:\t\t0x").append(String.format("%08x", flags)).append('\n');
            for (DeviceCapability c : DeviceCapability.values()) {
                if (c.ordinal() <= DeviceCapability.MANAGED_FLOW_STEERING.ordinal() && a.capabilities().contains(c)) {
                    s.append("\t\t\t\t\t").append(c.name()).append('\n');
                }
            }
            s.append("\tmax_sge:\t\t\t").append(l.maxSge()).append('\n');
            s.append("\tmax_sge_rd:\t\t\t").append(l.maxSgeRd()).append('\n');
            s.append("\tmax_cq:\t\t\t\t").append(l.maxCq()).append('\n');
            s.append("\tmax_cqe:\t\t\t").append(l.maxCqe()).append('\n');
            s.append("\tmax_mr:\t\t\t\t").append(l.maxMr()).append('\n');
            s.append("\tmax_pd:\t\t\t\t").append(l.maxPd()).append('\n');
            s.append("\tmax_qp_rd_atom:\t\t\t").append(l.maxQpRdAtom()).append('\n');
            s.append("\tmax_ee_rd_atom:\t\t\t").append(l.maxEeRdAtom()).append('\n');
            s.append("\tmax_res_rd_atom:\t\t").append(l.maxResRdAtom()).append('\n');
            s.append("\tmax_qp_init_rd_atom:\t\t").append(l.maxQpInitRdAtom()).append('\n');
            s.append("\tmax_ee_init_rd_atom:\t\t").append(l.maxEeInitRdAtom()).append('\n');
            s.append("\tatomic_cap:\t\t\t").append(atomic(a)).append('\n');
            s.append("\tmax_ee:\t\t\t\t").append(l.maxEe()).append('\n');
            s.append("\tmax_rdd:\t\t\t").append(l.maxRdd()).append('\n');
            s.append("\tmax_mw:\t\t\t\t").append(l.maxMw()).append('\n');
            s.append("\tmax_raw_ipv6_qp:\t\t").append(l.maxRawIpv6Qp()).append('\n');
            s.append("\tmax_raw_ethy_qp:\t\t").append(l.maxRawEthyQp()).append('\n');
            s.append("\tmax_mcast_grp:\t\t\t").append(l.maxMcastGrp()).append('\n');
            s.append("\tmax_mcast_qp_attach:\t\t").append(l.maxMcastQpAttach()).append('\n');
            s.append("\tmax_total_mcast_qp_attach:\t").append(l.maxTotalMcastQpAttach()).append('\n');
            s.append("\tmax_ah:\t\t\t\t").append(l.maxAh()).append('\n');
            s.append("\tmax_fmr:\t\t\t0\n"); // FMRs are gone from the kernel; rdma-core 44 prints 0
            s.append("\tmax_srq:\t\t\t").append(l.maxSrq()).append('\n');
            if (l.maxSrq() != 0) {
                s.append("\tmax_srq_wr:\t\t\t").append(l.maxSrqWr()).append('\n');
                s.append("\tmax_srq_sge:\t\t\t").append(l.maxSrqSge()).append('\n');
            }
            s.append("\tmax_pkeys:\t\t\t").append(l.maxPkeys()).append('\n');
            s.append("\tlocal_ca_ack_delay:\t\t").append(a.localCaAckDelay()).append('\n');
            if (a.completionTimestampMask() != 0) {
                s.append("\tcompletion timestamp_mask:\t\t\t0x")
                        .append(String.format("%016x", a.completionTimestampMask())).append('\n');
            } else {
                s.append("\tcompletion_timestamp_mask not supported\n");
            }
            if (a.hcaCoreClockKhz() != 0) {
                s.append("\thca_core_clock:\t\t\t").append(a.hcaCoreClockKhz()).append("kHZ\n");
            } else {
                s.append("\tcore clock not supported\n");
            }
            s.append("\tmax_wq_type_rq:\t\t\t").append(a.maxWqTypeRq()).append('\n');
            if (a.maxDmSize() != 0) {
                s.append("\tmaximum available device memory:\t").append(a.maxDmSize()).append("Bytes\n\n");
            }
            s.append("\tnum_comp_vectors:\t\t").append(numCompVectors).append('\n');
        }
        return s.toString();
    }

    private static String atomic(DeviceAttributes a) {
        String name = a.atomicCap() == null ? "invalid atomic capability" : "ATOMIC_" + switch (a.atomicCap().name()) {
            case "NONE" -> "NONE";
            case "HCA" -> "HCA";
            case "GLOB" -> "GLOB";
            default -> a.atomicCap().name();
        };
        return name + " (" + (a.atomicCap() == null ? -1 : a.atomicCap().value()) + ")";
    }

    /** One port block of {@code print_hca_cap}. */
    static String port(PortAttributes p, TransportType transport, boolean verbose, List<GidEntry> gids) {
        StringBuilder s = new StringBuilder();
        s.append("\t\tport:\t").append(p.portNum()).append('\n');
        s.append("\t\t\tstate:\t\t\t").append(portState(p.state().name())).append(" (").append(p.state().value())
                .append(")\n");
        s.append("\t\t\tmax_mtu:\t\t").append(p.maxMtu().bytes()).append(" (").append(p.maxMtu().value())
                .append(")\n");
        s.append("\t\t\tactive_mtu:\t\t").append(p.activeMtu().bytes()).append(" (").append(p.activeMtu().value())
                .append(")\n");
        s.append("\t\t\tsm_lid:\t\t\t").append(p.smLid()).append('\n');
        s.append("\t\t\tport_lid:\t\t").append(p.lid()).append('\n');
        s.append("\t\t\tport_lmc:\t\t0x").append(String.format("%02x", p.lmc())).append('\n');
        s.append("\t\t\tlink_layer:\t\t").append(linkLayer(p.linkLayer())).append('\n');
        if (verbose) {
            s.append("\t\t\tmax_msg_sz:\t\t0x").append(Long.toHexString(p.maxMsgSz())).append('\n');
            s.append("\t\t\tmax_vl_num:\t\t").append(vl(p.maxVlNum())).append(" (").append(p.maxVlNum())
                    .append(")\n");
            s.append("\t\t\tbad_pkey_cntr:\t\t0x").append(Long.toHexString(p.badPkeyCntr())).append('\n');
            s.append("\t\t\tqkey_viol_cntr:\t\t0x").append(Long.toHexString(p.qkeyViolCntr())).append('\n');
            s.append("\t\t\tsm_sl:\t\t\t").append(p.smSl()).append('\n');
            s.append("\t\t\tpkey_tbl_len:\t\t").append(p.pkeyTblLen()).append('\n');
            s.append("\t\t\tgid_tbl_len:\t\t").append(p.gidTblLen()).append('\n');
            s.append("\t\t\tsubnet_timeout:\t\t").append(p.subnetTimeout()).append('\n');
            s.append("\t\t\tinit_type_reply:\t").append(p.initTypeReply()).append('\n');
            s.append("\t\t\tactive_width:\t\t").append(width(p.activeWidth())).append("X (").append(p.activeWidth())
                    .append(")\n");
            s.append("\t\t\tactive_speed:\t\t").append(speed(p.activeSpeed())).append(" (")
                    .append(p.activeSpeed()).append(")\n");
            if (transport == TransportType.IB) {
                s.append("\t\t\tphys_state:\t\t").append(physState(p.physState())).append(" (")
                        .append(p.physState()).append(")\n");
            }
            for (GidEntry g : gids) {
                s.append(gid(g, p.linkLayer()));
            }
        }
        s.append('\n');
        return s.toString();
    }

    /** A GID line ({@code print_formated_gid}): hex groups for IB/RoCE v1, inet_ntop text for RoCE v2. */
    static String gid(GidEntry g, LinkLayer ll) {
        String type = g.type() == GidType.ROCE_V2 ? "RoCE v2" : g.type() == null ? "Invalid gid type" : "RoCE v1";
        String suffix = ll == LinkLayer.ETHERNET ? ", " + type : "";
        byte[] b = g.gid().toBytes();
        String idx = String.format("%3d", g.index());
        if (g.type() == GidType.ROCE_V2) {
            return "\t\t\tGID[" + idx + "]:\t\t" + inetNtop(b) + suffix + "\n";
        }
        StringBuilder hex = new StringBuilder();
        for (int i = 0; i < 16; i += 2) {
            hex.append(i == 0 ? "" : ":").append(String.format("%02x%02x", b[i] & 0xff, b[i + 1] & 0xff));
        }
        return "\t\t\tGID[" + idx + "]:\t\t" + hex + suffix + "\n";
    }

    /** glibc's inet_ntop(AF_INET6): IPv4-mapped as ::ffff:a.b.c.d, the longest zero run compressed. */
    static String inetNtop(byte[] b) {
        boolean mapped = true;
        for (int i = 0; i < 10; i++) {
            mapped &= b[i] == 0;
        }
        mapped &= (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff;
        if (mapped) {
            return "::ffff:" + (b[12] & 0xff) + "." + (b[13] & 0xff) + "." + (b[14] & 0xff) + "." + (b[15] & 0xff);
        }
        int[] w = new int[8];
        for (int i = 0; i < 8; i++) {
            w[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
        }
        int bestStart = -1;
        int bestLen = 0;
        for (int i = 0; i < 8; ) {
            if (w[i] == 0) {
                int j = i;
                while (j < 8 && w[j] == 0) {
                    j++;
                }
                if (j - i > bestLen && j - i >= 2) {
                    bestStart = i;
                    bestLen = j - i;
                }
                i = j;
            } else {
                i++;
            }
        }
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                s.append(i == 0 ? "::" : ":");
                i += bestLen - 1;
                continue;
            }
            s.append(Integer.toHexString(w[i]));
            if (i < 7) {
                s.append(':');
            }
        }
        return s.toString();
    }

    private static String portState(String name) {
        return switch (name) {
            case "DOWN", "INIT", "ARMED", "ACTIVE" -> "PORT_" + name;
            default -> "invalid state";
        };
    }

    static String linkLayer(LinkLayer l) {
        return switch (l) {
            case UNSPECIFIED -> "Unspecified";
            case INFINIBAND -> "InfiniBand";
            case ETHERNET -> "Ethernet";
        };
    }

    private static String vl(int v) {
        return switch (v) {
            case 1 -> "1";
            case 2 -> "2";
            case 3 -> "4";
            case 4 -> "8";
            case 5 -> "15";
            default -> "invalid value";
        };
    }

    private static String width(int w) {
        return switch (w) {
            case 1 -> "1";
            case 2 -> "4";
            case 4 -> "8";
            case 8 -> "12";
            case 16 -> "2";
            default -> "invalid width";
        };
    }

    private static String speed(int s) {
        return switch (s) {
            case 1 -> "2.5 Gbps";
            case 2 -> "5.0 Gbps";
            case 4, 8 -> "10.0 Gbps";
            case 16 -> "14.0 Gbps";
            case 32 -> "25.0 Gbps";
            case 64 -> "50.0 Gbps";
            case 128 -> "100.0 Gbps";
            default -> "invalid speed";
        };
    }

    private static String physState(int s) {
        return switch (s) {
            case 1 -> "SLEEP";
            case 2 -> "POLLING";
            case 3 -> "DISABLED";
            case 4 -> "PORT_CONFIGURATION TRAINNING";
            case 5 -> "LINK_UP";
            case 6 -> "LINK_ERROR_RECOVERY";
            case 7 -> "PHY TEST";
            default -> "invalid physical state";
        };
    }
}
