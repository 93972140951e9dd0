package dev.panverbs.tools.transport;

import dev.panverbs.core.Access;
import dev.panverbs.core.CompletionChannel;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
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
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;

/**
 * One client connection of an {@link RpcServer}: its QP, CQ, receive buffers (the credits) and response staging
 * buffers. Built by the acceptor thread, then driven only by the server's event-loop thread.
 *
 * <p>Messages are handled strictly in arrival order. A request waits (its receive buffer stays taken, so its
 * credit stays with the server) when no staging buffer or send-queue entry is free; that can only happen when
 * the client re-sends on a slot before this side has polled the completion of the previous response, and it
 * turns into back-pressure rather than an error.
 */
final class ServerConnection {
    private static final long RECV_TAG = 1L << 40;
    private static final long STAGING_TAG = 2L << 40;
    private static final long CONTROL_WRID = 3L << 40;
    private static final long TAG_MASK = 0xffL << 40;
    private static final long INDEX_MASK = 0xffffffffL;

    final String peer;
    final CompletionQueue cq;
    private final QueuePair qp;
    private final MemoryRegion recvMr;
    private final MemoryRegion stagingMr;
    private final int credits;
    private final int maxRequest;
    private final int maxResponse;
    private final int stagingStride;
    private final int clientSlots;
    private final int clientStride;
    private final int rkey;
    private final long responseAddress;
    private final int sendQueueDepth;
    private final CreditReturn creditReturn;
    private final WorkCompletions wcs = WorkCompletions.allocate(32);
    private final int[] freeStaging;
    private int freeStagingCount;
    // FIFO of received messages not handled yet: receive buffer, immediate, length
    private final int[] queuedBuffer;
    private final int[] queuedImm;
    private final int[] queuedLength;
    private int queueHead;
    private int queueSize;
    private int sendsInFlight;
    private boolean shutdownAcked;
    private boolean closed;

    private ServerConnection(String peer, CompletionQueue cq, QueuePair qp, MemoryRegion recvMr,
                             MemoryRegion stagingMr, RpcOptions options, RpcHandshake client, int staging,
                             int sendQueueDepth) {
        this.peer = peer;
        this.cq = cq;
        this.qp = qp;
        this.recvMr = recvMr;
        this.stagingMr = stagingMr;
        this.credits = options.credits();
        this.maxRequest = options.maxRequest();
        this.maxResponse = Math.min(options.maxResponse(), client.maxResponse());
        this.stagingStride = ResponseHeader.SIZE + maxResponse;
        this.clientSlots = client.slots();
        this.clientStride = client.slotStride();
        this.rkey = client.responseRkey();
        this.responseAddress = client.responseAddress();
        this.sendQueueDepth = sendQueueDepth;
        this.creditReturn = new CreditReturn(CreditWindow.usable(credits, client.slots()));
        this.freeStaging = new int[staging];
        for (int i = 0; i < staging; i++) {
            freeStaging[i] = i;
        }
        this.freeStagingCount = staging;
        this.queuedBuffer = new int[credits];
        this.queuedImm = new int[credits];
        this.queuedLength = new int[credits];
    }

    /**
     * Sets up the connection for {@code client}: CQ on the server's channel, RC QP, registered buffers, all
     * receives posted, QP connected to RTS. Returns it with the handshake to answer.
     */
    static ServerConnection open(Context ctx, ProtectionDomain pd, CompletionChannel channel, LocalPort local,
                                 RpcOptions options, RpcHandshake client, String peer, RpcHandshake[] answer) {
        return open(ctx, pd, channel, local, local::connect, options, client, peer, answer);
    }

