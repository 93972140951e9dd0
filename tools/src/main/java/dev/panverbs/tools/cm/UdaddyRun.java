package dev.panverbs.tools.cm;

import dev.panverbs.core.Access;
import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairCapabilities;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.VerbsException;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletionOpcode;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.core.cm.CmEvent;
import dev.panverbs.core.cm.CmEventType;
import dev.panverbs.core.cm.CmId;
import dev.panverbs.core.cm.CmTimeoutException;
import dev.panverbs.core.cm.ConnectionParameters;
import dev.panverbs.core.cm.EventChannel;
import dev.panverbs.core.cm.PortSpace;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * One udaddy run, single-threaded as rdma-core's: the rdma_cm events of every ID are handled from one channel until
 * each connection is set up or has failed, then the CQs are polled one node after the other. Per node, as udaddy:
 * a PD, one CQ ({@code 2 x -C} entries) for sends and receives, the ID's UD QP ({@code -C} WRs each way, one SGE),
 * one buffer of {@code -S} + 40 (GRH) bytes that every receive lands in and every send is sent from.
 */
final class UdaddyRun {

    private static final Duration RESOLVE = Duration.ofMillis(2000);
    /** How long the client waits for an rdma_cm event (rdma-core's udaddy waits forever; the CM's retries end sooner). */
    private static final Duration EVENT = Duration.ofSeconds(120);
    /** How long the data phase may go without a completion (a UD datagram lost on the way would hang udaddy). */
    private static final long IDLE_NANOS = Duration.ofSeconds(60).toNanos();
    private static final int GRH = 40;

    /** {@code struct cmatest_node}. */
    private static final class Node {
        final int index;
        CmId id;
        ProtectionDomain pd;
        CompletionQueue cq;
        QueuePair qp;
        MemoryRegion mr;
        AddressHandle ah;
        int remoteQpn;
        int remoteQkey;
        boolean connected;

        Node(int index) {
            this.index = index;
        }
    }

    private final Udaddy.Settings s;
    private final PrintWriter out;
    private final PrintWriter err;
    private final List<Node> nodes = new ArrayList<>();
    private final WorkCompletions wcs = WorkCompletions.allocate(8);
    private EventChannel channel;
    private int connectsLeft;
    private int connIndex;

    UdaddyRun(Udaddy.Settings settings, PrintWriter out, PrintWriter err) {
        this.s = settings;
        this.out = out;
        this.err = err;
    }

    int run() {
        int ret;
        connectsLeft = s.connections();
        try (EventChannel ch = EventChannel.create()) {
            channel = ch;
            for (int i = 0; i < s.connections(); i++) {
                Node n = new Node(i);
                if (s.client()) {
                    n.id = ch.createId(PortSpace.UDP);
                }
                nodes.add(n);
            }
            ret = s.client() ? client() : server();
            out.println("test complete");
            out.flush();
            // udaddy's destroy_node closes the AH first; here the QP goes first (with the ID): unsignaled sends whose
            // completions were never polled still name the AH, and its close is refused until their QP is gone
            for (Node n : nodes) {
                if (n.id != null) {
                    n.id.close();
                }
                if (n.ah != null) {
                    n.ah.close();
                }
            }
        }
        out.println("return status " + ret);
        out.flush();
        return ret & 0xFF; // udaddy's main returns ret: the shell sees its low byte
    }

    private int server() {
        out.println("udaddy: starting server");
        out.flush();
        try (CmId listener = channel.createId(PortSpace.UDP)) {
            listener.bindAddress(s.bind());
            listener.listen(0);
            connectEvents(Duration.ofDays(365)); // its result is not checked: udaddy serves the nodes that connected
            if (s.count() == 0) {
                return 0;
            }
            out.println("receiving data transfers");
            out.flush();
            int ret = pollCqs();
            if (ret != 0) {
                return ret;
            }
            out.println("sending replies");
            out.flush();
            for (Node n : nodes) {
                postSends(n, SendFlag.SIGNALED_BIT);
            }
            ret = pollCqs();
            if (ret == 0) {
                out.println("data transfers complete");
                out.flush();
            }
            return ret;
        }
    }

