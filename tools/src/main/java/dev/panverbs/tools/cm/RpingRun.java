package dev.panverbs.tools.cm;

import dev.panverbs.core.Access;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairCapabilities;
import dev.panverbs.core.QueuePairState;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.VerbsException;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletionOpcode;
import dev.panverbs.core.WorkCompletionStatus;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.core.cm.CmEvent;
import dev.panverbs.core.cm.CmEventType;
import dev.panverbs.core.cm.CmId;
import dev.panverbs.core.cm.CmTimeoutException;
import dev.panverbs.core.cm.ConnectionParameters;
import dev.panverbs.core.cm.EventChannel;
import dev.panverbs.core.cm.PortSpace;
import java.io.PrintWriter;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * One rping connection, single-threaded: rdma_cm steps are awaited on the channel, the data path polls the CQ and,
 * between empty polls, the channel for DISCONNECTED (what rping's cm thread and cq thread do with a semaphore).
 * Buffers and work requests are rping's: a 16-byte receive buffer (one receive, reposted after each completion), a
 * 16-byte send buffer, the {@code -S}-byte RDMA buffer and, on the client, the start buffer.
 */
final class RpingRun {

    /** rping's resolve timeouts (ms) and queue sizes. */
    private static final Duration RESOLVE = Duration.ofMillis(2000);
    private static final int SQ_DEPTH = 16;
    private static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    /** How long a step of the connection set-up may take before the tool gives up (rping itself waits forever). */
    private static final Duration SETUP = Duration.ofSeconds(120);

    private final Rping.Settings s;
    private final PrintWriter out;
    private final PrintWriter err;
    private EventChannel channel;
    private CmId id;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private QueuePair qp;
    private MemoryRegion recvMr;
    private MemoryRegion sendMr;
    private MemoryRegion rdmaMr;
    private MemoryRegion startMr;
    private final WorkCompletions wcs = WorkCompletions.allocate(1);
    private boolean disconnected;

    RpingRun(Rping.Settings settings, PrintWriter out, PrintWriter err) {
        this.s = settings;
        this.out = out;
        this.err = err;
    }

    /** One connection of a persistent server ({@code -P}): {@code child} is its CONNECT_REQUEST's ID. */
    private RpingRun(Rping.Settings settings, PrintWriter out, PrintWriter err, EventChannel channel, CmId child) {
        this(settings, out, err);
        this.channel = channel;
        this.id = child;
    }

    /** The run; rping's exit status: 0, the errno when there is no event channel, else 255 (its -1). */
    int run() {
        EventChannel ch;
        try {
            ch = EventChannel.create();
        } catch (VerbsException e) { // rping's create_first_event_channel: main returns errno
            err.println("rping: " + e.getMessage());
            err.flush();
            return e.errno() > 0 && e.errno() < 256 ? e.errno() : Rping.FAILED;
        }
        try (ch) {
            channel = ch;
            return (s.server() ? server() : client()) == 0 ? 0 : Rping.FAILED;
        }
    }

    private void debug(String format, Object... args) {
        if (s.debug()) {
            err.printf(format + "%n", args);
            err.flush();
        }
    }

    private void setup(CmId on) {
        Context ctx = on.context();
        pd = ctx.allocPd();
        cq = ctx.createCq(SQ_DEPTH * 2).build();
        if (s.selfCreateQp()) {
            // -q: the application's QP (ibv_create_qp), moved by rping itself; rdma_cm only exchanges its number
            qp = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(SQ_DEPTH).maxRecvWr(2).maxSendSge(1).maxRecvSge(1)
                    .build();
            qp.toInit(on.portNum(), EnumSet.noneOf(Access.class));
        } else {
            qp = on.createQp(pd, cq, cq, new QueuePairCapabilities(SQ_DEPTH, 2, 1, 1, 0));
        }
        recvMr = pd.allocate(16, EnumSet.of(Access.LOCAL_WRITE));
        sendMr = pd.allocate(16, EnumSet.noneOf(Access.class));
        EnumSet<Access> rdma = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE);
        rdmaMr = pd.allocate(s.size(), rdma);
        if (!s.server()) {
            startMr = pd.allocate(s.size(), rdma);
        }
        postRecv();
        debug("created pd, cq, qp %d and buffers on %s", qp.qpNum(), ctx.device().name());
    }

    private void postRecv() {
        qp.receiveRequests().recv(0).sge(recvMr, 0, 16).post();
    }

    private int server() {
        CmId listener = channel.createId(PortSpace.TCP);
        listener.bindAddress(s.address());
        listener.listen(3);
        debug("rdma_listen on %s", s.address());
        if (s.persistent()) {
            return persistentServer(listener);
        }
        CmEvent request = listener.await(CmEventType.CONNECT_REQUEST, Duration.ofDays(365));
        id = request.id();
        return serveConnection();
    }

    /**
     * {@code -P}: every CONNECT_REQUEST is served on a thread of its own, with its own PD, CQ, QP and buffers, all
     * released when that client disconnects, while this thread goes on listening (until interrupted).
     */
    private int persistentServer(CmId listener) {
        List<Thread> connections = new ArrayList<>();
        while (!Thread.currentThread().isInterrupted()) {
            CmEvent request;
            try {
                request = listener.await(CmEventType.CONNECT_REQUEST, Duration.ofSeconds(1));
            } catch (CmTimeoutException idle) {
                continue;
            }
            RpingRun connection = new RpingRun(s, out, err, channel, request.id());
            Thread t = new Thread(connection::serveAndRelease, "rping -P " + request.id());
            t.setDaemon(true);
            t.start();
            connections.removeIf(c -> !c.isAlive());
            connections.add(t);
        }
        Thread.interrupted(); // stopped: let the connections still served end before the channel closes
        for (Thread t : connections) {
            try {
                t.join(Duration.ofSeconds(10));
            } catch (InterruptedException again) {
                break;
            }
        }
        return 0;
    }

    private void serveAndRelease() {
        try {
            serveConnection();
        } catch (RuntimeException e) {
            err.println("rping: connection " + id + ": " + e.getMessage());
            err.flush();
        } finally {
            release();
        }
    }

    /** What rping_persistent_server_thread frees: the buffers, the QP, CQ and PD, then the ID. */
    private void release() {
        id.close(); // and the QP it owns
        for (AutoCloseable c : new AutoCloseable[] {s.selfCreateQp() ? qp : null, recvMr, sendMr, rdmaMr, cq, pd}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                err.println("rping: releasing " + c + ": " + e.getMessage());
                err.flush();
            }
        }
    }

    /** Accepts the connection of {@link #id} and serves it until the client disconnects. */
    private int serveConnection() {
        debug("child cma %s", id);
        setup(id);
        if (s.selfCreateQp()) {
            selfModify(); // rping_accept: INIT, RTR, RTS from the request, before the reply
            id.accept(ConnectionParameters.defaults().withQpNum(qp.qpNum()));
        } else {
            id.accept(ConnectionParameters.defaults());
        }
        id.await(CmEventType.ESTABLISHED, SETUP);
        debug("accepted connection from %s", id.peerAddress());
        int rc = serveUntilDisconnected();
        disconnect(); // rping_run_server: also the DREP that completes the client's disconnect
        return rc;
    }

    private int serveUntilDisconnected() {
        byte[] text = new byte[s.size()];
        while (true) {
            WorkCompletion adv = next(WorkCompletionOpcode.RECV);
            if (adv == null) {
                return 0; // the client disconnected: rping's normal end
            }
            long addr = recvMr.buffer().get(BE64, 0);
            int rkey = recvMr.buffer().get(BE32, 8);
            int len = recvMr.buffer().get(BE32, 12);
            postRecv();
            debug("Received rkey %x addr %x len %d from peer", rkey, addr, len);
            if (len <= 0 || len > s.size()) {
                err.printf("server: peer advertised %d bytes; this side's buffer is %d (-S)%n", len, s.size());
                return 1;
            }
            qp.sendRequests().rdmaRead(1, SendFlag.SIGNALED_BIT, rkey, addr).sge(rdmaMr, 0, len).post();
            if (next(WorkCompletionOpcode.RDMA_READ) == null) {
                return 1;
            }
            MemorySegment.copy(rdmaMr.buffer(), ValueLayout.JAVA_BYTE, 0, text, 0, text.length);
            if (s.verbose()) {
                out.println("server ping data: " + RpingText.cString(text));
                out.flush();
            }
            goAhead();
            WorkCompletion sink = next(WorkCompletionOpcode.RECV);
            if (sink == null) {
                return 1;
            }
            addr = recvMr.buffer().get(BE64, 0);
            rkey = recvMr.buffer().get(BE32, 8);
            postRecv();
            int echo = RpingText.cString(text).length() + 1;
            qp.sendRequests().rdmaWrite(2, SendFlag.SIGNALED_BIT, rkey, addr).sge(rdmaMr, 0, Math.min(echo, len))
                    .post();
            if (next(WorkCompletionOpcode.RDMA_WRITE) == null) {
                return 1;
            }
            goAhead();
        }
    }

    private void goAhead() {
        qp.sendRequests().send(3, SendFlag.SIGNALED_BIT).sge(sendMr, 0, 16).post();
    }

    private int client() {
        id = channel.createId(PortSpace.TCP);
        id.resolveAddress(s.source(), s.address(), RESOLVE);
        id.await(CmEventType.ADDR_RESOLVED, RESOLVE.plus(SETUP));
        id.resolveRoute(RESOLVE);
        id.await(CmEventType.ROUTE_RESOLVED, RESOLVE.plus(SETUP));
        setup(id);
        if (s.selfCreateQp()) {
            id.connect(ConnectionParameters.defaults().withQpNum(qp.qpNum()));
            id.await(CmEventType.CONNECT_RESPONSE, SETUP); // an ID without a QP: the reply, not ESTABLISHED
            selfModify();
            id.establish();
        } else {
            id.connect(ConnectionParameters.defaults(), SETUP);
        }
        debug("rdma_connect to %s established", s.address());
        int rc = pings();
        if (!disconnected) {
            disconnect();
        }
        return rc;
    }

    /** rping_self_modify_qp: INIT (again), RTR and RTS with the attributes rdma_cm computed for the connection. */
    private void selfModify() {
        for (QueuePairState state : new QueuePairState[] {QueuePairState.INIT, QueuePairState.RTR,
                QueuePairState.RTS}) {
            qp.modify(id.initQpAttributes(state));
        }
        debug("self-created qp %d moved to %s", qp.qpNum(), qp.state());
    }

    /** rping_disconnect: a self-created QP is moved to ERR by rping itself first. */
    private void disconnect() {
        if (s.selfCreateQp()) {
            qp.toErr();
        }
        id.disconnect();
    }

    private int pings() {
        byte[] start = new byte[s.size()];
        byte[] back = new byte[s.size()];
        int first = 65;
        for (int ping = 0; s.count() == 0 || ping < s.count(); ping++) {
            RpingText.fill(start, ping, first);
            first = RpingText.next(first);
            MemorySegment.copy(start, 0, startMr.buffer(), ValueLayout.JAVA_BYTE, 0, start.length);
            advertise(startMr);
            if (next(WorkCompletionOpcode.RECV) == null) { // the server read the ping and says go on
                return failed("wait for RDMA_WRITE_ADV");
            }
            postRecv();
            advertise(rdmaMr);
            if (next(WorkCompletionOpcode.RECV) == null) { // the server wrote the ping back
                return failed("wait for RDMA_WRITE_COMPLETE");
            }
            postRecv();
            MemorySegment.copy(rdmaMr.buffer(), ValueLayout.JAVA_BYTE, 0, back, 0, back.length);
            if (s.validate() && !java.util.Arrays.equals(start, back)) {
                err.println("data mismatch!");
                err.flush();
                return 1;
            }
            if (s.verbose()) {
                out.println("ping data: " + RpingText.cString(back));
                out.flush();
            }
        }
        return 0;
    }

    private int failed(String what) {
        err.println(what + ": " + (disconnected ? "the server disconnected" : "the connection failed"));
        err.flush();
        return 1;
    }

    /** rping_format_send: the buffer's address, rkey and length, big-endian, then a signaled SEND. */
    private void advertise(MemoryRegion mr) {
        MemorySegment b = sendMr.buffer();
        b.set(BE64, 0, mr.address());
        b.set(BE32, 8, mr.rkey());
        b.set(BE32, 12, (int) mr.length());
        qp.sendRequests().send(4, SendFlag.SIGNALED_BIT).sge(sendMr, 0, 16).post();
    }

    /**
     * The next completion of {@code opcode}, skipping SEND completions; {@code null} once the connection is gone
     * (DISCONNECTED, or flushed work requests). Any other error status is reported as rping does and ends the run,
     * and so does a peer that sends nothing for {@code --peer-timeout}.
     */
    private WorkCompletion next(WorkCompletionOpcode opcode) {
        int idle = 0;
        long deadline = System.nanoTime() + s.peerTimeout().toNanos();
        while (true) {
            if (cq.poll(wcs) == 1) {
                WorkCompletion wc = wcs.get(0);
                if (wc.status() == WorkCompletionStatus.WR_FLUSH_ERR) {
                    disconnected = true;
                    return null;
                }
                if (!wc.ok()) {
                    err.printf("cq completion failed status %d%n", wc.statusValue());
                    err.flush();
                    throw new IllegalStateException("completion error " + wc.status());
                }
                if (wc.opcode() == WorkCompletionOpcode.RECV && wc.byteLen() != 16) {
                    err.printf("Received bogus data, size %d%n", wc.byteLen());
                    err.flush();
                    throw new IllegalStateException("a receive of " + wc.byteLen() + " bytes; rping sends 16");
                }
                if (wc.opcode() == opcode) {
                    return wc;
                }
                continue; // SEND completions
            }
            if (++idle % 64 == 0) {
                CmEvent e = id.pollEvent(); // this connection's: a persistent server's others stay queued
                if (e != null && (e.type() == CmEventType.DISCONNECTED || e.type().isError())) {
                    err.println((s.server() ? "server" : "client") + " DISCONNECT EVENT...");
                    err.flush();
                    disconnected = true;
                    return null;
                }
                if (System.nanoTime() - deadline > 0) {
                    // rping would wait forever; a live peer answers each message at once
                    throw new IllegalStateException("no " + opcode + " completion for " + s.peerTimeout().toSeconds()
                            + " s: the " + (s.server() ? "client" : "server") + " is connected but sends nothing "
                            + "(is it an rping of the same -S? a stuck peer?)");
                }
                LockSupport.parkNanos(20_000); // rping sleeps in ibv_get_cq_event; do not starve the peer
            } else {
                Thread.onSpinWait();
            }
        }
    }
}
