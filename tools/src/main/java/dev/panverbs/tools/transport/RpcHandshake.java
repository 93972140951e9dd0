package dev.panverbs.tools.transport;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;

/**
 * What the two sides tell each other over TCP before any RDMA traffic: how to reach the QP, and the resources
 * each side set aside. The client sends first; the server checks it, connects its QP (to RTS), posts its
 * receive buffers and only then answers, so the client can never send before the server can receive.
 *
 * <pre>
 *  0                 8      10     12     14     16       20       24                       40
 * +-----------------+------+------+------+------+--------+--------+------------------------+
 * | magic "PVRPC" 0 0 1 | ver  | role | LID  | MTU  |  QPN   |  PSN   |  GID (16 bytes)    |
 * +-----------------+------+------+------+------+--------+--------+------------------------+
 *  40       44          48           52       56       60       64                  72
 * +--------+-----------+------------+--------+--------+--------+-------------------+
 * |credits |max request|max response| slots  | stride |  rkey  | response address  |
 * +--------+-----------+------------+--------+--------+--------+-------------------+
 *  big-endian. MTU: the port's active MTU as C enum ibv_mtu (1 = 256 .. 5 = 4096); the path uses the smaller.
 *  Server: credits = receive buffers posted, max request = their size; slot fields 0.
 *  Client: slots, max response, stride, rkey and address of its response region; credits 0.
 *  role REJECT (server only): followed by a u16 length and that many bytes of UTF-8 reason, then close.
 * </pre>
 *
 * @param role            {@link #CLIENT} or {@link #SERVER}
 * @param mtu             the sender's active MTU ({@code enum ibv_mtu} value)
 * @param credits         server: receive buffers posted for this connection
 * @param maxRequest      server: size of each receive buffer, the largest request accepted
 * @param maxResponse     client: the largest response payload each slot holds
 * @param slots           client: number of response slots (the most calls outstanding at once)
 * @param slotStride      client: bytes from one response slot to the next
 * @param responseRkey    client: rkey of the response region (remote write allowed)
 * @param responseAddress client: virtual address of response slot 0
 */
