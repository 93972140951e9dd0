package dev.panverbs.tools.transport;

/**
 * The client's view of the server's receive buffers: it may post one SEND per credit and never more, so the
 * server's receive queue can never run dry (on RC an empty receive queue means RNR NAKs and retries, and after
 * {@code rnr_retry} of them the QP breaks).
 *
 * <p>The server advertises its number of posted receive buffers in the handshake; each SEND consumes one;
 * the server returns them as it re-posts buffers. One credit is held back from requests so that the
 * {@code SHUTDOWN} message can always be sent, even when requests have used up everything else.
 *
 * <p>The client may also use fewer credits than advertised ({@code limit}, its slot count): a credit in use
 * can come back in a CREDIT message, which lands in a receive the client must have posted, so the credits it
 * holds in use bound the receives it needs for them. The server is told the limit in the handshake and sizes
 * its explicit-return threshold from it ({@link CreditReturn}).
 *
 * <p>Returned credits are checked: a server returning more than are in use is a protocol error, not a bigger
 * window. Not thread-safe: the client guards it with its lock.
 */
final class CreditWindow {
    private final int advertised;
    private int available;
    private int inUse;
    private boolean shutdownSent;

    /**
     * @param advertised the server's posted receive buffers, at least 2 (one is the shutdown reserve)
     * @param limit      the most credits this client uses at once, at least 1
     */
    CreditWindow(int advertised, int limit) {
        if (advertised < 2) {
            throw new IllegalArgumentException("a server must advertise at least 2 credits, got " + advertised);
        }
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        this.advertised = advertised;
        this.available = usable(advertised, limit);
    }

    /** The credits a client uses for requests: all advertised but the shutdown reserve, at most {@code limit}. */
    static int usable(int advertised, int limit) {
        return Math.min(advertised - 1, limit);
    }

    /** Takes a credit for a request or one-way message; false when none is left (back-pressure). */
    boolean tryAcquire() {
        if (available == 0 || shutdownSent) {
            return false;
        }
        available--;
        inUse++;
        return true;
    }

    /** Takes the reserved credit for the SHUTDOWN message; once only. */
    void acquireShutdown() {
        if (shutdownSent) {
            throw new IllegalStateException("SHUTDOWN already sent");
        }
        shutdownSent = true;
        inUse++;
    }

    /** Adds {@code n} credits returned by the server. */
    void release(int n) {
        if (n < 0 || n > inUse) {
            throw new RpcProtocolException("the server returned " + n + " credits but only " + inUse
                    + " were in use (it advertised " + advertised + ")");
        }
        inUse -= n;
        available += n;
    }

    int available() {
        return available;
    }

    int inUse() {
        return inUse;
    }

    int advertised() {
        return advertised;
    }
}
