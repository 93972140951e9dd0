package dev.panverbs.core;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.LibIbverbs;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.ResourceKind;
import dev.panverbs.core.internal.Units;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;

/**
 * A protection domain ({@code struct ibv_pd}, {@code ibv_alloc_pd(3)}): groups the memory regions, address
 * handles, queue pairs and SRQs that may be used together. Created by {@link Context#allocPd()}; closing it
 * ({@code ibv_dealloc_pd}) first closes its queue pairs, then its SRQs, address handles, memory windows and memory
 * regions, newest first within each kind.
 *
 * <p>Thread safety: all methods may be called concurrently (libibverbs serialises registration in the
 * kernel); see {@link #close()} for closing.
 */
public final class ProtectionDomain extends VerbsObject {

    private final Context context;
    /**
     * The live work queues of this PD's QPs (later SRQs): {@link MemoryRegion#close()} scans their outstanding work
     * requests for references to the region. Control path only; the post and poll paths never touch it.
     */
    final Set<WorkQueue> workQueues = new CopyOnWriteArraySet<>();
    /** The live shared receive queues of this PD, for the same scan. */
    final Set<SrqQueue> srqQueues = new CopyOnWriteArraySet<>();

    ProtectionDomain(Context context, MemorySegment handle) {
        this(context, handle, true);
    }

    private ProtectionDomain(Context context, MemorySegment handle, boolean owning) {
        super(ResourceKind.PROTECTION_DOMAIN, "ProtectionDomain[" + Units.hex(handle.address()) + " on "
                        + context.device().name() + (owning ? "" : ", not owned") + "]",
                handle, owning ? ProtectionDomain::dealloc : h -> { }, context.resource);
        this.context = context;
    }

    /**
     * Wraps an {@code ibv_pd} of {@code context} that another library owns: closing it closes what was created in
     * it, never the PD itself ({@code ibv_dealloc_pd} is its owner's).
     */
    static ProtectionDomain adopt(Context context, MemorySegment handle) {
        MemorySegment pdContext = handle.reinterpret(dev.panverbs.bindings.verbs.ibv_pd.sizeof()).get(
                java.lang.foreign.ValueLayout.ADDRESS, dev.panverbs.bindings.verbs.ibv_pd.context$offset());
        if (pdContext.address() != context.resource.handle("adoptPd").address()) {
            throw new IllegalArgumentException("adoptPd: the ibv_pd belongs to another context than " + context);
        }
        return new ProtectionDomain(context, handle, false);
    }

    private static void dealloc(MemorySegment pd) {
        int rc = LibIbverbs.ibv_dealloc_pd(pd);
        if (rc != 0) {
            throw Errors.failure(Errors.call("ibv_dealloc_pd", "pd", Units.hex(pd.address())), rc);
        }
    }

    /** Waits until no UD batch of this PD's QPs copies the AH {@code trackingId} ({@link AddressCopyGuard}). */
    boolean awaitAddressCopies(long trackingId) {
        for (WorkQueue q : workQueues) {
            if (q instanceof SendQueue s && s.batch != null && s.batch.addressCopy != null
                    && !s.batch.addressCopy.awaitCopy(trackingId)) {
                return false;
            }
        }
        return true;
    }

    /** How many outstanding work requests of this PD's queues reference the key with {@code trackingId}. */
    int inFlight(long trackingId) {
        int n = 0;
        for (WorkQueue q : workQueues) {
            n += q.tracker.references(trackingId);
        }
        for (SrqQueue q : srqQueues) {
            n += q.tracker.references(trackingId);
        }
        return n;
    }

    /** The context this PD was allocated on. */
    public Context context() {
        return context;
    }

