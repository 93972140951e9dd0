package dev.panverbs.core;

import dev.panverbs.core.internal.MkeyPath;
import dev.panverbs.core.internal.RegionHolder;
import dev.panverbs.core.mlx5.IndirectMkey;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Implements {@link MkeyPath} over the package-private snapshots, trackers and region holds, and reads an
 * {@link IndirectMkey}'s current {@link KeySnapshot} for {@link DataPathAccess} (its {@code snapshot} field, through
 * a VarHandle: the mkey lives in another package of this module).
 */
final class MkeyPathAccess extends MkeyPath {
    private static final VarHandle MKEY_SNAPSHOT;

    static {
        try {
            MKEY_SNAPSHOT = MethodHandles.privateLookupIn(IndirectMkey.class, MethodHandles.lookup())
                    .findVarHandle(IndirectMkey.class, "snapshot", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
        MkeyPath.Holder.install(new MkeyPathAccess());
    }

    private MkeyPathAccess() {}

    /** The mkey's current snapshot (a volatile read, as {@code MemoryRegion.snapshot}'s). */
    static KeySnapshot snapshotOf(IndirectMkey mkey) {
        return (KeySnapshot) MKEY_SNAPSHOT.getVolatile(mkey);
    }

    /** The same as a plain read, for an SGE while a chain is built (the post re-reads it after its fence). */
    static KeySnapshot stagedSnapshotOf(IndirectMkey mkey) {
        return (KeySnapshot) MKEY_SNAPSHOT.get(mkey);
    }

    @Override
    public Object checkRegion(ProtectionDomain pd, MemoryRegion region, long offset, long length, String verb) {
        KeySnapshot k = region.snapshot;
        if (!k.open) {
            throw region.resource.closedException(verb + " (a layout entry names it)");
        }
        if (!k.memoryAlive()) {
            throw new IllegalStateException(verb + ": a layout entry names " + region + ", whose memory's arena was "
                    + "closed while it was still registered; register it with deregisterWith(arena)");
        }
        if (k.pd != pd) {
            throw new IllegalArgumentException(verb + ": a layout entry names " + region + ", registered in another "
                    + "protection domain than the mkey's (" + pd + "): the UMR would fail; register the memory there");
        }
        if (offset < 0 || length < 0 || offset > k.length || length > k.length - offset) {
            throw new IllegalArgumentException(verb + ": a layout entry of " + length + " bytes at offset " + offset
                    + " is outside " + region + " (" + k.length + " bytes)");
        }
        return k;
    }

    @Override
    public IllegalStateException staleRegion(Object snapshot, String verb) {
        KeySnapshot k = (KeySnapshot) snapshot;
        return new IllegalStateException(verb + ": a layout entry names " + k.owner + ", which was closed, "
                + "re-registered or whose arena was closed while the UMR was built (or is being closed on another "
                + "thread right now). Nothing was posted");
    }

    @Override
    public Object keySnapshot(LocalKey owner, long length, int lkey, int rkey, ProtectionDomain pd, int accessMask,
                              long trackingId, boolean open) {
        return new KeySnapshot(owner, 0, length, lkey, rkey, pd, accessMask, trackingId, null, open);
    }

    @Override
    public Object closed(Object snapshot) {
        return ((KeySnapshot) snapshot).closed();
    }

    @Override
    public long newTrackingId() {
        return KeySnapshot.nextTrackingId();
    }

    @Override
    public int inFlight(ProtectionDomain pd, long trackingId) {
        return pd.inFlight(trackingId);
    }

    @Override
    public void hold(MemoryRegion region, RegionHolder holder) {
        region.holders.add(holder);
    }

    @Override
    public void release(MemoryRegion region, RegionHolder holder) {
        region.holders.remove(holder);
    }
}
