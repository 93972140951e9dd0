package dev.panverbs.core.cm;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.rdmacm.LibRdmacm;
import dev.panverbs.bindings.rdmacma.rdma_addr;
import dev.panverbs.bindings.rdmacma.rdma_cma_h;
import dev.panverbs.bindings.rdmacma.rdma_cm_id;
import dev.panverbs.bindings.rdmacma.rdma_route;
import dev.panverbs.bindings.verbs.ibv_context;
import dev.panverbs.bindings.verbs.ibv_device;
import dev.panverbs.bindings.verbs.ibv_qp_attr;
import dev.panverbs.bindings.verbs.verbs_h;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairAttributes;
import dev.panverbs.core.QueuePairCapabilities;
import dev.panverbs.core.QueuePairState;
import dev.panverbs.core.SharedReceiveQueue;
import dev.panverbs.core.VerbsException;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.NativeHandles;
import dev.panverbs.core.internal.Resource;
import dev.panverbs.core.internal.ResourceKind;
import dev.panverbs.core.internal.Units;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * {@code struct rdma_cm_id} ({@code rdma_create_id(3)}): one rdma_cm endpoint, made by
 * {@link EventChannel#createId} or, on the passive side, by a CONNECT_REQUEST ({@link CmEvent#id()}).
 *
 * <p>Active side: {@link #resolve} (address then route), {@link #context()} for the PD and CQs,
 * {@link #createQp}, {@link #connect(ConnectionParameters, Duration)}. Passive side: {@link #bindAddress},
 * {@link #listen}, {@link #await} a CONNECT_REQUEST, then on its new ID {@code createQp} and {@link #accept} (or
 * {@link #reject}). Either side: {@link #disconnect()}, then close.
 *
 * <p>The asynchronous calls ({@link #resolveAddress}, {@link #resolveRoute}, {@link #connect(ConnectionParameters)})
 * return at once and their outcome is an event on the channel; the synchronous forms wait for it and turn an error
 * event into an exception.
 *
 * <p>Lifetimes: the ID owns the QP {@link #createQp} made (closing the ID closes it first, destroying it with
 * {@code ibv_destroy_qp} and clearing {@code id->qp}, as {@code rdma_destroy_qp} does but with the error reported);
 * the channel owns the ID. {@link #close()} ({@code rdma_destroy_id}) never waits for an unacknowledged event: the
 * channel acknowledges each event before handing it out. Any thread may close it: a verb or read of the ID in
 * progress on another thread finishes first, later ones throw {@link IllegalStateException} naming the ID and verb.
 */
public final class CmId implements AutoCloseable {

    private final EventChannel channel;
    private final PortSpace portSpace;
    private final MemorySegment id;
    final Resource resource;
    /**
     * Held around every native call on the ID and every read of its memory; {@code rdma_destroy_id} takes it too.
     * Without it a verb or accessor that passed the open check on one thread would run on the freed
     * {@code rdma_cm_id} when another thread closes the ID (no verb here blocks, so close waits microseconds).
     */
    private final ReentrantLock calls = new ReentrantLock();
    private final CmIdQueuePair ownQp;

    CmId(EventChannel channel, MemorySegment handle, PortSpace portSpace) {
        this.channel = channel;
        this.portSpace = portSpace;
        this.id = handle.reinterpret(rdma_cm_id.sizeof());
        this.resource = Resource.adopt(ResourceKind.CM_ID, this,
                "CmId[" + portSpace + " " + Units.hex(handle.address()) + "]", handle, this::destroy, channel.resource);
        this.ownQp = new CmIdQueuePair(this, id, resource, calls, portSpace);
    }

    /** The port space the ID was created in. */
    public PortSpace portSpace() {
        return portSpace;
    }

    /** The channel its events arrive on. */
    public EventChannel channel() {
        return channel;
    }

    // ---- addresses ----

    /** Binds to a local address and port ({@code rdma_bind_addr(3)}); port 0 picks one. */
    public void bindAddress(InetSocketAddress local) {
        Objects.requireNonNull(local, "local (port 0 picks a port; the wildcard address is new InetSocketAddress(0))");
        String call = Errors.call("rdma_bind_addr", "id", this, "addr", local);
        try (Arena arena = LockedArena.open(calls)) {
            MemorySegment errno = Errno.allocateCapture(arena);
            if (LibRdmacm.rdma_bind_addr(errno, resource.handle(call), SocketAddresses.toNative(local, arena)) != 0) {
                throw Errors.failure(call, Errno.get(errno), bindHint(Errno.get(errno)));
            }
        }
    }

    /**
     * Sets the IP type of service of the ID's traffic ({@code rdma_set_option(3)}, {@code RDMA_OPTION_ID_TOS}): on
     * RoCE the DSCP/ECN byte of the packets and the traffic class of the resolved route. Set it before
     * {@link #resolveRoute} (rdma-core's tools do so on ADDR_RESOLVED) or {@link #listen}.
     *
     * @param tos 0 to 255
     */
    public void setTypeOfService(int tos) {
        if (tos < 0 || tos > 255) {
            throw new IllegalArgumentException("rdma_set_option(RDMA_OPTION_ID_TOS): the TOS is a uint8_t, got " + tos);
        }
        String call = Errors.call("rdma_set_option", "id", this, "option", "RDMA_OPTION_ID_TOS", "tos", tos);
        try (Arena arena = LockedArena.open(calls)) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment value = arena.allocate(1);
            value.set(ValueLayout.JAVA_BYTE, 0, (byte) tos);
            if (LibRdmacm.rdma_set_option(errno, resource.handle(call), rdma_cma_h.RDMA_OPTION_ID(),
                    rdma_cma_h.RDMA_OPTION_ID_TOS(), value, 1) != 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
        }
    }

    /** Listens for connection requests ({@code rdma_listen(3)}); bind first. They arrive as CONNECT_REQUEST events. */
    public void listen(int backlog) {
        String call = Errors.call("rdma_listen", "id", this, "backlog", backlog);
        try (Arena arena = LockedArena.open(calls)) {
            MemorySegment errno = Errno.allocateCapture(arena);
            if (LibRdmacm.rdma_listen(errno, resource.handle(call), backlog) != 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
        }
    }

    /**
     * Starts resolving {@code destination} to a local device and port ({@code rdma_resolve_addr(3)}); the result
     * is an ADDR_RESOLVED or ADDR_ERROR event. {@code source} may be {@code null} (the route decides).
     */
    public void resolveAddress(InetSocketAddress source, InetSocketAddress destination, Duration timeout) {
        Objects.requireNonNull(destination, "destination");
        String call = Errors.call("rdma_resolve_addr", "id", this, "src", source, "dst", destination, "timeout_ms",
                Units.clampedMillis(timeout));
        try (Arena arena = LockedArena.open(calls)) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment src = source == null ? MemorySegment.NULL : SocketAddresses.toNative(source, arena);
            if (LibRdmacm.rdma_resolve_addr(errno, resource.handle(call), src,
                    SocketAddresses.toNative(destination, arena), Units.clampedMillis(timeout)) != 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
        }
    }

    /** Starts resolving the route to the resolved address ({@code rdma_resolve_route(3)}): ROUTE_RESOLVED or ROUTE_ERROR. */
    public void resolveRoute(Duration timeout) {
        String call = Errors.call("rdma_resolve_route", "id", this, "timeout_ms", Units.clampedMillis(timeout));
        try (Arena arena = LockedArena.open(calls)) {
            MemorySegment errno = Errno.allocateCapture(arena);
            if (LibRdmacm.rdma_resolve_route(errno, resource.handle(call), Units.clampedMillis(timeout)) != 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
        }
    }

    /**
     * Resolves address then route and waits for both, each within {@code timeout} (plus one second for the event to
     * be delivered).
     *
     * @throws CmEventException   on ADDR_ERROR or ROUTE_ERROR (unreachable address)
     * @throws CmTimeoutException if an event does not arrive in time
     */
    public void resolve(InetSocketAddress destination, Duration timeout) {
        resolveAddress(null, destination, timeout);
        await(CmEventType.ADDR_RESOLVED, timeout.plusSeconds(1));
        resolveRoute(timeout);
        await(CmEventType.ROUTE_RESOLVED, timeout.plusSeconds(1));
    }

    /** The local address ({@code id->route.addr.src_addr}), or {@code null} before bind/resolve. */
    public InetSocketAddress localAddress() {
        return address(rdma_addr.src_addr$offset());
    }

    /** The peer's address ({@code id->route.addr.dst_addr}), or {@code null} before it is known. */
    public InetSocketAddress peerAddress() {
        return address(rdma_addr.dst_addr$offset());
    }

    private InetSocketAddress address(long within) {
        calls.lock();
        try {
            resource.checkOpen("rdma_cm_id.route.addr");
            long at = rdma_cm_id.route$offset() + rdma_route.addr$offset() + within;
            return SocketAddresses.fromNative(id.asSlice(at));
        } finally {
            calls.unlock();
        }
    }

    /** The port of the device the ID is bound to ({@code id->port_num}), 0 before bind/resolve. */
    public int portNum() {
        calls.lock();
        try {
            resource.checkOpen("rdma_cm_id.port_num");
            return Byte.toUnsignedInt(rdma_cm_id.port_num(id));
        } finally {
            calls.unlock();
        }
    }

    /**
     * The verbs context of the device the ID is bound to ({@code id->verbs}), adopted without ownership: create the
     * PD, CQs and MRs for {@link #createQp} through it. One per device for the channel; closed (its children
     * destroyed, the device left to librdmacm) when the channel closes.
     *
     * @throws IllegalStateException before the ID is bound to a device (bind, resolve, or a CONNECT_REQUEST)
     */
    public Context context() {
        calls.lock();
        try {
            resource.checkOpen("rdma_cm_id.verbs");
            MemorySegment verbs = rdma_cm_id.verbs(id);
            if (verbs.address() == 0) {
                throw new IllegalStateException("rdma_cm_id.verbs: " + this + " is not bound to a device yet; resolve "
                        + "the address or bind to a local RDMA address first");
            }
            return channel.context(verbs);
        } finally {
            calls.unlock();
        }
    }

    // ---- the QP ----

    /**
     * Creates the ID's QP ({@code rdma_create_qp(3)}): {@link PortSpace#qpType()}, on {@code pd} and the CQs, which
     * must come from {@link #context()}. rdma_cm moves it to INIT (RC; connect/accept take it to RTS) or RTS (UD,
     * qkey {@code RDMA_UDP_QKEY}). The ID owns it; it is also a child of {@code pd} and the CQs, as any QP.
     *
     * @throws IllegalStateException if the ID already has a QP
     */
    public QueuePair createQp(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                              QueuePairCapabilities capabilities) {
        return createQp(pd, sendCq, recvCq, null, capabilities);
    }

    /**
     * {@link #createQp(ProtectionDomain, CompletionQueue, CompletionQueue, QueuePairCapabilities)} with the QP's
     * receives taken from {@code srq} ({@code ibv_qp_init_attr.srq}; the receive capabilities are ignored), as
     * {@code QueuePairBuilder.srq} does for a QP of its own; {@code null} gives the QP a receive queue.
     *
     * @throws IllegalArgumentException if {@code srq} belongs to another PD
     */
    public QueuePair createQp(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                              SharedReceiveQueue srq, QueuePairCapabilities capabilities) {
        String call = Errors.call("rdma_create_qp", "id", this, "pd", pd, "cap", capabilities, "srq", srq);
        return ownQp.create(call, pd, sendCq, recvCq, srq, capabilities);
    }

    /**
     * The attributes that take a QP of this ID's connection to {@code state} ({@code rdma_init_qp_attr(3)}): for a
     * QP the application created itself (with {@code ProtectionDomain.createQp}, not {@link #createQp}), which it
     * moves with {@link QueuePair#modify}: INIT (port, pkey, access) before connecting or accepting, RTR (the path,
     * MTU, peer QP number and PSN) and RTS once the CM exchanged them (on the active side: on CONNECT_RESPONSE, then
     * {@link #establish}; on the passive side: before {@link #accept}). Connect and accept then carry the QP's number
     * in {@link ConnectionParameters#withQpNum}.
     *
     * <p>Asked too early (RTR before the peer's request or reply), rdma_cm answers with what it has: no path or
     * peer QP number, which {@link QueuePair#modify} then refuses as an incomplete transition.
     *
     * @throws VerbsException when rdma_cm refuses (the ID is closed or in a state it cannot answer for)
     */
    public QueuePairAttributes initQpAttributes(QueuePairState state) {
        Objects.requireNonNull(state, "state");
        String call = Errors.call("rdma_init_qp_attr", "id", this, "qp_state", state);
        try (Arena arena = LockedArena.open(calls)) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment attr = arena.allocate(ibv_qp_attr.layout());
            ibv_qp_attr.qp_state(attr, state.value());
            MemorySegment mask = arena.allocate(ValueLayout.JAVA_INT);
            if (LibRdmacm.rdma_init_qp_attr(errno, resource.handle(call), attr, mask) != 0) {
                int e = Errno.get(errno);
                throw Errors.failure(call, e, e == Errno.EINVAL ? "RTR and RTS follow the peer's connect request "
                        + "(passive side) or reply (active side: the CONNECT_RESPONSE event)" : null);
            }
            return NativeHandles.access().qpAttributes(attr, mask.get(ValueLayout.JAVA_INT, 0));
        }
    }

    /**
     * Completes an active-side connection whose QP the application moves itself ({@code rdma_establish(3)}): after
     * CONNECT_RESPONSE and the QP's move to RTS, sends the CM's ready-to-use message; the peer gets ESTABLISHED.
     */
    public void establish() {
        String call = Errors.call("rdma_establish", "id", this);
        try (Arena arena = LockedArena.open(calls)) {
            MemorySegment errno = Errno.allocateCapture(arena);
            if (LibRdmacm.rdma_establish(errno, resource.handle(call)) != 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
        }
    }

    /** The QP {@link #createQp} made, while it is open. */
    public Optional<QueuePair> queuePair() {
        QueuePair q = ownQp.current();
        return q == null || q.isClosed() ? Optional.empty() : Optional.of(q);
    }

    // ---- connections ----

    /**
     * Starts connecting ({@code rdma_connect(3)}) to the resolved peer; the outcome is ESTABLISHED, REJECTED,
     * UNREACHABLE or CONNECT_ERROR. UDP port space: a SIDR request, answered by ESTABLISHED with the peer's QP
     * number and qkey ({@link CmEvent#datagram()}).
     */
    public void connect(ConnectionParameters parameters) {
        String call = Errors.call("rdma_connect", "id", this, "param", parameters);
        checkPrivateData(call, parameters.privateData().length, portSpace == PortSpace.UDP ? 180 : 56,
                portSpace == PortSpace.UDP ? "a SIDR request (216 bytes less rdma_cm's 36-byte header)"
                        : "a connect request (the REQ's 92 bytes less rdma_cm's 36-byte header)");
        try (Arena arena = LockedArena.open(calls)) {
            MemorySegment errno = Errno.allocateCapture(arena);
            if (LibRdmacm.rdma_connect(errno, resource.handle(call), parameters.toNative(arena)) != 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
        }
    }

    /**
     * Connects and waits for ESTABLISHED.
     *
     * @return the ESTABLISHED event (UD: with the peer's QP number, qkey and address)
     * @throws ConnectionRejectedException if the peer or its CM rejected (no listener: reason 8)
     * @throws CmEventException            on UNREACHABLE or CONNECT_ERROR
     * @throws CmTimeoutException          if nothing arrived within {@code timeout} (close the ID to stop the CM's
     *                                     retries)
     */
    public CmEvent connect(ConnectionParameters parameters, Duration timeout) {
        connect(parameters);
        return await(CmEventType.ESTABLISHED, timeout);
    }

    /** Accepts a connection request on this (passive-side) ID ({@code rdma_accept(3)}); ESTABLISHED follows. */
    public void accept(ConnectionParameters parameters) {
        String call = Errors.call("rdma_accept", "id", this, "param", parameters);
        checkPrivateData(call, parameters.privateData().length, portSpace == PortSpace.UDP ? 136 : 196,
                portSpace == PortSpace.UDP ? "a SIDR reply" : "a connect reply (REP)");
        try (Arena arena = LockedArena.open(calls)) {
            MemorySegment errno = Errno.allocateCapture(arena);
            if (LibRdmacm.rdma_accept(errno, resource.handle(call), parameters.toNative(arena)) != 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
        }
    }

    /** Rejects a connection request ({@code rdma_reject(3)}), with up to 148 bytes of private data; then close the ID. */
    public void reject(byte[] privateData) {
        byte[] data = privateData == null ? new byte[0] : privateData;
        if (data.length > 255) {
            throw new IllegalArgumentException("rdma_reject: private_data_len is a uint8_t; got " + data.length);
        }
        String call = Errors.call("rdma_reject", "id", this, "private_data_len", data.length);
        checkPrivateData(call, data.length, portSpace == PortSpace.UDP ? 136 : 148,
                portSpace == PortSpace.UDP ? "a SIDR reply" : "a reject message (REJ)");
        try (Arena arena = LockedArena.open(calls)) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment native_ = data.length == 0 ? MemorySegment.NULL
                    : arena.allocate(data.length).copyFrom(MemorySegment.ofArray(data));
            if (LibRdmacm.rdma_reject(errno, resource.handle(call), native_, (byte) data.length) != 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
        }
    }

    /**
     * Disconnects ({@code rdma_disconnect(3)}): moves the QP to ERR (its outstanding work requests complete with
     * flush errors) and tells the peer, which gets DISCONNECTED; so does this side.
     */
    public void disconnect() {
        String call = Errors.call("rdma_disconnect", "id", this);
        try (Arena arena = LockedArena.open(calls)) {
            MemorySegment errno = Errno.allocateCapture(arena);
            if (LibRdmacm.rdma_disconnect(errno, resource.handle(call)) != 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
        }
    }

    /**
     * Refuses private data the IB CM cannot carry (rdma_cm over InfiniBand or RoCE, with IP addresses): the kernel
     * answers it with a bare EINVAL. iWARP (MPA) carries more, so its devices, and an ID not bound to a device yet,
     * are left to the kernel.
     */
    private void checkPrivateData(String call, int length, int limit, String message) {
        if (length <= limit) {
            return;
        }
        calls.lock();
        try {
            resource.checkOpen(call);
            MemorySegment verbs = rdma_cm_id.verbs(id);
            if (verbs.address() == 0) {
                return;
            }
            MemorySegment device = ibv_context.device(verbs.reinterpret(ibv_context.sizeof()));
            if (ibv_device.transport_type(device.reinterpret(ibv_device.sizeof())) != verbs_h.IBV_TRANSPORT_IB()) {
                return;
            }
        } finally {
            calls.unlock();
        }
        throw new IllegalArgumentException(call + ": " + length + " bytes of private data; over InfiniBand and RoCE "
                + "rdma_cm carries at most " + limit + " in " + message + " (the kernel refuses more with EINVAL)");
    }

    // ---- multicast (UDP port space) ----

    /** Joins a multicast group ({@code rdma_join_multicast(3)}); MULTICAST_JOIN (with the group's address) follows. */
    public void joinMulticast(InetSocketAddress group) {
        String call = Errors.call("rdma_join_multicast", "id", this, "addr", group);
        try (Arena arena = LockedArena.open(calls)) {
            MemorySegment errno = Errno.allocateCapture(arena);
            if (LibRdmacm.rdma_join_multicast(errno, resource.handle(call), SocketAddresses.toNative(group, arena),
                    MemorySegment.NULL) != 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
        }
    }

    /** Leaves a multicast group ({@code rdma_leave_multicast(3)}). */
    public void leaveMulticast(InetSocketAddress group) {
        String call = Errors.call("rdma_leave_multicast", "id", this, "addr", group);
        try (Arena arena = LockedArena.open(calls)) {
            MemorySegment errno = Errno.allocateCapture(arena);
            if (LibRdmacm.rdma_leave_multicast(errno, resource.handle(call), SocketAddresses.toNative(group, arena))
                    != 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
        }
    }

    // ---- events ----

    /**
     * Waits for the next event of this ID (for a listener: also the CONNECT_REQUESTs it receives) and returns it if
     * it is {@code expected}. Events of other IDs that arrive meanwhile stay queued for {@link EventChannel#poll()}.
     *
     * @throws ConnectionRejectedException on REJECTED
     * @throws CmEventException            on any other event (an error event, the peer disconnecting)
     * @throws CmTimeoutException          if no event of this ID arrived within {@code timeout}
     */
    public CmEvent await(CmEventType expected, Duration timeout) {
        String call = Errors.call("rdma_get_cm_event", "id", this, "expected", expected);
        CmEvent e = channel.await(ev -> ev.id() == this || ev.listenId() == this, timeout, call, expected, resource);
        if (e.type() != expected) {
            throw CmEventException.of(call, expected, e);
        }
        return e;
    }

    /**
     * The next event of this ID (for a listener: also its CONNECT_REQUESTs), without blocking, whatever its type;
     * {@code null} if none is queued. Events of other IDs read meanwhile stay queued for them: one thread per
     * connection can watch its own ID (for DISCONNECTED) on a channel the connections share.
     */
    public CmEvent pollEvent() {
        resource.checkOpen("rdma_get_cm_event"); // a destroyed ID gets no events: say so rather than null forever
        return channel.poll(ev -> ev.id() == this || ev.listenId() == this);
    }

    // ---- lifetime ----

    /** Whether the ID is destroyed. */
    public boolean isClosed() {
        return resource.isClosed();
    }

    private void destroy(MemorySegment handle) {
        // a verb or read in progress on another thread finishes first (calls); later ones see the ID closing
        try (Arena arena = LockedArena.open(calls)) {
            QueuePair q = ownQp.current();
            if (q != null) {
                q.close(); // the ID owns its QP; destroyed while the ID still exists
            }
            channel.lock.lock(); // no event of this ID is between rdma_get_cm_event and its ack meanwhile
            try {
                MemorySegment errno = Errno.allocateCapture(arena);
                if (LibRdmacm.rdma_destroy_id(errno, handle) != 0) {
                    throw Errors.failure(Errors.call("rdma_destroy_id", "id", this), Errno.get(errno));
                }
            } finally {
                channel.forget(handle.address());
                channel.lock.unlock();
            }
        }
    }

    /** Closes the QP the ID owns, then destroys the ID ({@code rdma_destroy_id(3)}). Idempotent. */
    @Override
    public void close() {
        resource.close();
    }

    private static String bindHint(int errno) {
        return errno == 98 /* EADDRINUSE */ ? "another rdma_cm ID is bound to that port"
                : errno == 99 /* EADDRNOTAVAIL */ ? "no RDMA device has that IP address (rdma link show)" : null;
    }

    @Override
    public String toString() {
        return resource.description();
    }
}
