package dev.panverbs.tools.pingpong;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Arrays;

/**
 * The ping-pong examples' out-of-band address exchange over TCP, wire-compatible with rdma-core's
 * {@code pp_client_exch_dest}/{@code pp_server_exch_dest} (default port 18515).
 *
 * <pre>
 *   client                                   server (listening, accepts one connection)
 *     | ---- 52-byte client address -------&gt; |  reads it, moves its QP to RTR/RTS (UD: creates the AH)
 *     | &lt;--- 52-byte server address -------- |
 *     | ---- "done\0" (5 bytes) ------------&gt; |
 *   close                                    close
 * </pre>
 * The server connects its QP <em>before</em> it answers, so that the client, which starts sending as soon as
 * it has connected its own QP, never reaches a server QP that is not yet ready to receive (an RC packet would
 * need a retry, a UD datagram would be lost). {@link #server} therefore takes the connect step as a callback.
 *
 * <p>When both sides are panverbs they then keep the connection open for the run, to notice a peer that dies
 * ({@link PeerLink}, which describes the C-compatible marker that tells them so).
 *
 * <p>Unlike the C tools, every read after the TCP connection is established has a timeout, and a peer that
 * closes early, sends a short or malformed message, or goes silent gives a {@link PingPongProtocolException}
 * saying so; nothing waits forever except the server waiting for a client to connect, as the C server does.
 */
public final class PingPongExchange {
    /** The C tools' default TCP port ({@code -p}). */
    public static final int DEFAULT_PORT = 18515;
    /** Default bound on connecting and on each read once connected. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    static final byte[] DONE = {'d', 'o', 'n', 'e', 0};
    /** Longest wait for the server's {@link PeerLink#MARKER}: a C server closes at once instead. */
    private static final Duration MARKER_TIMEOUT = Duration.ofSeconds(10);

    /**
     * The server's connect step, run between reading the client's address and sending its own (where
     * {@code pp_server_exch_dest} calls {@code pp_connect_ctx} in the C tools).
     */
    @FunctionalInterface
    public interface Connector {
        /** Connects the local QP to {@code remote}; a failure aborts the exchange before answering. */
        void connect(PingPongDestination remote) throws Exception;
    }

    private PingPongExchange() {}

    /**
     * Runs the client side: connects to {@code host:port}, sends {@code local}, reads the server's address,
     * sends {@code "done"} and closes.
     *
     * @return the server's address
     * @throws IOException naming the host and port when no connection can be made, or a
     *                     {@link PingPongProtocolException} when the server breaks the protocol
     */
    public static PingPongDestination client(String host, int port, PingPongDestination local, Duration timeout)
            throws IOException {
        return client(host, port, local, timeout, false).remote();
    }

    /** The addresses the peer sent, and the connection kept open to watch it ({@link PeerLink#NONE} if not). */
    record Exchanged(PingPongDestination remote, PeerLink link) {}

    /**
     * {@link #client(String, int, PingPongDestination, Duration)}; with {@code watch}, then waits for the
     * server's {@link PeerLink#MARKER} (a C server closes instead), answers it and keeps the connection.
     */
    static Exchanged client(String host, int port, PingPongDestination local, Duration timeout, boolean watch)
            throws IOException {
        InetAddress[] addresses;
        try {
            addresses = InetAddress.getAllByName(host);
        } catch (UnknownHostException e) {
            throw new IOException("Couldn't resolve " + host + ": unknown host", e);
        }
        IOException last = null;
        for (InetAddress address : addresses) {
            Socket socket = new Socket();
            try {
                socket.connect(new InetSocketAddress(address, port), timeoutMillis(timeout));
            } catch (IOException e) {
                socket.close();
                last = e;
                continue;
            }
            boolean keep = false;
            try {
                socket.setSoTimeout(timeoutMillis(timeout));
                socket.setTcpNoDelay(true);
                socket.getOutputStream().write(local.encode());
                byte[] msg = readFully(socket, PingPongDestination.WIRE_SIZE, "the server's address",
                        timeout);
                PingPongDestination remote = PingPongDestination.decode(msg);
                socket.getOutputStream().write(DONE);
                keep = watch && answerMarker(socket, timeout);
                return new Exchanged(remote, keep ? PeerLink.armed(socket) : PeerLink.NONE);
            } finally {
                if (!keep) {
                    socket.close();
                }
            }
        }
        throw new IOException("Couldn't connect to " + host + ":" + port
                + (last == null ? "" : " (" + last.getMessage() + ")") + "; is the server side running?", last);
    }

