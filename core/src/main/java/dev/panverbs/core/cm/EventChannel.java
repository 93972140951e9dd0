package dev.panverbs.core.cm;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.NativeLibraryException;
import dev.panverbs.bindings.rdmacm.LibRdmacm;
import dev.panverbs.bindings.rdmacma.rdma_cm_event;
import dev.panverbs.bindings.rdmacma.rdma_event_channel;
import dev.panverbs.core.Context;
import dev.panverbs.core.internal.CloseHelper;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.FileDescriptors;
import dev.panverbs.core.internal.NativeHandles;
import dev.panverbs.core.internal.Resource;
import dev.panverbs.core.internal.Units;
import dev.panverbs.core.internal.ResourceKind;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * {@code struct rdma_event_channel} ({@code rdma_create_event_channel(3)}): the queue rdma_cm reports the events of
 * its IDs on, and the root of every rdma_cm object.
 *
 * <p><b>Events.</b> {@link #poll()} takes the next event without blocking (one thread can serve many IDs);
 * {@link #await(Duration)} blocks up to a timeout. Either copies the event into a {@link CmEvent} and acknowledges
 * it ({@code rdma_ack_cm_event}) before returning it, under the lock that {@code rdma_destroy_id} also takes: an ID
 * therefore never has a reported but unacknowledged event, and destroying it cannot hang (the classic rdma_cm
 * deadlock). The channel's descriptor is non-blocking; waits are {@code poll(2)} slices of at most 100 ms, so a
 * wait sees a {@code close()} from another thread within one slice.
 *
 * <p><b>Lifetimes.</b> Closing the channel closes its IDs (each its QP first, then {@code rdma_destroy_id}), then
 * the {@link Context}s adopted from them ({@link CmId#context()}: non-owning, so everything created through them is
 * closed and the device itself stays librdmacm's), then destroys the channel. Idempotent.
 */
public final class EventChannel implements AutoCloseable {

    private static final long SLICE_MILLIS = 100;

    final ReentrantLock lock = new ReentrantLock();
    final Resource resource;
    private final int fd;
    private final MemorySegment errno = Errno.allocateCapture(Arena.global());
    private final MemorySegment eventOut = Arena.global().allocate(ValueLayout.ADDRESS);
    /** Events copied and acknowledged but not yet handed out (a synchronous wait for another ID took them). */
    private final ArrayDeque<CmEvent> pending = new ArrayDeque<>(); // guarded by lock
    private final Map<Long, CmId> ids = new ConcurrentHashMap<>();
    private final Map<Long, Context> contexts = new LinkedHashMap<>(); // guarded by lock

    private EventChannel(MemorySegment handle) {
        this.fd = rdma_event_channel.fd(handle.reinterpret(rdma_event_channel.sizeof()));
        this.resource = Resource.adopt(ResourceKind.EVENT_CHANNEL, this,
                "EventChannel[fd " + fd + "]", handle, this::destroy);
    }

    /**
     * Creates a channel ({@code rdma_create_event_channel}).
     *
     * @throws dev.panverbs.core.VerbsException        ENODEV when no RDMA device exists or {@code rdma_ucm} is not loaded
     * @throws dev.panverbs.core.MissingLibraryException when librdmacm is not installed
     */
    public static EventChannel create() {
        MemorySegment handle;
        int err;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            handle = LibRdmacm.rdma_create_event_channel(errno);
            err = Errno.get(errno);
        } catch (NativeLibraryException e) {
            throw Errors.missingLibrary("rdma_create_event_channel()", e);
        }
        if (handle.address() == 0) {
            throw Errors.failure("rdma_create_event_channel()", err,
                    "rdma_cm needs /dev/infiniband/rdma_cm (modprobe rdma_ucm) and an RDMA device (rxe: "
                            + "rdma link add rxe0 type rxe netdev <if>)");
        }
        EventChannel channel = new EventChannel(handle);
        FileDescriptors.setNonBlocking(channel.fd, channel.toString());
        return channel;
    }

    /**
     * Creates an ID on this channel ({@code rdma_create_id(3)}).
     *
     * @param portSpace {@link PortSpace#TCP} for RC connections, {@link PortSpace#UDP} for UD
     */
    public CmId createId(PortSpace portSpace) {
        Objects.requireNonNull(portSpace, "portSpace");
        String call = Errors.call("rdma_create_id", "ps", portSpace);
        lock.lock();
        try {
            MemorySegment channel = resource.handle(call);
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
                if (LibRdmacm.rdma_create_id(errno, channel, out, MemorySegment.NULL, portSpace.value()) != 0) {
                    throw Errors.failure(call, Errno.get(errno));
                }
                return register(out.get(ValueLayout.ADDRESS, 0), portSpace);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Wraps a new {@code rdma_cm_id} (created here, or by a CONNECT_REQUEST); called under the lock. */
    private CmId register(MemorySegment id, PortSpace portSpace) {
        CmId wrapped = new CmId(this, id, portSpace);
        ids.put(id.address(), wrapped);
        return wrapped;
    }

    /** Called by a closing ID, under the lock, after {@code rdma_destroy_id}. */
    void forget(long address) {
        ids.remove(address);
    }

    /**
     * The next event, without blocking ({@code rdma_get_cm_event} on the non-blocking descriptor), already
     * acknowledged; {@code null} if none is queued.
     */
    public CmEvent poll() {
        lock.lock();
        try {
            CmEvent e = pending.pollFirst();
            return e != null ? e : take();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The next event {@code wanted} accepts, without blocking; the others read meanwhile stay queued. {@code null}
     * if none is queued.
     */
    CmEvent poll(Predicate<CmEvent> wanted) {
        lock.lock();
        try {
            resource.checkOpen("rdma_get_cm_event");
            return next(wanted);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The first queued, else newly read, event {@code wanted} accepts; the others read meanwhile are queued in order.
     * {@code null} if none. Called under the lock.
     */
    private CmEvent next(Predicate<CmEvent> wanted) {
        for (Iterator<CmEvent> it = pending.iterator(); it.hasNext(); ) {
            CmEvent e = it.next();
            if (wanted.test(e)) {
                it.remove();
                return e;
            }
        }
        CmEvent e;
        while ((e = take()) != null) {
            if (wanted.test(e)) {
                return e;
            }
            pending.addLast(e);
        }
        return null;
    }

    /**
     * The next event, waiting up to {@code timeout} for one; already acknowledged.
     *
     * @throws CmTimeoutException    if none arrived in time
     * @throws IllegalStateException if the channel is or gets closed
     */
    public CmEvent await(Duration timeout) {
        return await(e -> true, timeout, "rdma_get_cm_event", null, resource);
    }

    /**
     * Waits for the next event that {@code wanted} accepts; the others stay queued for {@link #poll()}. Throws
     * {@link IllegalStateException} within a slice once {@code waiter} (the channel or the awaiting ID) is closed,
     * whatever the timeout: no event of a destroyed ID can arrive any more.
     */
    CmEvent await(Predicate<CmEvent> wanted, Duration timeout, String call, CmEventType expected, Resource waiter) {
        Objects.requireNonNull(timeout, "timeout");
        long deadline = System.nanoTime() + Units.clampedNanos(timeout);
        while (true) {
            lock.lock();
            try {
                resource.checkOpen(call);
                waiter.checkOpen(call);
                CmEvent e = next(wanted);
                if (e != null) {
                    return e;
                }
            } finally {
                lock.unlock();
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new CmTimeoutException(call, expected, timeout);
            }
            try {
                FileDescriptors.pollIn(fd, (int) Math.min(SLICE_MILLIS, Math.max(1, left / 1_000_000L)), toString());
            } catch (RuntimeException closedUnderUs) {
                resource.checkOpen(call); // a close from another thread: say so
                waiter.checkOpen(call);
                throw closedUnderUs;
            }
        }
    }

    /**
     * One {@code rdma_get_cm_event}, copied and acknowledged; {@code null} on EAGAIN. Called under the lock: an
     * {@code rdma_destroy_id} on another thread waits until the event it might have to wait for is acknowledged.
     */
    private CmEvent take() {
        MemorySegment channel = resource.handle("rdma_get_cm_event");
        if (LibRdmacm.rdma_get_cm_event(errno, channel, eventOut) != 0) {
            int e = Errno.get(errno);
            if (e == Errno.EAGAIN || e == Errno.EINTR) {
                return null;
            }
            throw Errors.failure(Errors.call("rdma_get_cm_event", "channel", this), e);
        }
        MemorySegment ev = eventOut.get(ValueLayout.ADDRESS, 0).reinterpret(rdma_cm_event.sizeof());
        CmEvent copy;
        try {
            copy = copy(ev);
        } finally {
            if (LibRdmacm.rdma_ack_cm_event(errno, ev) != 0) {
                throw Errors.failure("rdma_ack_cm_event()", Errno.get(errno));
            }
        }
        return copy;
    }

    private CmEvent copy(MemorySegment ev) {
        CmEventType type = CmEventType.of(rdma_cm_event.event(ev));
        MemorySegment idHandle = rdma_cm_event.id(ev);
        MemorySegment listen = rdma_cm_event.listen_id(ev);
        CmId listener = listen.address() == 0 ? null : ids.get(listen.address());
        CmId id = ids.get(idHandle.address());
        if (id == null && type == CmEventType.CONNECT_REQUEST && listener != null) {
            id = register(idHandle, listener.portSpace()); // the passive side's new ID: ours to destroy
        }
        if (id == null) {
            throw new IllegalStateException("rdma_get_cm_event: " + type + " for an rdma_cm_id this channel does not "
                    + "know (0x" + Long.toHexString(idHandle.address()) + ")");
        }
        MemorySegment param = ev.asSlice(rdma_cm_event.param$offset(), rdma_cm_event.param.layout().byteSize());
        boolean ud = id.portSpace() == PortSpace.UDP || type == CmEventType.MULTICAST_JOIN
                || type == CmEventType.MULTICAST_ERROR;
        ConnectionParameters conn = ud ? null : ConnectionParameters.fromNative(rdma_cm_event.param.conn(param));
        CmEvent.Datagram datagram = ud ? CmEvent.Datagram.fromNative(rdma_cm_event.param.ud(param)) : null;
        return new CmEvent(type, rdma_cm_event.status(ev), id, listener, conn, datagram);
    }

    /** The context adopted for {@code verbs} ({@code cm_id->verbs}), one per device for this channel. */
    Context context(MemorySegment verbs) {
        lock.lock();
        try {
            resource.checkOpen("CmId.context");
            return contexts.computeIfAbsent(verbs.address(), a -> NativeHandles.access().adoptContext(verbs));
        } finally {
            lock.unlock();
        }
    }

    /** The descriptor events arrive on ({@code channel->fd}), for an external {@code poll}/selector loop. */
    public int fd() {
        return fd;
    }

    /** Whether {@link #close()} has run. */
    public boolean isClosed() {
        return resource.isClosed();
    }

    private void destroy(MemorySegment handle) {
        // the IDs (children) are closed by now; then what was created through the adopted contexts
        lock.lock();
        try {
            CloseHelper.closeAll(contexts.values());
        } finally {
            contexts.clear();
            pending.clear();
            LibRdmacm.rdma_destroy_event_channel(handle);
            lock.unlock();
        }
    }

    /** Closes the IDs, the adopted contexts' children, and the channel ({@code rdma_destroy_event_channel}). */
    @Override
    public void close() {
        resource.close();
    }

    @Override
    public String toString() {
        return resource.description();
    }
}
