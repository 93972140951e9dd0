package dev.panverbs.tools.perftest;

import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairAttributes;
import dev.panverbs.core.QueuePairCapabilities;
import dev.panverbs.core.cm.CmEvent;
import dev.panverbs.core.cm.CmEventType;
import dev.panverbs.core.cm.CmId;
import dev.panverbs.core.cm.CmTimeoutException;
import dev.panverbs.core.cm.ConnectionParameters;
import dev.panverbs.core.cm.ConnectionRejectedException;
import dev.panverbs.core.cm.EventChannel;
import dev.panverbs.core.cm.PortSpace;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The test's QPs made and connected by rdma_cm (-R, "rdma_cm QPs : ON"; perftest's
 * {@code create_rdma_cm_connection}): one RC connection per QP on the test's port, which the exchange channel's
 * listener has freed. Between two syncs on the exchange channel the client resolves and connects one ID per QP, the
 * server accepts as many CONNECT_REQUESTs; the first ID's context carries the PD, MRs and CQs ({@code ctx_init}),
 * each QP is {@code rdma_create_qp} on its ID, and rdma_cm moves it to RTS (retry_count and rnr_retry from
 * --retry_count, READ depths = outstanding reads). The server then sets min_rnr_timer 12 as perftest does. The key
 * messages that follow still carry the RKey and addresses; perftest ignores their QPNs and PSNs. With -c UD the IDs
 * are {@code RDMA_PS_UDP}: SIDR instead of a connection, each QP's destination from {@link CmDatagramPeers}.
 *
 * <p>Unlike perftest's server, this one listens before the first sync: a C client connects right after it, and its
 * retry path does not survive a refused first attempt.
 */
final class CmDataConnections implements AutoCloseable {
    /** perftest's retries of a refused client connection ({@code rdma_cm_client_connection}) and the pause between. */
    static final int CLIENT_ATTEMPTS = 10;
    static final long RETRY_PAUSE_MILLIS = 100;

    private final EventChannel events;
    private final List<CmId> ids = new ArrayList<>();
    /** -c UD: {@code RDMA_PS_UDP} IDs, and where each QP sends; null for RC. */
    private final CmDatagramPeers datagram;
    /** The server: it lets the client disconnect first. */
    private final boolean passive;
    private CoreEngine.CoreResources resources;

    private CmDataConnections(EventChannel events, CmDatagramPeers datagram, boolean passive) {
        this.events = events;
        this.datagram = datagram;
        this.passive = passive;
    }

