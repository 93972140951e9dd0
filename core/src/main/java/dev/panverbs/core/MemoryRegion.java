package dev.panverbs.core;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.LibIbverbs;
import dev.panverbs.bindings.ibverbs.VerbsContextInline;
import dev.panverbs.bindings.verbs.ibv_mr;
import dev.panverbs.bindings.verbs.ibv_sge;
import dev.panverbs.bindings.verbs.verbs_h;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.Handshake;
import dev.panverbs.core.internal.ResourceKind;
import dev.panverbs.core.internal.Units;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToIntFunction;

/**
 * A registered memory region ({@code struct ibv_mr}, {@code ibv_reg_mr(3)}): memory the NIC may read and
 * write, named locally by {@link #lkey()} and remotely by {@link #rkey()} plus an address in
 * {@code [iova, iova + length)}. Made by {@link ProtectionDomain#regMr}, {@link ProtectionDomain#regMrBuilder}
 * or {@link ProtectionDomain#allocate}; {@link #close()} deregisters it ({@code ibv_dereg_mr(3)}) and, when
 * the MR owns its memory, frees it.
 *
 * <h2>DMA contract</h2>
 * The registered memory must stay alive, unmoved and unfreed until this MR is closed and every work request
 * that uses it has completed (rust-ibverbs' {@code register_from_raw}). The MR holds its segment strongly;
 * an arena tied with {@link Builder#deregisterWith(Arena)} deregisters this MR before freeing its memory.
 *
 * <p>Thread safety: the accessors may be read from any thread; {@link #rereg()} changes the keys and must
 * not race with work requests that use this MR (as in C).
 */
public final class MemoryRegion extends VerbsObject implements LocalKey {

    /** Alignment of memory allocated by {@link ProtectionDomain#allocate}: the x86-64 and common arm64 page. */
    static final long PAGE_SIZE = 4096;
    private final MemorySegment handle;
    private volatile MemorySegment buffer;
    private volatile Set<Access> access;
    final RegionRegistration registration;
    /**
     * Everything the post paths read (keys, iova, length, PD, rights, tracking id, memory scope), replaced as a whole
     * on rereg and close; see {@link KeySnapshot}. Volatile: a close publishes a not-open snapshot before it scans
     * for in-flight references, a post publishes its references before it re-reads this (Dekker).
     */
    volatile KeySnapshot snapshot;
    /** The memory windows bound to this region (as far as this library knows; see {@link MemoryWindow}). */
    final Set<MemoryWindow> windows = new CopyOnWriteArraySet<>();
    /** What else keeps this region registered: mlx5 indirect mkeys whose UMR layout names it. */
    final Set<dev.panverbs.core.internal.RegionHolder> holders = new CopyOnWriteArraySet<>();

    private MemoryRegion(ProtectionDomain pd, MemorySegment mr, MemorySegment buffer, long length, long iova,
                         String what, Set<Access> access, RegionRegistration registration) {
        this(pd, mr, buffer, length, iova, what, access, registration, pd.resource);
    }

    private MemoryRegion(ProtectionDomain pd, MemorySegment mr, MemorySegment buffer, long length, long iova,
                         String what, Set<Access> access, RegionRegistration registration,
                         dev.panverbs.core.internal.Resource... parents) {
        super(ResourceKind.MEMORY_REGION, "MemoryRegion[" + Units.bytes(length) + " at " + what + ", mr "
                + Units.hex(mr.address()) + " on " + pd.context().device().name() + "]",
                mr, registration::deregister, parents);
        this.handle = mr;
        this.buffer = buffer;
        this.access = frozen(access);
        this.registration = registration;
        MemorySegment s = mr.reinterpret(ibv_mr.sizeof());
        this.snapshot = new KeySnapshot(this, iova, length, ibv_mr.lkey(s), ibv_mr.rkey(s), pd, Access.mask(access),
                KeySnapshot.nextTrackingId(), buffer == null ? null : buffer.scope(), true);
        registration.region = this;
    }

