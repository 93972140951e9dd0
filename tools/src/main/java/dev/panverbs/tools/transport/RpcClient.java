package dev.panverbs.tools.transport;

import dev.panverbs.core.Access;
import dev.panverbs.core.CompletionChannel;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.Device;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.ReceiveRequests;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.SendRequests;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletionStatus;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.core.cm.CmEvent;
import dev.panverbs.core.cm.CmEventType;
import dev.panverbs.core.cm.CmId;
import dev.panverbs.core.cm.ConnectionParameters;
import dev.panverbs.core.cm.ConnectionRejectedException;
import dev.panverbs.core.cm.EventChannel;
import dev.panverbs.core.cm.PortSpace;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The client end of the request/response transport: one RC connection to an {@link RpcServer}. See the
 * package documentation for the protocol and its design.
 *
 * <pre>{@code
 * try (RpcClient client = RpcClient.connect("10.0.0.1", 7471, RpcOptions.DEFAULTS.withGidIndex(1))) {
 *     client.call(MemorySegment.ofArray(request), response -> consume(response));
 * }
 * }</pre>
 *
 * <p>Threads: {@link #call}, {@link #tryCall} and {@link #send} may be called from any thread. Completions are
 * processed by one progress thread per client, which sleeps on a completion channel when idle and runs every
 * {@link ResponseHandler}. {@code call} blocks while no credit or slot is free: that is the back-pressure, not an
 * error. {@link #close()} is graceful: it waits for outstanding calls, then runs the SHUTDOWN handshake.
 */
public final class RpcClient implements AutoCloseable {
    private static final long RECV_TAG = 1L << 40;
    private static final long SEND_TAG = 2L << 40;
    private static final long SHUTDOWN_WRID = 3L << 40;
    private static final long TAG_MASK = 0xffL << 40;

    private final RpcOptions options;
    private final Context ctx;
    private final QueuePair qp;
    private final CompletionQueue cq;
    private final CompletionChannel channel;
    private final MemoryRegion sendMr;
    private final MemoryRegion responseMr;
    private final int maxRequest;
    private final int stride;
    private final String server;
    private final CmLink cm; // the rdma_cm route, else null

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final SlotTable table;
    private final CreditWindow window;
    private final Thread progress;
    private volatile boolean stopProgress;
    private boolean closing;
    private boolean closed;
    private boolean shutdownAcked;
    private RpcException failure;
    private long creditWaits;

    private RpcClient(RpcOptions options, Context ctx, String server, Setup s, CmLink cm) {
        this.options = options;
        this.cm = cm;
        this.ctx = ctx;
        this.server = server;
        this.qp = s.qp;
        this.cq = s.cq;
        this.channel = s.channel;
        this.sendMr = s.sendMr;
        this.responseMr = s.responseMr;
        this.stride = options.slotStride();
        this.maxRequest = Math.min(options.maxRequest(), s.peer.maxRequest());
        this.table = new SlotTable(options.slots());
        this.window = new CreditWindow(s.peer.credits(), options.slots());
        this.progress = new Thread(this::progressLoop, "panverbs-rpc-client " + server);
        progress.setDaemon(true);
        progress.start();
    }

    private record Setup(QueuePair qp, CompletionQueue cq, CompletionChannel channel, MemoryRegion sendMr,
                         MemoryRegion responseMr, RpcHandshake peer) {}

    /**
     * Connects to the {@link RpcServer} at {@code host:port}: opens the device, registers the send buffers and the
     * response slots, creates the RC QP, exchanges the handshake over TCP and moves the QP to RTS.
     *
     * @throws IOException        when the TCP handshake fails (no server, timeout)
     * @throws RpcException       when the server rejects the connection or speaks another protocol
     * @throws dev.panverbs.core.VerbsException when a verb fails (no device, memlock limit, ...)
     */
    public static RpcClient connect(String host, int port, RpcOptions options) throws IOException {
        Context ctx = options.device() == null ? Device.first().open() : Device.open(options.device());
        try {
            LocalPort local = new LocalPort(ctx, options);
            Local l = prepare(ctx, local.portNum, options);
            int psn = LocalPort.randomPsn();
            RpcHandshake mine = new RpcHandshake(RpcHandshake.CLIENT, local.attributes.lid(),
                    local.attributes.activeMtu().value(), l.qp.qpNum(), psn, local.gid, 0, 0, options.maxResponse(),
                    options.slots(), options.slotStride(), l.responseMr.rkey(), l.responseMr.address());
            RpcHandshake peer;
            try (Socket socket = new Socket()) {
                int timeout = (int) Math.min(Integer.MAX_VALUE, options.timeout().toMillis());
                socket.connect(new InetSocketAddress(host, port), timeout);
                socket.setSoTimeout(timeout);
                socket.setTcpNoDelay(true);
                mine.write(socket.getOutputStream());
                peer = RpcHandshake.read(socket, RpcHandshake.SERVER, options.timeout());
            }
            // the server is already in RTS: it connected before answering
            local.connect(l.qp, peer, psn);
            return new RpcClient(options, ctx, host + ":" + port,
                    new Setup(l.qp, l.cq, l.channel, l.sendMr, l.responseMr, peer), null);
        } catch (IOException | RuntimeException | Error e) {
            ctx.close();
            throw e;
        }
    }

    /**
     * Connects to an {@link RpcServer#startCm rdma_cm server} at {@code host:port} through rdma_cm: resolves the
     * address and route, sets up the same resources as {@link #connect} (the QP is this client's own), sends the
     * handshake as the connect request's private data, and on the server's reply (CONNECT_RESPONSE, with its
     * handshake) moves the QP to RTS with the attributes rdma_cm computed and completes with {@code rdma_establish}.
     * The device is the one rdma_cm routes to unless the options name one (which must be it).
     *
     * @throws RpcException                                  when the server rejects the connection (with its reason)
     *                                                       or speaks another protocol
     * @throws dev.panverbs.core.cm.ConnectionRejectedException when nothing listens there (reason 8)
     * @throws dev.panverbs.core.cm.CmEventException        when the address or route cannot be resolved
     * @throws dev.panverbs.core.cm.CmTimeoutException      when a step takes longer than the options' timeout
     */
    public static RpcClient connectCm(String host, int port, RpcOptions options) {
        EventChannel events = EventChannel.create();
        Context ctx = null;
        try {
            CmId id = events.createId(PortSpace.TCP);
            id.resolve(new InetSocketAddress(host, port), options.timeout());
            String routed = id.context().device().name();
            if (options.device() != null && !options.device().equals(routed)) {
                throw new IllegalArgumentException("rdma_cm routes " + host + " through " + routed + ", not "
                        + options.device() + " (RpcOptions.withDevice); leave the device unset to use it");
            }
            ctx = Device.open(routed);
            Local l = prepare(ctx, id.portNum(), options);
            RpcHandshake mine = new RpcHandshake(RpcHandshake.CLIENT, 0, 0, l.qp.qpNum(), 0, new byte[16], 0, 0,
                    options.maxResponse(), options.slots(), options.slotStride(), l.responseMr.rkey(),
                    l.responseMr.address());
            id.connect(ConnectionParameters.defaults().withQpNum(l.qp.qpNum())
                    .withPrivateData(CmHandshake.client(mine)));
            CmEvent reply;
            try {
                reply = id.await(CmEventType.CONNECT_RESPONSE, options.timeout());
            } catch (ConnectionRejectedException rejected) {
                String reason = CmHandshake.rejectReason(rejected.privateData());
                if (reason == null) {
                    throw rejected;
                }
                throw new RpcException("the server rejected the connection: " + reason);
            }
            RpcHandshake peer = CmHandshake.readServer(reply.privateData(), reply.connection().qpNum());
            LocalPort.through(id).connect(l.qp, peer, 0);
            id.establish();
            return new RpcClient(options, ctx, host + ":" + port + " (rdma_cm)",
                    new Setup(l.qp, l.cq, l.channel, l.sendMr, l.responseMr, peer), new CmLink(events, id));
        } catch (RuntimeException | Error e) {
            if (ctx != null) {
                ctx.close();
            }
            events.close();
            throw e;
        }
    }

    /** The rdma_cm route's channel and ID, closed with the client. */
    private record CmLink(EventChannel channel, CmId id) {}

    private record Local(QueuePair qp, CompletionQueue cq, CompletionChannel channel, MemoryRegion sendMr,
                         MemoryRegion responseMr) {}

    /**
     * The client's resources, either route: the QP in INIT on {@code portNum} with every receive posted, the CQ
     * armed, the send buffers and the response slots registered.
     */
    private static Local prepare(Context ctx, int portNum, RpcOptions options) {
        ProtectionDomain pd = ctx.allocPd();
        CompletionChannel channel = ctx.createCompChannel();
        int slots = options.slots();
        // responses and CREDIT messages each need a posted receive: at most `slots` of each, plus the ack
        int receives = 2 * slots + 1;
        CompletionQueue cq = ctx.createCq(slots + 1 + receives).channel(channel).build();
        QueuePair qp = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(slots + 1).maxRecvWr(receives)
                .maxSendSge(1).maxRecvSge(1).build();
        MemoryRegion sendMr = pd.allocate((long) slots * options.maxRequest(), EnumSet.of(Access.LOCAL_WRITE));
        MemoryRegion responseMr = pd.allocate((long) slots * options.slotStride(),
                EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        qp.toInit(portNum, EnumSet.of(Access.REMOTE_WRITE));
        // the server writes responses with immediate: each consumes a receive but needs no buffer (no SGE)
        ReceiveRequests rwrs = qp.receiveRequests();
        for (int i = 0; i < receives; i++) {
            rwrs.recv(RECV_TAG);
        }
        if (rwrs.post() != receives) {
            throw new IllegalStateException("ibv_post_recv accepted fewer than " + receives + " receives");
        }
        cq.reqNotify(false);
        return new Local(qp, cq, channel, sendMr, responseMr);
    }

    /**
     * Sends {@code request} and returns at once; {@code handler} receives the response (or the failure) later on
     * the progress thread. Blocks while no credit or slot is free (back-pressure).
     *
     * @throws IllegalArgumentException if the request exceeds {@link #maxRequest()}
     * @throws IllegalStateException    after {@link #close()}, or when called from a handler and it would wait
     * @throws RpcException             when the connection has failed
     */
    public void call(MemorySegment request, ResponseHandler handler) throws InterruptedException {
        submit(request, Objects.requireNonNull(handler, "handler"), true);
    }

    /** As {@link #call} but returns {@code false} instead of waiting when no credit or slot is free. */
    public boolean tryCall(MemorySegment request, ResponseHandler handler) {
        try {
            return submit(request, Objects.requireNonNull(handler, "handler"), false);
        } catch (InterruptedException e) {
            throw new AssertionError("a non-blocking submit never waits", e);
        }
    }

    /** Sends a one-way message: the server's {@link RpcHandler#onMessage} gets it; no response. May block. */
    public void send(MemorySegment message) throws InterruptedException {
        submit(message, null, true);
    }

    private boolean submit(MemorySegment payload, ResponseHandler handler, boolean block) throws InterruptedException {
        long length = payload.byteSize();
        if (length > maxRequest) {
            throw new IllegalArgumentException("a request of " + length + " bytes exceeds maxRequest " + maxRequest
                    + " (the smaller of this client's and the server's)");
        }
        lock.lockInterruptibly();
        try {
            while (true) {
                if (failure != null) {
                    throw new RpcException("the connection to " + server + " has failed", failure);
                }
                if (closing) {
                    throw new IllegalStateException("RpcClient to " + server + " is closed");
                }
                if (window.available() > 0 && table.inUse() < table.capacity()) {
                    break;
                }
                if (!block) {
                    return false;
                }
                if (Thread.currentThread() == progress) {
                    throw new IllegalStateException("call() from a ResponseHandler would wait for credits that only"
                            + " this thread can deliver; use tryCall() there");
                }
                if (window.available() == 0) {
                    creditWaits++;
                }
                changed.await();
            }
            int slot = table.tryAcquire(handler);
            window.tryAcquire();
            long offset = (long) slot * options.maxRequest();
            MemorySegment.copy(payload, 0, sendMr.buffer(), offset, length);
            int imm = handler == null ? Immediate.encode(Immediate.ONE_WAY, 0)
                    : Immediate.encode(Immediate.REQUEST, table.requestId(slot));
            SendRequests wrs = qp.sendRequests();
            wrs.sendWithImm(SEND_TAG | slot, SendFlag.SIGNALED_BIT, imm);
            if (length > 0) {
                wrs.sge(sendMr, offset, (int) length);
            }
            if (wrs.post() != 1) {
                // cannot happen: the send queue holds one WR per slot plus the shutdown message
                wrs.clear();
                table.abort(slot);
                window.release(1);
                throw new IllegalStateException("ibv_post_send accepted nothing although a slot was free");
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** The largest request this connection accepts: the smaller of both sides' {@code maxRequest}. */
    public int maxRequest() {
        return maxRequest;
    }

    /** Credits available for requests now (a snapshot). */
    public int availableCredits() {
        lock.lock();
        try {
            return window.available();
        } finally {
            lock.unlock();
        }
    }

    /** How many times a call had to wait because every credit was in use: the back-pressure seen so far. */
    public long creditWaits() {
        lock.lock();
        try {
            return creditWaits;
        } finally {
            lock.unlock();
        }
    }

    // ---- progress thread ----

    private void progressLoop() {
        WorkCompletions wcs = WorkCompletions.allocate(32);
        ReceiveRequests rwrs = qp.receiveRequests();
        try {
            while (!stopProgress) {
                if (channel.getCqEvent(Duration.ofMillis(100)).isEmpty()) {
                    continue;
                }
                cq.reqNotify(false);
                int n;
                while ((n = cq.poll(wcs)) > 0) {
                    int reposts = 0;
                    for (int i = 0; i < n; i++) {
                        reposts += complete(wcs.get(i));
                    }
                    if (reposts > 0) {
                        for (int i = 0; i < reposts; i++) {
                            rwrs.recv(RECV_TAG);
                        }
                        rwrs.post();
                        rwrs.clear();
                    }
                }
            }
        } catch (RuntimeException e) {
            fail(e instanceof RpcException r ? r : new RpcException("progress thread failed: " + e, e));
        }
    }

    /** Handles one completion; returns 1 when its receive must be re-posted. */
    private int complete(WorkCompletion wc) {
        long wrId = wc.wrId();
        long tag = wrId & TAG_MASK;
        if (!wc.ok()) {
            if (wc.status() == WorkCompletionStatus.WR_FLUSH_ERR && (closing || failure != null)) {
                return 0;
            }
            fail(new RpcException("work completion " + wc.status() + " (" + wc.status().description()
                    + ", vendor error 0x" + Integer.toHexString(wc.vendorErr()) + ") on the connection to " + server));
            return 0;
        }
        if (tag == SEND_TAG) {
            lock.lock();
            try {
                table.sendCompleted((int) (wrId & 0xffff));
                changed.signalAll();
            } finally {
                lock.unlock();
            }
            return 0;
        }
        if (tag != RECV_TAG) {
            return 0; // the SHUTDOWN send
        }
        int imm = wc.immData();
        switch (Immediate.kind(imm)) {
            case Immediate.RESPONSE -> response(Immediate.argument(imm));
            case Immediate.CREDIT -> {
                lock.lock();
                try {
                    window.release(Immediate.argument(imm));
                    changed.signalAll();
                } finally {
                    lock.unlock();
                }
            }
            case Immediate.SHUTDOWN -> {
                lock.lock();
                try {
                    shutdownAcked = true;
                    changed.signalAll();
                } finally {
                    lock.unlock();
                }
                return 0;
            }
            default -> throw new RpcProtocolException("unknown message kind " + Immediate.kind(imm) + " from "
                    + server);
        }
        return 1;
    }

    private void response(int requestId) {
        int slot;
        ResponseHandler handler;
        MemorySegment header;
        lock.lock();
        try {
            slot = table.responseArrived(requestId); // validates the id before it is used as an offset
            handler = table.handler(slot);
            header = responseMr.buffer().asSlice((long) slot * stride, stride);
            window.release(ResponseHeader.credits(header));
        } finally {
            lock.unlock();
        }
        int length = ResponseHeader.length(header);
        if (length < 0 || length > options.maxResponse()) {
            throw new RpcProtocolException("response of " + Integer.toUnsignedString(length) + " bytes for a slot"
                    + " of " + options.maxResponse());
        }
        MemorySegment payload = header.asSlice(ResponseHeader.SIZE, length).asReadOnly();
        try {
            if (ResponseHeader.status(header) == ResponseHeader.STATUS_OK) {
                handler.onResponse(payload);
            } else {
                String message = new String(payload.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                        StandardCharsets.UTF_8);
                handler.onError(new RpcException("the server's handler failed: " + message, true, null));
            }
        } catch (RuntimeException e) {
            Thread t = Thread.currentThread();
            t.getUncaughtExceptionHandler().uncaughtException(t, e);
        }
        lock.lock();
        try {
            table.responseHandled(slot);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void fail(RpcException cause) {
        List<ResponseHandler> orphans;
        lock.lock();
        try {
            if (failure != null) {
                return;
            }
            failure = cause;
            orphans = table.drainHandlers();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        try {
            qp.toErr(); // flush what is posted: nothing more will complete normally
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
        for (ResponseHandler h : orphans) {
            h.onError(cause);
        }
    }

    /**
     * Closes the connection: refuses new calls, waits (up to the options' timeout) for the outstanding ones,
     * sends SHUTDOWN and waits for the server's acknowledgement, which arrives after every response (RC delivers
     * in order). Then it destroys the QP and closes the device context. Calls still outstanding when the time
     * runs out get {@link ResponseHandler#onError}. Idempotent.
     */
    @Override
    public void close() {
        boolean graceful = false;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            closing = true;
            long deadline = System.nanoTime() + options.timeout().toNanos();
            while (table.inUse() > 0 && failure == null && awaitUntil(deadline)) {
                // waiting for responses and send completions
            }
            if (table.inUse() == 0 && failure == null) {
                window.acquireShutdown();
                SendRequests wrs = qp.sendRequests();
                wrs.sendWithImm(SHUTDOWN_WRID, SendFlag.SIGNALED_BIT, Immediate.encode(Immediate.SHUTDOWN, 0));
                if (wrs.post() == 1) {
                    while (!shutdownAcked && failure == null && awaitUntil(deadline)) {
                        // waiting for the server's acknowledgement
                    }
                } else {
                    wrs.clear();
                }
                graceful = shutdownAcked;
            }
        } finally {
            lock.unlock();
        }
        stopProgress = true;
        try {
            progress.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!graceful) {
            fail(new RpcException("the client was closed before the response arrived"));
        }
        if (cm != null) {
            try {
                if (graceful) {
                    qp.toErr(); // rping -q's order: the application's QP first, then the CM's DREQ
                }
                cm.id().disconnect();
            } catch (RuntimeException e) {
                // the server may have gone first; closing the ID below ends the connection either way
            }
        }
        ctx.close();
        if (cm != null) {
            cm.channel().close();
        }
    }

    private boolean awaitUntil(long deadline) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            return false;
        }
        try {
            changed.awaitNanos(left);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public String toString() {
        return "RpcClient[" + server + ", QPN 0x" + Integer.toHexString(qp.qpNum()) + "]";
    }
}
