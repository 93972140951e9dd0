package dev.panverbs.tools.transport;

import dev.panverbs.core.CompletionChannel;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.Device;
import dev.panverbs.core.ProtectionDomain;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
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
    private final ServerSocket listener;
    private final Map<CompletionQueue, ServerConnection> connections = new ConcurrentHashMap<>();
    private final Thread acceptor;
    private final Thread eventLoop;
    private volatile boolean stopping;
    private volatile int accepted;

    private RpcServer(RpcOptions options, RpcHandler handler, Context ctx, ServerSocket listener) {
        this.options = options;
        this.handler = handler;
        this.ctx = ctx;
        this.listener = listener;
        this.local = new LocalPort(ctx, options);
        this.pd = ctx.allocPd();
        this.channel = ctx.createCompChannel();
        this.acceptor = new Thread(this::acceptLoop, "panverbs-rpc-accept :" + listener.getLocalPort());
        this.eventLoop = new Thread(this::eventLoop, "panverbs-rpc-server :" + listener.getLocalPort());
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
            RpcServer server = new RpcServer(options, handler, ctx, listener);
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

    /** The TCP port clients connect to. */
    public int port() {
        return listener.getLocalPort();
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
        RpcHandshake client = RpcHandshake.read(socket.getInputStream(), RpcHandshake.CLIENT);
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

    private void eventLoop() {
        while (!stopping) {
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
        try {
            listener.close();
        } catch (IOException e) {
            // closing a listening socket fails only if it was already closed
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
