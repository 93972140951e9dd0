package dev.panverbs.tools.perftest;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * One QP's "local address" as perftest 6.06 exchanges it over TCP ({@code struct pingpong_dest}, written by
 * {@code ethernet_write_keys}). It is fixed-length lowercase hex text, NUL terminated; the sender's GID index
 * decides the form and the receiver expects the same one:
 *
 * <pre>
 * without GID (IB, no -x), 59 bytes, "%04x:%04x:%06x:%06x:%08x:%016llx:%08x\0":
 *   0    5    10     17     24       33               50       58
 *   LLLL:OOOO:QQQQQQ:PPPPPP:RRRRRRRR:VVVVVVVVVVVVVVVV:SSSSSSSS\0
 *
 * with GID (RoCE, or -x), 108 bytes: the same six fields, 16 GID bytes "%02x:", SRQN "%08x:", NUL:
 *   LLLL:OOOO:QQQQQQ:PPPPPP:RRRRRRRR:VVVVVVVVVVVVVVVV:gg:gg:...(16)...:gg:SSSSSSSS:\0
 *
 * L = LID, O = outstanding reads (1 for write/send; max_qp_rd_atom or -o for read), Q = QPN (24 bit),
 * P = PSN (24 bit), R = RKey, V = VAddr (where the peer writes/reads), S = SRQN (0 unless XRC/DC).
 * </pre>
 *
 * @param gid the 16 GID bytes, or {@code null} for the short form
 */
record KeyMessage(int lid, int outReads, int qpn, int psn, int rkey, long vaddr, byte[] gid, int srqn) {

    /** Size of the message without GID ({@code KEY_MSG_SIZE}). */
    static final int SIZE = 59;
    /** Size of the message with GID ({@code KEY_MSG_SIZE_GID}). */
    static final int SIZE_GID = 108;

    KeyMessage {
        if ((lid & ~0xffff) != 0 || (outReads & ~0xffff) != 0 || (qpn & ~0xffffff) != 0
                || (psn & ~0xffffff) != 0) {
            throw new IllegalArgumentException("key message field out of range: lid=" + lid + " outReads="
                    + outReads + " qpn=" + qpn + " psn=" + psn);
        }
        if (gid != null && gid.length != 16) {
            throw new IllegalArgumentException("a GID has 16 bytes, not " + gid.length);
        }
        gid = gid == null ? null : gid.clone();
    }

    /** A copy with another outstanding-reads value. */
    KeyMessage withOutReads(int value) {
        return new KeyMessage(lid, value, qpn, psn, rkey, vaddr, gid, srqn);
    }

    /** True when the GID is an IPv4-mapped address (::ffff:a.b.c.d), as {@code ipv6_addr_v4mapped} tests. */
    boolean isIpv4MappedGid() {
        if (gid == null) {
            return false;
        }
        for (int i = 0; i < 10; i++) {
            if (gid[i] != 0) {
                return false;
            }
        }
        return (gid[10] & 0xff) == 0xff && (gid[11] & 0xff) == 0xff;
    }

    boolean hasGid() {
        return gid != null;
    }

    @Override
    public byte[] gid() {
        return gid == null ? null : gid.clone();
    }

    /** Wire size for the form that this side's GID index selects. */
    static int size(boolean withGid) {
        return withGid ? SIZE_GID : SIZE;
    }

    /** The exact bytes perftest writes for this message. */
    byte[] encode() {
        StringBuilder s = new StringBuilder(SIZE_GID);
        s.append(CFormat.hex(lid, 4)).append(':').append(CFormat.hex(outReads, 4)).append(':')
                .append(CFormat.hex(qpn, 6)).append(':').append(CFormat.hex(psn, 6)).append(':')
                .append(CFormat.hex(Integer.toUnsignedLong(rkey), 8)).append(':').append(CFormat.hex(vaddr, 16))
                .append(':');
        if (gid != null) {
            for (byte b : gid) {
                s.append(CFormat.hex(b & 0xff, 2)).append(':');
            }
            s.append(CFormat.hex(Integer.toUnsignedLong(srqn), 8)).append(':');
        } else {
            s.append(CFormat.hex(Integer.toUnsignedLong(srqn), 8));
        }
        byte[] text = s.toString().getBytes(StandardCharsets.US_ASCII);
        return Arrays.copyOf(text, text.length + 1); // trailing NUL
    }