    /** Wraps an MR registered over a DMA-BUF ({@code ibv_reg_dmabuf_mr}): no CPU-visible buffer. */
    static MemoryRegion ofDmabuf(ProtectionDomain pd, MemorySegment mr, long length, long iova, int fd,
                                 Set<Access> access) {
        return new MemoryRegion(pd, mr, null, length, iova, "dmabuf fd " + fd, access,
                new RegionRegistration(null));
    }

    /**
     * Wraps an MR over device memory ({@code ibv_reg_dm_mr}): zero-based, no CPU-visible buffer, a dependant of the
     * device memory (closing it closes this region first).
     */
    static MemoryRegion ofDeviceMemory(ProtectionDomain pd, DeviceMemory dm, MemorySegment mr, long length,
                                       Set<Access> access) {
        return ofDeviceMemory(pd, dm, mr, length, access, LibIbverbs::ibv_dereg_mr);
    }

    /** The same with {@code dereg} as the destroy verb (the fake provider's in host tests). */
    static MemoryRegion ofDeviceMemory(ProtectionDomain pd, DeviceMemory dm, MemorySegment mr, long length,
                                       Set<Access> access, ToIntFunction<MemorySegment> dereg) {
        RegionRegistration r = new RegionRegistration(null);
        r.dereg = dereg;
        return new MemoryRegion(pd, mr, null, length, 0, dm.toString(), access, r, pd.resource, dm.resource);
    }

    /**
     * Wraps an implicit on-demand-paging MR ({@code ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND)}): the
     * whole address space, addressed by absolute addresses (SGE offsets are addresses); no buffer of its own.
     */
    static MemoryRegion ofImplicitOdp(ProtectionDomain pd, MemorySegment mr, Set<Access> access) {
        return new MemoryRegion(pd, mr, null, Long.MAX_VALUE, 0, "the whole address space (implicit ODP)", access,
                new RegionRegistration(null));
    }

    /**
     * Prefetches {@code length} bytes at {@code offset} of this on-demand-paging region into the device's page
     * tables ({@code ibv_advise_mr(3)} with {@code IBV_ADVISE_MR_ADVICE_PREFETCH}, or {@code _PREFETCH_WRITE} when
     * {@code forWrite}; {@code IBV_ADVISE_MR_FLAG_FLUSH}: returns once done).
     *
     * <p>Errors: a region registered without {@link Access#ON_DEMAND} → {@link IllegalStateException}; a range
     * outside it → {@link IllegalArgumentException}; {@code EOPNOTSUPP} → {@link UnsupportedVerbException}.
     */
    public void prefetch(long offset, int length, boolean forWrite) {
        String call = Errors.call("ibv_advise_mr", "mr", this, "offset", offset,
                "length", length, "advice", forWrite ? "PREFETCH_WRITE" : "PREFETCH");
        KeySnapshot k = snapshot;
        if (!k.open) {
            throw resource.closedException("ibv_advise_mr");
        }
        if ((k.accessMask & Access.ON_DEMAND.value()) == 0) {
            throw new IllegalStateException(call + ": " + this + " was not registered with Access.ON_DEMAND; "
                    + "ibv_advise_mr applies to on-demand-paging regions only");
        }
        if (offset < 0 || length < 0 || offset > k.length || length > k.length - offset) {
            throw new IllegalArgumentException(call + ": the range is outside the region");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sge = arena.allocate(ibv_sge.layout());
            ibv_sge.addr(sge, k.address + offset);
            ibv_sge.length(sge, length);
            ibv_sge.lkey(sge, k.lkey);
            int rc = VerbsContextInline.ibv_advise_mr(
                    k.pd.resource.handle("ibv_advise_mr"), forWrite ? verbs_h.IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE()
                            : verbs_h.IBV_ADVISE_MR_ADVICE_PREFETCH(), verbs_h.IBV_ADVISE_MR_FLAG_FLUSH(), sge, 1);
            if (rc != 0) {
                throw Errors.failure(call, rc);
            }
        }
    }

