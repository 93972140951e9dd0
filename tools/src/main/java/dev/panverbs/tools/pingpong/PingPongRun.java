package dev.panverbs.tools.pingpong;

import dev.panverbs.core.Access;
import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.AddressVector;
import dev.panverbs.core.CompletionChannel;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.Device;
import dev.panverbs.core.LinkLayer;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.Mtu;
import dev.panverbs.core.PortAttributes;
import dev.panverbs.core.PostBatch;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairAttributes;
import dev.panverbs.core.QueuePairBuilder;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.ReceiveRequests;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.SendOperation;
import dev.panverbs.core.SendRequests;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletions;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;

/**
 * One ping-pong run over RC or UD, step for step what rdma-core's {@code ibv_rc_pingpong}/{@code ibv_ud_pingpong}
 * do, so that the QP attributes, the buffer image and the timing match and either side may be the C tool.
 *
 * <p>Resources (as in C): one buffer registered with local write ({@code size} bytes, UD: {@code size + 40} for
 * the GRH), one CQ of {@code rx-depth + 1} entries for both queues, optionally on a completion channel, one QP
 * with 1 send WR and {@code rx-depth} receive WRs, 1 SGE each. The send is inline when the granted
 * {@code max_inline_data} covers the message. All receives use the same buffer: the data of the last message
 * received is what {@code -c} checks.
 *
 * <p>The loop: the client sends first; each side posts its next send only when its previous send <em>and</em> a
 * receive have completed (the C tools' {@code pending} bits), and re-fills the receive queue when at most one
 * receive is left. With {@code -e} the loop sleeps on the completion channel, re-arms the CQ, then polls the CQ
 * empty (the C tools poll once, which is enough with two WRs in flight; polling empty is the safe form).
 *
 * <p>Differences from C, none visible on the wire: errors are one line with the failing verb and errno;
 * {@code -c} compares each whole page (see {@link PagePattern}) and the server exits 1 when a page differs (the C
 * tool prints the same line and exits 0); a RoCE port without {@code -g} is refused with a hint instead of a
 * bare {@code EINVAL} from {@code ibv_modify_qp}/{@code ibv_create_ah}.
 *
 * <p>A dead peer: C waits forever unless its send is in flight (RC: "Failed status transport retry counter
 * exceeded" after timeout 14 x retry_cnt 7, about 0.5 s; kept as is). Here a run also ends when nothing
 * completes for {@code --peer-timeout} (60 s), and, when both sides are panverbs and so keep the exchange
 * connection ({@link PeerLink}), about 3 s after the peer's process ends.
 */
final class PingPongRun {
    private static final long RECV_WRID = 1;
    private static final long SEND_WRID = 2;
    /** The Q_Key both C UD tools use. */
    static final int UD_QKEY = 0x11111111;
    /** Bytes of the Global Routing Header that precede every UD receive. */
    static final int GRH_SIZE = 40;

    private final PingPongOptions.Settings s;
    private final boolean ud;
    private final String tool;
    private final PrintWriter out;
    private final PrintWriter err;
    private QueuePair qp;
    private ProtectionDomain pd;
    private MemoryRegion mr;
    private AddressHandle ah;
    private PortAttributes port;
    private int remoteQpn;
    private MemorySegment inlineData;

    private PingPongRun(PingPongOptions.Settings s, boolean ud, PrintWriter out, PrintWriter err) {
        this.s = s;
        this.ud = ud;
        this.tool = ud ? "ud_pingpong" : "rc_pingpong";
        this.out = out;
        this.err = err;
    }

    static int rc(PingPongOptions.Settings s, PrintWriter out, PrintWriter err) throws IOException {
        return new PingPongRun(s, false, out, err).run();
    }

    static int ud(PingPongOptions.Settings s, PrintWriter out, PrintWriter err) throws IOException {
        return new PingPongRun(s, true, out, err).run();
    }

    private int dataOffset() {
        return ud ? GRH_SIZE : 0;
    }

