package dev.panverbs.core;

import dev.panverbs.bindings.verbs.ibv_port_attr;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * The attributes of a port ({@code struct ibv_port_attr}, {@code ibv_query_port(3)}), copied out of the C
 * struct: a snapshot, not a live view. Port numbers are 1-based.
 *
 * @param portNum        the port queried
 * @param state          the logical port state; traffic needs {@link PortState#ACTIVE}
 * @param maxMtu         the largest MTU the port supports
 * @param activeMtu      the MTU in use (on RoCE derived from the netdev MTU: 1500 → 1024); the path MTU of
 *                       a connected QP must not exceed it
 * @param gidTblLen      the number of GID table entries
 * @param capabilities   {@code port_cap_flags} as a set
 * @param maxMsgSz       the largest message in bytes
 * @param badPkeyCntr    bad P_Key counter
 * @param qkeyViolCntr   Q_Key violation counter
 * @param pkeyTblLen     the number of P_Key table entries
 * @param lid            the base LID (0 on RoCE)
 * @param smLid          the subnet manager's LID
 * @param lmc            the LID mask control
 * @param maxVlNum       the number of virtual lanes (code)
 * @param smSl           the subnet manager's service level
 * @param subnetTimeout  the subnet propagation delay (4.096 µs × 2^value)
 * @param initTypeReply  the init type reply
 * @param activeWidth    the link width code: 1 = 1x, 2 = 4x, 4 = 8x, 8 = 12x, 16 = 2x (see {@link #lanes()})
 * @param activeSpeed    the per-lane speed code: 1 = 2.5, 2 = 5, 4 = 10, 8 = 10 (FDR10), 16 = 14, 32 = 25,
 *                       64 = 50, 128 = 100 Gb/s (see {@link #laneGbps()})
 * @param physState      the physical state: 1 sleep, 2 polling, 3 disabled, 4 training, 5 link up,
 *                       6 error recovery, 7 PHY test
 * @param linkLayer      InfiniBand or Ethernet (RoCE)
 * @param flags          {@code ibv_port_attr.flags} ({@code IBV_QPF_GRH_REQUIRED} = 1: every AH needs a GRH)
 * @param portCapFlags2  {@code port_cap_flags2} (bits of C {@code enum ibv_port_cap_flags2})
 */
public record PortAttributes(int portNum, PortState state, Mtu maxMtu, Mtu activeMtu, int gidTblLen,
                             Set<PortCapability> capabilities, long maxMsgSz, long badPkeyCntr, long qkeyViolCntr,
                             int pkeyTblLen, int lid, int smLid, int lmc, int maxVlNum, int smSl, int subnetTimeout,
                             int initTypeReply, int activeWidth, int activeSpeed, int physState, LinkLayer linkLayer,
                             int flags, int portCapFlags2) {

    public PortAttributes {
        capabilities = Set.copyOf(capabilities);
    }

    /** Copies a filled {@code struct ibv_port_attr}. */
    static PortAttributes read(int portNum, MemorySegment a) {
        return new PortAttributes(portNum,
                PortState.of(ibv_port_attr.state(a)),
                Mtu.of(ibv_port_attr.max_mtu(a)),
                Mtu.of(ibv_port_attr.active_mtu(a)),
                ibv_port_attr.gid_tbl_len(a),
                PortCapability.fromMask(ibv_port_attr.port_cap_flags(a)),
                Integer.toUnsignedLong(ibv_port_attr.max_msg_sz(a)),
                Integer.toUnsignedLong(ibv_port_attr.bad_pkey_cntr(a)),
                Integer.toUnsignedLong(ibv_port_attr.qkey_viol_cntr(a)),
                Short.toUnsignedInt(ibv_port_attr.pkey_tbl_len(a)),
                Short.toUnsignedInt(ibv_port_attr.lid(a)),
                Short.toUnsignedInt(ibv_port_attr.sm_lid(a)),
                Byte.toUnsignedInt(ibv_port_attr.lmc(a)),
                Byte.toUnsignedInt(ibv_port_attr.max_vl_num(a)),
                Byte.toUnsignedInt(ibv_port_attr.sm_sl(a)),
                Byte.toUnsignedInt(ibv_port_attr.subnet_timeout(a)),
                Byte.toUnsignedInt(ibv_port_attr.init_type_reply(a)),
                Byte.toUnsignedInt(ibv_port_attr.active_width(a)),
                Byte.toUnsignedInt(ibv_port_attr.active_speed(a)),
                Byte.toUnsignedInt(ibv_port_attr.phys_state(a)),
                LinkLayer.of(Byte.toUnsignedInt(ibv_port_attr.link_layer(a))),
                Byte.toUnsignedInt(ibv_port_attr.flags(a)),
                Short.toUnsignedInt(ibv_port_attr.port_cap_flags2(a)));
    }

    /** Whether addresses on this port need a GRH: RoCE ports, and IB ports that say so. */
    public boolean grhRequired() {
        return linkLayer == LinkLayer.ETHERNET || (flags & 1) != 0;
    }

    /** Whether the port is ACTIVE (ready for traffic). */
    public boolean isActive() {
        return state == PortState.ACTIVE;
    }

    /** The number of lanes of {@link #activeWidth()}, or 0 for an unknown code. */
    public int lanes() {
        return switch (activeWidth) {
            case 1 -> 1;
            case 2 -> 4;
            case 4 -> 8;
            case 8 -> 12;
            case 16 -> 2;
            default -> 0;
        };
    }

    /** The per-lane signalling rate of {@link #activeSpeed()} in Gb/s, or 0 for an unknown code. */
    public double laneGbps() {
        return switch (activeSpeed) {
            case 1 -> 2.5;
            case 2 -> 5.0;
            case 4, 8 -> 10.0;
            case 16 -> 14.0;
            case 32 -> 25.0;
            case 64 -> 50.0;
            case 128 -> 100.0;
            default -> 0.0;
        };
    }
}
