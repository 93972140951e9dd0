package dev.panverbs.core;

import dev.panverbs.bindings.ibverbs.QpExOps;
import dev.panverbs.core.internal.Handshake;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * Keeps an {@link AddressHandle} from being destroyed while the provider copies its address vector in a UD batch's
 * {@code ibv_wr_set_ud_addr} (libmlx5 copies {@code mlx5_ah.av}, which {@code ibv_destroy_ah} frees), without a
 * monitor per WR (two locked instructions). One per UD {@link PostBatch}, used by the batch's thread only.
 *
 * <p>The close/post handshake ({@link Handshake}), as for the tracker: the batch stores the AH's tracking id in
 * {@link #copying}, runs the post side, then reads the AH's closing mark; {@link AddressHandle#close()} sets that mark,
 * runs the closer side, then waits until no batch of its protection domain holds its id. So either the batch sees the
 * close (and takes the AH's monitor, which the close holds: it then finds the AH destroyed, or the close refused) or
 * the close sees the copy and waits for it.
 */
final class AddressCopyGuard {
    private static final VarHandle COPYING;

    static {
        try {
            // not withInvokeExactBehavior(): the call sites are typed exactly (CallGuard's reason: parsed nodes)
            COPYING = MethodHandles.lookup().findVarHandle(AddressCopyGuard.class, "copying", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The tracking id of the AH whose address vector the provider is copying, 0 when none. */
    @SuppressWarnings("unused") // through COPYING, and a plain store by the batch's thread
    private long copying;
    /** The batch's guard: held by the thread whose copy this is. */
    private final CallGuard batchGuard;

    AddressCopyGuard(CallGuard batchGuard) {
        this.batchGuard = batchGuard;
    }

    /** {@code ibv_wr_set_ud_addr} of the batch's current WR, {@code ah} kept alive over the provider's copy. */
    void setUdAddr(AddressHandle ah, QpExOps ops, int remoteQpn, int remoteQkey) {
        copying = ah.trackingId; // a primitive: no GC barrier; ordered before the closing read by the post side
        Handshake.postSide();
        if (!ah.isClosing()) {
            try {
                ops.ibv_wr_set_ud_addr(ah.resource.handle("ibv_wr_set_ud_addr"), remoteQpn, remoteQkey);
            } finally {
                COPYING.setRelease(this, 0L);
            }
            return;
        }
        COPYING.setRelease(this, 0L); // before the monitor, which the close holds while it waits for this
        ah.setUdAddrLocked(ops, remoteQpn, remoteQkey);
    }

    /**
     * Closer side, after the AH's closing mark and the closer side of {@link Handshake}: waits until this batch copies
     * no longer the AH {@code trackingId}; false if it still does after {@link CallGuard#AWAIT_NANOS}, or if the
     * copy is the calling thread's own (a close from inside the provider's call).
     */
    boolean awaitCopy(long trackingId) {
        if ((long) COPYING.getVolatile(this) != trackingId) {
            return true;
        }
        if (batchGuard.heldBy(Thread.currentThread())) {
            return false;
        }
        long deadline = System.nanoTime() + CallGuard.AWAIT_NANOS;
        while ((long) COPYING.getVolatile(this) == trackingId) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            LockSupport.parkNanos(10_000);
        }
        return true;
    }
}
