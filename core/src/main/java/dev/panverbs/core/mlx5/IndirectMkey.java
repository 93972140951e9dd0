package dev.panverbs.core.mlx5;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.mlx5.LibMlx5;
import dev.panverbs.bindings.mlx5dv.mlx5dv_h;
import dev.panverbs.bindings.mlx5dv.mlx5dv_mkey;
import dev.panverbs.bindings.mlx5dv.mlx5dv_mkey_init_attr;
import dev.panverbs.bindings.verbs.verbs_h;
import dev.panverbs.core.LocalKey;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.internal.DirectPath;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.Handshake;
import dev.panverbs.core.internal.MkeyPath;
import dev.panverbs.core.internal.NativeHandles;
import dev.panverbs.core.internal.RegionHolder;
import dev.panverbs.core.internal.Resource;
import dev.panverbs.core.internal.ResourceKind;
import dev.panverbs.core.internal.Units;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.ToIntFunction;

/**
 * An mlx5 indirect memory key ({@code struct mlx5dv_mkey}, {@code mlx5dv_create_mkey(3)} with
 * {@code MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT} and {@code max_entries}; {@link #close()} is
 * {@code mlx5dv_destroy_mkey}). Created free (no translation); a UMR work request posted on a
 * {@link UmrQueuePair} ({@code mlx5dv_wr_mr_interleaved} / {@code mlx5dv_wr_mr_list}) configures it with a
 * {@link MkeyLayout}, a local invalidation ({@code ibv_wr_local_inv}) frees it again. Its {@link #lkey()} and
 * {@link #rkey()} (equal, as libmlx5 makes them) name a zero-based address space of {@link #length()} bytes: use it
 * in SGEs of any post path ({@code LocalKey}) and give {@link #rkey()} to peers.
 *
 * <h2>DMA safety</h2>
 * A configured mkey keeps every region of its layout registered: {@link MemoryRegion#close()} and its rereg refuse,
 * naming this mkey, until the mkey is invalidated, reconfigured or closed <em>and</em> no work request naming it
 * (its UMR, an invalidation, an SGE over its lkey) is outstanding; closing the arena a region is tied to
 * ({@code deregisterWith}) destroys this mkey first (the NIC then fails what still names it). {@link #close()} is
 * refused while a work request naming it is outstanding; the protection domain's cascade destroys it after the QPs.
 * SGEs staged over this key before a reconfiguration, invalidation or close are refused at post (the key's snapshot
 * changed).
 *
 * <p>Reconfiguring or invalidating keeps the old layout's regions registered until the device is known to have run
 * that UMR: a UMR that completes in error, is flushed (QP to ERR) or discarded (QP to RESET) leaves the mkey's old
 * translation in place, and the library does not inspect completions while polling. Signal the UMR (or invalidation)
 * and hand its successful completion to {@link #completed(WorkCompletion)}: the old regions are released once no work
 * request naming the mkey is outstanding either. Without that they stay registered until the mkey is destroyed. A
 * UMR or invalidation of this mkey is refused while an earlier one is outstanding on another QP (two QPs may run
 * them in either order); on one QP they run in order.
 */
public final class IndirectMkey implements LocalKey, AutoCloseable {
    private static final MkeyPath PATH = MkeyPath.get();
    private static final DirectPath KEYS = DirectPath.get();

    final Resource resource;
    private final ProtectionDomain pd;
    private final MemorySegment handle;
    private final int maxEntries;
    private final long trackingId;
    private final int lkey;
    private final int rkey;
    /** The current {@code KeySnapshot} (opaque here): what the post paths read, replaced as a whole. */
    @SuppressWarnings("unused") // read by the core's DataPathAccess through a VarHandle
    volatile Object snapshot;
    final Holds holds = new Holds();
    // guarded by this
    private List<MemoryRegion> current = List.of();
    private final Set<MemoryRegion> retired = Collections.newSetFromMap(new IdentityHashMap<>());
    private MkeyLayout layout;
    private boolean destroyed;
    /** The newest UMR or invalidation posted: its queue, position, QP number and caller wr_id. */
    private DirectPath.SendSide lastSide;
    private long lastPosition;
    private int lastQpNum;
    private long lastWrId;
    /** Whether the device is known to have run that UMR ({@link #completed}): only then may {@link #retired} go. */
    private boolean confirmed = true;

    IndirectMkey(ProtectionDomain pd, MemorySegment mkey, int maxEntries, ToIntFunction<MemorySegment> destroy) {
        this.pd = pd;
        this.handle = mkey.reinterpret(mlx5dv_mkey.sizeof());
        this.maxEntries = maxEntries;
        this.lkey = mlx5dv_mkey.lkey(handle);
        this.rkey = mlx5dv_mkey.rkey(handle);
        this.trackingId = PATH.newTrackingId();
        this.snapshot = PATH.keySnapshot(this, 0, lkey, rkey, pd, 0, trackingId, true);
        this.resource = Resource.adopt(ResourceKind.INDIRECT_MKEY, this, "IndirectMkey[lkey 0x"
                        + Integer.toHexString(lkey) + ", " + maxEntries + " entries, mkey " + Units.hex(mkey.address())
                        + " on " + pd.context().device().name() + "]", handle, h -> destroy(h, destroy),
                NativeHandles.resource(pd));
    }