    private int client() {
        out.println("udaddy: starting client");
        out.println("udaddy: connecting");
        out.flush();
        for (Node n : nodes) {
            n.id.resolveAddress(s.bind(), s.server(), RESOLVE);
        }
        int ret = connectEvents(EVENT);
        if (ret != 0 || s.count() == 0) {
            return ret;
        }
        out.println("initiating data transfers");
        out.flush();
        for (Node n : nodes) {
            postSends(n, 0);
        }
        out.println("receiving data transfers");
        out.flush();
        ret = pollCqs();
        if (ret == 0) {
            out.println("data transfers complete");
            out.flush();
        }
        return ret;
    }

    // ---- rdma_cm events ----

    private int connectEvents(Duration wait) {
        int ret = 0;
        while (connectsLeft > 0 && ret == 0) {
            CmEvent e;
            try {
                e = channel.await(wait);
            } catch (CmTimeoutException timeout) {
                err.println("udaddy: no rdma_cm event in " + wait.toSeconds() + " s; " + connectsLeft
                        + " connection(s) not set up");
                err.flush();
                return -110; // -ETIMEDOUT
            }
            ret = handle(e);
        }
        return ret;
    }

    private int handle(CmEvent e) {
        Node n = node(e.id());
        if (n == null && e.type() != CmEventType.CONNECT_REQUEST) {
            return 0; // an ID this run already rejected and closed
        }
        try {
            return switch (e.type()) {
                case ADDR_RESOLVED -> addrResolved(n);
                case ROUTE_RESOLVED -> routeResolved(n);
                case CONNECT_REQUEST -> connectRequest(e.id());
                case ESTABLISHED -> established(n, e);
                case ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED -> {
                    out.printf("udaddy: event: %s, error: %d%n", "RDMA_CM_EVENT_" + e.type().name(), e.status());
                    out.flush();
                    connectsLeft--;
                    yield e.status();
                }
                default -> 0; // DEVICE_REMOVAL: cleaned up after the test, as udaddy does
            };
        } catch (VerbsException | IllegalStateException | IllegalArgumentException failure) {
            err.println("udaddy: " + failure.getMessage());
            err.flush();
            connectsLeft--;
            return -1;
        }
    }

    private Node node(CmId id) {
        for (Node n : nodes) {
            if (n.id == id) {
                return n;
            }
        }
        return null;
    }

    private int addrResolved(Node n) {
        if (s.tos() != null) {
            try {
                n.id.setTypeOfService(s.tos());
            } catch (VerbsException e) {
                err.println("udaddy: set TOS option failed: " + e.getMessage());
                err.flush();
            }
        }
        n.id.resolveRoute(RESOLVE);
        return 0;
    }

    private int routeResolved(Node n) {
        int ret = verifyParams(n.id);
        if (ret != 0) {
            connectsLeft--;
            return ret;
        }
        init(n);
        n.id.connect(ConnectionParameters.defaults());
        return 0;
    }

    private int connectRequest(CmId id) {
        if (connIndex == nodes.size()) {
            out.println("udaddy: failing connection request");
            out.flush();
            id.reject(null);
            id.close();
            return -12; // -ENOMEM, as udaddy
        }
        Node n = nodes.get(connIndex++);
        n.id = id;
        int ret = verifyParams(id);
        if (ret != 0) {
            n.id = null;
            connectsLeft--;
            out.println("udaddy: failing connection request");
            out.flush();
            id.reject(null);
            id.close();
            return ret;
        }
        init(n);
        id.accept(ConnectionParameters.defaults()); // the ID's QP number is what the SIDR reply carries
        n.connected = true;
        connectsLeft--;
        return 0;
    }

    private int established(Node n, CmEvent e) {
        CmEvent.Datagram peer = e.datagram();
        n.remoteQpn = peer.qpNum();
        n.remoteQkey = peer.qkey();
        n.ah = n.pd.createAh(peer.address());
        n.connected = true;
        connectsLeft--;
        return 0;
    }

