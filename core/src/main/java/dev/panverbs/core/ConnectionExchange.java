package dev.panverbs.core;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Objects;

/**
 * Exchanges {@link QueuePairEndpoint}s over a TCP socket, for applications that connect QPs without
 * rdma_cm (as perftest and the rdma-core pingpong examples do). One side {@link #accept}s, the other
 * {@link #connect}s; both call {@link #exchange} with their own endpoint and get the peer's, move their QP
 * to RTR/RTS, then may {@link #barrier()} so neither sends before the other is ready.
 *
 * <h2>Wire format (version 1, big-endian)</h2>
 * <pre>
 *  0        4        6        8                12
 *  +--------+--------+--------+----------------+
 *  | magic  | version| kind   | payload length |   header, 12 bytes
 *  | "PVEX" |   1    | 1 or 2 |  (u32)         |   magic 0x50564558
 *  +--------+--------+--------+----------------+
 *  kind 1 ENDPOINT: length 56        kind 2 BARRIER: length 0
 *
 *  ENDPOINT payload:
 *  0      1      2        4             8             12            16            20           24
 *  +------+------+--------+-------------+-------------+-------------+-------------+------------+
 *  |qptype| mtu  |  lid   |  qpn (24b)  |  psn (24b)  |    qkey     |    rkey     |  reserved  |
 *  +------+------+--------+-------------+-------------+-------------+-------------+------------+
 *  24                          32                          40                                 56
 *  +---------------------------+---------------------------+----------------------------------+
 *  |  address (u64)            |  length (u64)             |  gid (16 bytes, network order)   |
 *  +---------------------------+---------------------------+----------------------------------+
 *  qptype: IBV_QPT_RC 2, UC 3, UD 4; mtu: IBV_MTU_256 1 ... IBV_MTU_4096 5
 * </pre>
 * Every field is checked: a wrong magic, another version, an unknown kind, a length other than the kind's,
 * a length above {@value #MAX_PAYLOAD} (never read), a truncated message, an out-of-range field, or a peer
 * whose transport differs from ours fails with a {@link ProtocolException} saying which; a silent peer fails
 * with {@link SocketTimeoutException} after the timeout, as does a peer that trickles a message slower than that
 * (each message must arrive whole within the timeout). Nothing waits forever.
 *
 * <p>Thread safety: one exchange per thread; not for concurrent use.
 */
public final class ConnectionExchange implements AutoCloseable {

    /** {@code "PVEX"}. */
    static final int MAGIC = 0x50564558;
    /** The version this class speaks. */
    static final short VERSION = 1;
    static final short KIND_ENDPOINT = 1;
    static final short KIND_BARRIER = 2;
    static final int HEADER_SIZE = 12;
    static final int ENDPOINT_SIZE = 56;
    /** Payloads above this are rejected without being read. */
    static final int MAX_PAYLOAD = 4096;

    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private final Duration timeout;

    private ConnectionExchange(Socket socket, Duration timeout) throws IOException {
        this.socket = socket;
        this.timeout = timeout;
        socket.setSoTimeout(millis(timeout));
        socket.setTcpNoDelay(true);
        this.in = new DataInputStream(socket.getInputStream());
        this.out = new DataOutputStream(socket.getOutputStream());
    }

    /**
     * Connects to a peer that {@link #accept}s on {@code host:port}, retrying refused connections until
     * {@code timeout} (the peer may start later, as perftest's client allows). Reads then time out after
     * {@code timeout} each.
     */
    public static ConnectionExchange connect(String host, int port, Duration timeout) throws IOException {
        millis(timeout); // a non-positive timeout is refused before connecting
        long deadline = System.nanoTime() + nanos(timeout);
        while (true) {
            Socket s = new Socket();
            try {
                long left = Math.max(1, (deadline - System.nanoTime()) / 1_000_000L);
                s.connect(new InetSocketAddress(host, port), (int) Math.min(Integer.MAX_VALUE, left));
                return new ConnectionExchange(s, timeout);
            } catch (ConnectException e) {
                s.close();
                if (System.nanoTime() - deadline >= 0) {
                    throw new SocketTimeoutException("no peer accepted on " + host + ":" + port + " within "
                            + timeout + " (last: " + e.getMessage() + ")");
                }
                sleep(100);
            } catch (SocketTimeoutException e) {
                s.close();
                throw new SocketTimeoutException("no peer accepted on " + host + ":" + port + " within " + timeout
                        + " (connect timed out)");
            } catch (IOException | RuntimeException e) {
                s.close();
                throw e;
            }
        }
    }