    /** Waits, up to {@link #DISCONNECT_WAIT}, until each of {@code ids} had its DISCONNECTED (or error) event. */
    private void awaitDisconnects(Set<CmId> waiting) {
        long deadline = System.nanoTime() + DISCONNECT_WAIT.toNanos();
        while (!waiting.isEmpty()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return;
            }
            try {
                CmEvent e = events.await(Duration.ofNanos(left));
                if (e.type() == CmEventType.DISCONNECTED || e.type().isError()) {
                    waiting.remove(e.id());
                }
            } catch (CmTimeoutException | IllegalStateException e) {
                return;
            }
        }
    }

    private PortSpace portSpace() {
        return datagram != null ? PortSpace.UDP : PortSpace.TCP;
    }

    /** The peer's QP number for QP {@code i}'s sends: from rdma_cm with -c UD, else from the key message. */
    int remoteQpn(int i, int fromKeys) {
        return datagram != null ? datagram.remoteQpn(i) : fromKeys;
    }

    /** The Q_Key QP {@code i}'s UD sends carry: the one rdma_cm gave with -c UD, else {@code fallback}. */
    int remoteQkey(int i, int fallback) {
        return datagram != null ? datagram.remoteQkey(i) : fallback;
    }

    VerbsEngine.Resources resources() {
        return resources;
    }

    /** Connects the test's QPs over rdma_cm and returns them with the run's resources; both sides call it. */
    static CmDataConnections establish(PerftestSession s, VerbsEngine.ResourceSpec spec) {
        PerftestParameters p = s.p;
        if (!(s.engine() instanceof CoreEngine)) {
            throw new RunFailure(" -R/--rdma_cm needs the RDMA device engine (librdmacm)");
        }
        KeyMessage zero = new KeyMessage(0, 0, 0, 0, 0, 0, null, 0);
        CmDataConnections c = new CmDataConnections(EventChannel.create(),
                p.connection == PerftestParameters.Connection.UD ? new CmDatagramPeers(p.numQps) : null, p.isServer());
        try {
            CmId listener = null;
            if (p.isServer()) {
                listener = c.track(c.events.createId(c.portSpace()));
                InetSocketAddress local = p.sourceIp == null ? new InetSocketAddress("0.0.0.0", p.port)
                        : CmExchangeChannel.ipv4(p.sourceIp, p.port);
                listener.bindAddress(local);
                listener.listen(p.numQps);
            }
            s.ex.handShake(zero, "sync before the rdma_cm connections");
            if (p.isServer()) {
                c.accept(p, spec, listener);
            } else {
                c.connect(p, spec);
            }
            s.ex.handShake(zero, "sync after the rdma_cm connections");
            return c;
        } catch (ExchangeChannel.ConnectException e) {
            c.close();
            throw new RunFailure(e.getMessage(), e);
        } catch (RuntimeException e) {
            c.close();
            throw e instanceof RunFailure || e instanceof ExchangeException ? e
                    : new RunFailure("Failed to create RDMA CM connection with resources.\n (" + e.getMessage()
                    + ")", e);
        }
    }

    private CmId track(CmId id) {
        ids.add(id);
        return id;
    }

    private static ConnectionParameters parameters(PerftestParameters p) {
        int depth = p.verb() == PerftestTest.Verb.READ ? p.outReads : 0;
        return CmExchangeChannel.connectParameters(p.retryCount, depth, p.retryCount);
    }

    private void build(VerbsEngine.ResourceSpec spec, List<CmId> on) {
        QueuePairCapabilities caps = new QueuePairCapabilities(spec.txDepth(), spec.rxDepth(), 1, 1,
                Math.max(0, spec.inlineSize()));
        resources = new CoreEngine.CoreResources(on.get(0).context(), spec,
                (i, pd, sendCq, recvCq, srq) -> on.get(i).createQp(pd, sendCq, recvCq, srq, caps));
    }

    /** {@code rdma_cm_server_connection}: one CONNECT_REQUEST per QP, accepted in arrival order. */
    private void accept(PerftestParameters p, VerbsEngine.ResourceSpec spec, CmId listener) {
        Duration wait = Duration.ofSeconds(p.timeoutSeconds);
        List<CmId> requests = new ArrayList<>();
        for (int i = 0; i < p.numQps; i++) {
            CmEvent e = listener.await(CmEventType.CONNECT_REQUEST, wait);
            requests.add(track(e.id()));
        }
        build(spec, requests);
        ConnectionParameters params = parameters(p);
        boolean learn = datagram != null && CmDatagramPeers.passiveSends(p);
        for (int i = 0; i < requests.size(); i++) {
            CmId id = requests.get(i);
            if (learn) {
                CmDatagramPeers.postAddressReceive(resources, i);
            }
            id.accept(params);
            if (datagram == null) {
                QueuePair qp = id.queuePair().orElseThrow();
                qp.modify(new QueuePairAttributes().minRnrTimer(12)); // perftest's MIN_RNR_TIMER, RC only
            } else if (learn) {
                datagram.receiveAddress(resources, i, id.portNum(), p.timeoutSeconds * 1000L);
            }
        }
        listener.close();
        ids.remove(listener);
    }

    /** {@code rdma_cm_client_connection}: resolve and connect one ID per QP, again if the server refuses. */
    private void connect(PerftestParameters p, VerbsEngine.ResourceSpec spec) throws ExchangeChannel.ConnectException {
        InetSocketAddress server = CmExchangeChannel.ipv4(p.servername, p.port);
        InetSocketAddress source = p.sourceIp == null ? null : CmExchangeChannel.ipv4(p.sourceIp, 0);
        for (int attempt = 1; ; attempt++) {
            List<CmId> mine = new ArrayList<>();
            try {
                for (int i = 0; i < p.numQps; i++) {
                    CmId id = track(events.createId(portSpace()));
                    mine.add(id);
                    CmExchangeChannel.resolve(id, source, server, p.tos);
                }
                build(spec, mine);
                ConnectionParameters params = parameters(p);
                for (CmId id : mine) {
                    id.connect(params);
                }
                for (int i = 0; i < mine.size(); i++) {
                    CmEvent e = mine.get(i).await(CmEventType.ESTABLISHED, Duration.ofSeconds(p.timeoutSeconds));
                    if (datagram != null) {
                        datagram.established(resources, i, e.datagram(), CmDatagramPeers.passiveSends(p),
                                p.timeoutSeconds * 1000L);
                    }
                }
                return;
            } catch (ConnectionRejectedException e) {
                releaseAttempt(mine);
                if (attempt == CLIENT_ATTEMPTS) {
                    throw new RunFailure("Failed to connect RDMA CM client, tried " + CLIENT_ATTEMPTS + " times.\n"
                            + " Failed to create RDMA CM connection.\n (" + e.getMessage() + "; " + (e.reason()
                            == ConnectionRejectedException.REASON_NO_LISTENER ? "nothing listens on port " + p.port
                            : "the server refused: do both sides use the same -q?") + ")", e);
                }
                sleep(RETRY_PAUSE_MILLIS);
            }
        }
    }

    private void releaseAttempt(List<CmId> attempt) {
        if (resources != null) {
            resources.close();
            resources = null;
        }
        for (CmId id : attempt) {
            id.close();
            ids.remove(id);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RunFailure(" interrupted while connecting over rdma_cm", e);
        }
    }

    /** How long close waits for the peer's side of the disconnects. */
    static final Duration DISCONNECT_WAIT = Duration.ofSeconds(5);

    /**
     * Ends every connection and waits, up to {@link #DISCONNECT_WAIT} each step, for their DISCONNECTED events, so
     * that each ID is still there to answer the peer's own disconnect request (a C client waits for one
     * DISCONNECTED per connection); then releases the QPs before the buffers, the IDs and the channel.
     *
     * <p>The passive side (the server) first lets the client disconnect, as perftest's server does (it never
     * disconnects before destroying): a perftest client disconnects only once its last exchange SEND completed, and
     * until then the exchange channel, which the session closes after this, must stay alive to ACK that SEND's
     * retransmission. Whatever the client has not disconnected by then, this side disconnects (the QPs go to ERR).
     */
    @Override
    public void close() {
        RuntimeException first = null;
        Set<CmId> connected = new HashSet<>();
        for (CmId id : ids) {
            if (id.queuePair().isPresent() && id.portSpace() == PortSpace.TCP) { // UD has no connection to end
                connected.add(id);
            }
        }
        Set<CmId> all = Set.copyOf(connected);
        if (passive) {
            awaitDisconnects(connected); // leaves those the client has not disconnected
        }
        Set<CmId> waiting = new HashSet<>();
        for (CmId id : all) {
            try {
                id.disconnect(); // QP to ERR; a DREQ, or the DREP answering the client's
                if (connected.contains(id)) {
                    waiting.add(id);
                }
            } catch (RuntimeException e) {
                // the connection never completed: nothing to tell the peer
            }
        }
        awaitDisconnects(waiting);
        if (resources != null) {
            try {
                resources.close();
            } catch (RuntimeException e) {
                first = e;
            }
        }
        for (CmId id : ids) {
            try {
                id.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        try {
            events.close();
        } catch (RuntimeException e) {
            if (first == null) {
                first = e;
            } else {
                first.addSuppressed(e);
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
