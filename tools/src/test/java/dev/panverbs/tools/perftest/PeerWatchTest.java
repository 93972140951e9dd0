package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.Test;

import static dev.panverbs.tools.perftest.PeerWatch.CHECK_NANOS;
import static dev.panverbs.tools.perftest.PeerWatch.GRACE_NANOS;
import static org.assertj.core.api.Assertions.assertThat;

/** {@link PeerWatch}: when a run's wait looks at the exchange connection, and the warm-up's rehearsal of it. */
class PeerWatchTest {
    /** A connection whose close the test decides; counts the looks. */
    private static final class Connection extends ExchangeTransport {
        boolean closed;
        int looks;

        Connection() {
            super(true, 1000);
        }

        @Override
        boolean peerClosed() {
            looks++;
            return closed;
        }

        @Override
        boolean binaryKeys() {
            return false;
        }

        @Override
        void send(byte[] message, String step) {
            throw new UnsupportedOperationException();
        }

        @Override
        byte[] receive(int size, String step, long timeoutMillis) {
            throw new UnsupportedOperationException();
        }

        @Override
        void sendDoneAndClose() { }

        @Override
        public void close() { }
    }

    @Test
    void aRunLooksOnlyAfterASecondOfWaitingAndThenOncePerSecond() {
        Connection c = new Connection();
        PeerWatch w = new PeerWatch(c);
        long since = System.nanoTime();
        assertThat(w.gone(since + CHECK_NANOS - 1, since)).isFalse();
        assertThat(c.looks).isZero();
        assertThat(w.gone(since + CHECK_NANOS, since)).isFalse();
        assertThat(c.looks).isEqualTo(1);
        assertThat(w.gone(since + 2 * CHECK_NANOS - 1, since)).isFalse();
        assertThat(c.looks).isEqualTo(1);
        assertThat(w.gone(since + 2 * CHECK_NANOS, since)).isFalse();
        assertThat(c.looks).isEqualTo(2);
    }

    @Test
    void aClosedPeerEndsTheRunAfterTheGrace() {
        Connection c = new Connection();
        PeerWatch w = new PeerWatch(c);
        long since = System.nanoTime();
        c.closed = true;
        long seen = since + CHECK_NANOS;
        assertThat(w.gone(seen, since)).isFalse(); // the close is seen here: the grace starts
        assertThat(w.gone(seen + CHECK_NANOS, since)).isFalse();
        assertThat(w.gone(seen + GRACE_NANOS, since)).isTrue();
        // a message that arrived after the close starts a new wait, which gets the whole grace again
        long later = seen + GRACE_NANOS;
        assertThat(w.gone(later + CHECK_NANOS, later)).isFalse();
        assertThat(w.gone(later + GRACE_NANOS, later)).isTrue();
    }

    @Test
    void aRehearsalTakesTheLongWaitsBranchesWithoutWaiting() {
        Connection c = new Connection();
        PeerWatch w = PeerWatch.rehearsal(c);
        long since = System.nanoTime();
        // every other call asks for no wait: the first looks at once, the next ones within the second do not
        assertThat(w.gone(since + 1, since)).isFalse();
        assertThat(c.looks).isEqualTo(1);
        for (int i = 2; i <= 8; i++) {
            assertThat(w.gone(since + i, since)).isFalse();
        }
        assertThat(c.looks).isEqualTo(1);
        // a second after its look, a new wait of 1 ns looks again: the run's once-a-second branch, taken at once
        long next = since + CHECK_NANOS + 100;
        assertThat(w.gone(next + 1, next)).isFalse();
        assertThat(c.looks).isEqualTo(2);
        assertThat(w.gone(next + 2, next)).isFalse();
        assertThat(c.looks).isEqualTo(2);
    }

    @Test
    void withoutAConnectionNothingIsEverGone() {
        long since = System.nanoTime();
        assertThat(PeerWatch.NONE.gone(since + 10 * GRACE_NANOS, since)).isFalse();
    }
}
