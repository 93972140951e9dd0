package dev.panverbs.core;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One immutable view of a {@link LocalKey}: what the post paths read per SGE (one volatile read of the key's
 * current snapshot, then final fields), replaced as a whole when the key is re-registered or closed. A work request
 * staged with a snapshot is posted only while that same snapshot is still the key's current one, so a close or a
 * rereg between {@code sge(...)} and the post is caught by identity.
 */
final class KeySnapshot {
    private static final AtomicLong TRACKING_IDS = new AtomicLong();

    final LocalKey owner;
    /** The address SGEs name for the first byte (the iova space, see {@link DataPathAccess#address}). */
    final long address;
    final long length;
    final int lkey;
    final int rkey;
    final ProtectionDomain pd;
    /** {@link Access#mask} of the rights. */
    final int accessMask;
    /**
     * Unique among all keys of this JVM, kept across rereg: the work queues' in-flight tracking records it instead of
     * a reference, so recording stores no object reference per SGE.
     */
    final long trackingId;
    /** The registered memory's scope ({@code null}: no CPU mapping, e.g. DMA-BUF), for the freed-arena check. */
    final MemorySegment.Scope scope;
    /** False for the snapshot of a closed key, and while a close or rereg checks for in-flight references. */
    final boolean open;
    /**
     * Registered with {@link Access#ON_DEMAND}: the post paths then check the WR's operation against the device's
     * per-transport ODP capabilities ({@link WorkRequestRules#checkOdp}); one boolean read for every other key.
     */
    final boolean odp;

    KeySnapshot(LocalKey owner, long address, long length, int lkey, int rkey, ProtectionDomain pd, int accessMask,
                long trackingId, MemorySegment.Scope scope, boolean open) {
        this.owner = owner;
        this.address = address;
        this.length = length;
        this.lkey = lkey;
        this.rkey = rkey;
        this.pd = pd;
        this.accessMask = accessMask;
        this.trackingId = trackingId;
        this.scope = scope;
        this.open = open;
        this.odp = (accessMask & Access.ON_DEMAND.value()) != 0;
    }

    static long nextTrackingId() {
        return TRACKING_IDS.incrementAndGet();
    }

    /** The same key, not usable (closing, or closed). */
    KeySnapshot closed() {
        return new KeySnapshot(owner, address, length, lkey, rkey, pd, accessMask, trackingId, scope, false);
    }

    /** Whether the registered memory is still allocated (its arena not closed). */
    boolean memoryAlive() {
        MemorySegment.Scope s = scope;
        return s == null || s.isAlive();
    }

    boolean localWrite() {
        return (accessMask & Access.LOCAL_WRITE.value()) != 0;
    }
}