    /**
     * Registers {@code segment} as a memory region ({@code ibv_reg_mr(3)}), with the segment's address as the
     * iova (the address peers use). Shorthand for {@code regMrBuilder(segment, access).register()}.
     *
     * <h4>DMA contract</h4>
     * The NIC reads and writes this memory behind the JVM's back. The caller guarantees that the segment
     * stays alive, unmoved and unfreed until the MR is closed <em>and</em> every work request that uses it
     * has completed. Heap segments are rejected (the GC moves them); use native memory from an
     * {@link Arena}, a mapped file, or a direct {@code ByteBuffer} via {@link MemorySegment#ofBuffer}. The MR
     * holds the segment strongly, which keeps automatic arenas and direct buffers alive; an explicitly closed
     * arena is not held back: use {@link #regMr(Arena, MemorySegment, Set)} (or
     * {@link MemoryRegion.Builder#deregisterWith(Arena)}, or {@link #allocate}) so that closing the arena
     * deregisters first. Without that tie, an SGE over memory whose arena was closed is refused when it is added and
     * again at post ({@link IllegalStateException} naming the region), but work requests already posted cannot be
     * recalled: the NIC may still touch the freed memory.
     *
     * <p>Errors: {@code ENOMEM}/{@code EPERM}/{@code EAGAIN}: pinned-memory limit ({@code RLIMIT_MEMLOCK},
     * the message shows its value) or device MR resources exhausted; {@code EINVAL}: flags or length the
     * device rejects; {@code EFAULT}: range not mapped; {@code EACCES}: write access to a read-only mapping;
     * each as {@link VerbsException}. Access combinations the man page forbids and heap, read-only (with
     * write access), empty or closed segments are rejected with {@link IllegalArgumentException} /
     * {@link IllegalStateException} before the kernel is called.
     *
     * @param segment native memory to register
     * @param access  the rights; {@code EnumSet.noneOf(Access.class)} for local read only
     */
    public MemoryRegion regMr(MemorySegment segment, Set<Access> access) {
        return regMrBuilder(segment, access).register();
    }

    /**
     * Registers {@code segment}, which {@code arena} allocated, and ties the registration to that arena: closing the
     * arena deregisters the MR before it frees the memory ({@link MemoryRegion.Builder#deregisterWith}). This is the
     * default wherever the API is given the arena, because only then can the library order "deregister, then free";
     * given a bare segment ({@link #regMr(MemorySegment, Set)}) it cannot, and instead refuses to post SGEs over
     * memory whose arena was closed while it was still registered. Errors and DMA contract: see
     * {@link #regMr(MemorySegment, Set)}; a segment of another arena → {@link IllegalArgumentException}.
     */
    public MemoryRegion regMr(Arena arena, MemorySegment segment, Set<Access> access) {
        return regMrBuilder(segment, access).deregisterWith(arena).register();
    }

    /**
     * A builder for registering {@code segment} with options: an explicit or zero iova
     * ({@code ibv_reg_mr_iova2(3)}) and deregistration tied to the caller's arena. The DMA contract and
     * errors of {@link #regMr} apply.
     */
    public MemoryRegion.Builder regMrBuilder(MemorySegment segment, Set<Access> access) {
        resource.checkOpen("ibv_reg_mr");
        return new MemoryRegion.Builder(this, segment, access);
    }

