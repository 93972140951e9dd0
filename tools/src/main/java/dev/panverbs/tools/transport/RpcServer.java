package dev.panverbs.tools.transport;

import dev.panverbs.core.CompletionChannel;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.Device;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.cm.CmEvent;
import dev.panverbs.core.cm.CmId;
import dev.panverbs.core.cm.CmTimeoutException;
import dev.panverbs.core.cm.ConnectionParameters;
import dev.panverbs.core.cm.EventChannel;
import dev.panverbs.core.cm.PortSpace;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * The server end of the request/response transport: accepts clients on a TCP port (for the handshake only) and
 * serves each over its own RC queue pair with {@code handler}. See the package documentation for the protocol.
 *
 * <pre>{@code
 * try (RpcServer server = RpcServer.start(7471, (request, response) -> {
 *          response.copyFrom(request);               // echo
 *          return (int) request.byteSize();
 *      }, RpcOptions.DEFAULTS.withGidIndex(1))) {
 *     ...
 * }
 * }</pre>
 *
 * <p>Threads: an acceptor thread sets up connections; one event-loop thread serves all of them. Every
 * connection's CQ reports to one completion channel, so the loop sleeps in {@code ibv_get_cq_event} until any
 * connection has work, then drains that connection's CQ. The handler runs on that thread: it must not block.
 * One protection domain and device context are shared by all connections.
 */
public final class RpcServer implements AutoCloseable {
    private final RpcOptions options;
    private final RpcHandler handler;
    private final Context ctx;
    private final ProtectionDomain pd;
    private final CompletionChannel channel;
    private final LocalPort local;
    private final ServerSocket listener; // null on the rdma_cm route
    private final EventChannel cm; // the rdma_cm route: its channel and listening ID, else null
    private final CmId cmListener;
    private final int port;
    private final Map<CmId, ServerConnection> cmConnections = new ConcurrentHashMap<>();
    /** Accepted rdma_cm connections whose client went away before ESTABLISHED: the event loop closes them. */
    private final Queue<Abandoned> abandoned = new ConcurrentLinkedQueue<>();
    private final Map<CompletionQueue, ServerConnection> connections = new ConcurrentHashMap<>();
    private final Thread acceptor;
    private final Thread eventLoop;
    private volatile boolean stopping;
    private volatile int accepted;

    private RpcServer(RpcOptions options, RpcHandler handler, Context ctx, ServerSocket listener, EventChannel cm,
                      CmId cmListener) {
        this.options = options;
        this.handler = handler;
        this.ctx = ctx;
        this.listener = listener;
        this.cm = cm;
        this.cmListener = cmListener;
        this.local = cm == null ? new LocalPort(ctx, options) : null;
        this.pd = ctx.allocPd();
        this.channel = ctx.createCompChannel();
        this.port = listener != null ? listener.getLocalPort() : cmListener.localAddress().getPort();
        this.acceptor = new Thread(cm == null ? this::acceptLoop : this::cmLoop, "panverbs-rpc-accept :" + port);
        this.eventLoop = new Thread(this::eventLoop, "panverbs-rpc-server :" + port);
        acceptor.setDaemon(true);
        eventLoop.setDaemon(true);
    }

    /**
     * Opens the device, listens on TCP {@code port} (0 picks a free one, see {@link #port()}) and starts serving.
     *
     * @throws IOException when the port cannot be bound
     */
    public static RpcServer start(int port, RpcHandler handler, RpcOptions options) throws IOException {
        Objects.requireNonNull(handler, "handler");
        Context ctx = options.device() == null ? Device.first().open() : Device.open(options.device());
        ServerSocket listener = null;
        try {
            listener = new ServerSocket();
            listener.setReuseAddress(true);
            listener.bind(new InetSocketAddress(port));
            RpcServer server = new RpcServer(options, handler, ctx, listener, null, null);
            server.eventLoop.start();
            server.acceptor.start();
            return server;
        } catch (IOException | RuntimeException | Error e) {
            if (listener != null) {
                listener.close();
            }
            ctx.close();
            throw e;
        }
    }

