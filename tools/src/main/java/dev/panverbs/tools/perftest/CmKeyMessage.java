package dev.panverbs.tools.perftest;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * A {@link KeyMessage} as perftest 6.06 sends it over its rdma_cm channel (-R/-z, {@code rdma_write_keys}): the
 * {@code struct pingpong_dest} itself, 56 bytes on x86-64 with every integer field big endian (the Debian build has
 * {@code HAVE_ENDIAN}), in one SEND:
 *
 * <pre>
 *  0 lid   4 out_reads   8 qpn   12 psn   16 rkey   20 (padding)   24 vaddr (8)   32 gid (16)   48 srqn   52 gid_index
 * </pre>
 *
 * The reader ({@code rdma_read_keys}) takes LID, out_reads, QPN, PSN, RKey, VAddr and the GID; it ignores the
 * padding, SRQN and GID index (its own GID index decides whether a GID is printed).
 */
final class CmKeyMessage {
    /** {@code sizeof(struct pingpong_dest)}: also the length of every receive perftest posts on that channel. */
    static final int SIZE = 56;

    private CmKeyMessage() { }

    static byte[] encode(KeyMessage k) {
        ByteBuffer b = ByteBuffer.allocate(SIZE).order(ByteOrder.BIG_ENDIAN);
        b.putInt(0, k.lid()).putInt(4, k.outReads()).putInt(8, k.qpn()).putInt(12, k.psn()).putInt(16, k.rkey());
        b.putLong(24, k.vaddr());
        if (k.hasGid()) {
            b.put(32, k.gid());
        }
        b.putInt(48, k.srqn()).putInt(52, k.hasGid() ? 0 : -1);
        return b.array();
    }

    /**
     * Decodes the peer's message; {@code withGid} is this side's choice (a GID only shown when this side uses one).
     *
     * @throws ExchangeException if a field is out of the range perftest ever sends
     */
    static KeyMessage decode(byte[] m, boolean withGid, String step) {
        if (m.length != SIZE) {
            throw new ExchangeException("bad " + step + " message from the peer: " + m.length + " bytes, a perftest "
                    + "rdma_cm key message has " + SIZE);
        }
        ByteBuffer b = ByteBuffer.wrap(m).order(ByteOrder.BIG_ENDIAN);
        try {
            return new KeyMessage(b.getInt(0), b.getInt(4), b.getInt(8), b.getInt(12), b.getInt(16), b.getLong(24),
                    withGid ? Arrays.copyOfRange(m, 32, 48) : null, b.getInt(48));
        } catch (IllegalArgumentException e) {
            throw new ExchangeException("bad " + step + " message from the peer (" + e.getMessage() + "; received "
                    + ExchangeChannel.describe(m, m.length) + "): is the peer a perftest tool running the same test?",
                    e);
        }
    }
}
