package dev.panverbs.tools.perftest;

import dev.panverbs.core.Access;
import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.AddressVector;
import dev.panverbs.core.CompletionChannel;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.DeviceAttributes;
import dev.panverbs.core.GidType;
import dev.panverbs.core.LinkLayer;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.Mtu;
import dev.panverbs.core.PortAttributes;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairAttributes;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.SendOperation;
import dev.panverbs.core.SharedReceiveQueue;
import dev.panverbs.core.UnsupportedVerbException;
import dev.panverbs.core.VerbsException;
import dev.panverbs.core.WorkCompletionStatus;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.core.mlx5.DirectCompletionQueue;
import dev.panverbs.core.mlx5.DirectSendQueue;
import dev.panverbs.core.mlx5.Mlx5;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * {@link VerbsEngine} on {@code dev.panverbs.core}: the real thing. Setup mirrors perftest's {@code ctx_init}
 * (one PD, one MR or one per QP, a send CQ and for SEND tests a receive CQ, QPs moved to INIT) and
 * {@code ctx_connect}; posting uses {@link dev.panverbs.core.PostBatch} ({@code ibv_wr_*}) unless
 * --use_old_post_send or the device has no extended QPs, then the classic reusable WR chain.
 */
final class CoreEngine implements VerbsEngine {

    @Override
    public List<String> deviceNames() {
        List<String> names = new ArrayList<>();
        for (dev.panverbs.core.Device d : dev.panverbs.core.Device.list()) {
            names.add(d.name());
        }
        return names;
    }

    @Override
    public Device open(String name) {
        return new CoreDevice(dev.panverbs.core.Device.open(name));
    }

    static final class CoreDevice implements Device {
        private final Context ctx;
        private final DeviceAttributes attrs;

        CoreDevice(Context ctx) {
            this.ctx = ctx;
            DeviceAttributes a;
            try {
                a = ctx.queryDevice();
            } catch (RuntimeException e) {
                ctx.close();
                throw e;
            }
            this.attrs = a;
        }

        @Override
        public String name() {
            return ctx.device().name();
        }

        @Override
        public String transport() {
            return switch (ctx.device().transportType()) {
                case IB -> "IB";
                case IWARP -> "IW";
                default -> "Unknown";
            };
        }

        @Override
        public int vendorId() {
            return attrs.vendorId();
        }

        @Override
        public int vendorPartId() {
            return attrs.vendorPartId();
        }

        @Override
        public int maxQpRdAtom() {
            return attrs.limits().maxQpRdAtom();
        }

        @Override
        public int maxPkeys() {
            return attrs.limits().maxPkeys();
        }

        @Override
        public int numCompVectors() {
            return ctx.numCompVectors();
        }

        @Override
        public boolean supportsWrApi() {
            return true; // decided per QP at creation: a provider without ibv_create_qp_ex falls back (allocate)
        }

        @Override
        public OdpCaps odpCaps() {
            dev.panverbs.core.OdpCapabilities o = attrs.odp();
            return new OdpCaps(o.supported(), mask(o.rc()), mask(o.uc()), mask(o.ud()), mask(o.xrc()));
        }

        private static int mask(Set<dev.panverbs.core.OdpCapabilities.Operation> ops) {
            int m = 0;
            for (dev.panverbs.core.OdpCapabilities.Operation op : ops) {
                m |= op.value();
            }
            return m;
        }

        @Override
        public boolean isMlx5() {
            return Mlx5.isSupported(ctx);
        }

        @Override
        public PortInfo port(int port) {
            PortAttributes a = ctx.queryPort(port);
            return new PortInfo(a.state().value(), a.linkLayer() == LinkLayer.ETHERNET, a.activeMtu().value(),
                    a.lid(), a.gidTblLen());
        }

        @Override
        public List<GidEntry> gids(int port) {
            List<GidEntry> out = new ArrayList<>();
            for (dev.panverbs.core.GidEntry e : ctx.queryGidTable()) {
                if (e.portNum() == port && !e.gid().isZero()) {
                    out.add(new GidEntry(e.index(), e.gid().toBytes(), typeName(e.type())));
                }
            }
            out.sort((a, b) -> Integer.compare(a.index(), b.index()));
            return out;
        }

        private static String typeName(GidType t) {
            return t == null ? null : switch (t) {
                case IB -> "IB/RoCE v1";
                case ROCE_V1 -> "RoCE v1";
                case ROCE_V2 -> "RoCE v2";
            };
        }

        @Override
        public Resources allocate(ResourceSpec spec) {
            return new CoreResources(ctx, spec);
        }

        @Override
        public void close() {
            ctx.close();
        }
    }

