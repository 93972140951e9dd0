package dev.panverbs.tools.perftest;

import dev.panverbs.core.Access;
import dev.panverbs.core.CompletionChannel;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.DeviceAttributes;
import dev.panverbs.core.GidType;
import dev.panverbs.core.LinkLayer;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.PortAttributes;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairAttributes;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.SendOperation;
import dev.panverbs.core.SharedReceiveQueue;
import dev.panverbs.core.UnsupportedVerbException;
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
        public boolean supportsXrc() {
            return attrs.supportsXrc();
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
        QueuePair make(int i, ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                       SharedReceiveQueue srq);
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
                        qp = maker.make(i, pdv, sendCq, recvCq, srq);
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
}