    /** As above, the QP taken to RTS by {@code connector} (the rdma_cm route: {@link LocalPort#through}). */
    static ServerConnection open(Context ctx, ProtectionDomain pd, CompletionChannel channel, LocalPort local,
                                 LocalPort.Connector connector, RpcOptions options, RpcHandshake client, String peer,
                                 RpcHandshake[] answer) {
        int credits = options.credits();
        int usable = CreditWindow.usable(credits, client.slots());
        int maxResponse = Math.min(options.maxResponse(), client.maxResponse());
        int staging = usable;
        // responses (one per staging buffer) + CREDIT messages + the SHUTDOWN acknowledgement
        int sendQueueDepth = staging + usable + 1;
        CompletionQueue cq = ctx.createCq(credits + sendQueueDepth).channel(channel).build();
        QueuePair qp = null;
        MemoryRegion recvMr = null;
        MemoryRegion stagingMr = null;
        try {
            qp = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(sendQueueDepth).maxRecvWr(credits).maxSendSge(1)
                    .maxRecvSge(1).build();
            recvMr = pd.allocate((long) credits * options.maxRequest(), EnumSet.of(Access.LOCAL_WRITE));
            stagingMr = pd.allocate((long) staging * (ResponseHeader.SIZE + maxResponse),
                    EnumSet.of(Access.LOCAL_WRITE));
            qp.toInit(local.portNum, EnumSet.noneOf(Access.class));
            ServerConnection c = new ServerConnection(peer, cq, qp, recvMr, stagingMr, options, client, staging,
                    sendQueueDepth);
            ReceiveRequests rwrs = qp.receiveRequests();
            for (int i = 0; i < credits; i++) {
                rwrs.recv(RECV_TAG | i).sge(recvMr, (long) i * options.maxRequest(), options.maxRequest());
            }
            if (rwrs.post() != credits) {
                throw new IllegalStateException("ibv_post_recv accepted fewer than " + credits + " receives");
            }
            cq.reqNotify(false);
            int psn = LocalPort.randomPsn();
            connector.connect(qp, client, psn);
            answer[0] = new RpcHandshake(RpcHandshake.SERVER, local.attributes.lid(),
                    local.attributes.activeMtu().value(), qp.qpNum(), psn, local.gid, credits, options.maxRequest(),
                    0, 0, 0, 0, 0);
            return c;
        } catch (RuntimeException | Error e) {
            closeAll(e, qp, recvMr, stagingMr, cq);
            throw e;
        }
    }

    /**
     * Polls the CQ empty and handles what it finds. Returns {@code false} once the connection is over (orderly
     * shutdown done, or failed: {@code handler.onDisconnect} has then been called and the resources are gone).
     */
    boolean drain(RpcHandler handler) {
        try {
            int n;
            while ((n = cq.poll(wcs)) > 0) {
                for (int i = 0; i < n; i++) {
                    complete(wcs.get(i));
                }
            }
            handleQueued(handler);
            if (!shutdownAcked && creditReturn.explicitDue() && sendsInFlight < sendQueueDepth) {
                postControl(Immediate.encode(Immediate.CREDIT, creditReturn.take()));
            }
            if (shutdownAcked && sendsInFlight == 0) {
                close(handler, null);
                return false;
            }
            return true;
        } catch (RpcException e) {
            close(handler, e);
            return false;
        } catch (RuntimeException e) {
            close(handler, new RpcException("connection from " + peer + " failed: " + e, e));
            return false;
        }
    }

    private void complete(WorkCompletion wc) {
        long wrId = wc.wrId();
        long tag = wrId & TAG_MASK;
        if (!wc.ok()) {
            throw new RpcException("work completion " + wc.status() + " (" + wc.status().description()
                    + ", vendor error 0x" + Integer.toHexString(wc.vendorErr()) + ") for "
                    + (tag == RECV_TAG ? "a receive" : "a send") + (wc.status() == WorkCompletionStatus.WR_FLUSH_ERR
                    ? " (flushed: the QP was already in error)" : ""));
        }
        if (tag == RECV_TAG) {
            if (!wc.hasImm()) {
                throw new RpcProtocolException("a SEND without immediate from " + peer);
            }
            int tail = (queueHead + queueSize) % credits;
            queuedBuffer[tail] = (int) (wrId & INDEX_MASK);
            queuedImm[tail] = wc.immData();
            queuedLength[tail] = wc.byteLen();
            queueSize++;
            return;
        }
        sendsInFlight--;
        if (tag == STAGING_TAG) {
            freeStaging[freeStagingCount++] = (int) (wrId & INDEX_MASK);
        }
    }

    private void handleQueued(RpcHandler handler) {
        while (queueSize > 0 && !shutdownAcked) {
            int buffer = queuedBuffer[queueHead];
            int imm = queuedImm[queueHead];
            int length = queuedLength[queueHead];
            int kind = Immediate.kind(imm);
            if (kind == Immediate.REQUEST) {
                if (freeStagingCount == 0 || sendsInFlight == sendQueueDepth) {
                    return; // back-pressure: wait for a send completion
                }
            } else if (kind == Immediate.SHUTDOWN) {
                if (sendsInFlight == sendQueueDepth) {
                    return;
                }
            } else if (kind != Immediate.ONE_WAY) {
                throw new RpcProtocolException("unknown message kind " + kind + " from " + peer);
            }
            queueHead = (queueHead + 1) % credits;
            queueSize--;
            MemorySegment message = recvMr.buffer().asSlice((long) buffer * maxRequest, length).asReadOnly();
            switch (kind) {
                case Immediate.REQUEST -> request(handler, buffer, message, Immediate.argument(imm));
                case Immediate.ONE_WAY -> {
                    try {
                        handler.onMessage(message);
                    } catch (Exception e) {
                        // a one-way message has nobody to tell; the service sees its own exception
                        Thread t = Thread.currentThread();
                        t.getUncaughtExceptionHandler().uncaughtException(t, e);
                    }
                    repost(buffer);
                }
                default -> {
                    // SHUTDOWN: every earlier message has been handled and every response posted before this
                    // acknowledgement, and RC delivers them in that order
                    postControl(Immediate.encode(Immediate.SHUTDOWN, 0));
                    shutdownAcked = true;
                }
            }
        }
    }