    /** Makes QP {@code i} of a run on its PD and CQs (rdma_cm: {@code rdma_create_qp} on the i-th ID). */
    interface QpMaker {
        QueuePair make(int i, ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq);
    }

    /** PD, MRs, CQs and QPs of one run. */
    static final class CoreResources implements Resources {
        final ResourceSpec spec;
        final ProtectionDomain pd;
        final CompletionChannel channel;
        final MemoryRegion[] mrs;
        final CompletionQueue sendCq;
        final CompletionQueue recvCq;
        final Cq sendCqView;
        final Cq recvCqView;
        final CoreQp[] qps;
        final boolean wrApi;
        /** perftest's {@code ctx->srq} (--use-srq on the receiving side), or null. */
        final SharedReceiveQueue srq;

        CoreResources(Context ctx, ResourceSpec spec) {
            this(ctx, spec, null);
        }

        /**
         * @param maker creates QP {@code i} in place of {@code ibv_create_qp} and INIT (-R: {@code rdma_create_qp}
         *              on the rdma_cm ID, which also moves it through the states), or null
         */
        CoreResources(Context ctx, ResourceSpec spec, QpMaker maker) {
            this.spec = spec;
            ProtectionDomain pdv = null;
            CompletionChannel ch = null;
            List<AutoCloseable> made = new ArrayList<>();
            try {
                pdv = ctx.allocPd();
                made.add(pdv);
                if (spec.useEvents()) {
                    ch = ctx.createCompChannel();
                    made.add(ch);
                }
                Set<Access> access = access(spec);
                int mrCount = spec.mrPerQp() ? spec.numQps() : 1;
                mrs = new MemoryRegion[mrCount];
                Random random = new Random();
                for (int i = 0; i < mrCount; i++) {
                    mrs[i] = pdv.allocate(spec.bufferSize(), access);
                    if (!spec.zeroFill()) {
                        fillRandom(mrs[i], random); // perftest fills its buffers with rand()
                    }
                }
                CompletionQueue.Builder sb = ctx.createCq(spec.txDepth() * spec.numQps());
                if (ch != null) {
                    sb.channel(ch).compVector(spec.completionVector());
                }
                sendCq = sb.build();
                made.add(sendCq);
                if (spec.verb() == PerftestTest.Verb.SEND) {
                    CompletionQueue.Builder rb = ctx.createCq(spec.rxDepth() * spec.numQps());
                    if (ch != null) {
                        rb.channel(ch).compVector(spec.completionVector());
                    }
                    recvCq = rb.build();
                    made.add(recvCq);
                } else {
                    recvCq = sendCq;
                }
                if (spec.useSrq()) { // ctx_init: max_wr = rx_depth, max_sge = 1
                    srq = pdv.createSrq(spec.rxDepth()).build();
                    made.add(srq);
                } else {
                    srq = null;
                }
                DirectCompletionQueue direct = spec.directWqe() ? DirectCompletionQueue.open(sendCq) : null;
                sendCqView = direct != null ? new DirectWqe.DirectCq(direct, ch) : new CoreCq(sendCq, ch);
                recvCqView = recvCq == sendCq ? sendCqView : new CoreCq(recvCq, ch);
                qps = new CoreQp[spec.numQps()];
                boolean useWr = spec.useWrApi() && maker == null; // rdma_create_qp makes classic QPs
                for (int i = 0; i < qps.length; i++) {
                    QueuePair qp;
                    if (maker != null) {
                        qp = maker.make(i, pdv, sendCq, recvCq);
                        made.add(qp);
                        qps[i] = new CoreQp(this, qp, mrs[spec.mrPerQp() ? i : 0], false);
                        continue;
                    }
                    try {
                        qp = buildQp(pdv, spec, useWr);
                    } catch (UnsupportedVerbException e) {
                        if (!useWr || i > 0) {
                            throw e;
                        }
                        useWr = false; // no ibv_create_qp_ex on this provider: classic ibv_post_send
                        qp = buildQp(pdv, spec, false);
                    }
                    made.add(qp);
                    initQp(qp, spec);
                    qps[i] = new CoreQp(this, qp, mrs[spec.mrPerQp() ? i : 0], useWr);
                    if (direct != null) {
                        qps[i].direct = new DirectWqe.Poster(DirectSendQueue.open(qp, direct), spec.verb(),
                                qps[i].mr, qps[i].slices);
                    }
                }
                this.wrApi = useWr;
                this.pd = pdv;
                this.channel = ch;
            } catch (RuntimeException e) {
                for (int i = made.size() - 1; i >= 0; i--) {
                    try {
                        made.get(i).close();
                    } catch (Exception suppressed) {
                        e.addSuppressed(suppressed);
                    }
                }
                throw e;
            }
        }