    /** udaddy's verify_test_params: a message must fit the port's active MTU. */
    private int verifyParams(CmId id) {
        int mtu = id.context().queryPort(id.portNum()).activeMtu().bytes();
        if (s.count() > 0 && s.size() > mtu) {
            out.printf("udaddy: message_size %d is larger than active mtu %d%n", s.size(), mtu);
            out.flush();
            return -22; // -EINVAL
        }
        return 0;
    }

    /** init_node, create_message and post_recvs. */
    private void init(Node n) {
        Context ctx = n.id.context();
        n.pd = ctx.allocPd();
        n.cq = ctx.createCq(s.count() > 0 ? s.count() * 2 : 2).build();
        int wrs = Math.max(s.count(), 1);
        n.qp = n.id.createQp(n.pd, n.cq, n.cq, new QueuePairCapabilities(wrs, wrs, 1, 1, 0));
        if (s.count() == 0) {
            return;
        }
        n.mr = n.pd.allocate(s.size() + GRH, EnumSet.of(Access.LOCAL_WRITE));
        for (int i = 0; i < s.count(); i++) {
            n.qp.receiveRequests().recv(n.index).sge(n.mr, 0, s.size() + GRH).post();
        }
    }

    /** post_sends: {@code -C} SENDs with immediate = this QP's number, from the start of the buffer. */
    private void postSends(Node n, int flags) {
        if (!n.connected || s.count() == 0) {
            return;
        }
        for (int i = 0; i < s.count(); i++) {
            n.qp.sendRequests().sendWithImm(n.index, flags, n.qp.qpNum()).ud(n.ah, n.remoteQpn, n.remoteQkey)
                    .sge(n.mr, 0, s.size()).post();
        }
    }

    // ---- completions ----

    /**
     * poll_cqs: {@code -C} completions per connected node. The first receive of a node without an address handle
     * (the server) makes one that answers its sender, with the QP number the sender put in the immediate data and
     * this QP's own qkey (udaddy's create_reply_ah).
     */
    private int pollCqs() {
        for (Node n : nodes) {
            if (!n.connected) {
                continue;
            }
            long idleSince = System.nanoTime();
            int idle = 0;
            for (int done = 0; done < s.count(); ) {
                int got = n.cq.poll(wcs);
                if (got == 0) {
                    if (System.nanoTime() - idleSince > IDLE_NANOS) {
                        err.printf("udaddy: connection %d: %d of %d completions, then none for %d s (a lost "
                                + "datagram?)%n", n.index, done, s.count(), IDLE_NANOS / 1_000_000_000L);
                        err.flush();
                        return -110;
                    }
                    if (++idle % 64 == 0) {
                        LockSupport.parkNanos(20_000); // do not starve a peer on the same cores
                    } else {
                        Thread.onSpinWait();
                    }
                    continue;
                }
                idleSince = System.nanoTime();
                for (int i = 0; i < got; i++) {
                    int ret = check(n, wcs.get(i));
                    if (ret != 0) {
                        return ret;
                    }
                }
                if (n.ah == null) {
                    WorkCompletion first = wcs.get(0);
                    n.ah = n.pd.createAhFromWc(first, n.mr.buffer().asSlice(0, GRH), n.id.portNum());
                    n.remoteQpn = first.immData();
                    n.remoteQkey = n.qp.query().qkey();
                }
                done += got;
            }
        }
        return 0;
    }

    /** What udaddy leaves unchecked: every completion succeeded, and a receive is a whole message from its sender. */
    private int check(Node n, WorkCompletion wc) {
        if (!wc.ok()) {
            err.printf("udaddy: connection %d: completion error %s (vendor error %#x)%n", n.index, wc.status(),
                    wc.vendorErr());
            err.flush();
            return -1;
        }
        if (wc.opcode() == WorkCompletionOpcode.RECV
                && (wc.byteLen() != s.size() + (wc.hasGrh() ? GRH : 0) || !wc.hasImm() || wc.immData() != wc.srcQp())) {
            err.printf("udaddy: connection %d: a receive of %d bytes, immediate %s, from QP %d; udaddy sends %d bytes "
                    + "with its QP number as immediate%n", n.index, wc.byteLen(), wc.hasImm() ? wc.immData() : "none",
                    wc.srcQp(), s.size());
            err.flush();
            return -1;
        }
        return 0;
    }
}
