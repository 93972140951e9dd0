package dev.panverbs.tools.perftest;

import dev.panverbs.core.Access;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairCapabilities;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletionOpcode;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.core.cm.CmEvent;
import dev.panverbs.core.cm.CmEventType;
import dev.panverbs.core.cm.CmId;
import dev.panverbs.core.cm.ConnectionParameters;
import dev.panverbs.core.cm.ConnectionRejectedException;
import dev.panverbs.core.cm.EventChannel;
import dev.panverbs.core.cm.PortSpace;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;

/**
 * perftest's rdma_cm exchange channel (-R and -z, "Data ex. method : rdma_cm"; {@code create_comm_struct},
 * {@code rdma_client_connect}, {@code rdma_server_connect}, {@code rdma_write_data}/{@code rdma_read_data}): one
 * RC connection made by rdma_cm on the test's port ({@code RDMA_PS_TCP}, no private data, retry_count from
 * --retry_count, rnr_retry 7), with its own PD, CQs and QP on the ID's context. Each message is one SEND of exactly
 * its size; perftest posts receives of {@code sizeof(struct pingpong_dest)} = 56 bytes, the largest message.
 *
 * <p>Every wait has a deadline and watches the event channel, so a peer that stalls, disconnects or sends a
 * message of another size ends the test with a message. There is no "done" at the end (perftest sends it only on
 * TCP). Not thread-safe; owned by the thread that runs the test.
 */
final class CmExchangeChannel extends ExchangeTransport {
    private static final int SLOT = 64;
    private static final int RECV_SLOTS = 4;
    /** perftest's timeout for rdma_resolve_addr and rdma_resolve_route. */
    static final Duration RESOLVE_TIMEOUT = Duration.ofMillis(2000);

    /** How long a completion may trail the peer's DISCONNECTED event (rxe under emulation is slow). */
    private static final long DISCONNECT_GRACE_NANOS = 2_000_000_000L;
    private final EventChannel events;
    private final CmId id;
    private final List<AutoCloseable> owned = new ArrayList<>();
    private final QueuePair qp;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final MemoryRegion sendMr;
    private final MemoryRegion recvMr;
    private final WorkCompletions wcs = WorkCompletions.allocate(1);
    private boolean closed;
    /** The peer's DISCONNECTED (or error) event when {@link #peerClosed} took it off the channel during a run. */
    private CmEvent left;

    private CmExchangeChannel(boolean client, long timeoutMillis, EventChannel events, CmId id) {
        super(client, timeoutMillis);
        this.events = events;
        this.id = id;
        try {
            Context ctx = id.context();
            ProtectionDomain pd = ctx.allocPd();
            owned.add(pd);
            sendCq = ctx.createCq(2).build();
            owned.add(sendCq);
            recvCq = ctx.createCq(RECV_SLOTS).build();
            owned.add(recvCq);
            sendMr = pd.allocate(SLOT, EnumSet.of(Access.LOCAL_WRITE));
            owned.add(sendMr);
            recvMr = pd.allocate((long) SLOT * RECV_SLOTS, EnumSet.of(Access.LOCAL_WRITE));
            owned.add(recvMr);
            qp = id.createQp(pd, sendCq, recvCq, new QueuePairCapabilities(1, RECV_SLOTS, 1, 1, 0));
            for (int i = 0; i < RECV_SLOTS; i++) {
                postRecv(i);
            }
        } catch (RuntimeException e) {
            closeQuietly(e);
            throw e;
        }
    }

    /** What the control QP and the data QPs of a client send in their connect request. */
    static ConnectionParameters connectParameters(int retryCount, int depth, int rnrRetry) {
        // the kernel CM clamps retry_count to 3 bits; perftest passes the u8 it parsed
        return new ConnectionParameters(new byte[0], depth, depth, false, Math.min(retryCount & 0xff, 7),
                Math.min(rnrRetry & 0xff, 7), false, 0);
    }

    /** Client side ({@code rdma_client_connect}): resolve, create the QP, connect, wait for ESTABLISHED. */
    static CmExchangeChannel connect(String host, int port, String sourceIp, int retryCount, long timeoutMillis)
            throws ExchangeChannel.ConnectException {
        InetSocketAddress server = ipv4(host, port);
        InetSocketAddress source = sourceIp == null ? null : ipv4(sourceIp, 0);
        EventChannel events = EventChannel.create();
        CmExchangeChannel c = null;
        try {
            CmId cm = events.createId(PortSpace.TCP);
            resolve(cm, source, server, PerftestParameters.DEF_TOS); // perftest's exchange has no TOS
            c = new CmExchangeChannel(true, timeoutMillis, events, cm);
            cm.connect(connectParameters(retryCount, 0, 7), Duration.ofMillis(timeoutMillis));
            return c;
        } catch (RuntimeException e) {
            closeAfterFailure(c, events);
            throw new ExchangeChannel.ConnectException(failure(host, port, e), e);
        }
    }

    /** The channel if it was made (closing it closes its event channel), else the event channel alone. */
    private static void closeAfterFailure(CmExchangeChannel c, EventChannel events) {
        if (c != null) {
            c.close();
        } else {
            events.close();
        }
    }