        private static Set<Access> access(ResourceSpec spec) {
            EnumSet<Access> a = EnumSet.of(Access.LOCAL_WRITE);
            if (spec.useOdp()) {
                a.add(Access.ON_DEMAND); // create_mr: IBV_ACCESS_ON_DEMAND, after check_odp_support (DeviceSetup)
            }
            switch (spec.verb()) {
                case WRITE -> a.add(Access.REMOTE_WRITE);
                case READ -> {
                    a.add(Access.REMOTE_READ);
                    if (spec.iwarp()) {
                        a.add(Access.REMOTE_WRITE); // iWARP reads land through a remote write
                    }
                }
                default -> { }
            }
            if (spec.relaxedOrdering()) {
                a.add(Access.RELAXED_ORDERING); // optional access flag: ignored by devices without it
            }
            return a;
        }

        private static void fillRandom(MemoryRegion mr, Random random) {
            java.lang.foreign.MemorySegment b = mr.buffer();
            byte[] chunk = new byte[65536];
            for (long off = 0; off < b.byteSize(); off += chunk.length) {
                random.nextBytes(chunk);
                int n = (int) Math.min(chunk.length, b.byteSize() - off);
                java.lang.foreign.MemorySegment.copy(chunk, 0, b, java.lang.foreign.ValueLayout.JAVA_BYTE, off, n);
            }
        }

        private QueuePair buildQp(ProtectionDomain pdv, ResourceSpec spec, boolean wr) {
            QueuePairType type = switch (spec.connection()) {
                case RC -> QueuePairType.RC;
                case UC -> QueuePairType.UC;
                case UD -> QueuePairType.UD;
            };
            var b = pdv.createQp(type, sendCq, recvCq).maxSendWr(spec.txDepth()).maxRecvWr(spec.rxDepth())
                    .maxSendSge(1).maxRecvSge(1).maxInlineData(Math.max(0, spec.inlineSize())).srq(srq);
            if (wr) {
                b.sendOps(EnumSet.of(switch (spec.verb()) {
                    case WRITE -> SendOperation.RDMA_WRITE;
                    case READ -> SendOperation.RDMA_READ;
                    case SEND -> SendOperation.SEND;
                }));
            }
            return b.build();
        }

        /** {@code ctx_modify_qp_to_init}: P_Key index, port, and the responder rights (or the UD Q_Key). */
        private static void initQp(QueuePair qp, ResourceSpec spec) {
            QueuePairAttributes a = new QueuePairAttributes().pkeyIndex(spec.pkeyIndex()).portNum(spec.port());
            if (spec.connection() == PerftestParameters.Connection.UD) {
                a.qkey(PerftestSession.DEF_QKEY);
            } else {
                a.qpAccessFlags(switch (spec.verb()) {
                    case WRITE -> EnumSet.of(Access.REMOTE_WRITE);
                    case READ -> EnumSet.of(Access.REMOTE_READ);
                    case SEND -> EnumSet.of(Access.REMOTE_WRITE, Access.LOCAL_WRITE);
                });
            }
            qp.toInit(a);
        }

        @Override
        public boolean usesWrApi() {
            return wrApi;
        }

        @Override
        public java.lang.foreign.MemorySegment buffer(int mr) {
            return mrs[mr].buffer();
        }

        @Override
        public int lkey(int mr) {
            return mrs[mr].lkey();
        }

        @Override
        public int rkey(int mr) {
            return mrs[mr].rkey();
        }

        @Override
        public Qp qp(int i) {
            return qps[i];
        }

        @Override
        public Cq sendCq() {
            return sendCqView;
        }

        @Override
        public Cq recvCq() {
            return recvCqView;
        }

        @Override
        public void close() {
            List<AutoCloseable> order = new ArrayList<>();
            for (CoreQp q : qps) {
                order.add(q.qp);
                if (q.ah != null) {
                    order.add(q.ah);
                }
            }
            order.add(sendCq);
            if (recvCq != sendCq) {
                order.add(recvCq);
            }
            if (srq != null) { // before the MRs its posted receives name
                order.add(srq);
            }
            order.addAll(List.of(mrs));
            order.add(pd);
            if (channel != null) {
                order.add(channel);
            }
            RuntimeException first = null;
            for (AutoCloseable c : order) {
                try {
                    c.close();
                } catch (Exception e) {
                    if (first == null) {
                        first = e instanceof RuntimeException r ? r : new RuntimeException(e);
                    } else {
                        first.addSuppressed(e);
                    }
                }
            }
            if (first != null) {
                throw first;
            }
        }
    }