    /**
     * A region over {@code mr}, already registered by the caller (tests over a fake provider, which registers
     * nothing); it is deregistered with {@code ibv_dereg_mr} like any other.
     */
    static MemoryRegion wrap(ProtectionDomain pd, MemorySegment mr, MemorySegment buffer, Set<Access> access,
                             ToIntFunction<MemorySegment> dereg) {
        RegionRegistration r = new RegionRegistration(null);
        r.dereg = dereg;
        return new MemoryRegion(pd, mr, buffer, buffer.byteSize(), buffer.address(), Units.hex(buffer.address()),
                access, r);
    }

    /** Ties a {@link #wrap}ped region to the arena of its buffer, as {@link Builder#deregisterWith} does. */
    void tieTo(Arena arena) {
        ArenaTie.tieTo("deregisterWith", arena, buffer, registration.tie);
        registration.tie.set(this);
    }

    /**
     * Deregisters the memory region ({@code ibv_dereg_mr(3)}), then frees its memory if the MR owns it. See
     * the cascade, idempotence and thread-safety rules of every verbs object's close. After close
     * {@link #buffer()} of an owning MR throws; a caller's segment stays usable.
     *
     * <p>Refused with {@link IllegalStateException} while work requests posted on a {@link QueuePair} still
     * reference this region (until their completions are polled); see {@link QueuePair} on DMA safety. A parent's
     * cascade closes the QPs first, so it is never refused.
     *
     * <p>Refused with {@link IllegalStateException} naming them while {@link MemoryWindow}s are bound to this region
     * (the kernel would answer a bare {@code EBUSY}): close the windows, or invalidate them, first.
     */
    @Override
    public synchronized void close() {
        if (!isClosed()) { // DMA safety: refused while posted or posting work requests reference this region
            refuseIfWindowsBound("ibv_dereg_mr", "deregister it (EBUSY)");
            KeySnapshot current = quiesce("ibv_dereg_mr", "deregistering it");
            refuseIfHeld(current, "ibv_dereg_mr");
            try {
                super.close();
            } catch (RuntimeException | Error e) {
                if (!isClosed()) {
                    snapshot = current;
                }
                throw e;
            }
        }
    }

    /**
     * Refuses (restoring {@code current}) while an indirect mkey's layout still names this region: read after
     * {@link #quiesce} published the not-open snapshot and ran the closer's barrier, so a configuration racing this
     * on another thread either is seen here or sees the closing snapshot and aborts.
     */
    private void refuseIfHeld(KeySnapshot current, String verb) {
        if (holders.isEmpty()) {
            return;
        }
        java.util.List<String> by = new java.util.ArrayList<>();
        for (dev.panverbs.core.internal.RegionHolder h : holders) {
            if (h.holds(this)) {
                by.add(h.toString());
            } else {
                holders.remove(h);
            }
        }
        if (!by.isEmpty()) {
            snapshot = current;
            throw new IllegalStateException(verb + ": " + this + " is named by the UMR layout of " + by + ": the "
                    + "device translates those keys into this memory; invalidate, reconfigure or close the mkeys "
                    + "(poll the completions of the work requests that name them, and hand the UMR's successful "
                    + "completion to IndirectMkey.completed) first");
        }
    }

    /** The refusal of {@link #close()} and {@link Rereg#apply()} while windows are bound here (cold). */
    private void refuseIfWindowsBound(String verb, String action) {
        java.util.List<MemoryWindow> bound = windows.stream().filter(w -> !w.isClosed()).toList();
        if (!bound.isEmpty()) {
            throw new IllegalStateException(verb + ": " + this + " has " + bound.size() + " memory window(s) "
                    + "bound to it: " + bound.stream().map(w -> w + " rkey 0x" + Integer.toHexString(w.rkey()))
                    .toList() + "; the kernel refuses to " + action + " while a window may still grant "
                    + "access to it: close the windows (ibv_dealloc_mw) or invalidate them "
                    + "(PostBatch.localInv(wrId, flags, window)) first");
        }
    }

