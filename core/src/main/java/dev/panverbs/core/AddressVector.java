package dev.panverbs.core;

import dev.panverbs.bindings.verbs.ibv_ah_attr;
import dev.panverbs.bindings.verbs.ibv_global_route;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * An address vector: how to reach a remote port ({@code struct ibv_ah_attr}, see {@code ibv_create_ah(3)} and
 * {@code ibv_modify_qp(3)}). The primary path of a connected QP ({@link QueuePairAttributes#ahAttr}) and the
 * address of a UD address handle are both described by one.
 *
 * <p>On RoCE (rxe, mlx5 Ethernet ports) a global route header is mandatory: build the vector with
 * {@link Builder#grh(byte[], int, int)} from the peer's GID. On InfiniBand ports without routing, the destination
 * LID suffices. Immutable and thread-safe.
 */
public final class AddressVector {
    private final int portNum;
    private final int dlid;
    private final int sl;
    private final int srcPathBits;
    private final int staticRate;
    private final byte[] dgid; // null: no GRH
    private final int sgidIndex;
    private final int hopLimit;
    private final int trafficClass;
    private final int flowLabel;

    private AddressVector(Builder b) {
        this.portNum = b.portNum;
        this.dlid = b.dlid;
        this.sl = b.sl;
        this.srcPathBits = b.srcPathBits;
        this.staticRate = b.staticRate;
        this.dgid = b.dgid == null ? null : b.dgid.clone();
        this.sgidIndex = b.sgidIndex;
        this.hopLimit = b.hopLimit;
        this.trafficClass = b.trafficClass;
        this.flowLabel = b.flowLabel;
    }

    /** Starts an address vector leaving through local port {@code portNum} (1-based). */
    public static Builder builder(int portNum) {
        return new Builder(portNum);
    }

    /** The local port number ({@code port_num}). */
    public int portNum() { return portNum; }

    /** The destination LID ({@code dlid}), 0 on RoCE. */
    public int dlid() { return dlid; }

    /** The service level ({@code sl}). */
    public int sl() { return sl; }

    /** {@code src_path_bits}. */
    public int srcPathBits() { return srcPathBits; }

    /** {@code static_rate} ({@code enum ibv_rate}; 0 = port rate). */
    public int staticRate() { return staticRate; }

    /** Whether a global route header is used ({@code is_global}). */
    public boolean isGlobal() { return dgid != null; }

    /** The destination GID (16 bytes, a copy), or {@code null} without GRH. */
    public byte[] dgid() { return dgid == null ? null : dgid.clone(); }

    /** The local GID table index ({@code grh.sgid_index}). */
    public int sgidIndex() { return sgidIndex; }

    /** {@code grh.hop_limit}. */
    public int hopLimit() { return hopLimit; }

    /** {@code grh.traffic_class}. */
    public int trafficClass() { return trafficClass; }

    /** {@code grh.flow_label}. */
    public int flowLabel() { return flowLabel; }

    /** Writes this vector into a {@code struct ibv_ah_attr} (32 bytes), zeroing what it does not set. */
    void writeTo(MemorySegment ahAttr) {
        ahAttr.fill((byte) 0);
        ibv_ah_attr.dlid(ahAttr, (short) dlid);
        ibv_ah_attr.sl(ahAttr, (byte) sl);
        ibv_ah_attr.src_path_bits(ahAttr, (byte) srcPathBits);
        ibv_ah_attr.static_rate(ahAttr, (byte) staticRate);
        ibv_ah_attr.port_num(ahAttr, (byte) portNum);
        if (dgid != null) {
            ibv_ah_attr.is_global(ahAttr, (byte) 1);
            MemorySegment grh = ibv_ah_attr.grh(ahAttr);
            MemorySegment.copy(dgid, 0, ibv_global_route.dgid(grh), ValueLayout.JAVA_BYTE, 0, 16);
            ibv_global_route.sgid_index(grh, (byte) sgidIndex);
            ibv_global_route.hop_limit(grh, (byte) hopLimit);
            ibv_global_route.traffic_class(grh, (byte) trafficClass);
            ibv_global_route.flow_label(grh, flowLabel);
        }
    }

    /** Reads a {@code struct ibv_ah_attr} (as filled by {@code ibv_query_qp}). */
    static AddressVector readFrom(MemorySegment ahAttr) {
        Builder b = new Builder(Byte.toUnsignedInt(ibv_ah_attr.port_num(ahAttr)))
                .dlid(Short.toUnsignedInt(ibv_ah_attr.dlid(ahAttr)))
                .sl(Byte.toUnsignedInt(ibv_ah_attr.sl(ahAttr)))
                .srcPathBits(Byte.toUnsignedInt(ibv_ah_attr.src_path_bits(ahAttr)))
                .staticRate(Byte.toUnsignedInt(ibv_ah_attr.static_rate(ahAttr)));
        if (ibv_ah_attr.is_global(ahAttr) != 0) {
            MemorySegment grh = ibv_ah_attr.grh(ahAttr);
            b.grh(ibv_global_route.dgid(grh).toArray(ValueLayout.JAVA_BYTE),
                    Byte.toUnsignedInt(ibv_global_route.sgid_index(grh)),
                    Byte.toUnsignedInt(ibv_global_route.hop_limit(grh)))
                    .trafficClass(Byte.toUnsignedInt(ibv_global_route.traffic_class(grh)))
                    .flowLabel(ibv_global_route.flow_label(grh));
        }
        return b.build();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AddressVector a && a.portNum == portNum && a.dlid == dlid && a.sl == sl
                && a.srcPathBits == srcPathBits && a.staticRate == staticRate && Arrays.equals(a.dgid, dgid)
                && a.sgidIndex == sgidIndex && a.hopLimit == hopLimit && a.trafficClass == trafficClass
                && a.flowLabel == flowLabel;
    }

    @Override
    public int hashCode() {
        return Objects.hash(portNum, dlid, sl, Arrays.hashCode(dgid), sgidIndex);
    }

    @Override
    public String toString() {
        return "AddressVector[port=" + portNum + ", dlid=" + dlid + ", sl=" + sl
                + (dgid == null ? "" : ", dgid=" + HexFormat.ofDelimiter(":").formatHex(dgid)
                + ", sgidIndex=" + sgidIndex + ", hopLimit=" + hopLimit) + "]";
    }

    /** Builds an {@link AddressVector}, field by field of {@code struct ibv_ah_attr}; not thread-safe. */
    public static final class Builder {
        private final int portNum;
        private int dlid;
        private int sl;
        private int srcPathBits;
        private int staticRate;
        private byte[] dgid;
        private int sgidIndex;
        private int hopLimit;
        private int trafficClass;
        private int flowLabel;

        private Builder(int portNum) {
            this.portNum = u8("portNum", portNum);
            if (portNum == 0) {
                throw new IllegalArgumentException("portNum is 1-based, got 0");
            }
        }

        /** Destination LID ({@code dlid}, 16 bits); 0 on RoCE. */
        public Builder dlid(int dlid) {
            if (dlid < 0 || dlid > 0xFFFF) {
                throw new IllegalArgumentException("dlid must fit 16 bits, got " + dlid);
            }
            this.dlid = dlid;
            return this;
        }

        /** Service level ({@code sl}, 0..15). */
        public Builder sl(int sl) {
            if (sl < 0 || sl > 15) {
                throw new IllegalArgumentException("sl must be 0..15, got " + sl);
            }
            this.sl = sl;
            return this;
        }

        /** {@code src_path_bits} (LMC bits). */
        public Builder srcPathBits(int bits) {
            this.srcPathBits = u8("srcPathBits", bits);
            return this;
        }

        /** {@code static_rate} as an {@code enum ibv_rate} value; 0 (default) lets the port decide. */
        public Builder staticRate(int rate) {
            this.staticRate = u8("staticRate", rate);
            return this;
        }

        /**
         * Adds a global route header ({@code is_global = 1}) to destination GID {@code dgid} (16 bytes, network
         * order, as returned by {@code ibv_query_gid}), sourcing from local GID index {@code sgidIndex}.
         * Mandatory on RoCE.
         */
        public Builder grh(byte[] dgid, int sgidIndex, int hopLimit) {
            if (dgid == null || dgid.length != 16) {
                throw new IllegalArgumentException("a GID is 16 bytes, got "
                        + (dgid == null ? "null" : dgid.length));
            }
            this.dgid = dgid.clone();
            this.sgidIndex = u8("sgidIndex", sgidIndex);
            this.hopLimit = u8("hopLimit", hopLimit);
            return this;
        }

        /** {@code grh.traffic_class} (needs {@link #grh}). */
        public Builder trafficClass(int trafficClass) {
            this.trafficClass = u8("trafficClass", trafficClass);
            return this;
        }

        /** {@code grh.flow_label} (20 bits; needs {@link #grh}). */
        public Builder flowLabel(int flowLabel) {
            if (flowLabel < 0 || flowLabel > 0xFFFFF) {
                throw new IllegalArgumentException("flowLabel must fit 20 bits, got " + flowLabel);
            }
            this.flowLabel = flowLabel;
            return this;
        }

        /** The immutable address vector. */
        public AddressVector build() {
            return new AddressVector(this);
        }

        private static int u8(String what, int v) {
            if (v < 0 || v > 0xFF) {
                throw new IllegalArgumentException(what + " must be 0..255, got " + v);
            }
            return v;
        }
    }
}