    /**
     * {@code rdma_resolve_addr} and {@code rdma_resolve_route}, each with perftest's 2 s timeout; in between, -T's
     * type of service ({@code rdma_set_option(RDMA_OPTION_ID_TOS)}) unless {@code tos} is {@code DEF_TOS}.
     */
    static void resolve(CmId cm, InetSocketAddress source, InetSocketAddress server, int tos) {
        cm.resolveAddress(source, server, RESOLVE_TIMEOUT);
        cm.await(CmEventType.ADDR_RESOLVED, RESOLVE_TIMEOUT.plusSeconds(1));
        if (tos != PerftestParameters.DEF_TOS) {
            cm.setTypeOfService(tos);
        }
        cm.resolveRoute(RESOLVE_TIMEOUT);
        cm.await(CmEventType.ROUTE_RESOLVED, RESOLVE_TIMEOUT.plusSeconds(1));
    }

    /** The error lines of a client that could not connect, perftest's last two lines with the reason and a hint. */
    static String failure(String host, int port, RuntimeException e) {
        String hint = e instanceof ConnectionRejectedException r && r.reason()
                == ConnectionRejectedException.REASON_NO_LISTENER
                ? "no rdma_cm listener on port " + port + ": is the server side running with -R/-z? start it first"
                : e instanceof ConnectionRejectedException ? "the server rejected the connection: do both sides run "
                + "the same test with the same -q?"
                : "is " + host + " the IP address of an RDMA device (rdma link show) and the server side running?";
        return "Couldn't connect to " + host + ":" + port + " through rdma_cm: " + e.getMessage() + "\n"
                + " Unable to perform rdma_client function\n Unable to init the socket connection\n (" + hint + ")";
    }

    static InetSocketAddress ipv4(String host, int port) throws ExchangeChannel.ConnectException {
        try {
            for (InetAddress a : InetAddress.getAllByName(host)) {
                if (a instanceof Inet4Address) {
                    return new InetSocketAddress(a, port);
                }
            }
        } catch (UnknownHostException e) {
            // reported below, as perftest's check_add_port does
        }
        throw new ExchangeChannel.ConnectException("Name or service not known for " + host + ":" + port + "\n"
                + "Problem in resolving basic address and port\n Unable to init the socket connection", null);
    }

    /**
     * Server side ({@code rdma_server_connect}): listens on {@code port}, accepts one connection and stops
     * listening, so that the test's own connections can listen on the same port next.
     *
     * @param acceptTimeoutMillis 0 waits for a client forever, like perftest
     */
    static CmExchangeChannel accept(String sourceIp, int port, long acceptTimeoutMillis, long timeoutMillis,
                                    IntConsumer bound) throws ExchangeChannel.ConnectException {
        InetSocketAddress local = sourceIp == null ? new InetSocketAddress("0.0.0.0", port) : ipv4(sourceIp, port);
        EventChannel events = EventChannel.create();
        CmExchangeChannel c = null;
        try {
            CmEvent request;
            try (CmId listener = events.createId(PortSpace.TCP)) {
                listener.bindAddress(local);
                listener.listen(1);
                if (bound != null) {
                    bound.accept(listener.localAddress().getPort());
                }
                request = listener.await(CmEventType.CONNECT_REQUEST, acceptTimeoutMillis == 0
                        ? Duration.ofDays(365) : Duration.ofMillis(acceptTimeoutMillis));
                c = new CmExchangeChannel(false, timeoutMillis, events, request.id());
                request.id().accept(connectParameters(7, 0, 7));
            }
            return c;
        } catch (RuntimeException e) {
            closeAfterFailure(c, events);
            throw new ExchangeChannel.ConnectException(" rdma_cm server on port " + port + " failed: "
                    + e.getMessage() + "\n Unable to perform rdma_server function\n Unable to init the socket "
                    + "connection\n (is another server using port " + port + "? choose another with -p on both sides)",
                    e);
        }
    }

    @Override
    boolean binaryKeys() {
        return true;
    }

    private void postRecv(int slot) {
        qp.receiveRequests().recv(slot).sge(recvMr, (long) slot * SLOT, CmKeyMessage.SIZE).post();
    }

    @Override
    void send(byte[] message, String step) {
        if (message.length > CmKeyMessage.SIZE) {
            throw new IllegalArgumentException(step + ": " + message.length + " bytes; perftest receives at most "
                    + CmKeyMessage.SIZE);
        }
        MemorySegment.copy(message, 0, sendMr.buffer(), ValueLayout.JAVA_BYTE, 0, message.length);
        qp.sendRequests().send(0, SendFlag.SIGNALED_BIT).sge(sendMr, 0, message.length).post();
        WorkCompletion wc = next(sendCq, step, defaultTimeoutMillis, "sending");
        if (!wc.ok()) {
            throw new ExchangeException("the SEND of the " + step + " message failed with " + wc.status()
                    + ": the peer's QP is gone or in error; look at the peer's output for the reason");
        }
    }