    /**
     * {@code mlx5dv_create_mkey} of an indirect mkey in {@code pd} with room for {@code maxEntries} layout entries
     * (libmlx5 rounds it up to a multiple of 4: {@link #maxEntries()}). Refuses a non-mlx5 device by name;
     * {@code EOPNOTSUPP} (no DEVX, or a device without UMR mkeys) → {@link dev.panverbs.core.UnsupportedVerbException}.
     */
    public static IndirectMkey create(ProtectionDomain pd, int maxEntries) {
        String verb = "mlx5dv_create_mkey";
        Objects.requireNonNull(pd, verb + ": pd");
        Mlx5.requireMlx5(pd.context(), verb);
        if (maxEntries < 1 || maxEntries > 0xFFFC) {
            throw new IllegalArgumentException(verb + ": maxEntries " + maxEntries + " must be in [1, 65532]");
        }
        String call = Errors.call(verb, "pd", pd, "create_flags", "INDIRECT", "max_entries", maxEntries);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(mlx5dv_mkey_init_attr.layout());
            mlx5dv_mkey_init_attr.pd(attr, NativeHandles.pd(pd, verb));
            mlx5dv_mkey_init_attr.create_flags(attr, mlx5dv_h.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT());
            mlx5dv_mkey_init_attr.max_entries(attr, (short) maxEntries);
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment mkey = LibMlx5.mlx5dv_create_mkey(errno, attr);
            if (mkey.address() == 0) {
                int e = Errno.get(errno);
                throw Errors.failure(call, e, e == verbs_h.EOPNOTSUPP() ? "indirect mkeys are created through "
                        + "DEVX (ConnectX-5 or later, a kernel with mlx5 DEVX and a user context allowed to use it)"
                        : null);
            }
            int granted = Short.toUnsignedInt(mlx5dv_mkey_init_attr.max_entries(attr));
            return new IndirectMkey(pd, mkey, granted, LibMlx5::mlx5dv_destroy_mkey);
        }
    }

    /** Wraps an mkey another library created; {@code destroy} is its destroy verb (host tests: a fake's). */
    static IndirectMkey wrap(ProtectionDomain pd, MemorySegment mkey, int maxEntries,
                             ToIntFunction<MemorySegment> destroy) {
        return new IndirectMkey(pd, mkey, maxEntries, destroy);
    }

    /** The local key ({@code mlx5dv_mkey.lkey}) for SGEs. */
    @Override
    public int lkey() {
        return lkey;
    }

    /** The remote key ({@code mlx5dv_mkey.rkey}) peers put in RDMA work requests; equal to {@link #lkey()}. */
    public int rkey() {
        return rkey;
    }

    /** 0: an indirect mkey's address space is zero-based (libmlx5 leaves the mkey context's start address 0). */
    @Override
    public long address() {
        return 0;
    }

    /** The configured layout's length ({@link MkeyLayout#byteLength()}); 0 while free. */
    @Override
    public long length() {
        return KEYS.length(snapshot);
    }

    @Override
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    @Override
    public boolean isOpen() {
        return !resource.isClosed();
    }

    /** The entries a layout may have ({@code max_entries} as {@code mlx5dv_create_mkey} returned it). */
    public int maxEntries() {
        return maxEntries;
    }

    /** The layout of the newest UMR posted, or null while free (created, or invalidated since). */
    public synchronized MkeyLayout layout() {
        return layout;
    }

    /**
     * Destroys the mkey ({@code mlx5dv_destroy_mkey}). Refused ({@link IllegalStateException}) while a work request
     * naming it is outstanding: its UMR, a local invalidation, or an SGE over its lkey (poll their completions, or
     * move the QP to ERR and poll the flushes, or close the QP, first). Idempotent.
     */
    @Override
    public synchronized void close() {
        if (resource.isClosed()) {
            return;
        }
        Object open = snapshot;
        snapshot = PATH.closed(open); // new SGEs refuse the key from here on
        Handshake.closerSide(() -> snapshot = open);
        int n = PATH.inFlight(pd, trackingId);
        if (n > 0) {
            snapshot = open;
            throw new IllegalStateException("mlx5dv_destroy_mkey: " + this + " is named by " + n + " outstanding work "
                    + "request(s) (its UMR, a local invalidation, or SGEs over its lkey); poll their completions (or "
                    + "move the QP to ERR and poll the flushes, or close the QP) before destroying it");
        }
        resource.close();
    }

    /**
     * Brings the mkey's region holds up to date with a completion the application polled (cold; nothing is looked up
     * when polling): the successful completion of this mkey's newest UMR or local invalidation (same QP number and
     * {@code wr_id}, already retired) confirms that the device translates through the new layout, so the regions only
     * earlier layouts named may close once no work request naming the mkey is outstanding. A completion in error or a
     * flush changes nothing (the device may still translate through an earlier layout; its regions stay registered
     * until a later UMR of this mkey is confirmed, or the mkey is destroyed). Returns whether the completion was that
     * of the mkey's newest UMR or invalidation.
     */
    public synchronized boolean completed(WorkCompletion wc) {
        DirectPath.SendSide side = lastSide;
        if (side == null || confirmed || wc.qpNum() != lastQpNum || wc.wrId() != lastWrId
                || side.isOutstanding(lastPosition)) {
            return false;
        }
        if (wc.statusValue() == 0) {
            confirmed = true;
            if (PATH.inFlight(pd, trackingId) == 0) {
                releaseRetired();
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return resource.toString();
    }

    // ---- for UmrQueuePair, under this object's monitor ----

    MemorySegment handle() {
        return handle;
    }

    long trackingId() {
        return trackingId;
    }

    void checkOpen(String verb) {
        resource.checkOpen(verb);
    }

    /** Whether this mkey already holds {@code r} (current or earlier layout). */
    boolean holding(MemoryRegion r) {
        return current.contains(r) || retired.contains(r);
    }

    /**
     * Refuses a UMR or invalidation on {@code side} while this mkey's newest one is outstanding on another queue (the
     * two QPs may run them in either order, and which translation the device keeps would be unknown).
     */
    void checkOrdered(DirectPath.SendSide side, Object qp, String verb) {
        if (lastSide != null && lastSide != side && lastSide.isOutstanding(lastPosition)) {
            throw new IllegalStateException(verb + ": " + this + " has a UMR or local invalidation outstanding on "
                    + "another QP (wr_id " + lastWrId + ", QP number " + lastQpNum + "); poll its completion before "
                    + "posting another on " + qp + " (two QPs may run them in either order)");
        }
    }

    /** The UMR or invalidation just posted at {@code position} of {@code side}: the newest, not yet confirmed. */
    void namedBy(DirectPath.SendSide side, long position, int qpNum, long wrId) {
        lastSide = side;
        lastPosition = position;
        lastQpNum = qpNum;
        lastWrId = wrId;
        confirmed = false;
    }

    private void releaseRetired() {
        for (MemoryRegion r : retired) {
            PATH.release(r, holds);
        }
        retired.clear();
    }

    /** A UMR configuring {@code newLayout} was posted: the old layout's regions stay held until it is confirmed. */
    void configured(MkeyLayout newLayout, int accessMask) {
        retired.addAll(current);
        current = newLayout.regions();
        retired.removeAll(current);
        layout = newLayout;
        snapshot = PATH.keySnapshot(this, newLayout.byteLength(), lkey, rkey, pd, accessMask, trackingId, true);
    }

    /** A local invalidation was posted: free, its regions held until it is confirmed. */
    void invalidated() {
        retired.addAll(current);
        current = List.of();
        layout = null;
        snapshot = PATH.keySnapshot(this, 0, lkey, rkey, pd, 0, trackingId, true);
    }

    private void destroy(MemorySegment h, ToIntFunction<MemorySegment> destroy) {
        synchronized (this) { // not while a UMR naming it is being built on another thread (the provider reads it)
            snapshot = PATH.closed(snapshot);
            int rc = destroy.applyAsInt(h);
            if (rc != 0) { // the device may still translate through it: its regions stay held
                throw Errors.failure(Errors.call("mlx5dv_destroy_mkey", "mkey", Units.hex(h.address())), rc,
                        "its layout's regions stay registered");
            }
            destroyed = true;
            for (MemoryRegion r : current) {
                PATH.release(r, holds);
            }
            for (MemoryRegion r : retired) {
                PATH.release(r, holds);
            }
            current = List.of();
            retired.clear();
            layout = null;
        }
    }

    /** The region holds of this mkey, as {@link MemoryRegion#close()} asks them. */
    final class Holds implements RegionHolder {
        @Override
        public boolean holds(MemoryRegion region) {
            synchronized (IndirectMkey.this) {
                if (destroyed) {
                    return false;
                }
                if (current.contains(region)) {
                    return true;
                }
                if (retired.contains(region)) {
                    if (!confirmed || PATH.inFlight(pd, trackingId) > 0) {
                        return true; // the device may still translate through an earlier layout
                    }
                    releaseRetired();
                }
                return false;
            }
        }

        @Override
        public void forceRelease() {
            resource.close(); // mlx5dv_destroy_mkey whatever names it: the NIC fails those work requests
            // a close on another thread (its own, the PD's cascade) returned the call above at once: its destroy must
            // end before the tie deregisters the region. Not under the monitor, which that destroy takes.
            resource.awaitClosedUnbounded();
        }

        @Override
        public String toString() {
            return IndirectMkey.this.toString();
        }
    }
}
