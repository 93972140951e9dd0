package dev.panverbs.tools.perftest;

/**
 * Notices, while a run waits on the peer, that the peer has closed its end of the exchange connection: it exited
 * or was killed. perftest itself never looks at the TCP socket during a run, so a C receiver whose sender dies
 * waits out its whole timeout (or forever); the run loops here ask this class once their wait has lasted
 * {@link #CHECK_NANOS}, at most once per {@code CHECK_NANOS}, and end the run {@link #GRACE_NANOS} after the
 * close if nothing arrived meanwhile. The grace keeps a peer that finished first (ib_write_lat closes without a
 * handshake) from failing a run whose last message is still in flight.
 *
 * <p>Only the waiting branch of the loops calls it (at 2, 4, 8, ... spins without progress): nothing here runs per
 * message. Not thread-safe; owned by the thread that runs the test.
 *
 * <p><b>The JIT warm-up's rehearsal.</b> C2 inlines {@link #gone} into the run loops and compiles each branch the
 * profile never saw taken as an uncommon trap, whose first hit discards the whole compiled loop. The warm-up's
 * waits never last a second, so the "waited {@code CHECK_NANOS}" branch was such a trap, and the timed run's first
 * wait on a peer still draining its compiler took it: that side's timed section ran in tier-3 code (perf/README.md,
 * issue 9, rxe, eleventh and twelfth rounds). The warm-up pair's watches ({@link #rehearsal}) therefore ask for
 * no wait at every other call, so the warm-up itself takes the look's branches (at most once per {@code
 * CHECK_NANOS} per watch, the socket read included); only a peer that is really gone (the run ends) or a second
 * look in one wait of a fast warm-up leave branches unseen. The alternation is a store, not a branch: run watches
 * flip nothing.
 */
final class PeerWatch {
    /** A wait is this long before the connection is first looked at, and between two looks. */
    static final long CHECK_NANOS = 1_000_000_000L;
    /** How long after the close a run still waits for the messages already in flight. */
    static final long GRACE_NANOS = 2_000_000_000L;

    /** For runs with no exchange connection to watch (perftest's own --perform_warm_up, tests): never reports a close. */
    static final PeerWatch NONE = new PeerWatch(null);

    private final ExchangeTransport channel;
    /** XOR-ed into {@link #checkNanos} at each call: 0 for a run, {@code CHECK_NANOS} for a rehearsal. */
    private final long flip;
    /** The wait the next call needs before it looks: {@code CHECK_NANOS} (a rehearsal: 0, then alternately). */
    private long checkNanos;
    /** No look before this {@code System.nanoTime()}: at most one look per {@code CHECK_NANOS}. */
    private long nextLook;
    private long closedAt;
    private boolean closed;

    PeerWatch(ExchangeTransport channel) {
        this(channel, false);
    }

    private PeerWatch(ExchangeTransport channel, boolean rehearsal) {
        this.channel = channel;
        this.flip = rehearsal ? CHECK_NANOS : 0;
        this.checkNanos = rehearsal ? 0 : CHECK_NANOS;
        this.nextLook = System.nanoTime();
    }

    /** The JIT warm-up pair's watch (class comment): it takes the branches of a long wait without waiting. */
    static PeerWatch rehearsal(ExchangeTransport channel) {
        return new PeerWatch(channel, true);
    }

    /**
     * Whether the wait that began at {@code since} (no progress since then) should end because the peer is gone:
     * its connection closed at least {@link #GRACE_NANOS} ago and nothing arrived in the last {@code GRACE_NANOS}.
     */
    boolean gone(long now, long since) {
        long check = checkNanos;
        checkNanos = check ^ flip;
        if (channel == null || now - since < check || now - nextLook < 0) {
            return false;
        }
        nextLook = now + CHECK_NANOS;
        if (!closed && channel.peerClosed()) {
            closed = true;
            closedAt = now;
        }
        return closed && now - Math.max(closedAt, since) >= GRACE_NANOS;
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