    /**
     * Allocates {@code size} bytes of page-aligned native memory and registers them: the returned MR owns
     * that memory ({@code ibv_reg_mr(3)} over a private shared arena), as rust-ibverbs' {@code MemoryRegion}
     * owns its buffer. Closing the MR deregisters it, then frees the memory; afterwards
     * {@link MemoryRegion#buffer()} throws {@link IllegalStateException} instead of touching freed memory.
     *
     * <p>Errors: those of {@link #regMr}.
     *
     * @param size   bytes, at least 1
     * @param access the rights
     */
    public MemoryRegion allocate(long size, Set<Access> access) {
        resource.checkOpen("ibv_reg_mr");
        if (size <= 0) {
            throw new IllegalArgumentException(Errors.call("pd.allocate", "size", size) + ": size must be positive");
        }
        Access.validate("ibv_reg_mr", access);
        String call = Errors.call("pd.allocate", "size", Units.bytes(size));
        long maxMrSize = context.attributes().maxMrSize();
        if (Long.compareUnsigned(size, maxMrSize) > 0) {
            throw DeviceChecks.invalid(call, "size " + size + " exceeds the device's max_mr_size of "
                    + Long.toUnsignedString(maxMrSize) + " (DeviceAttributes.maxMrSize())");
        }
        Arena arena = Arena.ofShared();
        MemorySegment memory;
        try {
            memory = arena.allocate(size, MemoryRegion.PAGE_SIZE);
        } catch (OutOfMemoryError e) { // native malloc failed: not the Java heap, nothing else is affected
            arena.close();
            int enomem = dev.panverbs.bindings.verbs.verbs_h.ENOMEM();
            throw new VerbsException(call, enomem, Errno.name(enomem), Errno.strerror(enomem), "could not allocate "
                    + Units.bytes(size) + " of native memory (" + e.getMessage() + "); register a smaller region, or "
                    + "your own memory with regMr");
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        return new MemoryRegion.Builder(this, memory, access).owning(arena).register();
    }

    /**
     * Creates an address handle for UD sends ({@code ibv_create_ah(3)}) from an address vector.
     *
     * <p>Errors: {@code EINVAL} (bad port, GID index, or no GRH on a RoCE port), {@code ENOMEM},
     * {@code ETIMEDOUT}/{@code EHOSTUNREACH} (RoCE: the peer's MAC could not be resolved) →
     * {@link VerbsException} with a hint. Thread-safe.
     */
    public AddressHandle createAh(AddressVector addressVector) {
        return AddressHandle.create(this, java.util.Objects.requireNonNull(addressVector, "addressVector"));
    }

    /**
     * Creates the address handle that answers the sender of a UD receive ({@code ibv_create_ah_from_wc(3)}): the
     * address vector {@link Context#initAhFromWc} builds from the completion and the receive's GRH, then
     * {@link #createAh}. The reply goes to {@link WorkCompletion#srcQp()} (or the QP number the protocol carries)
     * with the sender's qkey.
     *
     * @param wc      a successful receive completion of a UD QP (read now; the next poll may overwrite it after)
     * @param grh     the first 40 bytes of that receive's buffer ({@code struct ibv_grh}); may be {@code null} when
     *                {@link WorkCompletion#hasGrh()} is false
     * @param portNum the port the receiving QP is bound to
     * @throws IllegalArgumentException a failed or non-receive completion, or a missing GRH
     * @throws VerbsException           {@code EINVAL}: the packet's destination GID is not in the port's table
     *                                  (a multicast packet); {@code EPROTONOSUPPORT}: a header that is no GRH; and
     *                                  {@link #createAh}'s errors
     */
    public AddressHandle createAhFromWc(WorkCompletion wc, MemorySegment grh, int portNum) {
        resource.checkOpen("ibv_create_ah_from_wc");
        return createAh(ReplyAddress.init(context(), portNum, wc, grh, "ibv_create_ah_from_wc"));
    }

    /**
     * Registers memory exported by another device driver as a DMA-BUF ({@code ibv_reg_dmabuf_mr(3)}), e.g.
     * GPU memory, so the NIC reads and writes it directly (peer-to-peer). The MR has no CPU-visible
     * {@link MemoryRegion#buffer()}.
     *
     * <p>Device-gated: the first call on a context probes whether the provider and kernel implement DMA-BUF
     * registration (Linux 5.12+, providers such as mlx5 and efa; not rxe); without it the call is refused up
     * front with an {@link UnsupportedVerbException} naming the capability, never a raw EOPNOTSUPP.
     *
     * <h4>DMA contract</h4>
     * The exporter keeps the DMA-BUF's memory alive until this MR is closed and every work request using it
     * has completed; the file descriptor may be closed after registration.
     *
     * <p>Errors: {@code EBADF} (not a DMA-BUF fd), {@code EINVAL} (offset/length outside the buffer, bad
     * access), {@code ENOMEM} → {@link VerbsException}.
     *
     * @param offset the start within the DMA-BUF
     * @param length bytes to register
     * @param iova   the address peers use for the first byte
     * @param fd     the DMA-BUF file descriptor
     * @param access the rights
     */
    public MemoryRegion regDmabufMr(long offset, long length, long iova, int fd, Set<Access> access) {
        String call = Errors.call("ibv_reg_dmabuf_mr", "offset", offset, "length", Units.bytes(length), "iova",
                Units.hex(iova), "fd", fd, "access", access);
        int mask = Access.validate("ibv_reg_dmabuf_mr", access);
        if (length <= 0) {
            throw new IllegalArgumentException(call + ": length must be positive");
        }
        MemorySegment pdHandle = resource.handle("ibv_reg_dmabuf_mr");
        context.requireDmabuf(this, call);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment mr = LibIbverbs.ibv_reg_dmabuf_mr(errno, pdHandle, offset, length, iova, fd, mask);
            if (mr.equals(MemorySegment.NULL)) {
                throw Errors.failure(call, Errno.get(errno));
            }
            return MemoryRegion.ofDmabuf(this, mr, length, iova, fd, access);
        }
    }