    /** A QP and its send template. */
    static final class CoreQp implements Qp {
        final CoreResources res;
        final QueuePair qp;
        final MemoryRegion mr;
        final boolean wrApi;
        final long mrBase;
        AddressHandle ah;
        private int length;
        private int rkey;
        private boolean inline;
        private int remoteQpn;
        private int remoteQkey;
        final InlineSlices slices;
        /** Set with --direct_wqe: sends go through mlx5 Direct WQE. */
        DirectWqe.Poster direct;

        CoreQp(CoreResources res, QueuePair qp, MemoryRegion mr, boolean wrApi) {
            this.res = res;
            this.qp = qp;
            this.mr = mr;
            this.wrApi = wrApi;
            this.mrBase = mr.address();
            this.slices = new InlineSlices(mr.buffer());
        }

        @Override
        public int qpNum() {
            return qp.qpNum();
        }

        @Override
        public int maxInlineData() {
            return qp.capabilities().maxInlineData();
        }

        @Override
        public void connect(Connect c) {
            int port = res.spec.port();
            AddressVector.Builder av = AddressVector.builder(port).dlid(c.remoteLid()).sl(c.sl());
            if (c.remoteGid() != null) {
                av.grh(c.remoteGid(), c.sgidIndex(), 0xff).trafficClass(c.trafficClass());
            }
            AddressVector path = av.build();
            QueuePairAttributes rtr = new QueuePairAttributes();
            switch (res.spec.connection()) {
                case RC -> rtr.ahAttr(path).pathMtu(Mtu.of(c.mtu())).destQpNum(c.remoteQpn()).rqPsn(c.remotePsn())
                        .maxDestRdAtomic(c.maxDestRdAtomic()).minRnrTimer(12);
                case UC -> rtr.ahAttr(path).pathMtu(Mtu.of(c.mtu())).destQpNum(c.remoteQpn()).rqPsn(c.remotePsn());
                case UD -> { }
            }
            qp.toRtr(rtr);
            if (c.toRts()) {
                QueuePairAttributes rts = new QueuePairAttributes().sqPsn(c.localPsn());
                if (res.spec.connection() == PerftestParameters.Connection.RC) {
                    rts.timeout(c.timeout()).retryCnt(7).rnrRetry(7).maxRdAtomic(c.maxRdAtomic());
                }
                qp.toRts(rts);
                if (res.spec.connection() == PerftestParameters.Connection.UD) {
                    ah = res.pd.createAh(path);
                }
            }
        }

        @Override
        public void configureSend(int length, int lkey, int rkey, boolean inline, int remoteQpn, int remoteQkey) {
            this.length = length;
            this.rkey = rkey;
            this.inline = inline;
            this.remoteQpn = remoteQpn;
            this.remoteQkey = remoteQkey;
            slices.reset(length);
            if (direct != null) {
                direct.configure(length, rkey, inline);
            }
        }

        @Override
        public int post(int count, long[] localAddr, long[] remoteAddr, long signaledMask, long wrId) {
            try {
                if (direct != null) {
                    return direct.post(count, localAddr, remoteAddr, signaledMask, wrId);
                }
                return wrApi ? postBatch(count, localAddr, remoteAddr, signaledMask, wrId)
                        : postClassic(count, localAddr, remoteAddr, signaledMask, wrId);
            } catch (VerbsException e) {
                return e.errno() != 0 ? e.errno() : 22;
            }
        }

        private int postBatch(int count, long[] localAddr, long[] remoteAddr, long mask, long wrId) {
            try (dev.panverbs.core.PostBatch b = qp.startSend()) {
                if (b.room() < count) {
                    return 12; // ENOMEM: the send queue is full; closing the batch aborts it
                }
                for (int k = 0; k < count; k++) {
                    int flags = ((mask >>> k) & 1) != 0 ? dev.panverbs.core.SendFlag.SIGNALED_BIT : 0;
                    if (inline) {
                        flags |= dev.panverbs.core.SendFlag.INLINE_BIT;
                    }
                    switch (res.spec.verb()) {
                        case WRITE -> b.rdmaWrite(wrId, flags, rkey, remoteAddr[k]);
                        case READ -> b.rdmaRead(wrId, flags, rkey, remoteAddr[k]);
                        case SEND -> b.send(wrId, flags);
                    }
                    if (inline) {
                        b.setInlineData(slices.at(localAddr[k] - mrBase));
                    } else {
                        b.setSge(mr, localAddr[k] - mrBase, length);
                    }
                    if (ah != null) {
                        b.setUdAddr(ah, remoteQpn, remoteQkey);
                    }
                }
                b.submit();
            }
            return 0;
        }

