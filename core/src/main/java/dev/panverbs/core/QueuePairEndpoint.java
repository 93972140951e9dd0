package dev.panverbs.core;

import java.util.Objects;

/**
 * What one side of a connection tells the other before its QP can reach RTR (the data perftest and the
 * rdma-core pingpong examples exchange over TCP): the QP's address (LID or GID), number and starting PSN,
 * plus an optional remote buffer (rkey, address, length) for RDMA and the Q_Key for UD. Sent with
 * {@link ConnectionExchange}. Immutable.
 *
 * @param type    the transport: {@link QueuePairType#RC}, {@link QueuePairType#UC} or {@link QueuePairType#UD}
 * @param lid     the port LID (0 on RoCE)
 * @param gid     the GID of the port's chosen GID index ({@link Gid#ZERO} on IB without GRH)
 * @param qpn     the QP number, 24 bits
 * @param psn     the initial packet sequence number, 24 bits
 * @param qkey    the Q_Key of a UD QP (0 otherwise)
 * @param rkey    the rkey of the buffer offered for RDMA (0 if none)
 * @param address the address peers use for that buffer ({@link MemoryRegion#address()}; 0 if none)
 * @param length  the length of that buffer (0 if none)
 * @param mtu     the sender's active MTU; both sides use the smaller ({@link #pathMtu})
 */
public record QueuePairEndpoint(QueuePairType type, int lid, Gid gid, int qpn, int psn, int qkey, int rkey,
                                long address, long length, Mtu mtu) {

    /** The largest 24-bit value (QPN, PSN). */
    public static final int MAX_24 = 0xFFFFFF;

    public QueuePairEndpoint {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(gid, "gid");
        Objects.requireNonNull(mtu, "mtu");
        if (type != QueuePairType.RC && type != QueuePairType.UC && type != QueuePairType.UD) {
            throw new IllegalArgumentException("only RC, UC and UD endpoints are exchanged, got " + type);
        }
        if (lid < 0 || lid > 0xFFFF) {
            throw new IllegalArgumentException("lid must fit 16 bits, got " + lid);
        }
        if (qpn < 0 || qpn > MAX_24) {
            throw new IllegalArgumentException("qpn must fit 24 bits, got " + qpn);
        }
        if (psn < 0 || psn > MAX_24) {
            throw new IllegalArgumentException("psn must fit 24 bits, got " + psn);
        }
        if (length < 0) {
            throw new IllegalArgumentException("length must not be negative, got " + length);
        }
    }

    /** An endpoint without a remote buffer. */
    public static QueuePairEndpoint of(QueuePairType type, int lid, Gid gid, int qpn, int psn, Mtu mtu) {
        return new QueuePairEndpoint(type, lid, gid, qpn, psn, 0, 0, 0, 0, mtu);
    }

    /** A copy offering {@code mr} for RDMA: its rkey, address and length. */
    public QueuePairEndpoint withBuffer(MemoryRegion mr) {
        return new QueuePairEndpoint(type, lid, gid, qpn, psn, qkey, mr.rkey(), mr.address(), mr.length(), mtu);
    }

    /** A copy with Q_Key {@code qkey} (UD). */
    public QueuePairEndpoint withQkey(int qkey) {
        return new QueuePairEndpoint(type, lid, gid, qpn, psn, qkey, rkey, address, length, mtu);
    }

    /** The path MTU for a connection between this endpoint and {@code peer}: the smaller of the two. */
    public Mtu pathMtu(QueuePairEndpoint peer) {
        return mtu.value() <= peer.mtu.value() ? mtu : peer.mtu;
    }

    @Override
    public String toString() {
        return type + " qpn 0x" + Integer.toHexString(qpn) + " psn 0x" + Integer.toHexString(psn) + " lid " + lid
                + " gid " + gid + " mtu " + mtu.bytes()
                + (rkey != 0 || length != 0 ? " rkey 0x" + Integer.toHexString(rkey) + " addr 0x"
                + Long.toHexString(address) + " len " + length : "")
                + (qkey != 0 ? " qkey 0x" + Integer.toHexString(qkey) : "");
    }
}
