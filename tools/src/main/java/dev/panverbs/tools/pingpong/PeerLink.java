package dev.panverbs.tools.pingpong;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.Arrays;

/**
 * The exchange connection, kept open during the run when both sides are panverbs, so that a side waiting on a
 * peer that exited or was killed notices it from TCP (EOF or reset) instead of waiting out {@code --peer-timeout}.
 *
 * <p>The C tools close the connection right after the exchange, so an EOF proves nothing unless the peer said
 * it keeps the connection. Neither the 52-byte messages nor {@code "done"} have room for that, and the C server
 * reads {@code "done"} with one {@code read} that must return exactly 5 bytes, so nothing may follow it from a
 * client that does not yet know its server. Hence, after the C exchange:
 * <pre>
 *   client                              server
 *     |  &lt;--- "PVW1" --------------------- |  after reading "done"; a C client has closed or closes at once
 *     |  ---- "PVW1" ---------------------&gt; |  (read lazily: the bytes wait in the socket buffer)
 * </pre>
 * A C server closes after {@code "done"}, so the client's wait for the marker ends at once with EOF; a C client
 * never answers, so the server never arms. Either way the side facing C watches nothing and behaves as before;
 * a C peer sees nothing it did not see from C (the marker reaches a C client that has closed, or is closing with
 * the exchange complete).
 *
 * <p>{@link #gone} is asked only from a run's waiting branch, after a second without progress, at most once a
 * second, like the perftest tools' {@code PeerWatch}; nothing here runs per message. Owned by the run's thread.
 */
final class PeerLink implements AutoCloseable {
    /** What a panverbs side sends after the C exchange to say it keeps the connection open. */
    static final byte[] MARKER = {'P', 'V', 'W', '1'};
    /** A wait is this long before the connection is first looked at, and between two looks. */
    static final long CHECK_NANOS = 1_000_000_000L;
    /** How long after the close a run still waits for the messages already in flight. */
    static final long GRACE_NANOS = 2_000_000_000L;

    /** No connection to watch: the peer is C (or an older panverbs), or tests. */
    static final PeerLink NONE = new PeerLink(null, false);

    private final Socket socket;
    private final byte[] seen = new byte[MARKER.length];
    private int seenCount;
    private boolean armed;
    private boolean dead;
    private boolean closed;
    private long closedAt;
    private long lastLook;

    private PeerLink(Socket socket, boolean armed) {
        this.socket = socket;
        this.armed = armed;
    }

    /** The client's link: the server sent the marker and this side answered it. */
    static PeerLink armed(Socket socket) {
        return new PeerLink(socket, true);
    }

    /** The server's link: it sent the marker; it arms when the client's answer is read. */
    static PeerLink awaitingAnswer(Socket socket) {
        return new PeerLink(socket, false);
    }

    /** Whether the peer said it keeps the connection (so far as this side has read). */
    boolean armed() {
        return armed;
    }

    /**
     * Whether the wait that began at {@code since} should end because the peer is gone: it said it keeps the
     * connection, closed it at least {@link #GRACE_NANOS} ago, and nothing arrived in the last {@code GRACE_NANOS}.
     */
    boolean gone(long now, long since) {
        if (socket == null || dead || now - since < CHECK_NANOS) {
            return false;
        }
        if (!closed) {
            if (lastLook != 0 && now - lastLook < CHECK_NANOS) {
                return false;
            }
            lastLook = now;
            if (!look()) {
                return false;
            }
            closed = true;
            closedAt = now;
        }
        return now - Math.max(closedAt, since) >= GRACE_NANOS;
    }

    /** Reads what is there (1 ms at most); true once an armed connection has closed. */
    private boolean look() {
        try {
            InputStream in = socket.getInputStream();
            socket.setSoTimeout(1);
            while (true) {
                int b = in.read();
                if (b < 0) {
                    return onClose();
                }
                if (!armed) {
                    seen[seenCount++] = (byte) b;
                    if (seenCount == MARKER.length) {
                        armed = Arrays.equals(seen, MARKER);
                        dead = !armed; // not a panverbs client: nothing to learn from this connection
                        if (dead) {
                            return false;
                        }
                    }
                }
                // bytes after the answer mean nothing: read on to EOF or the timeout
            }
        } catch (SocketTimeoutException e) {
            return false; // open, nothing sent: the usual case while a run goes on
        } catch (IOException e) {
            return onClose(); // reset: the peer exited with bytes of ours unread
        }
    }

    private boolean onClose() {
        if (!armed) {
            dead = true; // a C client: its close right after the exchange says nothing about its run
        }
        return armed;
    }

    /** The first part of the run's error line. */
    static String message() {
        return "the peer closed the exchange connection and nothing arrived for " + GRACE_NANOS / 1_000_000_000L
                + " s after: it exited or was killed (see its output)";
    }

    @Override
    public void close() throws IOException {
        if (socket != null) {
            socket.close();
        }
    }
}