    /**
     * Whether the server sent {@link PeerLink#MARKER} after {@code "done"} (then answered). A C or older panverbs
     * server closes at once; anything else, or nothing for {@code timeout} (10 s at most), means no watch.
     */
    private static boolean answerMarker(Socket socket, Duration timeout) {
        try {
            socket.setSoTimeout(timeoutMillis(timeout.compareTo(MARKER_TIMEOUT) < 0 ? timeout : MARKER_TIMEOUT));
            byte[] got = socket.getInputStream().readNBytes(PeerLink.MARKER.length);
            if (!Arrays.equals(got, PeerLink.MARKER)) {
                return false;
            }
            socket.getOutputStream().write(PeerLink.MARKER);
            return true;
        } catch (IOException e) {
            return false; // a reset or a timeout: no watch, the run goes on as with C
        }
    }

    /**
     * Runs the server side: listens on {@code port} (all addresses, {@code SO_REUSEADDR}), accepts one
     * connection and closes the listening socket, reads the client's address, runs {@code connector}, sends
     * {@code local} and waits for {@code "done"}.
     *
     * @return the client's address
     */
    public static PingPongDestination server(int port, PingPongDestination local, Connector connector,
                                             Duration timeout) throws IOException {
        return server(listen(port), local, connector, timeout, false).remote();
    }

    /** {@link #server(int, PingPongDestination, Connector, Duration)} on a bound listener, which it closes. */
    static PingPongDestination server(ServerSocket listener, PingPongDestination local, Connector connector,
                                      Duration timeout) throws IOException {
        return server(listener, local, connector, timeout, false).remote();
    }

    /**
     * {@link #server(int, PingPongDestination, Connector, Duration)}; with {@code watch}, then sends
     * {@link PeerLink#MARKER} and keeps the connection (the link arms when the client's answer is read).
     */
    static Exchanged server(int port, PingPongDestination local, Connector connector, Duration timeout,
                            boolean watch) throws IOException {
        return server(listen(port), local, connector, timeout, watch);
    }

    private static ServerSocket listen(int port) throws IOException {
        ServerSocket listener = new ServerSocket();
        try {
            listener.setReuseAddress(true);
            listener.bind(new InetSocketAddress(port), 1);
        } catch (IOException e) {
            listener.close();
            throw new IOException("Couldn't listen to port " + port + " (" + e.getMessage() + ")", e);
        }
        return listener;
    }

    static Exchanged server(ServerSocket listener, PingPongDestination local, Connector connector,
                            Duration timeout, boolean watch) throws IOException {
        Socket socket;
        try (listener) {
            socket = listener.accept();
        }
        boolean keep = false;
        try {
            socket.setSoTimeout(timeoutMillis(timeout));
            socket.setTcpNoDelay(true);
            byte[] msg = readFully(socket, PingPongDestination.WIRE_SIZE, "the client's address",
                    timeout);
            PingPongDestination remote = PingPongDestination.decode(msg);
            try {
                connector.connect(remote);
            } catch (IOException | RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IOException("Couldn't connect to remote QP: " + e.getMessage(), e);
            }
            socket.getOutputStream().write(local.encode());
            byte[] done = readFully(socket, DONE.length, "\"done\"", timeout);
            if (!Arrays.equals(done, DONE)) {
                throw new PingPongProtocolException("expected \"done\\0\" from the client after the addresses, got \""
                        + PingPongProtocolException.printable(done) + "\"");
            }
            keep = watch && sendMarker(socket);
            return new Exchanged(remote, keep ? PeerLink.awaitingAnswer(socket) : PeerLink.NONE);
        } finally {
            if (!keep) {
                socket.close();
            }
        }
    }

    /** Sends {@link PeerLink#MARKER}; false when the client (C) has already reset the connection. */
    private static boolean sendMarker(Socket socket) {
        try {
            socket.getOutputStream().write(PeerLink.MARKER);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Reads exactly {@code n} bytes within {@code timeout} in all, turning EOF and timeouts into protocol errors
     * that say how far it got. The deadline is for the whole message, not each read: a peer dribbling one byte
     * just under the timeout must not stretch the wait to {@code n} timeouts.
     */
    static byte[] readFully(Socket socket, int n, String what, Duration timeout) throws IOException {
        InputStream in = socket.getInputStream();
        byte[] buf = new byte[n];
        int got = 0;
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (got < n) {
                long left = (deadline - System.nanoTime()) / 1_000_000L;
                if (left <= 0) {
                    throw new SocketTimeoutException();
                }
                socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, left));
                int r = in.read(buf, got, n - got);
                if (r < 0) {
                    throw new EOFException();
                }
                got += r;
            }
        } catch (EOFException e) {
            throw new PingPongProtocolException("the peer closed the connection after " + got + " of " + n
                    + " bytes of " + what + (got == 0 ? "" : " (\"" + PingPongProtocolException.printable(buf, got)
                    + "\")"), e);
        } catch (SocketTimeoutException e) {
            throw new PingPongProtocolException("timed out after " + timeout.toMillis() + " ms waiting for " + what
                    + " (" + got + " of " + n + " bytes received" + (got == 0 ? "" : ": \""
                    + PingPongProtocolException.printable(buf, got) + "\"") + ")", e);
        }
        return buf;
    }

    private static int timeoutMillis(Duration timeout) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    }
}