    /**
     * Makes the key unusable for new posts, then checks that no work request references it: a post publishes its
     * references before it re-reads the key's snapshot, this publishes the not-open snapshot before it scans them,
     * and each side orders its store before its load (Dekker; {@link Handshake}: this side runs {@code membarrier},
     * which makes the post's compiler barrier a full one, or both sides a full fence), so either the post sees the key
     * closing and refuses, or this sees the post's references and refuses. Returns the open snapshot (to restore).
     */
    private KeySnapshot quiesce(String verb, String action) {
        KeySnapshot current = snapshot;
        snapshot = current.closed();
        Handshake.closerSide(() -> snapshot = current);
        int inFlight = current.pd.inFlight(current.trackingId);
        if (inFlight > 0) {
            snapshot = current;
            throw new IllegalStateException(verb + ": " + this + " is still referenced by " + inFlight
                    + " outstanding work request(s); poll their completions (or move the QP to ERR and poll the"
                    + " flushes, or close the QP) before " + action);
        }
        return current;
    }

    /** The local key, for scatter/gather entries ({@code ibv_mr.lkey}). */
    @Override
    public int lkey() {
        return snapshot.lkey;
    }

    /** The remote key that peers put in RDMA and atomic work requests ({@code ibv_mr.rkey}). */
    public int rkey() {
        return snapshot.rkey;
    }

    /** Whether the region is still registered (not closed). */
    @Override
    public boolean isOpen() {
        return !isClosed();
    }

    /**
     * The address peers use for the first byte: the segment's address, the iova given at registration, or
     * 0 for a zero-based MR. Remote work requests target {@code address() + offset}.
     */
    @Override
    public long address() {
        return snapshot.address;
    }

    /** The length of the region in bytes. */
    @Override
    public long length() {
        return snapshot.length;
    }

    /**
     * The registered memory. For an MR made by {@link ProtectionDomain#allocate} its scope is the MR's own
     * arena: after {@link #close()} this method throws {@link IllegalStateException} naming the MR, and a segment
     * obtained before throws on use, instead of touching freed memory.
     */
    public MemorySegment buffer() {
        MemorySegment b = buffer;
        if (b == null) {
            throw new UnsupportedOperationException(resource.description()
                    + " was registered from a DMA-BUF: its memory has no CPU mapping here");
        }
        if (!b.scope().isAlive()) { // an owned buffer, freed by close(): name the MR, not just "Already closed"
            throw resource.closedException("buffer() (its memory was freed with it)");
        }
        return b;
    }

    /** The access rights it was registered with. */
    public Set<Access> access() {
        return access;
    }

    /** The protection domain the MR belongs to (changes with {@link Rereg#pd}). */
    @Override
    public ProtectionDomain protectionDomain() {
        return snapshot.pd;
    }

    /**
     * Starts a re-registration ({@code ibv_rereg_mr(3)}): change the PD, the translation (the memory) or the
     * access rights of this MR in place, keeping it registered. Each setter sets its
     * {@code IBV_REREG_MR_CHANGE_*} flag; {@link Rereg#apply()} calls the verb.
     */
    public Rereg rereg() {
        resource.checkOpen("ibv_rereg_mr");
        return new Rereg(this);
    }

    /**
     * Options for registering memory ({@code ibv_reg_mr(3)}, {@code ibv_reg_mr_iova2(3)}): from
     * {@link ProtectionDomain#regMrBuilder}. Not thread-safe; use once.
     */
    public static final class Builder {
        private final ProtectionDomain pd;
        private final MemorySegment segment;
        private final Set<Access> access;
        private Long iova;
        private Arena tie;
        private Arena owned;