        private int postClassic(int count, long[] localAddr, long[] remoteAddr, long mask, long wrId) {
            dev.panverbs.core.SendRequests wrs = qp.sendRequests();
            wrs.clear();
            for (int k = 0; k < count; k++) {
                int flags = ((mask >>> k) & 1) != 0 ? dev.panverbs.core.SendFlag.SIGNALED_BIT : 0;
                switch (res.spec.verb()) {
                    case WRITE -> wrs.rdmaWrite(wrId, flags, rkey, remoteAddr[k]);
                    case READ -> wrs.rdmaRead(wrId, flags, rkey, remoteAddr[k]);
                    case SEND -> wrs.send(wrId, flags);
                }
                if (inline) {
                    wrs.inline(slices.at(localAddr[k] - mrBase));
                } else {
                    wrs.sge(mr, localAddr[k] - mrBase, length);
                }
                if (ah != null) {
                    wrs.ud(ah, remoteQpn, remoteQkey);
                }
            }
            int accepted = wrs.post();
            if (accepted < count) {
                wrs.clear();
                return 12; // ENOMEM: the send queue is full
            }
            return 0;
        }

        @Override
        public int postRecv(long addr, int len, int lkey, long wrId) {
            try {
                dev.panverbs.core.ReceiveRequests r = res.srq != null ? res.srq.receiveRequests()
                        : qp.receiveRequests();
                r.clear();
                r.recv(wrId).sge(mr, addr - mrBase, len);
                if (r.post() < 1) {
                    r.clear();
                    return 12;
                }
                return 0;
            } catch (VerbsException e) {
                return e.errno() != 0 ? e.errno() : 22;
            }
        }
    }

    /**
     * Inline sends need the data as a segment; perftest's addresses cycle through at most a page of slots, so
     * slices are cached per offset (open addressing, no allocation once every slot has been seen).
     */
    static final class InlineSlices {
        private final java.lang.foreign.MemorySegment buffer;
        private final long[] keys = new long[256];
        private final java.lang.foreign.MemorySegment[] values = new java.lang.foreign.MemorySegment[256];
        private int length = -1;

        InlineSlices(java.lang.foreign.MemorySegment buffer) {
            this.buffer = buffer;
        }

        void reset(int len) {
            if (len != length) {
                java.util.Arrays.fill(values, null);
                length = len;
            }
        }

        java.lang.foreign.MemorySegment at(long offset) {
            int h = (int) (offset ^ (offset >>> 7)) & 255;
            for (int i = 0; i < 256; i++) {
                int slot = (h + i) & 255;
                java.lang.foreign.MemorySegment v = values[slot];
                if (v == null) {
                    v = buffer.asSlice(offset, length);
                    keys[slot] = offset;
                    values[slot] = v;
                    return v;
                }
                if (keys[slot] == offset) {
                    return v;
                }
            }
            return buffer.asSlice(offset, length); // more distinct offsets than slots: rare, allocate
        }
    }

    /** A CQ polled into preallocated arrays of 1 and 16 work completions. */
    static final class CoreCq implements Cq {
        private final CompletionQueue cq;
        private final CompletionChannel channel;
        private final WorkCompletions one = WorkCompletions.allocate(1);
        private final WorkCompletions batch = WorkCompletions.allocate(BATCH);
        private WorkCompletions last = batch;

        CoreCq(CompletionQueue cq, CompletionChannel channel) {
            this.cq = cq;
            this.channel = channel;
        }

        @Override
        public int poll(int max) {
            WorkCompletions w = max <= 1 ? one : batch;
            last = w;
            try {
                return cq.poll(w);
            } catch (VerbsException e) {
                return -Math.max(1, e.errno());
            }
        }

        @Override
        public long wrId(int i) {
            return last.get(i).wrId();
        }

        @Override
        public int status(int i) {
            return last.get(i).statusValue();
        }

        @Override
        public int vendorErr(int i) {
            return last.get(i).vendorErr();
        }

        @Override
        public String statusName(int status) {
            try {
                return WorkCompletionStatus.of(status).name();
            } catch (RuntimeException e) {
                return "status " + status;
            }
        }

        @Override
        public void requestNotify() {
            cq.reqNotify(false);
        }

        @Override
        public boolean awaitEvent(long timeoutMillis) {
            if (channel == null) {
                return true;
            }
            CompletionQueue got = channel.getCqEvent(timeoutMillis);
            if (got == null) {
                return false;
            }
            got.reqNotify(false);
            return true;
        }
    }
}