    private int run() throws IOException {
        Device device = s.ibDev() == null ? Device.first() : Device.byName(s.ibDev());
        try (Context ctx = device.open()) {
            port = ctx.queryPort(s.ibPort());
            if (ud && s.size() > port.activeMtu().bytes()) {
                return fail("Requested size larger than port MTU (" + port.activeMtu().bytes() + ")");
            }
            CompletionChannel channel = s.events() ? ctx.createCompChannel() : null;
            pd = ctx.allocPd();
            mr = pd.allocate((long) s.size() + dataOffset(), EnumSet.of(Access.LOCAL_WRITE));
            PagePattern.fill(mr.buffer(), 0, s.size() + dataOffset());
            CompletionQueue.Builder cqb = ctx.createCq(s.rxDepth() + 1);
            if (channel != null) {
                cqb.channel(channel);
            }
            CompletionQueue cq = cqb.build();
            QueuePairBuilder qpb = pd.createQp(ud ? QueuePairType.UD : QueuePairType.RC, cq, cq).maxSendWr(1)
                    .maxRecvWr(s.rxDepth()).maxSendSge(1).maxRecvSge(1);
            if (s.newSend()) {
                qpb.sendOps(EnumSet.of(SendOperation.SEND)); // ibv_create_qp_ex with IBV_QP_EX_WITH_SEND
            }
            qp = qpb.build();
            if (qp.capabilities().maxInlineData() >= s.size()) {
                inlineData = mr.buffer().asSlice(dataOffset(), s.size());
            }
            if (ud) {
                qp.toInit(s.ibPort(), UD_QKEY);
            } else {
                qp.toInit(s.ibPort(), EnumSet.noneOf(Access.class));
            }
            int routs = postRecv(s.rxDepth());
            if (routs < s.rxDepth()) {
                return fail("Couldn't post receive (" + routs + ")");
            }
            if (channel != null) {
                cq.reqNotify(false);
            }
            if (!ud && port.linkLayer() != LinkLayer.ETHERNET && port.lid() == 0) {
                return fail("Couldn't get local LID");
            }
            byte[] gid = s.gidIndex() >= 0 ? ctx.queryGid(s.ibPort(), s.gidIndex()).toBytes() : new byte[16];
            int psn = new SecureRandom().nextInt(1 << 24);
            PingPongDestination local = new PingPongDestination(port.lid(), qp.qpNum(), psn, gid);
            out.println(ud ? PingPongReport.localAddressUd(local) : PingPongReport.localAddressRc(local));
            out.flush();

            PingPongExchange.Exchanged ex = s.isClient()
                    ? PingPongExchange.client(s.serverName(), s.port(), local, PingPongExchange.DEFAULT_TIMEOUT, true)
                    : PingPongExchange.server(s.port(), local, r -> connect(psn, r), PingPongExchange.DEFAULT_TIMEOUT,
                    true);
            try (PeerLink link = ex.link()) {
                PingPongDestination remote = ex.remote();
                out.println(PingPongReport.remoteAddress(remote));
                out.flush();
                if (s.isClient()) {
                    connect(psn, remote);
                }
                return loop(cq, channel, routs, link);
            }
        }
    }

    /** {@code pp_connect_ctx}: RC to RTR/RTS with the C tools' attributes; UD to RTR/RTS, then the AH. */
    private void connect(int myPsn, PingPongDestination dest) {
        if (dest.hasGid() && s.gidIndex() < 0) {
            throw new IllegalStateException("the peer sent GID " + GidText.format(dest.gid()) + " but this side has"
                    + " no GID index: give -g <index> here too");
        }
        if (!dest.hasGid() && port.grhRequired()) {
            throw new IllegalStateException("port " + s.ibPort() + " is " + (port.linkLayer() == LinkLayer.ETHERNET
                    ? "RoCE" : "GRH-only") + " and needs a GRH, but the peer sent no GID: run both sides with"
                    + " -g <gid index> (e.g. -g 1, see ibv_devinfo -v)");
        }
        AddressVector.Builder av = AddressVector.builder(s.ibPort()).dlid(dest.lid()).sl(s.sl()).srcPathBits(0);
        if (dest.hasGid()) {
            av.grh(dest.gid(), s.gidIndex(), 1);
        }
        remoteQpn = dest.qpn();
        if (ud) {
            qp.toRtr();
            qp.toRts(myPsn);
            ah = pd.createAh(av.build());
        } else {
            qp.toRtr(new QueuePairAttributes().ahAttr(av.build()).pathMtu(mtu()).destQpNum(dest.qpn())
                    .rqPsn(dest.psn()).maxDestRdAtomic(1).minRnrTimer(12));
            qp.toRts(new QueuePairAttributes().timeout(14).retryCnt(7).rnrRetry(7).sqPsn(myPsn).maxRdAtomic(1));
        }
    }

    private Mtu mtu() {
        for (Mtu m : Mtu.values()) {
            if (m.bytes() == s.mtu()) {
                return m;
            }
        }
        throw new IllegalArgumentException("MTU " + s.mtu());
    }

    /** {@code pp_post_recv}: posts {@code n} receives of the whole buffer; returns how many were accepted. */
    private int postRecv(int n) {
        ReceiveRequests wrs = qp.receiveRequests();
        wrs.clear();
        for (int i = 0; i < n; i++) {
            wrs.recv(RECV_WRID).sge(mr, 0, s.size() + dataOffset());
        }
        int posted = wrs.post();
        wrs.clear();
        return posted;
    }

    /** {@code pp_post_send}: one signaled SEND of {@code size} bytes (inline when it fits). */
    private boolean postSend() {
        if (s.newSend()) {
            try (PostBatch batch = qp.startSend()) {
                batch.send(SEND_WRID, SendFlag.SIGNALED_BIT);
                if (inlineData != null) {
                    batch.setInlineData(inlineData);
                } else {
                    batch.setSge(mr, dataOffset(), s.size());
                }
                batch.submit();
            }
            return true;
        }
        SendRequests wrs = qp.sendRequests();
        wrs.send(SEND_WRID, SendFlag.SIGNALED_BIT);
        if (inlineData != null) {
            wrs.inline(inlineData);
        } else {
            wrs.sge(mr, dataOffset(), s.size());
        }
        if (ud) {
            wrs.ud(ah, remoteQpn, UD_QKEY);
        }
        boolean ok = wrs.post() == 1;
        wrs.clear();
        return ok;
    }