        Builder(ProtectionDomain pd, MemorySegment segment, Set<Access> access) {
            this.pd = pd;
            this.segment = Objects.requireNonNull(segment, "segment");
            this.access = access == null ? null : EnumSet.copyOf(access.isEmpty() ? EnumSet.noneOf(Access.class) : access);
        }

        /**
         * Registers with an explicit I/O virtual address ({@code ibv_reg_mr_iova2(3)}): peers address byte
         * {@code i} of the segment as {@code iova + i}. The page offset of {@code iova} must equal the
         * segment's page offset on most devices.
         */
        public Builder iova(long iova) {
            this.iova = iova;
            return this;
        }

        /** A zero-based MR: {@code iova(0)}, so peers address the region by offsets from 0. */
        public Builder zeroBased() {
            return iova(0);
        }

        /**
         * Ties deregistration to {@code arena}: when the arena closes, this MR is deregistered before the
         * arena frees the memory (the {@code MemorySegment.reinterpret(arena, cleanup)} pattern: cleanup
         * actions run in reverse order of registration, after the allocation's own). The segment must belong
         * to {@code arena} ({@code segment.scope().equals(arena.scope())}). With a confined arena, call
         * {@link #register()} from the arena's owner thread. Closing the arena deregisters the MR even while work
         * requests still use it (unlike {@link MemoryRegion#close()}, which refuses): the NIC then fails them with a
         * protection error rather than writing into freed memory. The {@link MemoryWindow}s bound to it are
         * deallocated first, so no window's rkey reaches the freed memory either.
         */
        public Builder deregisterWith(Arena arena) {
            Objects.requireNonNull(arena, "arena");
            if (!arena.scope().equals(segment.scope())) {
                throw new IllegalArgumentException("deregisterWith(arena): the segment was not allocated by this arena "
                        + "(its scope differs), so closing the arena would not free it; pass the arena it came from");
            }
            this.tie = arena;
            return this;
        }

        Builder owning(Arena arena) {
            this.owned = arena;
            return this;
        }