record RpcHandshake(int role, int lid, int mtu, int qpn, int psn, byte[] gid, int credits, int maxRequest,
                    int maxResponse, int slots, int slotStride, int responseRkey, long responseAddress) {
    static final long MAGIC = 0x5056525043000001L; // "PVRPC" 00 00 01
    static final int VERSION = 1;
    static final int CLIENT = 1;
    static final int SERVER = 2;
    static final int REJECT = 3;
    static final int SIZE = 72;

    RpcHandshake {
        gid = gid.clone();
        if (gid.length != 16) {
            throw new IllegalArgumentException("a GID is 16 bytes");
        }
    }

    @Override
    public byte[] gid() {
        return gid.clone();
    }

    void write(OutputStream out) throws IOException {
        DataOutputStream d = new DataOutputStream(out);
        d.writeLong(MAGIC);
        d.writeShort(VERSION);
        d.writeShort(role);
        d.writeShort(lid);
        d.writeShort(mtu);
        d.writeInt(qpn);
        d.writeInt(psn);
        d.write(gid);
        d.writeInt(credits);
        d.writeInt(maxRequest);
        d.writeInt(maxResponse);
        d.writeInt(slots);
        d.writeInt(slotStride);
        d.writeInt(responseRkey);
        d.writeLong(responseAddress);
        d.flush();
    }

    static void writeReject(OutputStream out, String reason) throws IOException {
        DataOutputStream d = new DataOutputStream(out);
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        d.writeLong(MAGIC);
        d.writeShort(VERSION);
        d.writeShort(REJECT);
        d.writeShort(Math.min(text.length, 0xffff));
        d.write(text, 0, Math.min(text.length, 0xffff));
        d.flush();
    }

    /**
     * {@link #read(InputStream, int)} from {@code socket} within {@code timeout} in all: each read waits only for
     * what is left, so a peer dribbling a byte just under the timeout cannot stretch the handshake to 72 timeouts
     * (and hold up the server's accept loop that long).
     */
    static RpcHandshake read(Socket socket, int expectedRole, Duration timeout) throws IOException {
        InputStream raw = socket.getInputStream();
        long deadline = System.nanoTime() + timeout.toNanos();
        InputStream bounded = new InputStream() {
            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                long left = (deadline - System.nanoTime()) / 1_000_000L;
                if (left <= 0) {
                    throw new SocketTimeoutException();
                }
                socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, left));
                return raw.read(b, off, len);
            }
        };
        return read(bounded, expectedRole);
    }

    /**
     * Reads the peer's handshake and checks it: magic, version, the role expected, and that every field is
     * in range for its role.
     */
    static RpcHandshake read(InputStream in, int expectedRole) throws IOException {
        DataInputStream d = new DataInputStream(in);
        try {
            long magic = d.readLong();
            if (magic != MAGIC) {
                throw new RpcProtocolException("the peer is not a panverbs RPC endpoint (handshake magic 0x"
                        + Long.toHexString(magic) + ", expected 0x" + Long.toHexString(MAGIC) + ")");
            }
            int version = d.readUnsignedShort();
            if (version != VERSION) {
                throw new RpcProtocolException("the peer speaks handshake version " + version + ", this side "
                        + VERSION);
            }
            int role = d.readUnsignedShort();
            if (role == REJECT && expectedRole == SERVER) {
                byte[] reason = new byte[d.readUnsignedShort()];
                d.readFully(reason);
                throw new RpcException("the server rejected the connection: "
                        + new String(reason, StandardCharsets.UTF_8));
            }
            if (role != expectedRole) {
                throw new RpcProtocolException("expected a " + roleName(expectedRole) + " handshake, got role "
                        + role);
            }
            int lid = d.readUnsignedShort();
            int mtu = d.readUnsignedShort();
            int qpn = d.readInt();
            int psn = d.readInt();
            byte[] gid = new byte[16];
            d.readFully(gid);
            RpcHandshake h = new RpcHandshake(role, lid, mtu, qpn, psn, gid, d.readInt(), d.readInt(), d.readInt(),
                    d.readInt(), d.readInt(), d.readInt(), d.readLong());
            h.validate();
            return h;
        } catch (EOFException e) {
            throw new RpcProtocolException("the peer closed the connection during the handshake");
        } catch (SocketTimeoutException e) {
            throw new RpcProtocolException("timed out waiting for the peer's handshake");
        }
    }

    void validate() {
        check((qpn & ~0xffffff) == 0, "QPN 0x" + Integer.toHexString(qpn) + " exceeds 24 bits");
        check(mtu >= 1 && mtu <= 5, "MTU code " + mtu + " outside 1 (256) .. 5 (4096)");
        check((psn & ~0xffffff) == 0, "PSN 0x" + Integer.toHexString(psn) + " exceeds 24 bits");
        if (role == SERVER) {
            check(credits >= 2 && credits <= CreditReturn.MAX_PER_MESSAGE,
                    "server credits " + credits + " outside 2.." + CreditReturn.MAX_PER_MESSAGE);
            check(maxRequest >= 0, "negative max request " + maxRequest);
        } else {
            check(slots >= 1 && slots <= Immediate.MAX_SLOTS, "client slots " + slots + " outside 1.."
                    + Immediate.MAX_SLOTS);
            check(maxResponse >= 0 && (long) maxResponse + ResponseHeader.SIZE <= slotStride,
                    "max response " + maxResponse + " + header does not fit the slot stride " + slotStride);
            check(responseAddress != 0, "no response region address");
        }
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new RpcProtocolException("invalid handshake from the peer: " + what);
        }
    }

    private static String roleName(int role) {
        return role == CLIENT ? "client" : role == SERVER ? "server" : "role-" + role;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RpcHandshake h && h.role == role && h.lid == lid && h.mtu == mtu && h.qpn == qpn && h.psn == psn
                && Arrays.equals(h.gid, gid) && h.credits == credits && h.maxRequest == maxRequest
                && h.maxResponse == maxResponse && h.slots == slots && h.slotStride == slotStride
                && h.responseRkey == responseRkey && h.responseAddress == responseAddress;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(gid) * 31 + qpn;
    }
}