    /**
     * Starts serving clients that connect through rdma_cm ({@link RpcClient#connectCm}): listens on {@code address}
     * (an IP address of an RDMA device, port 0 picks one: see {@link #port()}). No TCP: the handshake travels as
     * private data of the CM's request and reply, and each connection's QP (the server's own) is moved to RTS with
     * the attributes rdma_cm computes. The device is the one that owns the address unless the options name one.
     *
     * @throws dev.panverbs.core.VerbsException when the address cannot be bound (no RDMA device has it, in use)
     */
    public static RpcServer startCm(InetSocketAddress address, RpcHandler handler, RpcOptions options) {
        Objects.requireNonNull(handler, "handler");
        EventChannel cm = EventChannel.create();
        Context ctx = null;
        try {
            CmId listener = cm.createId(PortSpace.TCP);
            listener.bindAddress(address);
            listener.listen(16);
            String device = options.device() != null ? options.device()
                    : address.getAddress().isAnyLocalAddress() ? Device.first().name()
                    : listener.context().device().name();
            ctx = Device.open(device);
            RpcServer server = new RpcServer(options, handler, ctx, null, cm, listener);
            server.eventLoop.start();
            server.acceptor.start();
            return server;
        } catch (RuntimeException | Error e) {
            if (ctx != null) {
                ctx.close();
            }
            cm.close();
            throw e;
        }
    }

    /** The port clients connect to (TCP, or rdma_cm's TCP port space). */
    public int port() {
        return port; // kept: the rdma_cm listener's ID is gone after close()
    }

    /** Connections being served now. */
    public int connections() {
        return connections.size();
    }