    @Override
    byte[] receive(int size, String step, long timeoutMillis) {
        WorkCompletion wc = next(recvCq, step, timeoutMillis, "waiting for");
        if (!wc.ok()) {
            throw new ExchangeException("the receive of the " + step + " message failed with " + wc.status()
                    + ": the peer disconnected or its QP failed; look at its output for the reason");
        }
        int slot = (int) wc.wrId();
        int len = wc.byteLen();
        byte[] theirs = new byte[len];
        MemorySegment.copy(recvMr.buffer(), ValueLayout.JAVA_BYTE, (long) slot * SLOT, theirs, 0, len);
        postRecv(slot);
        if (len != size || (wc.opcode() != WorkCompletionOpcode.RECV)) {
            throw new ExchangeException("the peer sent " + len + " bytes for the " + step + " exchange, which has "
                    + size + " (" + ExchangeChannel.describe(theirs, len) + "): the two sides run different tests or "
                    + "options (-q, -a, -n, -D, -x must match)");
        }
        return theirs;
    }

    private static boolean leaving(CmEvent e) {
        return e != null && (e.type() == CmEventType.DISCONNECTED || e.type().isError());
    }

    /** The peer left when its DISCONNECTED (or an error) event is queued; other events are dropped, as in next. */
    @Override
    boolean peerClosed() {
        if (closed) {
            return false;
        }
        while (left == null) {
            CmEvent e = events.poll();
            if (e == null) {
                return false;
            }
            if (leaving(e)) {
                left = e;
            }
        }
        return true;
    }

    /** The next completion of {@code cq}; watches the CM channel for the peer leaving while it waits. */
    private WorkCompletion next(CompletionQueue cq, String step, long timeoutMillis, String doing) {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        int idle = 0;
        while (true) {
            if (cq.poll(wcs) == 1) {
                return wcs.get(0);
            }
            if (++idle % 64 == 0) {
                CmEvent e = left != null ? left : events.poll();
                if (leaving(e)) {
                    WorkCompletion last = lastCompletion(cq);
                    if (last != null) {
                        return last;
                    }
                    throw new ExchangeException("the peer disconnected (" + e.type() + ") while this side was "
                            + doing + " the " + step + " message; look at its output for the reason");
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new ExchangeException("the peer sent nothing for " + (timeoutMillis / 1000) + " s during the "
                            + step + " exchange (rdma_cm channel); is the peer stuck, or running another test or other "
                            + "options (-q, -a, -n, -D, -x must match)?");
                }
                LockSupport.parkNanos(idle < 100_000 ? 20_000 : 1_000_000);
            } else {
                Thread.onSpinWait();
            }
        }
    }

    /**
     * After the peer left: the completion of what it sent (or acknowledged) just before, if there is one. A peer
     * that sends its last message and disconnects at once (perftest's server after its close handshake) makes both
     * the completion and the DISCONNECTED event arrive between this side's empty CQ poll and its event poll (a
     * thread descheduled there under load: seen once, {@code ib_read_lat -R} against perftest's server), so the CQ
     * is polled again, for a while; the flush completions that follow the QP's move to ERR, or nothing, mean the
     * message never came.
     */
    private WorkCompletion lastCompletion(CompletionQueue cq) {
        long deadline = System.nanoTime() + DISCONNECT_GRACE_NANOS;
        do {
            if (cq.poll(wcs) == 1) {
                WorkCompletion wc = wcs.get(0);
                return wc.ok() ? wc : null;
            }
            LockSupport.parkNanos(50_000);
        } while (System.nanoTime() - deadline < 0);
        return null;
    }

    /**
     * perftest sends no "done" over rdma_cm ({@code ctx_close_connection}), and this channel is not torn down here
     * either: {@link #close()} runs after the test's own rdma_cm connections have ended. The peer's last SEND may
     * still be waiting for its ACK: a lost ACK is answered by the retransmission only while this QP is alive, and a
     * perftest 6.06 client polls that SEND's completion forever ({@code rdma_write_keys}). perftest's own server
     * keeps the channel until it exits, after its test connections are destroyed.
     */
    @Override
    void sendDoneAndClose() {
        // closed by the session once the test's connections are down
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException failure = new RuntimeException("closing the rdma_cm exchange channel");
        try {
            if (!id.isClosed()) {
                id.disconnect();
            }
        } catch (RuntimeException e) {
            // the peer disconnected first, or the connection never completed: nothing to tell it
        }
        closeQuietly(failure);
        if (failure.getSuppressed().length > 0) {
            throw failure;
        }
    }

    /** The ID (and with it its QP) first, so that nothing can touch the buffers, then CQs, MRs, PD, channel. */
    private void closeQuietly(RuntimeException into) {
        try {
            id.close();
        } catch (RuntimeException e) {
            into.addSuppressed(e);
        }
        for (int i = owned.size() - 1; i >= 0; i--) {
            try {
                owned.get(i).close();
            } catch (Exception e) {
                into.addSuppressed(e);
            }
        }
        owned.clear();
        try {
            events.close();
        } catch (RuntimeException e) {
            into.addSuppressed(e);
        }
    }
}