    /** Allocates a PD on {@code context}; package-private, called by {@link Context#allocPd()}. */
    static ProtectionDomain alloc(Context context) {
        MemorySegment ctx = context.resource.handle("ibv_alloc_pd");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment pd = LibIbverbs.ibv_alloc_pd(errno, ctx);
            if (pd.equals(MemorySegment.NULL)) {
                throw Errors.failure(Errors.call("ibv_alloc_pd", "context", context.device().name()), Errno.get(errno));
            }
            return new ProtectionDomain(context, pd);
        }
    }

    /**
     * Starts a queue pair of {@code type} (RC, UC or UD) whose send and receive queues complete to
     * {@code sendCq} and {@code recvCq} (may be the same CQ): set sizes on the builder, then {@code build()}
     * ({@code ibv_create_qp(3)}, or {@code ibv_create_qp_ex(3)} with send operations for the {@code ibv_wr_*} API).
     */
    public QueuePairBuilder createQp(QueuePairType type, CompletionQueue sendCq, CompletionQueue recvCq) {
        resource.checkOpen("ibv_create_qp");
        return new QueuePairBuilder(this, type, sendCq, recvCq);
    }

    /**
     * Starts a shared receive queue of at least {@code maxWr} receives ({@code ibv_create_srq(3)} /
     * {@code ibv_create_srq_ex(3)}): set options on the builder, then {@code build()} or {@code buildEx()}. Attach QPs
     * with {@link QueuePairBuilder#srq(SharedReceiveQueue)}.
     */
    public SharedReceiveQueue.Builder createSrq(int maxWr) {
        resource.checkOpen("ibv_create_srq");
        return new SharedReceiveQueue.Builder(this, maxWr);
    }

    /**
     * Allocates a memory window of {@code type} ({@code ibv_alloc_mw(3)}), unbound. Refused up front with
     * {@link UnsupportedVerbException} naming the capability when the device lacks that window type.
     *
     * <p>Errors: {@code ENOMEM} → {@link VerbsException}.
     */
    public MemoryWindow allocMw(MemoryWindowType type) {
        resource.checkOpen("ibv_alloc_mw");
        return MemoryWindow.alloc(this, java.util.Objects.requireNonNull(type, "type"));
    }

    /**
     * Registers the whole address space as one implicit on-demand-paging region
     * ({@code ibv_reg_mr(pd, NULL, SIZE_MAX, access | IBV_ACCESS_ON_DEMAND)}): SGEs and peers then name any mapped
     * address of this process with its lkey/rkey (an SGE's offset is the absolute address); pages are faulted in on
     * use. Refused up front with {@link UnsupportedVerbException} unless the device reports
     * {@code IBV_ODP_SUPPORT_IMPLICIT}.
     */
    public MemoryRegion regImplicitOdpMr(Set<Access> access) {
        java.util.EnumSet<Access> a = access.isEmpty() ? java.util.EnumSet.noneOf(Access.class)
                : java.util.EnumSet.copyOf(access);
        a.add(Access.ON_DEMAND);
        String call = Errors.call("ibv_reg_mr", "addr", "NULL", "length", "SIZE_MAX", "access", a);
        int mask = Access.validate("ibv_reg_mr", a);
        MemorySegment pdHandle = resource.handle("ibv_reg_mr");
        RegistrationChecks.requireOdp(this, call, true);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment mr = LibIbverbs.ibv_reg_mr(errno, pdHandle, MemorySegment.NULL, -1L, mask);
            if (mr.equals(MemorySegment.NULL)) {
                throw Errors.failure(call, Errno.get(errno));
            }
            return MemoryRegion.ofImplicitOdp(this, mr, a);
        }
    }
}
