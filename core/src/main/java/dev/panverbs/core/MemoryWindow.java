package dev.panverbs.core;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.VerbsInline;
import dev.panverbs.bindings.verbs.ibv_mw;
import dev.panverbs.bindings.verbs.ibv_mw_bind;
import dev.panverbs.bindings.verbs.ibv_mw_bind_info;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.Handshake;
import dev.panverbs.core.internal.ResourceKind;
import dev.panverbs.core.internal.Units;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * A memory window ({@code struct ibv_mw}, {@code ibv_alloc_mw(3)}): a remote key with its own range and rights inside
 * a {@link MemoryRegion} registered with {@link Access#MW_BIND}. Peers address it as {@code rkey()} plus an address in
 * {@code [address(), address() + length())}; accesses outside the window or its rights, or after it was invalidated,
 * complete with {@link WorkCompletionStatus#REM_ACCESS_ERR} at the peer. Made by
 * {@link ProtectionDomain#allocMw(MemoryWindowType)}.
 *
 * <p>Type 1 windows are bound with {@link #bind} ({@code ibv_bind_mw(3)}), which posts a bind work request on the
 * given QP's send queue (its completion, opcode {@link WorkCompletionOpcode#BIND_MW}, arrives on that QP's send CQ)
 * and gives the window a new rkey. Type 2 windows are bound by a {@code BIND_MW} work request, in the classic chain
 * ({@link SendRequests#bindMw}, {@code ibv_post_send}) or a batch ({@link PostBatch#bindMw}, {@code ibv_wr_bind_mw}),
 * and invalidated by a {@code LOCAL_INV} of either ({@link SendRequests#localInv(long, int, MemoryWindow)},
 * {@link PostBatch#localInv(long, int, MemoryWindow)}) or by the peer's {@code SEND_WITH_INV}.
 *
 * <h2>DMA safety</h2>
 * A bind work request references its region until its completion is polled (like any SGE). Beyond that, a window
 * bound to a region keeps the region from being closed: {@link MemoryRegion#close()} refuses, naming the window,
 * while the window is bound as far as this library knows: from the bind's post until the window is closed
 * ({@code ibv_dealloc_mw}), re-bound elsewhere, or invalidated through {@link PostBatch#localInv(long, int,
 * MemoryWindow)} or {@link SendRequests#localInv(long, int, MemoryWindow)}. A remote invalidation
 * ({@code SEND_WITH_INV}) and a bind that completes in error are reported only in completions, which the library
 * does not inspect while polling: hand such a completion to {@link #completed(WorkCompletion)} (or close the window)
 * to release the region. A bind posted while the window is bound keeps the earlier region from closing too until
 * {@link #completed(WorkCompletion)} learns the bind's outcome (the device may still hold the earlier binding). A
 * protection domain's cascade closes windows before regions. Neither that cascade nor the arena tie of the region
 * ever frees the {@code ibv_mw} while a provider call on another thread may read it (see {@link #close()}).
 *
 * <p>Thread safety: binding runs as a post on the QP's send queue (one producer); the accessors may be read from any
 * thread.
 */
public final class MemoryWindow extends VerbsObject {
    private final ProtectionDomain pd;
    private final MemoryWindowType type;
    private final MemorySegment mw;
    /** {@code struct ibv_mw_bind} for {@link #bind}, reused (the provider copies it into its WQE). */
    private final MemorySegment bind;
    /** The region of the current binding (as far as this library knows), or null. */
    private volatile MemoryRegion region;
    private volatile long address;
    private volatile long length;
    private volatile Set<Access> access = Set.of();
    /**
     * The newest work request that names this window (a bind or a local invalidation) and the tracker of its queue:
     * {@link #close()} refuses while it is outstanding. Written after the provider accepted it.
     */
    private volatile WorkQueueTracker lastWrQueue;
    private volatile long lastWrPosition;
    /**
     * Open batches, running chain posts and type 1 binds whose operations name this window ({@link #tryPin}):
     * {@link #close()} refuses while any does. Guarded by the monitor, which close() holds.
     */
    private int pins;
    /**
     * Of the {@link #pins}, the provider calls that may read the {@code ibv_mw} now ({@code ibv_wr_bind_mw},
     * {@code ibv_bind_mw}, a chain's {@code ibv_post_send}): the closes that no refusal stops (its region's arena
     * tie, its PD's cascade) wait for them before {@code ibv_dealloc_mw}. Guarded by the monitor.
     */
    private int readers;

    private MemoryWindow(ProtectionDomain pd, MemoryWindowType type, MemorySegment mw, Arena arena) {
        this(pd, type, mw, arena, new MemoryWindow[1]);
    }

    private MemoryWindow(ProtectionDomain pd, MemoryWindowType type, MemorySegment mw, Arena arena,
                         MemoryWindow[] self) {
        super(ResourceKind.MEMORY_WINDOW, "MemoryWindow[" + type + " " + Units.hex(mw.address()) + " on "
                + pd.context().device().name() + "]", mw, h -> dealloc(self[0], h, arena), pd.resource);
        self[0] = this;
        this.pd = pd;
        this.type = type;
        this.mw = mw.reinterpret(ibv_mw.sizeof());
        this.bind = arena.allocate(ibv_mw_bind.layout());
    }

    /**
     * The destroy verb, however the close came (its own, its PD's cascade, its region's arena tie): under the monitor,
     * so no pin starts (the window is closing) and no write of the {@code ibv_mw} runs ({@link #posted},
     * {@link #completed} check for a close there); after the provider calls that may read it returned.
     * {@code w} is null only when the PD closed during the allocation (nobody else has the window).
     */
    private static void dealloc(MemoryWindow w, MemorySegment handle, Arena arena) {
        if (w != null) {
            synchronized (w) {
                w.awaitReaders();
                deallocNow(handle, arena);
            }
        } else {
            deallocNow(handle, arena);
        }
    }

    /**
     * Waits until no provider call may read the {@code ibv_mw} (none starts: the window is closing), however long. Such
     * a call is short and runs no application code, but the arena tie or a cascade may land inside one on another
     * thread; it returns unless its thread is suspended (a debugger), and then this waits until it resumes. No bound
     * (unlike {@link CallGuard}): giving up would leave the window allocated and bound, so its region could not be
     * deregistered (rxe refuses {@code ibv_dereg_mr} while a window is bound), while the arena tie that called this
     * cannot keep the memory: the JDK frees it after the tie's action, even one that throws (see {@link ArenaTie}).
     */
    private void awaitReaders() {
        boolean interrupted = false;
        while (readers > 0) {
            try {
                wait();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private static void deallocNow(MemorySegment handle, Arena arena) {
        int rc = VerbsInline.ibv_dealloc_mw(handle);
        if (rc != 0) {
            throw Errors.failure(Errors.call("ibv_dealloc_mw", "mw", Units.hex(handle.address())), rc);
        }
        arena.close();
    }

    /** Adopts a window made by another provider path (the tests' fake provider); closing it calls ibv_dealloc_mw. */
    static MemoryWindow wrap(ProtectionDomain pd, MemoryWindowType type, MemorySegment handle) {
        return new MemoryWindow(pd, type, handle, Arena.ofShared());
    }

    /** {@code ibv_alloc_mw}, refused up front when the device lacks the window type. */
    static MemoryWindow alloc(ProtectionDomain pd, MemoryWindowType type) {
        String call = Errors.call("ibv_alloc_mw", "type", type);
        Context context = pd.context();
        DeviceAttributes a = context.attributes();
        if (!type.supportedBy(a)) {
            throw Errors.unsupported(call, "memory windows of " + type + " (" + type.capabilityName()
                    + ", max_mw > 0)", context.device().name() + " reports max_mw = " + a.limits().maxMw()
                    + " and device_cap_flags " + a.capabilities());
        }
        MemorySegment pdHandle = pd.resource.handle("ibv_alloc_mw");
        Arena arena = Arena.ofShared();
        try (Arena tmp = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(tmp);
            MemorySegment mw = VerbsInline.ibv_alloc_mw(errno, pdHandle, type.value());
            if (mw.address() == 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
            return new MemoryWindow(pd, type, mw, arena);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
    }

    /** The window's type. */
    public MemoryWindowType type() {
        return type;
    }

    /** The protection domain: the regions it is bound over and the QPs that bind it belong to it. */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /**
     * The remote key peers use ({@code ibv_mw.rkey}): changed by every bind (type 1: by the provider; type 2: the
     * rkey given to {@link PostBatch#bindMw}).
     */
    public int rkey() {
        resource.checkOpen("ibv_mw.rkey");
        return ibv_mw.rkey(mw);
    }

    /**
     * The next rkey for a type 2 bind ({@code ibv_inc_rkey(3)}): the same index, the low 8 "key" bits incremented,
     * which the device requires to change from one binding to the next.
     */
    public static int nextRkey(int rkey) {
        return (rkey & 0xFFFFFF00) | ((rkey + 1) & 0xFF);
    }

    /** The first address of the current binding (the region's iova plus the bind offset); 0 when unbound. */
    public long address() {
        return address;
    }

    /** The length of the current binding in bytes; 0 when unbound. */
    public long length() {
        return length;
    }

    /** The remote rights of the current binding. */
    public Set<Access> access() {
        return access;
    }

    /** The region the window is bound over, as far as this library knows (see the class comment). */
    public Optional<MemoryRegion> boundRegion() {
        return Optional.ofNullable(region);
    }

    /**
     * Binds this type 1 window ({@code ibv_bind_mw(3)}) to {@code length} bytes at {@code offset} in {@code mr} with
     * the remote rights {@code access} ({@link Access#REMOTE_READ}, {@link Access#REMOTE_WRITE},
     * {@link Access#REMOTE_ATOMIC}), posting the bind on {@code qp}'s send queue (RTS, RC or UC), and returns the
     * window's new rkey. The bind completes on {@code qp}'s send CQ with {@code wrId} (opcode
     * {@link WorkCompletionOpcode#BIND_MW}, always when {@code sendFlags} has {@link SendFlag#SIGNALED_BIT}). If it
     * completes in error the window is not bound; close it to release the region.
     *
     * <p>Errors, before the call: a type 2 window, another PD, a region without {@link Access#MW_BIND}, a range
     * outside the region, remote write or atomic rights over a region without {@link Access#LOCAL_WRITE} (IB spec
     * C10-75, C10-76) → {@link IllegalArgumentException}; a QP not in RTS → {@link PostException}; a full send queue or
     * a closed region → {@link IllegalStateException}. From the provider → {@link VerbsException}.
     */
    public int bind(QueuePair qp, long wrId, int sendFlags, MemoryRegion mr, long offset, long length,
                    Set<Access> access) {
        String call = Errors.call("ibv_bind_mw", "mw", this, "qp", qp, "mr", mr, "offset", offset, "length", length,
                "access", access);
        if (type != MemoryWindowType.TYPE_1) {
            throw new IllegalArgumentException(call + ": a type 2 window is bound by a BIND_MW work request: "
                    + "PostBatch.bindMw (ibv_wr_bind_mw)");
        }
        if (!WorkRequestRules.typeAllows(qp.type(), WorkRequestOpcode.BIND_MW)) {
            throw new UnsupportedVerbException(call, "a " + qp.type() + " QP cannot bind memory windows",
                    "BIND_MW on " + qp.type() + " queue pairs");
        }
        int rights = checkBind(call, qp, mr, offset, length, access);
        pin("ibv_bind_mw", true); // ibv_bind_mw reads the ibv_mw: a forced close waits for it, close() refuses
        try {
            return bind(call, qp, wrId, sendFlags, mr, offset, length, access, rights);
        } finally {
            unpinRead();
        }
    }

    private int bind(String call, QueuePair qp, long wrId, int sendFlags, MemoryRegion mr, long offset, long length,
                     Set<Access> access, int rights) {
        KeySnapshot k = DataPathAccess.snapshot(mr);
        MemorySegment mwHandle = resource.handle("ibv_bind_mw");
        SendQueue sq = qp.sendQueue;
        Binding before;
        CallGuard g = sq.guard;
        if (!g.enter(Thread.currentThread())) {
            throw sq.postRefused("ibv_bind_mw");
        }
        try {
            Handshake.postSide(); // after the guard mark: a QP close that found no mark is seen by the handle read
            MemorySegment qpHandle = qp.resource.handle("ibv_bind_mw");
            qp.checkSendState("ibv_bind_mw", 0, WorkRequestOpcode.BIND_MW.value());
            WorkQueueTracker t = sq.tracker;
            if (t.room() <= 0) {
                throw new IllegalStateException(call + ": the send queue of " + qp + " is full ("
                        + t.capacity() + " outstanding work requests); poll its send CQ first");
            }
            long pos = t.tail();
            t.put(pos, wrId, k.trackingId); // the bind reads the region: referenced until its completion
            WorkQueueTracker prevQueue = lastWrQueue;
            long prevPosition = lastWrPosition;
            namedBy(t, pos); // before the publish: its post-side fence orders it before the re-reads below
            t.publish(pos + 1);
            if (resource.isClosed()) { // a forced close since the pin: it waits for this call, refused here first
                unnamed(t, pos, prevQueue, prevPosition);
                t.rollback(pos);
                throw resource.closedException("ibv_bind_mw");
            }
            if (DataPathAccess.snapshot(mr) != k || !k.memoryAlive()) {
                unnamed(t, pos, prevQueue, prevPosition);
                t.rollback(pos);
                throw new IllegalStateException(call + ": " + mr + " was closed or re-registered meanwhile");
            }
            ibv_mw_bind.wr_id(bind, t.encode(pos));
            ibv_mw_bind.send_flags(bind, sendFlags);
            MemorySegment info = ibv_mw_bind.bind_info(bind);
            ibv_mw_bind_info.mr(info, mr.resource.handle("ibv_bind_mw"));
            ibv_mw_bind_info.addr(info, k.address + offset);
            ibv_mw_bind_info.length(info, length);
            ibv_mw_bind_info.mw_access_flags(info, rights);
            before = current();
            int rc;
            try {
                rc = VerbsInline.ibv_bind_mw(qpHandle, mwHandle, bind);
            } catch (RuntimeException | Error e) {
                unnamed(t, pos, prevQueue, prevPosition);
                t.rollback(pos);
                throw e;
            }
            if (rc != 0) {
                unnamed(t, pos, prevQueue, prevPosition);
                t.rollback(pos);
                throw Errors.failure(call, rc);
            }
        } finally {
            g.exit();
        }
        postedType1(qp, wrId, before, mr, k.address + offset, length, access);
        return ibv_mw.rkey(mw); // close() refuses while the bind is outstanding: the window is still allocated
    }

    /** The checks every bind makes before the provider sees it (cold): {@link WindowBindChecks}. */
    int checkBind(String call, QueuePair qp, MemoryRegion mr, long offset, long length, Set<Access> access) {
        return WindowBindChecks.check(call, pd, qp, mr, offset, length, access);
    }

    /**
     * A bind of this window was posted on {@code qp} with the caller's {@code wrId}: the window now reports
     * {@code newRkey} and the new range, and remembers what it held before until {@link #completed} learns the bind's
     * outcome (a bind that completes in error changed nothing at the device).
     */
    synchronized void posted(QueuePair qp, long wrId, int newRkey, MemoryRegion mr, long addr, long len,
                             Set<Access> rights) {
        if (isClosed()) { // deallocated by a forced close since the batch built it: the ibv_mw is gone
            return;
        }
        Binding before = new Binding(ibv_mw.rkey(mw), region, address, length, access);
        pendingBind = new PendingBind(qp.qpNum(), wrId, before);
        rkey(newRkey);
        bound(mr, addr, len, rights);
    }

    /** A type 1 bind was posted (the provider already gave the window its new rkey; {@code oldRkey} was current). */
    synchronized void postedType1(QueuePair qp, long wrId, Binding before, MemoryRegion mr, long addr, long len,
                                  Set<Access> rights) {
        if (isClosed()) {
            return;
        }
        pendingBind = new PendingBind(qp.qpNum(), wrId, before);
        bound(mr, addr, len, rights);
    }

    /**
     * A work request naming this window (bind or local invalidation) was accepted at {@code position} of
     * {@code tracker}: {@link #close()} refuses until it retires. Not a reference count: the newest one only (a
     * window's operations on one QP complete in order).
     */
    void namedBy(WorkQueueTracker tracker, long position) {
        lastWrPosition = position;
        lastWrQueue = tracker;
    }

    /** A bind named the window at {@code position} but was not posted: the newest WR naming it is the one before. */
    private void unnamed(WorkQueueTracker tracker, long position, WorkQueueTracker prevQueue, long prevPosition) {
        if (lastWrQueue == tracker && lastWrPosition == position) {
            lastWrPosition = prevPosition;
            lastWrQueue = prevQueue;
        }
    }

    /**
     * A batch being built, a chain being posted or a type 1 bind names this window: unless it is closed,
     * {@link #close()} refuses until {@link #unpin()}, so the provider never reads a freed {@code ibv_mw}, nor a
     * {@code LOCAL_INV} a reused key. {@code reading}: the caller is about to make a provider call that reads the
     * {@code ibv_mw}; the closes no refusal stops (arena tie, PD cascade) wait for it to end ({@link #endRead}), and
     * deallocate the window whatever pins remain (a batch that built a WR naming it then aborts at submit). The
     * monitor excludes close() and the dealloc; only window operations pay it.
     */
    synchronized boolean tryPin(boolean reading) {
        if (isClosed()) {
            return false;
        }
        pins++;
        if (reading) {
            readers++;
        }
        return true;
    }

    /** {@link #tryPin} or refused as closed for {@code verb}. */
    void pin(String verb, boolean reading) {
        if (!tryPin(reading)) {
            throw resource.closedException(verb);
        }
    }

    /** Pinned (not reading) for a local invalidation: the current rkey, read where no dealloc can run. */
    synchronized int pinRkey(String verb) {
        pin(verb, false);
        return ibv_mw.rkey(mw);
    }

    /** The provider call that read the {@code ibv_mw} returned (the pin stays): a forced close may proceed. */
    synchronized void endRead() {
        if (--readers == 0) {
            notifyAll();
        }
    }

    /** After the WR that pinned the window named it ({@link #namedBy}), or was dropped unposted. */
    synchronized void unpin() {
        pins--;
    }

    /** {@link #endRead} and {@link #unpin}. */
    synchronized void unpinRead() {
        endRead();
        pins--;
    }
    /** A local invalidation of this window was posted: unbound from now on. */
    synchronized void invalidatedLocally() {
        pendingBind = null;
        unbound();
    }

    /** The binding before a posted bind. */
    record Binding(int rkey, MemoryRegion region, long address, long length, Set<Access> access) { }

    /** The last posted bind whose completion has not been handed to {@link #completed}. */
    private record PendingBind(int qpNum, long wrId, Binding before) { }

    private PendingBind pendingBind;
    /**
     * Every region this window may be bound to at the device: the current one and, while a bind's outcome is not
     * known ({@link #completed}), the ones before it. Each refuses to close while it is held here.
     */
    private final Set<MemoryRegion> held = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());

    private void release(MemoryRegion r) {
        held.remove(r);
        r.windows.remove(this);
    }

    /** The current binding (a type 1 bind records it before the provider changes the rkey). */
    synchronized Binding current() {
        return new Binding(ibv_mw.rkey(mw), region, address, length, access);
    }

    /**
     * Brings this window's bookkeeping up to date with a completion the application polled, for the two events that
     * ibverbs reports only in completions (cold; nothing is looked up when polling):
     * <ul>
     *   <li>the completion of this window's last posted bind (same QP number and {@code wr_id}) in error, or flushed
     *   ({@code WR_FLUSH_ERR}): the bind did not happen, so the window returns to its binding, rkey and region before
     *   it, and the region named by the failed bind may close again;</li>
     *   <li>a successful receive that invalidated this window's current rkey ({@code SEND_WITH_INV} from the peer,
     *   {@code IBV_WC_WITH_INV}, {@code invalidated_rkey}): the window is unbound and its region may close.</li>
     * </ul>
     * A successful completion of the bind only confirms it. Returns whether the completion concerned this window.
     */
    public synchronized boolean completed(WorkCompletion wc) {
        resource.checkOpen("MemoryWindow.completed");
        PendingBind p = pendingBind;
        if (p != null && wc.qpNum() == p.qpNum() && wc.wrId() == p.wrId()
                && (wc.statusValue() != 0 || wc.opcode() == WorkCompletionOpcode.BIND_MW)) {
            MemoryRegion bindRegion = region;
            if (wc.statusValue() != 0) { // the bind did not happen: back to the binding before it
                Binding b = p.before();
                rkey(b.rkey());
                region = b.region();
                address = b.address();
                length = b.length();
                access = b.access();
                if (bindRegion != null && bindRegion != region) {
                    release(bindRegion);
                }
            } else { // confirmed: the regions before it are no longer reachable through this window
                for (MemoryRegion r : held.toArray(new MemoryRegion[0])) {
                    if (r != bindRegion) {
                        release(r);
                    }
                }
            }
            pendingBind = null;
            return true;
        }
        if (wc.statusValue() == 0 && (wc.opcode() == WorkCompletionOpcode.RECV
                || wc.opcode() == WorkCompletionOpcode.RECV_RDMA_WITH_IMM) && invalidates(wc)
                && wc.invalidatedRkey() == ibv_mw.rkey(mw)) {
            pendingBind = null;
            unbound();
            return true;
        }
        return false;
    }

    /**
     * Whether a receive completion reports an invalidation: {@code IBV_WC_WITH_INV}, or on rxe (Linux 6.1), which
     * writes the kernel's {@code IB_WC_WITH_INVALIDATE} (bit 2, libibverbs' {@code IBV_WC_IP_CSUM_OK}) into user
     * space, that bit without an immediate (the union's other member).
     */
    private static boolean invalidates(WorkCompletion wc) {
        return wc.hasInv() || (!wc.hasImm() && (wc.wcFlags() & dev.panverbs.bindings.verbs.verbs_h.IBV_WC_IP_CSUM_OK()) != 0);
    }

    /** Records the binding (posted): the region now refuses to close while this window is bound to it. */
    synchronized void bound(MemoryRegion mr, long addr, long len, Set<Access> rights) {
        MemoryRegion previous = region;
        if (previous != null && previous != mr && pendingBind == null) {
            release(previous);
        }
        held.add(mr);
        mr.windows.add(this);
        region = mr;
        address = addr;
        length = len;
        access = rights.isEmpty() ? Set.of() : java.util.Collections.unmodifiableSet(EnumSet.copyOf(rights));
    }

    /** Records a type 2 window's new rkey (the provider's WR carries it; {@code ibv_mw.rkey} must follow it). */
    void rkey(int newRkey) {
        ibv_mw.rkey(mw, newRkey);
    }

    /**
     * Deallocates the window whatever work requests name it: the region's arena is closing and its memory must not
     * stay reachable through the window (the arena tie), even if a bind is still outstanding or a batch being built
     * on another thread names it (pinned: its submit then aborts). Only a provider call reading the {@code ibv_mw}
     * right now is waited for ({@link #dealloc}).
     */
    void forceClose() {
        resource.close();
        resource.awaitClosedUnbounded(); // a cascade deallocating it on another thread (after its readers) ends first
        if (isClosed()) {
            unbound();
        }
    }

    /** Forgets the binding (invalidated locally, or the window was deallocated). */
    synchronized void unbound() {
        for (MemoryRegion r : held) {
            r.windows.remove(this);
        }
        held.clear();
        region = null;
        address = 0;
        length = 0;
        access = Set.of();
    }

    /**
     * Deallocates the window ({@code ibv_dealloc_mw(3)}), which invalidates its binding and releases its region.
     * Idempotent. Refused with {@link IllegalStateException} while the newest bind or local invalidation that names
     * it is outstanding (until its completion is polled): the device resolves the window when it executes the WR, and
     * a deallocated window's key may already name another object by then. Refused too while an open {@link PostBatch}
     * binds or invalidates it, or a chain's post does (type 2), or a type 1 {@link #bind} on another thread is in
     * progress: each pins the window ({@link #tryPin}) under the monitor this holds from the check to the dealloc, and
     * names its WR before it unpins, so {@code ibv_bind_mw} never runs on a freed window and the WR read here is the
     * newest (no close/post handshake needed: {@code CloseRaceHostTest} races both).
     *
     * <p>The closes that nothing refuses, its region's arena tie and its PD's cascade, deallocate it whatever names
     * it, except that they wait for a provider call reading the {@code ibv_mw} on another thread to return (however
     * long: see {@link #awaitReaders}); a batch that had built a WR naming it aborts at submit.
     */
    @Override
    public synchronized void close() {
        if (!isClosed()) {
            if (pins > 0) {
                throw new IllegalStateException("ibv_dealloc_mw: " + this + " is named by a work request being "
                        + "built or posted (an open PostBatch on any thread, this one included, or a chain's post or "
                        + "a type 1 bind on another thread); submit or close the batch, or let the post return, "
                        + "first");
            }
            WorkQueueTracker t = lastWrQueue; // written inside a pin, read under the monitor after its unpin
            long p = lastWrPosition;
            if (t != null && t.isOutstanding(p)) {
                throw new IllegalStateException("ibv_dealloc_mw: " + this + " is named by an outstanding "
                        + "work request (a bind or local invalidation: the device resolves the window when it "
                        + "executes it); poll its completion (or move the QP to ERR and poll the flushes, or close "
                        + "the QP) before closing the window");
            }
        }
        super.close();
        if (isClosed()) {
            unbound();
        }
    }
}
