package dev.panverbs.core;

import java.lang.foreign.Arena;

/** What the host tests of {@code dev.panverbs.core.mlx5}'s indirect mkeys need from this package's internals. */
public final class UmrHostSupport {
    private UmrHostSupport() {}

    /** Ties a fake-registered region to {@code arena} as {@code deregisterWith(arena)} does. */
    public static void tie(MemoryRegion mr, Arena arena) {
        mr.tieTo(arena);
    }

    /** Work requests of {@code pd}'s queues naming {@code key} that are not retired. */
    public static int inFlight(ProtectionDomain pd, LocalKey key) {
        return pd.inFlight(DataPathAccess.snapshot(key).trackingId);
    }

    /** Send WRs of {@code qp} posted and not yet retired. */
    public static int outstandingSends(QueuePair qp) {
        return qp.sendQueue.tracker.outstanding();
    }

    /** Retires every outstanding WR of {@code qp}'s send queue (a fixture whose device never completes). */
    public static void retireAllSends(QueuePair qp) {
        qp.sendQueue.tracker.retireAll();
    }
}