    /** Listens on {@code port} (all interfaces), accepts one peer within {@code timeout}, stops listening. */
    public static ConnectionExchange accept(int port, Duration timeout) throws IOException {
        try (ServerSocket server = new ServerSocket()) {
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(port));
            return accept(server, timeout);
        }
    }

    /** Accepts one peer on {@code server} within {@code timeout}; the server socket stays open. */
    public static ConnectionExchange accept(ServerSocket server, Duration timeout) throws IOException {
        server.setSoTimeout(millis(timeout));
        Socket s;
        try {
            s = server.accept();
        } catch (SocketTimeoutException e) {
            throw new SocketTimeoutException("no peer connected to port " + server.getLocalPort() + " within " + timeout);
        }
        try {
            return new ConnectionExchange(s, timeout);
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /** Runs the exchange over an already connected socket (which this object then owns and closes). */
    public static ConnectionExchange over(Socket socket, Duration timeout) throws IOException {
        return new ConnectionExchange(Objects.requireNonNull(socket, "socket"), timeout);
    }

    /**
     * Sends {@code local} and returns the peer's endpoint, validated.
     *
     * @throws ProtocolException      the peer sent something malformed, or uses another transport
     * @throws SocketTimeoutException the peer sent nothing for the timeout
     * @throws EOFException           the peer closed the connection mid-message
     */
    public QueuePairEndpoint exchange(QueuePairEndpoint local) throws IOException {
        out.write(encode(local));
        out.flush();
        ByteBuffer payload = readMessage(KIND_ENDPOINT, "endpoint");
        QueuePairEndpoint peer = decodeEndpoint(payload);
        if (peer.type() != local.type()) {
            throw new ProtocolException("transport mismatch: this side is " + local.type() + ", the peer is "
                    + peer.type() + " (peer " + peer + ")");
        }
        return peer;
    }

    /** Sends a barrier and waits for the peer's: both sides have reached this point. */
    public void barrier() throws IOException {
        out.write(header(KIND_BARRIER, 0).array());
        out.flush();
        readMessage(KIND_BARRIER, "barrier");
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** Encodes an ENDPOINT message: header and payload. */
    static byte[] encode(QueuePairEndpoint e) {
        ByteBuffer b = header(KIND_ENDPOINT, ENDPOINT_SIZE);
        b.put((byte) e.type().value()).put((byte) e.mtu().value()).putShort((short) e.lid())
                .putInt(e.qpn()).putInt(e.psn()).putInt(e.qkey()).putInt(e.rkey()).putInt(0)
                .putLong(e.address()).putLong(e.length()).put(e.gid().toBytes());
        return b.array();
    }

    private static ByteBuffer header(short kind, int length) {
        ByteBuffer b = ByteBuffer.allocate(HEADER_SIZE + length);
        b.putInt(MAGIC).putShort(VERSION).putShort(kind).putInt(length);
        return b;
    }

    private ByteBuffer readMessage(short expectedKind, String what) throws IOException {
        try {
            return readMessage(in, socket, expectedKind, what, timeout);
        } finally {
            socket.setSoTimeout(millis(timeout));
        }
    }

    /** Reads and checks one message of {@code expectedKind}; returns its payload. */
    static ByteBuffer readMessage(InputStream input, short expectedKind, String what, Duration timeout)
            throws IOException {
        return readMessage(input, null, expectedKind, what, timeout);
    }

    /**
     * Reads and checks one message; the whole message must arrive within {@code timeout}, so a peer that trickles a
     * byte at a time cannot stretch the wait (with a {@code socket}, each read waits only for the time left;
     * without, at most one more {@code timeout}).
     */
    private static ByteBuffer readMessage(InputStream input, Socket socket, short expectedKind, String what,
                                          Duration timeout) throws IOException {
        long deadline = System.nanoTime() + nanos(timeout);
        byte[] h = new byte[HEADER_SIZE];
        readFully(input, socket, h, what + " header", timeout, deadline);
        ByteBuffer header = ByteBuffer.wrap(h);
        int magic = header.getInt();
        short version = header.getShort();
        short kind = header.getShort();
        int length = header.getInt();
        if (magic != MAGIC) {
            throw new ProtocolException(String.format("not a panverbs exchange peer: magic 0x%08x, expected 0x%08x "
                    + "(\"PVEX\"); is something else (perftest, another service) on that port?", magic, MAGIC));
        }
        if (version != VERSION) {
            throw new ProtocolException("the peer speaks exchange version " + version + ", this side speaks "
                    + VERSION + "; run the same panverbs version on both sides");
        }
        if (kind != KIND_ENDPOINT && kind != KIND_BARRIER) {
            throw new ProtocolException("unknown message kind " + kind + " (expected " + expectedKind + ")");
        }
        if (length < 0 || length > MAX_PAYLOAD) {
            throw new ProtocolException("oversized message: payload length " + Integer.toUnsignedString(length)
                    + " exceeds " + MAX_PAYLOAD + " bytes; not read");
        }
        if (kind != expectedKind) {
            throw new ProtocolException("out of order: expected a " + what + " message (kind " + expectedKind
                    + "), the peer sent kind " + kind);
        }
        int expectedLength = kind == KIND_ENDPOINT ? ENDPOINT_SIZE : 0;
        if (length != expectedLength) {
            throw new ProtocolException("length mismatch: a version " + VERSION + " " + what + " has " + expectedLength
                    + " payload bytes, the peer announced " + length);
        }
        byte[] payload = new byte[length];
        readFully(input, socket, payload, what + " payload", timeout, deadline);
        return ByteBuffer.wrap(payload);
    }

    /** Decodes and validates an ENDPOINT payload. */
    static QueuePairEndpoint decodeEndpoint(ByteBuffer p) throws ProtocolException {
        int qpType = Byte.toUnsignedInt(p.get());
        int mtuValue = Byte.toUnsignedInt(p.get());
        int lid = Short.toUnsignedInt(p.getShort());
        int qpn = p.getInt();
        int psn = p.getInt();
        int qkey = p.getInt();
        int rkey = p.getInt();
        p.getInt(); // reserved
        long address = p.getLong();
        long length = p.getLong();
        byte[] gid = new byte[16];
        p.get(gid);
        QueuePairType type;
        try {
            type = QueuePairType.of(qpType);
        } catch (IllegalArgumentException e) {
            throw new ProtocolException("the peer sent QP type " + qpType + ", not one of RC/UC/UD");
        }
        Mtu mtu;
        try {
            mtu = Mtu.of(mtuValue);
        } catch (IllegalArgumentException e) {
            throw new ProtocolException("the peer sent MTU code " + mtuValue + ", not an IBV_MTU_* value (1..5)");
        }
        try {
            return new QueuePairEndpoint(type, lid, Gid.of(gid), qpn, psn, qkey, rkey, address, length, mtu);
        } catch (IllegalArgumentException e) {
            throw new ProtocolException("the peer sent an invalid endpoint: " + e.getMessage());
        }
    }

    private static void readFully(InputStream input, Socket socket, byte[] buf, String what, Duration timeout,
                                  long deadline) throws IOException {
        int n = 0;
        while (n < buf.length) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new SocketTimeoutException("the peer sent only " + n + " of " + buf.length + " bytes of the "
                        + what + " within " + timeout + " (a slow or stalling peer): giving up");
            }
            if (socket != null) {
                socket.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, (left + 999_999) / 1_000_000)));
            }
            int r;
            try {
                r = input.read(buf, n, buf.length - n);
            } catch (SocketTimeoutException e) {
                throw new SocketTimeoutException("the peer sent " + n + " of " + buf.length + " bytes of the " + what
                        + (n == 0 && what.endsWith("header") ? " and then nothing for " + timeout
                        : " within " + timeout + " (a slow or stalling peer): giving up"));
            }
            if (r < 0) {
                throw new EOFException("truncated message: the peer closed the connection after " + n + " of "
                        + buf.length + " bytes of the " + what);
            }
            n += r;
        }
    }

    /** {@code d} in nanoseconds, saturated so that a deadline {@code now + nanos(d)} cannot overflow. */
    private static long nanos(Duration d) {
        return d.compareTo(Duration.ofNanos(Long.MAX_VALUE / 4)) > 0 ? Long.MAX_VALUE / 4 : d.toNanos();
    }

    private static int millis(Duration d) {
        long ms = d.isNegative() || d.isZero() ? 0 : dev.panverbs.core.internal.Units.clampedMillis(d);
        if (ms <= 0) {
            throw new IllegalArgumentException("timeout must be positive, got " + d);
        }
        return (int) Math.min(Integer.MAX_VALUE, ms);
    }

    private static void sleep(long ms) throws IOException {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while connecting");
        }
    }
}
