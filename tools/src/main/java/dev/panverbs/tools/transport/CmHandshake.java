package dev.panverbs.tools.transport;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The handshake of a connection set up through rdma_cm ({@link RpcClient#connectCm}, {@link RpcServer#startCm}),
 * carried as private data of the CM's messages: rdma_cm exchanges what reaches the QP (QP number, PSN, path, MTU), so
 * only the transport's resources travel, in the same big-endian encoding as {@link RpcHandshake}:
 *
 * <pre>
 *  client (connect, 36 of its 56 bytes): magic(8) version(2) role(2) maxResponse(4) slots(4) stride(4) rkey(4)
 *                                        responseAddress(8)
 *  server (accept, 20 bytes):            magic(8) version(2) role(2) credits(4) maxRequest(4)
 *  reject (at most 148 bytes):           magic(8) version(2) role REJECT(2) length(2) UTF-8 reason
 * </pre>
 *
 * The decoded handshakes go through {@link RpcHandshake}'s checks; their QP fields are the CM's (the QP number from
 * the event), the rest of the path fields are not used on this route.
 */
final class CmHandshake {
    static final int CLIENT_SIZE = 36;
    static final int SERVER_SIZE = 20;
    /** IB CM REJ private data: 148 bytes. */
    static final int MAX_REJECT = 148;
    /** A valid MTU code for {@link RpcHandshake}'s checks; rdma_cm picks the path MTU itself on this route. */
    private static final int CM_MTU = 5;

    private CmHandshake() {}

    static byte[] client(RpcHandshake h) {
        return header(CLIENT_SIZE, RpcHandshake.CLIENT).putInt(h.maxResponse()).putInt(h.slots())
                .putInt(h.slotStride()).putInt(h.responseRkey()).putLong(h.responseAddress()).array();
    }

    static byte[] server(RpcHandshake h) {
        return header(SERVER_SIZE, RpcHandshake.SERVER).putInt(h.credits()).putInt(h.maxRequest()).array();
    }

    static byte[] reject(String reason) {
        byte[] text = reason == null ? new byte[0] : reason.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, MAX_REJECT - 14);
        return header(14 + n, RpcHandshake.REJECT).putShort((short) n).put(text, 0, n).array();
    }

    private static ByteBuffer header(int size, int role) {
        return ByteBuffer.allocate(size).putLong(RpcHandshake.MAGIC).putShort((short) RpcHandshake.VERSION)
                .putShort((short) role);
    }

    /** The client's handshake from a CONNECT_REQUEST's private data and the QP number it carries. */
    static RpcHandshake readClient(byte[] data, int qpn) {
        ByteBuffer b = open(data, RpcHandshake.CLIENT);
        try {
            RpcHandshake h = new RpcHandshake(RpcHandshake.CLIENT, 0, CM_MTU, qpn, 0, new byte[16], 0, 0, b.getInt(),
                    b.getInt(), b.getInt(), b.getInt(), b.getLong());
            h.validate();
            return h;
        } catch (BufferUnderflowException e) {
            throw new RpcProtocolException("the client's connect request carries " + data.length + " bytes of "
                    + "private data, fewer than a handshake's " + CLIENT_SIZE);
        }
    }

    /** The server's handshake from a CONNECT_RESPONSE's private data and the QP number it carries. */
    static RpcHandshake readServer(byte[] data, int qpn) {
        ByteBuffer b = open(data, RpcHandshake.SERVER);
        try {
            RpcHandshake h = new RpcHandshake(RpcHandshake.SERVER, 0, CM_MTU, qpn, 0, new byte[16], b.getInt(),
                    b.getInt(), 0, 0, 0, 0, 0);
            h.validate();
            return h;
        } catch (BufferUnderflowException e) {
            throw new RpcProtocolException("the server's reply carries " + data.length + " bytes of private data, "
                    + "fewer than a handshake's " + SERVER_SIZE);
        }
    }

    /** The reason in a rejection's private data, or {@code null} when it is not this transport's REJECT. */
    static String rejectReason(byte[] data) {
        ByteBuffer b = ByteBuffer.wrap(data);
        if (data.length < 14 || b.getLong() != RpcHandshake.MAGIC || b.getShort() != RpcHandshake.VERSION
                || b.getShort() != RpcHandshake.REJECT) {
            return null;
        }
        int n = Math.min(Short.toUnsignedInt(b.getShort()), b.remaining());
        return new String(data, 14, n, StandardCharsets.UTF_8);
    }

    private static ByteBuffer open(byte[] data, int role) {
        ByteBuffer b = ByteBuffer.wrap(data);
        if (data.length < 12 || b.getLong() != RpcHandshake.MAGIC) {
            throw new RpcProtocolException("the peer is not a panverbs RPC endpoint (its rdma_cm private data does "
                    + "not start with the handshake magic)");
        }
        int version = Short.toUnsignedInt(b.getShort());
        if (version != RpcHandshake.VERSION) {
            throw new RpcProtocolException("the peer speaks handshake version " + version + ", this side "
                    + RpcHandshake.VERSION);
        }
        int got = Short.toUnsignedInt(b.getShort());
        if (got != role) {
            throw new RpcProtocolException("expected handshake role " + role + ", got " + got);
        }
        return b;
    }
}
