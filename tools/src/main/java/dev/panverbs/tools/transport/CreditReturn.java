package dev.panverbs.tools.transport;

/**
 * The server's record of receive buffers re-posted but not yet announced to the client.
 *
 * <p>Credits go back piggy-backed in the header of the next response (free: the write happens anyway). When
 * messages arrive that get no response (one-way messages), they would accumulate; once {@link #threshold} are
 * pending the server sends an explicit CREDIT message (a zero-length RDMA write with immediate).
 *
 * <p>Liveness: the client is stuck only when it holds no credit, i.e. all its {@code usable} credits (see
 * {@link CreditWindow#usable}) are in flight or pending here. Once the server has handled the in-flight ones
 * they are all pending, and since {@code threshold <= usable} an explicit return is then due. So batching
 * never deadlocks; {@code CreditProtocolModelTest} checks it.
 * Not thread-safe: used by the server's event-loop thread only.
 */
final class CreditReturn {
    /** A response header carries credits in 16 bits. */
    static final int MAX_PER_MESSAGE = 0xffff;

    private final int threshold;
    private int pending;

    /** @param usable the credits the client uses at most; the threshold is a quarter of them, at least 1 */
    CreditReturn(int usable) {
        if (usable < 1 || usable > MAX_PER_MESSAGE) {
            throw new IllegalArgumentException("usable credits must be 1.." + MAX_PER_MESSAGE + ", got " + usable);
        }
        this.threshold = Math.max(1, usable / 4);
    }

    /** A receive buffer was re-posted. */
    void reposted() {
        pending++;
    }

    /** Takes every pending credit, to piggy-back on a response or to send explicitly. */
    int take() {
        int n = pending;
        pending = 0;
        return n;
    }

    /** Whether an explicit CREDIT message is due. */
    boolean explicitDue() {
        return pending >= threshold;
    }

    int pending() {
        return pending;
    }

    int threshold() {
        return threshold;
    }
}