    /** Connections accepted since the start. */
    public int accepted() {
        return accepted;
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try (Socket socket = listener.accept()) {
                setUp(socket);
            } catch (SocketException e) {
                if (!listener.isClosed()) {
                    handler.onDisconnect(listener.toString(), new RpcException("accept failed: " + e, e));
                }
            } catch (IOException | RuntimeException e) {
                // one client's failed handshake does not stop the server; tell the service about it
                handler.onDisconnect("handshake", e instanceof RpcException r ? r
                        : new RpcException("connection setup failed: " + e, e));
            }
        }
    }

    private void setUp(Socket socket) throws IOException {
        String peer = socket.getRemoteSocketAddress().toString();
        socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, options.timeout().toMillis()));
        socket.setTcpNoDelay(true);
        RpcHandshake client = RpcHandshake.read(socket, RpcHandshake.CLIENT, options.timeout());
        RpcHandshake[] answer = new RpcHandshake[1];
        ServerConnection c;
        try {
            c = ServerConnection.open(ctx, pd, channel, local, options, client, peer, answer);
        } catch (RuntimeException e) {
            RpcHandshake.writeReject(socket.getOutputStream(), e.getMessage());
            throw e;
        }
        // registered before answering: the first completion can only follow the client's first request
        connections.put(c.cq, c);
        accepted++;
        answer[0].write(socket.getOutputStream());
    }

    /** The rdma_cm route's acceptor: connection requests, and disconnects to answer. */
    private void cmLoop() {
        while (!stopping) {
            CmEvent e;
            try {
                e = cm.await(Duration.ofMillis(100));
            } catch (CmTimeoutException idle) {
                continue;
            } catch (IllegalStateException closed) {
                return;
            }
            try {
                switch (e.type()) {
                    case CONNECT_REQUEST -> setUp(e);
                    case DISCONNECTED -> { // the client is done (after SHUTDOWN) or gone: answer, forget the ID
                        cmConnections.remove(e.id());
                        e.id().disconnect();
                        e.id().close();
                    }
                    // the client went away between its request and ESTABLISHED (it destroyed its ID: REJECTED; or the
                    // CM gave up waiting: UNREACHABLE, CONNECT_ERROR): no DISCONNECTED follows, and nothing would
                    // ever complete on the connection's QP
                    case REJECTED, UNREACHABLE, CONNECT_ERROR -> abandon(e.id(), e.toString());
                    default -> { } // ESTABLISHED: the connection was registered before the reply
                }
            } catch (RuntimeException failure) {
                handler.onDisconnect(String.valueOf(e.id()), failure instanceof RpcException r ? r
                        : new RpcException("rdma_cm connection setup failed: " + failure, failure));
            }
        }
    }

    private void setUp(CmEvent request) {
        CmId id = request.id();
        String peer = String.valueOf(id.peerAddress());
        ServerConnection c;
        RpcHandshake[] answer = new RpcHandshake[1];
        try {
            if (!id.context().device().name().equals(ctx.device().name())) {
                throw new RpcException("the request arrived on " + id.context().device().name() + "; this server "
                        + "serves " + ctx.device().name());
            }
            RpcHandshake client = CmHandshake.readClient(request.privateData(), request.connection().qpNum());
            c = ServerConnection.open(ctx, pd, channel, new LocalPort(ctx, id.portNum()), LocalPort.through(id),
                    options, client, peer, answer);
        } catch (RuntimeException e) {
            id.reject(CmHandshake.reject(e.getMessage()));
            id.close();
            throw e;
        }
        connections.put(c.cq, c);
        cmConnections.put(id, c);
        accepted++;
        try {
            id.accept(ConnectionParameters.defaults().withQpNum(answer[0].qpn())
                    .withPrivateData(CmHandshake.server(answer[0])));
        } catch (RuntimeException e) {
            abandon(id, "rdma_accept failed: " + e);
            throw e;
        }
    }

    /** An accepted connection the event loop is to close, and why. */
    private record Abandoned(ServerConnection connection, String why) {}

    /** Forgets the ID of a connection that will not be established, and hands the connection to the event loop. */
    private void abandon(CmId id, String why) {
        ServerConnection c = cmConnections.remove(id);
        if (c != null) {
            abandoned.add(new Abandoned(c, why)); // the event loop is the connection's only thread
        }
        id.close();
    }

    /** On the event loop: closes the connections {@link #abandon} handed over. */
    private void closeAbandoned() {
        for (Abandoned a; (a = abandoned.poll()) != null; ) {
            ServerConnection c = a.connection();
            if (connections.get(c.cq) == c) { // closed first, as drain does: the handler has heard when it is gone
                c.close(handler, new RpcException("the client went away during the rdma_cm handshake (" + a.why()
                        + ")"));
                connections.remove(c.cq, c);
            }
        }
    }

    private void eventLoop() {
        while (!stopping) {
            closeAbandoned();
            CompletionQueue cq;
            try {
                cq = channel.getCqEvent(Duration.ofMillis(100)).orElse(null);
            } catch (IllegalStateException e) {
                return; // the channel was closed under us: close() is running
            }
            if (cq == null) {
                continue;
            }
            ServerConnection c = connections.get(cq);
            if (c == null) {
                continue;
            }
            try {
                cq.reqNotify(false);
            } catch (RuntimeException e) {
                c.close(handler, new RpcException("ibv_req_notify_cq failed: " + e, e));
                connections.remove(cq);
                continue;
            }
            if (!c.drain(handler)) {
                connections.remove(cq);
            }
        }
    }

    /**
     * Stops accepting, waits (up to the options' timeout) for the clients to shut their connections down, then
     * closes what is left (those clients see their calls fail) and the device context. Idempotent.
     */
    @Override
    public void close() {
        if (stopping) {
            return;
        }
        if (listener != null) {
            try {
                listener.close();
            } catch (IOException e) {
                // closing a listening socket fails only if it was already closed
            }
        } else {
            cmListener.close(); // no more requests; the connections' IDs stay until their clients disconnect
        }
        long deadline = System.nanoTime() + options.timeout().toNanos();
        while (!connections.isEmpty() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        stopping = true;
        join(acceptor);
        join(eventLoop);
        for (ServerConnection c : connections.values()) {
            c.close(handler, new RpcException("the server closed the connection"));
        }
        connections.clear();
        if (cm != null) {
            cm.close(); // the connections' IDs; their QPs were the server's and are gone
        }
        ctx.close();
    }

    private static void join(Thread t) {
        try {
            t.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