        /**
         * Registers the memory ({@code ibv_reg_mr(3)}, or {@code ibv_reg_mr_iova2(3)} with an iova). Errors and
         * DMA contract: see {@link ProtectionDomain#regMr}.
         */
        public MemoryRegion register() {
            String verb = iova == null ? "ibv_reg_mr" : "ibv_reg_mr_iova2";
            try {
                int mask = RegistrationChecks.checkRegistrable(verb, segment, access);
                if (access.contains(Access.ON_DEMAND)) {
                    RegistrationChecks.requireOdp(pd, Errors.call(verb, "access", access), false);
                }
                RegionRegistration registration = new RegionRegistration(owned);
                if (tie != null) { // before the verb: a confined arena of another thread refuses, nothing registered
                    ArenaTie.tieTo(verb, tie, segment, registration.tie);
                }
                MemorySegment pdHandle = pd.resource.handle(verb);
                long va = iova == null ? segment.address() : iova;
                MemorySegment mr;
                int errnoValue;
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment errno = Errno.allocateCapture(arena);
                    try {
                        mr = LibIbverbs.ibv_reg_mr_iova2(errno, pdHandle, segment, segment.byteSize(), va, mask);
                    } catch (WrongThreadException e) { // the linker's access check, before the provider
                        throw Errors.wrongThread(verb, "the segment", e);
                    }
                    errnoValue = Errno.get(errno);
                }
                if (mr.equals(MemorySegment.NULL)) {
                    throw Errors.failure(Errors.call(verb, "length", Units.bytes(segment.byteSize()), "addr",
                            Units.hex(segment.address()), "iova", Units.hex(va), "access", access), errnoValue);
                }
                MemoryRegion region = new MemoryRegion(pd, mr, segment, segment.byteSize(), va,
                        Units.hex(segment.address()), access, registration);
                if (tie != null) {
                    registration.tie.set(region); // from now on the arena's close deregisters it
                }
                return region;
            } catch (RuntimeException | Error e) {
                if (owned != null && owned.scope().isAlive()) {
                    owned.close();
                }
                throw e;
            }
        }
    }

    /** An unmodifiable copy that keeps the enum order (for stable messages). */
    private static Set<Access> frozen(Set<Access> access) {
        return java.util.Collections.unmodifiableSet(access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access));
    }

    /**
     * A pending re-registration ({@code ibv_rereg_mr(3)}). Each setter adds its {@code IBV_REREG_MR_CHANGE_*}
     * flag, so no flag mask is assembled by hand. Not thread-safe; use once.
     */
    public static final class Rereg {
        private final MemoryRegion mr;
        private ProtectionDomain newPd;
        private MemorySegment newBuffer;
        private Set<Access> newAccess;
        private Arena newTie;

        Rereg(MemoryRegion mr) {
            this.mr = mr;
        }

        /** {@code IBV_REREG_MR_CHANGE_PD}: move the MR to another PD of the same context. */
        public Rereg pd(ProtectionDomain pd) {
            if (pd.context() != mr.protectionDomain().context()) {
                throw new IllegalArgumentException("ibv_rereg_mr: the new PD belongs to another Context");
            }
            this.newPd = pd;
            return this;
        }

        /**
         * {@code IBV_REREG_MR_CHANGE_TRANSLATION}: register {@code segment} instead (the MR keeps its
         * identity, the keys may change). The DMA contract moves to the new segment; an owned buffer of the
         * old registration is freed after the change succeeds.
         */
        public Rereg translation(MemorySegment segment) {
            this.newBuffer = Objects.requireNonNull(segment, "segment");
            this.newTie = null;
            return this;
        }

        /**
         * {@link #translation(MemorySegment)} with deregistration tied to {@code arena}, which allocated {@code segment}
         * ({@link Builder#deregisterWith}). Either form unties the MR from the arena of its previous memory.
         */
        public Rereg translation(Arena arena, MemorySegment segment) {
            Objects.requireNonNull(arena, "arena");
            if (!arena.scope().equals(Objects.requireNonNull(segment, "segment").scope())) {
                throw new IllegalArgumentException("ibv_rereg_mr: translation(arena, segment): the segment was not "
                        + "allocated by this arena (its scope differs); pass the arena it came from");
            }
            this.newBuffer = segment;
            this.newTie = arena;
            return this;
        }

        /** {@code IBV_REREG_MR_CHANGE_ACCESS}: new access rights (same rules as at registration). */
        public Rereg access(Set<Access> access) {
            this.newAccess = EnumSet.copyOf(access.isEmpty() ? EnumSet.noneOf(Access.class) : access);
            return this;
        }

        /**
         * Calls {@code ibv_rereg_mr(3)} with the flags of the setters used; on success updates the keys,
         * buffer, PD and access of the MR.
         *
         * <p>Refused with {@link IllegalStateException} while work requests reference the region, and while
         * {@link MemoryWindow}s are bound to it (naming them), as {@link MemoryRegion#close()} is.
         *
         * <p>Errors: {@code EINVAL}, {@code ENOMEM}, {@code EOPNOTSUPP} (the provider cannot re-register →
         * {@link UnsupportedVerbException}), each naming the failed stage (input check, command). On failure
         * the MR keeps its previous state, except after {@code IBV_REREG_MR_ERR_CMD} and
         * {@code IBV_REREG_MR_ERR_CMD_AND_DO_FORK_NEW} with an errno other than EOPNOTSUPP, which rdma-core
         * documents as "MR shouldn't be used": it is then closed. (Kernels whose driver lacks re-registration,
         * e.g. rxe before Linux 6.2, answer EOPNOTSUPP before touching the MR; it stays usable.)
         */
        public void apply() {
            int flags = 0;
            Set<Access> acc = newAccess != null ? newAccess : mr.access;
            MemorySegment buf = newBuffer;
            if (newPd != null) {
                flags |= verbs_h.IBV_REREG_MR_CHANGE_PD();
            }
            if (newBuffer != null) {
                flags |= verbs_h.IBV_REREG_MR_CHANGE_TRANSLATION();
                RegistrationChecks.checkRegistrable("ibv_rereg_mr", buf, acc);
            }
            if (newAccess != null) {
                flags |= verbs_h.IBV_REREG_MR_CHANGE_ACCESS();
                Access.validate("ibv_rereg_mr", acc);
            }
            if (flags == 0) {
                throw new IllegalStateException("ibv_rereg_mr: nothing to change; call pd(), translation() or access() first");
            }
            synchronized (mr) { // not with close(), nor with another rereg
                MemorySegment handle = mr.resource.handle("ibv_rereg_mr");
                // a window would keep its binding to the old keys and translation, and the bookkeeping that makes
                // close() refuse would name a region that no longer holds it
                mr.refuseIfWindowsBound("ibv_rereg_mr", "re-register it");
                // the keys may change: refused while work requests name them (and posts refuse meanwhile)
                KeySnapshot old = mr.quiesce("ibv_rereg_mr", "re-registering it");
                mr.refuseIfHeld(old, "ibv_rereg_mr"); // an mkey's layout names the old keys and translation
                try {
                    apply(handle, flags, acc, old);
                } catch (RuntimeException | Error e) {
                    if (!mr.isClosed()) {
                        mr.snapshot = old;
                    }
                    throw e;
                }
            }
        }

        private void apply(MemorySegment handle, int flags, Set<Access> acc, KeySnapshot old) {
            // the new arena's cleanup is attached before the verb (a confined arena of another thread refuses now);
            // it reaches the MR only once the change succeeded
            AtomicReference<MemoryRegion> newRef = newBuffer == null ? null : new AtomicReference<>();
            if (newTie != null) {
                ArenaTie.tieTo("ibv_rereg_mr", newTie, newBuffer, newRef);
            }
            MemorySegment pdHandle = newPd != null ? newPd.resource.handle("ibv_rereg_mr") : MemorySegment.NULL;
            MemorySegment addr = newBuffer != null ? newBuffer : MemorySegment.NULL;
            long length = newBuffer != null ? newBuffer.byteSize() : 0;
            int accessMask = newAccess != null ? Access.mask(acc) : 0;
            ReregFailure.call(handle, flags, pdHandle, addr, length, accessMask, acc,
                    mr.resource::close); // unusable: nothing references it (quiesced), deregister without re-checking
            ProtectionDomain pd = old.pd;
            if (newPd != null) {
                mr.resource.replaceParent(pd.resource, newPd.resource);
                pd = newPd;
            }
            long iova = old.address;
            long size = old.length;
            MemorySegment.Scope scope = old.scope;
            if (newBuffer != null) {
                Arena oldOwned = mr.registration.owned;
                mr.buffer = newBuffer;
                size = newBuffer.byteSize();
                iova = newBuffer.address();
                scope = newBuffer.scope();
                mr.registration.owned = null;
                // the old arena no longer holds the MR's memory: its close must not deregister the MR; the new
                // memory's arena does, when given (translation(arena, segment))
                AtomicReference<MemoryRegion> oldRef = mr.registration.tie;
                mr.registration.tie = newRef;
                if (newTie != null) {
                    newRef.set(mr);
                }
                oldRef.set(null);
                if (oldOwned != null) {
                    oldOwned.close();
                }
            }
            mr.access = frozen(acc);
            MemorySegment s = handle.reinterpret(ibv_mr.sizeof());
            mr.snapshot = new KeySnapshot(mr, iova, size, ibv_mr.lkey(s), ibv_mr.rkey(s), pd, Access.mask(acc),
                    old.trackingId, scope, true);
        }
    }
}