    private void request(RpcHandler handler, int buffer, MemorySegment request, int requestId) {
        int slot = Immediate.slot(requestId);
        if (slot >= clientSlots) {
            throw new RpcProtocolException("request id 0x" + Integer.toHexString(requestId) + " names slot " + slot
                    + " but the client has " + clientSlots);
        }
        int staging = freeStaging[--freeStagingCount];
        MemorySegment out = stagingMr.buffer().asSlice((long) staging * stagingStride, stagingStride);
        MemorySegment payload = out.asSlice(ResponseHeader.SIZE, maxResponse);
        int status = ResponseHeader.STATUS_OK;
        int length;
        try {
            length = handler.handle(request, payload);
            if (length < 0 || length > maxResponse) {
                throw new IllegalStateException("the handler returned length " + length + " outside 0.."
                        + maxResponse);
            }
        } catch (Exception e) {
            status = ResponseHeader.STATUS_HANDLER_ERROR;
            byte[] text = String.valueOf(e.getMessage() != null ? e.getMessage() : e.toString())
                    .getBytes(StandardCharsets.UTF_8);
            length = Math.min(text.length, maxResponse);
            MemorySegment.copy(MemorySegment.ofArray(text), 0, payload, 0, length);
        }
        // the request bytes are no longer needed: hand the buffer back to the NIC, and its credit to the client
        repost(buffer);
        ResponseHeader.write(out, length, creditReturn.take(), status);
        SendRequests wrs = qp.sendRequests();
        wrs.rdmaWriteWithImm(STAGING_TAG | staging, SendFlag.SIGNALED_BIT,
                rkey, responseAddress + (long) slot * clientStride, Immediate.encode(Immediate.RESPONSE, requestId))
                .sge(stagingMr, (long) staging * stagingStride, ResponseHeader.SIZE + length);
        post(wrs);
    }

    private void repost(int buffer) {
        ReceiveRequests rwrs = qp.receiveRequests();
        rwrs.recv(RECV_TAG | buffer).sge(recvMr, (long) buffer * maxRequest, maxRequest);
        if (rwrs.post() != 1) {
            rwrs.clear();
            throw new IllegalStateException("ibv_post_recv refused to re-post receive buffer " + buffer);
        }
        creditReturn.reposted();
    }

    /** A zero-length RDMA WRITE WITH IMMEDIATE: CREDIT or the SHUTDOWN acknowledgement. */
    private void postControl(int imm) {
        SendRequests wrs = qp.sendRequests();
        wrs.rdmaWriteWithImm(CONTROL_WRID, SendFlag.SIGNALED_BIT, rkey, responseAddress, imm);
        post(wrs);
    }

    private void post(SendRequests wrs) {
        if (wrs.post() != 1) {
            wrs.clear();
            throw new IllegalStateException("ibv_post_send refused a response although " + sendsInFlight + " of "
                    + sendQueueDepth + " sends are in flight");
        }
        sendsInFlight++;
    }

    /** Destroys the QP, buffers and CQ, and tells the handler. Idempotent. */
    void close(RpcHandler handler, RpcException cause) {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException failure = closeAll(null, qp, recvMr, stagingMr, cq);
        if (failure != null && cause != null) {
            cause.addSuppressed(failure);
        }
        handler.onDisconnect(peer, cause);
    }

    private static RuntimeException closeAll(Throwable primary, AutoCloseable... objects) {
        RuntimeException first = null;
        for (AutoCloseable o : objects) {
            if (o == null) {
                continue;
            }
            try {
                o.close();
            } catch (Exception e) {
                RuntimeException r = e instanceof RuntimeException re ? re : new IllegalStateException(e);
                if (primary != null) {
                    primary.addSuppressed(r);
                } else if (first == null) {
                    first = r;
                } else {
                    first.addSuppressed(r);
                }
            }
        }
        return first;
    }
}
