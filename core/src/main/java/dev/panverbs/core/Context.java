package dev.panverbs.core;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.LibIbverbs;
import dev.panverbs.bindings.ibverbs.VerbsContextInline;
import dev.panverbs.bindings.ibverbs.VerbsInline;
import dev.panverbs.bindings.verbs.ibv_async_event;
import dev.panverbs.bindings.verbs.ibv_context;
import dev.panverbs.bindings.verbs.ibv_device_attr_ex;
import dev.panverbs.bindings.verbs.ibv_gid_entry;
import dev.panverbs.bindings.verbs.ibv_port_attr;
import dev.panverbs.bindings.verbs.ibv_qp;
import dev.panverbs.bindings.verbs.verbs_h;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.FileDescriptors;
import dev.panverbs.core.internal.ResourceKind;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * An open device ({@code struct ibv_context}, {@code ibv_open_device(3)}): the root every other verbs object
 * is created from, and the source of device, port and GID queries and of asynchronous events. Made by
 * {@link Device#open()}; closing it ({@code ibv_close_device(3)}) first closes everything created from it:
 * protection domains (with their QPs, AHs and MRs), CQs, completion channels.
 *
 * <pre>{@code
 * try (Context ctx = Device.first().open()) {
 *     ProtectionDomain pd = ctx.allocPd();
 *     MemoryRegion mr = pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE));
 *     ...
 * } // closes mr, then pd, then the context
 * }</pre>
 *
 * <p>Thread safety: libibverbs contexts are thread-safe; every method may be called from any thread.
 * {@link #close()} must not race with calls on this context or its children, except async-event waits,
 * which it interrupts (they then throw {@link IllegalStateException}).
 */
public final class Context extends VerbsObject {

    /** Longest time an async-event wait sleeps in poll(2) before re-checking that the context is open. */
    private static final int POLL_SLICE_MILLIS = 100;

    private final Device device;
    private final int numCompVectors;
    private final int asyncFd;
    private final AsyncState async;
    private volatile DeviceAttributes attributes;
    private volatile String dmabufRefusal; // null: not probed yet; "": supported

    Context(Device device, MemorySegment handle) {
        this(device, handle, new AsyncState(), true);
    }

    /**
     * Wraps an {@code ibv_context} that another library owns (rdma_cm's {@code cm_id->verbs}): closing this object
     * closes what was created through it, never the context itself ({@code ibv_close_device} is its owner's).
     */
    static Context adopt(MemorySegment handle) {
        MemorySegment s = handle.reinterpret(ibv_context.sizeof());
        return new Context(Device.of(ibv_context.device(s)), handle, new AsyncState(), false);
    }

    private Context(Device device, MemorySegment handle, AsyncState async, boolean owning) {
        super(ResourceKind.CONTEXT, "Context[" + device.name() + (owning ? "" : ", not owned") + "]", handle,
                owning ? async::closeDevice : h -> { });
        this.device = device;
        this.async = async;
        MemorySegment s = handle.reinterpret(ibv_context.sizeof());
        this.numCompVectors = ibv_context.num_comp_vectors(s);
        this.asyncFd = ibv_context.async_fd(s);
    }

    /** Serialises async-event reads with {@code ibv_close_device}, so a wait never reads a freed context. */
    private static final class AsyncState {
        final ReentrantLock lock = new ReentrantLock();
        boolean nonBlocking;

        void closeDevice(MemorySegment ctx) {
            lock.lock();
            try {
                int rc = LibIbverbs.ibv_close_device(ctx);
                if (rc != 0) {
                    throw Errors.failure("ibv_close_device()", rc);
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /** The device this context was opened on. */
    public Device device() {
        return device;
    }

    /**
     * The number of completion vectors (interrupt vectors) CQs may be spread over
     * ({@code ibv_context.num_comp_vectors}); a CQ's {@code compVector} must be below it.
     */
    public int numCompVectors() {
        return numCompVectors;
    }

    /**
     * Queries the device's attributes and capabilities ({@code ibv_query_device_ex(3)}, which falls back to
     * {@code ibv_query_device(3)} for providers without the extended query). The result is immutable.
     *
     * <p>Errors: {@code EINVAL}, {@code ENOMEM} → {@link VerbsException}. Thread-safe.
     */
    public DeviceAttributes queryDevice() {
        MemorySegment ctx = resource.handle("ibv_query_device_ex");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_device_attr_ex.layout());
            int rc = VerbsContextInline.ibv_query_device_ex(ctx, MemorySegment.NULL, attr);
            if (rc != 0) {
                throw Errors.failure(Errors.call("ibv_query_device_ex", "device", device.name()), rc);
            }
            DeviceAttributes a = DeviceAttributes.read(attr);
            attributes = a;
            return a;
        }
    }

    /** The attributes if already queried (no verb), else null: ODP rules of queues over a fake provider. */
    DeviceAttributes knownAttributes() {
        return attributes;
    }

    /** The attributes of the last {@link #queryDevice()}, querying once if needed (capability checks). */
    DeviceAttributes attributes() {
        DeviceAttributes a = attributes;
        return a != null ? a : queryDevice();
    }

    /**
     * Queries a port's attributes ({@code ibv_query_port(3)}).
     *
     * <p>Errors: {@code EINVAL} (no such port) → {@link VerbsException}. Thread-safe.
     *
     * @param portNum the port, 1-based
     */
    public PortAttributes queryPort(int portNum) {
        checkPort("ibv_query_port", portNum);
        MemorySegment ctx = resource.handle("ibv_query_port");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_port_attr.layout());
            int rc = VerbsContextInline.ibv_query_port(ctx, (byte) portNum, attr);
            if (rc != 0) {
                throw Errors.failure(Errors.call("ibv_query_port", "device", device.name(), "port", portNum), rc,
                        rc == verbs_h.EINVAL() ? "ports are numbered from 1 to DeviceAttributes.physPortCnt()" : null);
            }
            return PortAttributes.read(portNum, attr);
        }
    }

    /**
     * Reads one GID ({@code ibv_query_gid(3)}); an empty slot reads as {@link Gid#ZERO}. GIDs are valid only
     * while the port is ACTIVE or ARMED.
     *
     * <p>Errors: {@code EINVAL} (port or index out of range) → {@link VerbsException}.
     */
    public Gid queryGid(int portNum, int index) {
        checkPort("ibv_query_gid", portNum);
        MemorySegment ctx = resource.handle("ibv_query_gid");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment gid = arena.allocate(16, 8);
            int rc = LibIbverbs.ibv_query_gid(errno, ctx, (byte) portNum, index, gid);
            if (rc != 0) {
                throw Errors.failure(Errors.call("ibv_query_gid", "port", portNum, "index", index), Errno.get(errno));
            }
            return Gid.of(gid.toArray(ValueLayout.JAVA_BYTE));
        }
    }

    /**
     * Reads one GID table entry with its type and netdev ({@code ibv_query_gid_ex(3)}); empty when the slot
     * is unused ({@code ENODATA}).
     *
     * <p>Errors: {@code EINVAL} (port or index out of range), {@code EOPNOTSUPP} (kernel before 5.9 →
     * {@link UnsupportedVerbException}).
     */
    public Optional<GidEntry> queryGidEntry(int portNum, int index) {
        checkPort("ibv_query_gid_ex", portNum);
        MemorySegment ctx = resource.handle("ibv_query_gid_ex");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment entry = arena.allocate(ibv_gid_entry.layout());
            int rc = VerbsInline.ibv_query_gid_ex(ctx, portNum, index, entry, 0);
            if (rc == verbs_h.ENODATA()) {
                return Optional.empty();
            }
            if (rc != 0) {
                throw Errors.failure(Errors.call("ibv_query_gid_ex", "port", portNum, "index", index), rc);
            }
            return Optional.of(readGidEntry(entry));
        }
    }

    /**
     * Reads the valid entries of every port's GID table in one call ({@code ibv_query_gid_table(3)}).
     *
     * <p>Errors: {@code EOPNOTSUPP} (kernel before 5.9) → {@link UnsupportedVerbException}; others →
     * {@link VerbsException}.
     */
    public List<GidEntry> queryGidTable() {
        int max = 0;
        DeviceAttributes a = queryDevice();
        for (int p = 1; p <= a.physPortCnt(); p++) {
            max += queryPort(p).gidTblLen();
        }
        MemorySegment ctx = resource.handle("ibv_query_gid_table");
        try (Arena arena = Arena.ofConfined()) {
            long size = ibv_gid_entry.sizeof();
            MemorySegment entries = arena.allocate(size * Math.max(1, max), 8);
            long n = VerbsInline.ibv_query_gid_table(ctx, entries, max, 0);
            if (n < 0) {
                throw Errors.failure(Errors.call("ibv_query_gid_table", "max_entries", max), (int) n);
            }
            List<GidEntry> table = new ArrayList<>((int) n);
            for (long i = 0; i < n; i++) {
                table.add(readGidEntry(entries.asSlice(i * size, size)));
            }
            return List.copyOf(table);
        }
    }

    /**
     * The GID index to use for RoCE v2 traffic from {@code address} on {@code portNum}: the ROCE_V2 entry
     * holding the address (an IPv4 address as {@code ::ffff:a.b.c.d}); what perftest's {@code -x} selects.
     *
     * @throws IllegalArgumentException if no such entry exists, listing the RoCE v2 GIDs present
     */
    public int roceV2GidIndex(int portNum, InetAddress address) {
        List<GidEntry> table = queryGidTable();
        return GidEntry.findRoceV2(table, portNum, address).map(GidEntry::index).orElseThrow(() ->
                new IllegalArgumentException("no RoCE v2 GID for " + address.getHostAddress() + " on " + device.name()
                        + " port " + portNum + "; RoCE v2 GIDs present: " + table.stream()
                        .filter(e -> e.type() == GidType.ROCE_V2 && e.portNum() == portNum)
                        .map(e -> e.index() + "=" + e.gid().toInetAddress().getHostAddress())
                        .collect(Collectors.joining(", ", "[", "]"))
                        + "; is the address assigned to the netdev under this device, and the port ACTIVE?"));
    }

    /**
     * The address vector that answers the sender of a UD receive ({@code ibv_init_ah_from_wc(3)}): the sender's GID
     * (from the GRH: a RoCE v2 IPv4 or IPv6 header, or an IB/RoCE v1 GRH) as destination, the local GID the packet
     * was sent to as source index, its hop limit and traffic class; LID, SL and path bits from the completion.
     * {@link ProtectionDomain#createAhFromWc} makes the address handle in one step.
     *
     * @param portNum the port the receiving QP is bound to
     * @param wc      a successful receive completion of a UD QP
     * @param grh     the first 40 bytes of the receive's buffer; may be {@code null} without
     *                {@link WorkCompletion#hasGrh()}
     * @throws IllegalArgumentException a failed or non-receive completion, or a missing GRH
     * @throws VerbsException           {@code EINVAL} (destination GID not in the table, or multicast),
     *                                  {@code EPROTONOSUPPORT} (not a GRH)
     */
    public AddressVector initAhFromWc(int portNum, WorkCompletion wc, MemorySegment grh) {
        return ReplyAddress.init(this, portNum, wc, grh, "ibv_init_ah_from_wc");
    }

    private static GidEntry readGidEntry(MemorySegment e) {
        return new GidEntry(Gid.of(ibv_gid_entry.gid(e).toArray(ValueLayout.JAVA_BYTE)), ibv_gid_entry.gid_index(e),
                ibv_gid_entry.port_num(e), GidType.of(ibv_gid_entry.gid_type(e)), ibv_gid_entry.ndev_ifindex(e));
    }

    private void checkPort(String verb, int portNum) {
        if (portNum < 1 || portNum > 255) {
            throw new IllegalArgumentException(Errors.call(verb, "port", portNum) + ": ports are numbered from 1 to 255");
        }
        resource.checkOpen(verb);
        DeviceChecks.port(this, Errors.call(verb, "device", device.name(), "port", portNum), portNum);
    }

    /**
     * Waits for the next asynchronous event ({@code ibv_get_async_event(3)}) and acknowledges it
     * ({@code ibv_ack_async_event(3)}) before returning, so it never delays the destruction of the object
     * it names. Blocks until an event arrives.
     *
     * <p>Errors: {@link IllegalStateException} when the context is closed (also while waiting).
     * Thread-safe: concurrent waiters each receive distinct events.
     */
    public AsyncEvent getAsyncEvent() {
        return awaitAsyncEvent(-1).orElseThrow(() -> new AssertionError("an unbounded wait returned nothing"));
    }

    /**
     * Waits up to {@code timeout} for the next asynchronous event; empty on timeout. A zero timeout only
     * checks. See {@link #getAsyncEvent()}.
     */
    public Optional<AsyncEvent> getAsyncEvent(Duration timeout) {
        long millis = dev.panverbs.core.internal.Units.clampedMillis(timeout);
        return awaitAsyncEvent(millis);
    }

    /**
     * The asynchronous events as a stream, each acknowledged; the stream ends when no event arrives for
     * {@code idleTimeout} or the context closes. For a monitoring thread:
     * {@code ctx.asyncEvents(Duration.ofSeconds(1)).forEach(log::warn)}.
     */
    public Stream<AsyncEvent> asyncEvents(Duration idleTimeout) {
        return Stream.iterate(getAsyncEventUnlessClosed(idleTimeout), Optional::isPresent,
                        previous -> getAsyncEventUnlessClosed(idleTimeout))
                .map(Optional::get);
    }

    private Optional<AsyncEvent> getAsyncEventUnlessClosed(Duration timeout) {
        return isClosed() ? Optional.empty() : getAsyncEvent(timeout);
    }

    private Optional<AsyncEvent> awaitAsyncEvent(long timeoutMillis) {
        long deadline = timeoutMillis < 0 ? Long.MAX_VALUE : System.nanoTime() + timeoutMillis * 1_000_000L;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment event = arena.allocate(ibv_async_event.layout());
            while (true) {
                async.lock.lock();
                try {
                    MemorySegment ctx = resource.handle("ibv_get_async_event");
                    if (!async.nonBlocking) {
                        FileDescriptors.setNonBlocking(asyncFd, description() + " async_fd");
                        async.nonBlocking = true;
                    }
                    int rc = LibIbverbs.ibv_get_async_event(errno, ctx, event);
                    if (rc == 0) {
                        return Optional.of(copyAndAck(event));
                    }
                    int e = Errno.get(errno);
                    if (e != verbs_h.EAGAIN()) {
                        throw Errors.failure(Errors.call("ibv_get_async_event", "device", device.name()), e);
                    }
                } finally {
                    async.lock.unlock();
                }
                long remaining = deadline == Long.MAX_VALUE ? POLL_SLICE_MILLIS
                        : (deadline - System.nanoTime()) / 1_000_000L;
                if (remaining <= 0) {
                    return Optional.empty();
                }
                try {
                    FileDescriptors.pollIn(asyncFd, (int) Math.min(POLL_SLICE_MILLIS, remaining), description() + " async_fd");
                } catch (VerbsException e) {
                    resource.checkOpen("ibv_get_async_event"); // the fd went away because the context closed
                    throw e;
                }
            }
        }
    }

    private AsyncEvent copyAndAck(MemorySegment event) {
        AsyncEventType type = AsyncEventType.of(ibv_async_event.event_type(event));
        MemorySegment element = ibv_async_event.element(event);
        int port = 0;
        int qpNum = -1;
        Object owner = null;
        switch (type.element()) {
            case PORT -> port = ibv_async_event.element.port_num(element);
            case QP -> {
                MemorySegment qp = ibv_async_event.element.qp(element);
                qpNum = ibv_qp.qp_num(qp.reinterpret(ibv_qp.sizeof()));
                owner = resource.findOwner(ResourceKind.QUEUE_PAIR, qp.address());
            }
            case CQ -> owner = resource.findOwner(ResourceKind.COMPLETION_QUEUE,
                    ibv_async_event.element.cq(element).address());
            case SRQ -> owner = resource.findOwner(ResourceKind.SHARED_RECEIVE_QUEUE,
                    ibv_async_event.element.srq(element).address());
            case WQ -> owner = resource.findOwner(ResourceKind.WORK_QUEUE,
                    ibv_async_event.element.wq(element).address());
            case DEVICE -> { }
        }
        // every event is acked, including those of objects unknown to the registry
        LibIbverbs.ibv_ack_async_event(event);
        return new AsyncEvent(type, port, owner, qpNum);
    }

    /**
     * Allocates a protection domain ({@code ibv_alloc_pd(3)}).
     *
     * <p>Errors: {@code ENOMEM} → {@link VerbsException}. Thread-safe.
     *
     * @throws IllegalStateException if this context is closed
     */
    public ProtectionDomain allocPd() {
        return ProtectionDomain.alloc(this);
    }

    /**
     * Creates a completion channel ({@code ibv_create_comp_channel(3)}): a file descriptor on which the
     * completion events of the CQs created with it are delivered. Pass it to the CQ builder, arm the CQ
     * ({@code ibv_req_notify_cq}), then wait on the channel.
     *
     * <p>Errors: {@code EMFILE}/{@code ENFILE} (out of file descriptors), {@code ENOMEM} → {@link VerbsException}.
     */
    public CompletionChannel createCompChannel() {
        return CompletionChannel.create(this);
    }

    /**
     * Closes everything created from this context (see the cascade rules of every verbs object), then the
     * context ({@code ibv_close_device(3)}). A thread waiting for an async event wakes within 100 ms and
     * throws {@link IllegalStateException}.
     */
    @Override
    public void close() {
        super.close();
    }

    /**
     * Refuses DMA-BUF registration up front when the provider or kernel lacks it. rdma-core has no capability
     * bit for it, so the first call probes once: {@code ibv_reg_dmabuf_mr} with fd -1 fails with EBADF where
     * the path exists (the kernel rejects the fd) and with EOPNOTSUPP/EPROTONOSUPPORT where it does not (the
     * provider's dummy op or the kernel's missing method).
     */
    void requireDmabuf(ProtectionDomain pd, String call) {
        String refusal = dmabufRefusal;
        if (refusal == null) {
            refusal = probeDmabuf(pd);
            dmabufRefusal = refusal;
        }
        if (!refusal.isEmpty()) {
            throw Errors.unsupported(call, Errors.capabilityOf("ibv_reg_dmabuf_mr"), refusal);
        }
    }

    private String probeDmabuf(ProtectionDomain pd) {
        MemorySegment pdHandle = pd.resource.handle("ibv_reg_dmabuf_mr");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment mr;
            try {
                mr = LibIbverbs.ibv_reg_dmabuf_mr(errno, pdHandle, 0, 4096, 0, -1, verbs_h.IBV_ACCESS_LOCAL_WRITE());
            } catch (dev.panverbs.bindings.NativeLibraryException e) {
                return "libibverbs has no ibv_reg_dmabuf_mr (rdma-core before 34): " + e.getMessage();
            }
            if (!mr.equals(MemorySegment.NULL)) {
                LibIbverbs.ibv_dereg_mr(mr); // cannot happen with fd -1; never leak it if it does
                return "";
            }
            int e = Errno.get(errno);
            if (e == verbs_h.EOPNOTSUPP() || e == verbs_h.EPROTONOSUPPORT() || e == verbs_h.ENOSYS()) {
                return "device " + device.name() + " does not implement it (probe ibv_reg_dmabuf_mr(fd=-1) answered "
                        + Errno.name(e) + "); DMA-BUF registration needs Linux 5.12+ and a provider that implements "
                        + "reg_dmabuf_mr (mlx5, efa, ...; not rxe)";
            }
            return "";
        }
    }

    String description() {
        return resource.description();
    }

    /**
     * Allocates {@code length} bytes of on-device memory ({@code ibv_alloc_dm(3)}). Refused up front with
     * {@link UnsupportedVerbException} when the device's {@code max_dm_size} is 0, and with {@code EINVAL} above it.
     */
    public DeviceMemory allocDm(long length) {
        resource.checkOpen("ibv_alloc_dm");
        return DeviceMemory.alloc(this, length);
    }

    /**
     * Opens a private XRC domain ({@code ibv_open_xrcd(3)}, no file). Refused up front with
     * {@link UnsupportedVerbException} when the device lacks {@code IBV_DEVICE_XRC}.
     */
    public XrcDomain openXrcd() {
        resource.checkOpen("ibv_open_xrcd");
        return XrcDomain.open(this);
    }

    /**
     * Starts a completion queue of at least {@code cqe} entries ({@code ibv_create_cq(3)} /
     * {@code ibv_create_cq_ex(3)}): set options on the builder, then {@code build()} or {@code buildEx()}.
     */
    public CompletionQueue.Builder createCq(int cqe) {
        resource.checkOpen("ibv_create_cq");
        return new CompletionQueue.Builder(this, cqe);
    }
}