    /**
     * Parses a message of the form the reader expects. Stricter than perftest's {@code sscanf}: every field must
     * have its exact width and be hex, so a peer speaking another form, another test or no perftest at all is
     * reported instead of silently misparsed.
     *
     * @throws MalformedException naming what is wrong and, when it can tell, what the peer seems to be doing
     */
    static KeyMessage decode(byte[] m, boolean withGid) {
        int expected = size(withGid);
        if (m.length != expected) {
            throw new MalformedException("not a perftest key message: it has " + expected + " bytes, got " + m.length, m);
        }
        if (m[expected - 1] != 0) {
            throw new MalformedException("not a perftest key message: it is not NUL terminated", m);
        }
        int[] widths = {4, 4, 6, 6, 8, 16};
        long[] values = new long[6];
        int at = 0;
        for (int f = 0; f < 6; f++) {
            values[f] = hexField(m, at, widths[f], withGid);
            at += widths[f];
            expectColon(m, at++, withGid);
        }
        byte[] gid = null;
        if (withGid) {
            gid = new byte[16];
            for (int k = 0; k < 16; k++) {
                gid[k] = (byte) hexField(m, at, 2, true);
                at += 2;
                expectColon(m, at++, true);
            }
        }
        int srqn = (int) hexField(m, at, 8, withGid);
        at += 8;
        if (withGid) {
            expectColon(m, at++, true);
        }
        if (at != expected - 1) {
            throw new IllegalStateException("layout arithmetic: " + at);
        }
        return new KeyMessage((int) values[0], (int) values[1], (int) values[2], (int) values[3],
                (int) values[4], values[5], gid, srqn);
    }

    private static long hexField(byte[] m, int at, int width, boolean withGid) {
        long v = 0;
        for (int i = at; i < at + width; i++) {
            int d = Character.digit(m[i], 16);
            if (d < 0) {
                throw mismatch(m, "byte " + i + " should be a hex digit", withGid);
            }
            v = (v << 4) | d;
        }
        return v;
    }

    private static void expectColon(byte[] m, int at, boolean withGid) {
        if (m[at] != ':') {
            throw mismatch(m, "byte " + at + " should be ':'", withGid);
        }
    }

    private static MalformedException mismatch(byte[] m, String what, boolean withGid) {
        // The two forms share their first 50 bytes; a GID message read as the short form shows "xx:xx:" where
        // the SRQN should be. The reverse (short read as long) is caught by the reader's timeout.
        if (!withGid && looksLikeGidForm(m)) {
            return new MalformedException("the peer sends key messages with a GID (108 bytes, RoCE or -x) and this "
                    + "side expects them without (59 bytes): give both sides the same -x, or check that both use "
                    + "the same link type", m);
        }
        return new MalformedException("not a perftest key message: " + what, m);
    }

    private static boolean looksLikeGidForm(byte[] m) {
        return m.length >= 59 && m[50] != 0 && m[52] == ':' && m[55] == ':';
    }

    @Override
    public String toString() {
        return new String(encode(), 0, hasGid() ? SIZE_GID - 1 : SIZE - 1, StandardCharsets.US_ASCII);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeyMessage k && lid == k.lid && outReads == k.outReads && qpn == k.qpn && psn == k.psn
                && rkey == k.rkey && vaddr == k.vaddr && srqn == k.srqn && Arrays.equals(gid, k.gid);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(vaddr) * 31 + qpn * 17 + psn + Arrays.hashCode(gid);
    }

    /** A key message that is not what perftest sends. */
    static final class MalformedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        MalformedException(String message, byte[] received) {
            super(message + "; received " + ExchangeChannel.describe(received, received.length));
        }
    }

    /** Hex of the raw bytes, for diagnostics. */
    static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }
}
