package dev.panverbs.tools.perftest;

/**
 * Notices, while a run waits on the peer, that the peer has closed its end of the exchange connection: it exited
 * or was killed. perftest itself never looks at the TCP socket during a run, so a C receiver whose sender dies
 * waits out its whole timeout (or forever); the run loops here ask this class once their wait has lasted
 * {@link #CHECK_NANOS}, at most once per {@code CHECK_NANOS}, and end the run {@link #GRACE_NANOS} after the
 * close if nothing arrived meanwhile. The grace keeps a peer that finished first (ib_write_lat closes without a
 * handshake) from failing a run whose last message is still in flight.
 *
 * <p>Only the waiting branch of the loops calls it (after a second without progress): nothing here runs per
 * message. Not thread-safe; owned by the thread that runs the test.
 */
final class PeerWatch {
    /** A wait is this long before the connection is first looked at, and between two looks. */
    static final long CHECK_NANOS = 1_000_000_000L;
    /** How long after the close a run still waits for the messages already in flight. */
    static final long GRACE_NANOS = 2_000_000_000L;

    /** For runs with no exchange connection to watch (loopback warm-ups, tests): never reports a close. */
    static final PeerWatch NONE = new PeerWatch(null);

    private final ExchangeTransport channel;
    private long lastLook;
    private long closedAt;
    private boolean closed;

    PeerWatch(ExchangeTransport channel) {
        this.channel = channel;
    }

    /**
     * Whether the wait that began at {@code since} (no progress since then) should end because the peer is gone:
     * its connection closed at least {@link #GRACE_NANOS} ago and nothing arrived in the last {@code GRACE_NANOS}.
     */
    boolean gone(long now, long since) {
        if (channel == null || now - since < CHECK_NANOS) {
            return false;
        }
        if (!closed) {
            if (lastLook != 0 && now - lastLook < CHECK_NANOS) {
                return false;
            }
            lastLook = now;
            if (!channel.peerClosed()) {
                return false;
            }
            closed = true;
            closedAt = now;
        }
        return now - Math.max(closedAt, since) >= GRACE_NANOS;
    }

    /**
     * {@code cq.awaitEvent(timeoutMillis)} (-e) in waits of at most {@link #CHECK_NANOS}, looking at the
     * connection between them: an event that comes costs what it did; a peer that is gone ends the run.
     *
     * @return false when {@code timeoutMillis} passed without an event
     * @throws RunFailure when the peer closed the exchange connection and no event came for the grace
     */
    boolean awaitEvent(VerbsEngine.Cq cq, long timeoutMillis) {
        if (channel == null) {
            return cq.awaitEvent(timeoutMillis);
        }
        long start = System.nanoTime();
        while (true) {
            long left = timeoutMillis - (System.nanoTime() - start) / 1_000_000L;
            if (left <= 0) {
                return false;
            }
            if (cq.awaitEvent(Math.min(left, CHECK_NANOS / 1_000_000L))) {
                return true;
            }
            if (gone(System.nanoTime(), start)) {
                throw new RunFailure(message() + " (waiting for a completion event)");
            }
        }
    }

    /** The first line of the run's error: what happened, before the loop's own counters. */
    static String message() {
        return " The peer closed the exchange connection during the test and nothing arrived for "
                + GRACE_NANOS / 1_000_000_000L + " s after: it exited or was killed (see its output)";
    }
}
