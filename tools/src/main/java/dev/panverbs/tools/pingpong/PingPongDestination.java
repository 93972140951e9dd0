package dev.panverbs.tools.pingpong;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The address one ping-pong side sends the other over TCP (rdma-core's {@code struct pingpong_dest}): LID,
 * QP number, initial packet sequence number and GID.
 *
 * <p>Wire format, byte-exact with rdma-core's {@code ibv_rc_pingpong}/{@code ibv_ud_pingpong} (which write it
 * with {@code sprintf("%04x:%06x:%06x:%s")} and send {@code sizeof msg}, the terminating NUL included):
 * <pre>
 *  0    4 5        11 12      18 19                              51
 * +----+-+----------+-+--------+-+--------------------------------+--+
 * |LID |:|   QPN    |:|  PSN   |:|  GID: 32 hex digits            |\0|
 * +----+-+----------+-+--------+-+--------------------------------+--+
 *   4        6           6                 32                      1   = 52 bytes
 * </pre>
 * Numbers are lower-case hex. The GID is its 16 bytes in network order, each as two hex digits (the C code
 * prints four {@code htobe32} words with {@code %08x}, which comes to the same thing). A GID of all zeros
 * means "no GID": the C tools then address the peer by LID only (no GRH).
 *
 * @param lid the port's LID (0 on RoCE, whose ports have none)
 * @param qpn the QP number, 24 bits
 * @param psn the initial packet sequence number, 24 bits
 * @param gid 16 bytes, all zero when no GID index was given
 */
public record PingPongDestination(int lid, int qpn, int psn, byte[] gid) {
    /** Size of the message on the wire, NUL included: {@code sizeof "0000:000000:000000:" + 32 zeros}. */
    public static final int WIRE_SIZE = 52;

    private static final int GID_OFFSET = 19;

    /** Validates ranges and copies {@code gid}. */
    public PingPongDestination {
        if (lid < 0 || lid > 0xffff) {
            throw new IllegalArgumentException("LID must fit 16 bits: " + lid);
        }
        if (qpn < 0 || qpn > 0xffffff) {
            throw new IllegalArgumentException("QPN must fit 24 bits: " + qpn);
        }
        if (psn < 0 || psn > 0xffffff) {
            throw new IllegalArgumentException("PSN must fit 24 bits: " + psn);
        }
        if (gid.length != 16) {
            throw new IllegalArgumentException("a GID is 16 bytes, got " + gid.length);
        }
        gid = gid.clone();
    }

    /** The GID bytes, a copy. */
    @Override
    public byte[] gid() {
        return gid.clone();
    }

    /**
     * Whether the GID's interface id (its low 64 bits) is non-zero: the C tools' test
     * ({@code dest->gid.global.interface_id}) for addressing the peer through a GRH.
     */
    public boolean hasGid() {
        for (int i = 8; i < 16; i++) {
            if (gid[i] != 0) {
                return true;
            }
        }
        return false;
    }

    /** Encodes this address as the 52-byte message, the trailing NUL included. */
    public byte[] encode() {
        StringBuilder sb = new StringBuilder(WIRE_SIZE);
        sb.append(CFormat.hex(lid, 4)).append(':').append(CFormat.hex(qpn, 6)).append(':')
                .append(CFormat.hex(psn, 6)).append(':');
        for (byte b : gid) {
            sb.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        byte[] out = Arrays.copyOf(sb.toString().getBytes(StandardCharsets.US_ASCII), WIRE_SIZE);
        return out; // the last byte stays 0: C sends the NUL
    }

    /**
     * Decodes the 52-byte message a peer sent.
     *
     * <p>Stricter than the C tools' {@code sscanf("%x:%x:%x:%s")}, which accepts anything and fills the fields
     * with whatever it finds: every field must be there with its exact width, and the message NUL-terminated,
     * so that a peer speaking another protocol (perftest, a port scanner) is reported rather than turned into a
     * QP connected to garbage. Upper-case hex digits are accepted.
     *
     * @throws PingPongProtocolException naming what is wrong and quoting the bytes received
     */
    public static PingPongDestination decode(byte[] msg) throws PingPongProtocolException {
        if (msg.length != WIRE_SIZE) {
            throw malformed(msg, "expected " + WIRE_SIZE + " bytes, got " + msg.length);
        }
        if (msg[WIRE_SIZE - 1] != 0) {
            throw malformed(msg, "byte 51 must be the terminating NUL");
        }
        if (msg[4] != ':' || msg[11] != ':' || msg[18] != ':') {
            throw malformed(msg, "expected ':' at offsets 4, 11 and 18");
        }
        int lid = hexField(msg, 0, 4, "LID");
        int qpn = hexField(msg, 5, 6, "QPN");
        int psn = hexField(msg, 12, 6, "PSN");
        byte[] gid = new byte[16];
        for (int i = 0; i < 16; i++) {
            gid[i] = (byte) hexField(msg, GID_OFFSET + 2 * i, 2, "GID");
        }
        return new PingPongDestination(lid, qpn, psn, gid);
    }

    private static int hexField(byte[] msg, int offset, int width, String name) throws PingPongProtocolException {
        int v = 0;
        for (int i = offset; i < offset + width; i++) {
            int d = Character.digit(msg[i], 16);
            if (d < 0) {
                throw malformed(msg, name + " has a non-hex character at offset " + i);
            }
            v = (v << 4) | d;
        }
        return v;
    }

    private static PingPongProtocolException malformed(byte[] msg, String what) {
        return new PingPongProtocolException("malformed address message from the peer (" + what
                + "); expected \"LLLL:QQQQQQ:PPPPPP:<32 hex digits GID>\\0\" as sent by ibv_*_pingpong, got \""
                + PingPongProtocolException.printable(msg) + "\". Is the peer a ping-pong of the same kind"
                + " (rc/ud), on the same -p port?");
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PingPongDestination d && d.lid == lid && d.qpn == qpn && d.psn == psn
                && Arrays.equals(d.gid, gid);
    }

    @Override
    public int hashCode() {
        return ((lid * 31 + qpn) * 31 + psn) * 31 + Arrays.hashCode(gid);
    }

    /** The address as the C tools print it, after {@code "  local address:  "}. */
    @Override
    public String toString() {
        return "LID 0x" + CFormat.hex(lid, 4) + ", QPN 0x" + CFormat.hex(qpn, 6) + ", PSN 0x" + CFormat.hex(psn, 6)
                + ", GID " + GidText.format(gid);
    }
}
