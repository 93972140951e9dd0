package dev.panverbs.core.internal;

import dev.panverbs.core.LocalKey;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.ProtectionDomain;

/**
 * What {@code dev.panverbs.core.mlx5}'s indirect mkeys need from the core package: key snapshots (the immutable view
 * every post path reads and re-checks), the in-flight count of a tracking id over a protection domain's queues, and
 * the region holds that keep a UMR layout's regions registered. A snapshot's address, lkey, length and staleness are
 * read through {@link DirectPath}, the one reader of snapshots. Implemented by {@code MkeyPathAccess}. Java-only.
 */
public abstract class MkeyPath {

    protected MkeyPath() {}

    public static MkeyPath get() {
        return Holder.INSTANCE;
    }

    /**
     * Checks {@code length} bytes at {@code offset} of {@code region} for a UMR layout entry of an mkey of {@code pd}
     * (open, memory allocated, same PD, inside the region) and returns the region's current snapshot (opaque).
     */
    public abstract Object checkRegion(ProtectionDomain pd, MemoryRegion region, long offset, long length,
                                       String verb);

    /** The refusal of a configuration naming a region that went stale (cold). */
    public abstract IllegalStateException staleRegion(Object snapshot, String verb);

    /** A new snapshot of a key without CPU mapping (its memory is its layout's regions'). */
    public abstract Object keySnapshot(LocalKey owner, long length, int lkey, int rkey, ProtectionDomain pd,
                                       int accessMask, long trackingId, boolean open);

    /** The same key, not usable (closing, or closed). */
    public abstract Object closed(Object snapshot);

    public abstract long newTrackingId();

    /** Work requests of {@code pd}'s queues that name {@code trackingId} and are not retired. */
    public abstract int inFlight(ProtectionDomain pd, long trackingId);

    /** {@code holder} keeps {@code region} registered until it no longer {@link RegionHolder#holds} it. */
    public abstract void hold(MemoryRegion region, RegionHolder holder);

    public abstract void release(MemoryRegion region, RegionHolder holder);

    /** Lazy holder: loading the implementation class installs it. Java-only. */
    public static final class Holder {
        private static MkeyPath installed;
        static final MkeyPath INSTANCE = load();

        private Holder() {}

        /** Called once from the implementation's static initialiser. */
        public static void install(MkeyPath implementation) {
            installed = implementation;
        }

        private static MkeyPath load() {
            try {
                Class.forName("dev.panverbs.core.MkeyPathAccess", true, MkeyPath.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException("dev.panverbs.core.MkeyPathAccess is missing", e);
            }
            return installed;
        }
    }
}