    private int loop(CompletionQueue cq, CompletionChannel channel, int routs, PeerLink link) {
        int pageSize = PagePattern.pageSize();
        int pending = (int) RECV_WRID;
        if (s.isClient()) {
            if (s.chk()) {
                PagePattern.mark(mr.buffer(), dataOffset(), s.size(), pageSize);
            }
            if (!postSend()) {
                return fail("Couldn't post send");
            }
            pending |= (int) SEND_WRID;
        }
        WorkCompletions wcs = WorkCompletions.allocate(2);
        int iters = s.iters();
        int rcnt = 0;
        int scnt = 0;
        long start = System.nanoTime();
        long idleLimit = s.peerTimeoutSeconds() * 1_000_000_000L;
        while (rcnt < iters || scnt < iters) {
            // the C tools wait forever; a peer that died, or runs fewer -n, must not hang this side (PeerLink)
            long lastProgress = System.nanoTime();
            if (channel != null) {
                CompletionQueue evCq = null;
                while (evCq == null) { // in waits of at most a second, looking at the peer's connection between
                    long waited = System.nanoTime() - lastProgress;
                    if (waited >= idleLimit) {
                        return stalled(rcnt, scnt, iters);
                    }
                    if (link.gone(System.nanoTime(), lastProgress)) {
                        return peerGone(rcnt, scnt, iters);
                    }
                    evCq = channel.getCqEvent(Duration.ofNanos(Math.min(idleLimit - waited, PeerLink.CHECK_NANOS)))
                            .orElse(null);
                }
                if (evCq != cq) {
                    return fail("CQ event for unknown CQ " + evCq);
                }
                cq.reqNotify(false);
            }
            int ne;
            int spins = 0;
            do {
                ne = cq.poll(wcs);
                if (ne < 1 && ++spins == 4096) {
                    spins = 0;
                    long now = System.nanoTime();
                    if (now - lastProgress > idleLimit) {
                        return stalled(rcnt, scnt, iters);
                    }
                    if (link.gone(now, lastProgress)) {
                        return peerGone(rcnt, scnt, iters);
                    }
                }
            } while (channel == null && ne < 1);
            while (ne > 0) {
                for (int i = 0; i < ne; i++) {
                    WorkCompletion wc = wcs.get(i);
                    if (!wc.ok()) {
                        return fail("Failed status " + wc.status().description() + " (" + wc.statusValue()
                                + ") for wr_id " + wc.wrId());
                    }
                    long wrId = wc.wrId();
                    if (wrId == SEND_WRID) {
                        ++scnt;
                    } else if (wrId == RECV_WRID) {
                        if (--routs <= 1) {
                            routs += postRecv(s.rxDepth() - routs);
                            if (routs < s.rxDepth()) {
                                return fail("Couldn't post receive (" + routs + ")");
                            }
                        }
                        ++rcnt;
                    } else {
                        return fail("Completion for unknown wr_id " + wrId);
                    }
                    pending &= ~(int) wrId;
                    if (scnt < iters && pending == 0) {
                        if (!postSend()) {
                            return fail("Couldn't post send");
                        }
                        pending = (int) (RECV_WRID | SEND_WRID);
                    }
                }
                // busy polling handles one batch per turn, as C; after an event, drain what is queued
                ne = channel == null ? 0 : cq.poll(wcs);
            }
        }
        float usec = PingPongReport.elapsedMicros(start, System.nanoTime());
        out.println(PingPongReport.bandwidthLine(s.size(), iters, usec));
        out.println(PingPongReport.latencyLine(iters, usec));
        int status = 0;
        if (!s.isClient() && s.chk()) {
            List<Integer> bad = PagePattern.invalidPages(mr.buffer(), dataOffset(), s.size(), pageSize);
            for (int page : bad) {
                out.println(PingPongReport.invalidPage(page));
            }
            status = bad.isEmpty() ? 0 : 1;
        }
        out.flush();
        return status;
    }

    private int stalled(int rcnt, int scnt, int iters) {
        return fail("no completion for " + s.peerTimeoutSeconds() + " s after " + rcnt + " of " + iters
                + " receives and " + scnt + " of " + iters + " sends: the peer stopped (did it fail, or run fewer"
                + " iterations with another -n?)");
    }

    private int peerGone(int rcnt, int scnt, int iters) {
        return fail(PeerLink.message() + "; this side had " + rcnt + " of " + iters + " receives and " + scnt + " of "
                + iters + " sends");
    }

    private int fail(String message) {
        out.flush();
        err.println(tool + ": " + message);
        err.flush();
        return 1;
    }
}
