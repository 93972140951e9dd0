package dev.panverbs.core.mlx5;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.LibIbverbsQueues;
import dev.panverbs.bindings.mlx5.LibMlx5;
import dev.panverbs.bindings.mlx5dv.mlx5dv_dc_init_attr;
import dev.panverbs.bindings.mlx5dv.mlx5dv_dci_streams;
import dev.panverbs.bindings.mlx5dv.mlx5dv_h;
import dev.panverbs.bindings.mlx5dv.mlx5dv_qp_ex;
import dev.panverbs.bindings.mlx5dv.mlx5dv_qp_init_attr;
import dev.panverbs.bindings.verbs.ibv_qp_cap;
import dev.panverbs.bindings.verbs.ibv_qp_init_attr_ex;
import dev.panverbs.bindings.verbs.verbs_h;
import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.AddressVector;
import dev.panverbs.core.AtomicCapability;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.Mtu;
import dev.panverbs.core.PostBatch;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairAttributes;
import dev.panverbs.core.QueuePairState;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.SendOperation;
import dev.panverbs.core.UnsupportedVerbException;
import dev.panverbs.core.internal.DcPath;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.NativeHandles;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * A DC initiator (DCI): {@code mlx5dv_create_qp(3)} with {@code qp_type = IBV_QPT_DRIVER} and
 * {@code dc_init_attr.dc_type = MLX5DV_DCTYPE_DCI}. A send-only queue pair with RC's operations and reliability whose
 * every work request names its target: {@link #setDcAddr} ({@code mlx5dv_wr_set_dc_addr}: an address handle, the
 * remote DCT number and the DCT's access key). It posts through the {@code ibv_wr_*} API only ({@link #startSend()},
 * a {@link PostBatch}); {@code ibv_post_send} cannot name a DCT and is refused.
 *
 * <pre>{@code
 * DcInitiator dci = DcInitiator.builder(pd, cq).build();
 * dci.toInit(1); dci.toRtr(Mtu.MTU_1024); dci.toRts();
 * try (PostBatch b = dci.startSend()) {
 *     b.rdmaWrite(1, SendFlag.SIGNALED_BIT, rkey, raddr);
 *     dci.setDcAddr(b, ah, dct.dctNumber(), dct.accessKey());
 *     b.setSge(mr, 0, 4096);
 *     b.submit();
 * }
 * }</pre>
 *
 * <p>DCI streams ({@link Builder#dciStreams}: {@code MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS}) let one DCI keep
 * {@code 2^logNumConcurrent} targets in flight at once; each WR names its stream with {@link #setDcAddrStream}
 * ({@code mlx5dv_wr_set_dc_addr_stream}) or, on the Direct WQE path, a {@link DcAddress#onStream} address.
 *
 * <p>Lifetimes are a {@link QueuePair}'s ({@link #queuePair()}): a child of its PD and CQ, closed by their cascade.
 * DMA safety as a UD send's: the address handle of each WR is tracked by the send queue, so
 * {@link AddressHandle#close()} is refused until the WR's completion retires, and a WR staged with an AH closed since
 * aborts the batch at submit; every SGE is checked and tracked as on any QP. Not thread-safe (one producer).
 */
public final class DcInitiator implements AutoCloseable {
    private static final String CREATE = "mlx5dv_create_qp";
    private final QueuePair qp;
    /** {@code struct mlx5dv_qp_ex *} inside libmlx5's QP: its {@code wr_set_dc_addr} slot. */
    private final MemorySegment mqp;
    private final DcPath path = DcPath.get();
    /** {@code 2^log_num_concurent} of a DCI built with streams; 0 without. */
    private final int streams;
    /** Stream ids below this are taken: {@code max(streams, 1)}, stream 0 of a plain DCI being {@link #setDcAddr}. */
    private final int streamLimit;

    DcInitiator(QueuePair qp, MemorySegment mqp) {
        this(qp, mqp, 0);
    }

    DcInitiator(QueuePair qp, MemorySegment mqp, int streams) {
        if (qp.type() != QueuePairType.DC_INITIATOR) {
            throw new IllegalArgumentException(qp + " is " + qp.type() + ", not a DC initiator");
        }
        this.qp = qp;
        this.mqp = mqp.reinterpret(mlx5dv_qp_ex.sizeof());
        this.streams = streams;
        this.streamLimit = Math.max(streams, 1);
    }

    /** Options of a new DCI, from {@link #builder}. Not thread-safe; use once. */
    public static Builder builder(ProtectionDomain pd, CompletionQueue cq) {
        return new Builder(pd, cq);
    }

    /** The queue pair: its number, capabilities, state, close. */
    public QueuePair queuePair() {
        return qp;
    }

    /** RESET → INIT: port {@code portNum}, partition index 0 (a DCI takes no access flags). */
    public void toInit(int portNum) {
        checkOpen();
        qp.modify(new QueuePairAttributes().qpState(QueuePairState.INIT).pkeyIndex(0).portNum(portNum));
    }

    /** INIT → RTR with path MTU {@code mtu} and no remote QP (each WR names its DCT). */
    public void toRtr(Mtu mtu) {
        checkOpen();
        qp.modify(new QueuePairAttributes().qpState(QueuePairState.RTR).pathMtu(mtu));
    }

    /** INIT → RTR also giving the address vector (the port and source GID, as perftest sets for RoCE). */
    public void toRtr(Mtu mtu, AddressVector path) {
        checkOpen();
        qp.modify(new QueuePairAttributes().qpState(QueuePairState.RTR).pathMtu(mtu).ahAttr(path));
    }

    /**
     * RTR → RTS: {@code timeout} 14, {@code retry_cnt} 7, {@code rnr_retry} 7, {@code sq_psn} 0 and
     * {@code max_rd_atomic} = the device's {@code max_qp_init_rd_atom} (at most 16); {@link QueuePair#modify} for
     * other values.
     */
    public void toRts() {
        checkOpen(); // before the device query: a closed DCI is refused without a native call
        Context ctx = qp.protectionDomain().context();
        int rd = Math.max(1, Math.min(16, ctx.queryDevice().limits().maxQpInitRdAtom()));
        qp.modify(new QueuePairAttributes().qpState(QueuePairState.RTS).timeout(14).retryCnt(7).rnrRetry(7)
                .sqPsn(0).maxRdAtomic(rd));
    }

    /** {@code ibv_wr_start(3)}: a batch of this DCI's work requests; address each with {@link #setDcAddr}. */
    public PostBatch startSend() {
        return qp.startSend();
    }

    /**
     * {@code mlx5dv_wr_set_dc_addr(3)}: the current work request of {@code batch} (this DCI's open batch) goes to DCT
     * {@code remoteDctn} with access key {@code remoteDcKey}, routed by {@code ah} (of this DCI's PD, open). The AH is
     * tracked until the WR's completion retires. Call after the operation, as {@code setUdAddr}.
     *
     * @throws IllegalStateException    a closed AH (naming the verb), no open batch or no current WR
     * @throws IllegalArgumentException a batch of another QP, an AH of another PD
     */
    public PostBatch setDcAddr(PostBatch batch, AddressHandle ah, int remoteDctn, long remoteDcKey) {
        path.setDcAddr(batch, qp, mqp, ah, remoteDctn, remoteDcKey, -1);
        return batch;
    }

    /**
     * {@code mlx5dv_wr_set_dc_addr_stream(3)}: {@link #setDcAddr} on DCI stream {@code streamId}, which libmlx5 writes
     * into the WQE's control segment ({@code dci_stream_channel_id}). {@code streamId} must be below
     * {@code 2^logNumConcurrent} of {@link Builder#dciStreams}; a DCI built without streams takes stream 0 only, which
     * is {@link #setDcAddr} (mlx5dv_wr_post(3): "equivalent to using stream_id=0"; libmlx5 zeroes the field when it
     * starts a WQE), as on the Direct WQE path ({@link DirectDcQueue}).
     *
     * @throws IllegalArgumentException a stream out of the DCI's range (any but 0 without streams), naming the verb;
     *                                  and as {@link #setDcAddr}
     */
    public PostBatch setDcAddrStream(PostBatch batch, AddressHandle ah, int remoteDctn, long remoteDcKey,
                                     int streamId) {
        if (streamId < 0 || streamId >= streamLimit) {
            throw badStream(streamId);
        }
        path.setDcAddr(batch, qp, mqp, ah, remoteDctn, remoteDcKey, streamId);
        return batch;
    }

    /**
     * Refuses a closed DCI by name ({@code ibv_modify_qp}) before any native call: {@code modify} would first query
     * the QP's state and {@link #toRts} the device's limits, naming other verbs or touching the device for nothing.
     */
    private void checkOpen() {
        NativeHandles.resource(qp).checkOpen("ibv_modify_qp");
    }

    /** DCI streams this DCI was built with ({@code 2^logNumConcurrent}); 0 without streams. */
    int streams() {
        return streams;
    }

    private IllegalArgumentException badStream(int streamId) {
        return new IllegalArgumentException("mlx5dv_wr_set_dc_addr_stream: " + qp + (streams == 0
                ? " was built without DCI streams (DcInitiator.Builder.dciStreams): stream 0 only, as setDcAddr"
                : " has " + streams + " DCI streams (0.." + (streams - 1) + ")") + ": stream " + streamId
                + " refused");
    }

    /** {@code ibv_destroy_qp(3)}; see {@link QueuePair#close()}. */
    @Override
    public void close() {
        qp.close();
    }

    @Override
    public String toString() {
        return qp.toString();
    }

    /** What {@link #build()} passes to {@code mlx5dv_create_qp}: {@code struct ibv_qp_init_attr_ex} sizes and ops. */
    public static final class Builder {
        private final ProtectionDomain pd;
        private final CompletionQueue cq;
        private int maxSendWr = 128;
        private int maxSendSge = 1;
        private int maxInlineData;
        private boolean sqSigAll;
        private int logNumConcurrent = -1;
        private int logNumErrored;
        private Set<SendOperation> sendOps = EnumSet.of(SendOperation.SEND, SendOperation.SEND_WITH_IMM,
                SendOperation.RDMA_WRITE, SendOperation.RDMA_WRITE_WITH_IMM, SendOperation.RDMA_READ);

        private Builder(ProtectionDomain pd, CompletionQueue cq) {
            this.pd = Objects.requireNonNull(pd, CREATE + ": pd");
            this.cq = Objects.requireNonNull(cq, CREATE + ": cq");
            if (cq.context() != pd.context()) {
                throw new IllegalArgumentException(CREATE + ": " + cq + " belongs to another context than " + pd);
            }
        }

        /** {@code cap.max_send_wr} (default 128). */
        public Builder maxSendWr(int n) {
            this.maxSendWr = positive("maxSendWr", n);
            return this;
        }

        /** {@code cap.max_send_sge} (default 1). */
        public Builder maxSendSge(int n) {
            this.maxSendSge = positive("maxSendSge", n);
            return this;
        }

        /** {@code cap.max_inline_data} (default 0). */
        public Builder maxInlineData(int n) {
            if (n < 0) {
                throw new IllegalArgumentException(CREATE + ": maxInlineData must not be negative, got " + n);
            }
            this.maxInlineData = n;
            return this;
        }

        /** {@code sq_sig_all}. */
        public Builder sqSigAll(boolean all) {
            this.sqSigAll = all;
            return this;
        }

        /**
         * DCI streams ({@code MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS}, {@code dc_init_attr.dci_streams}): up to
         * {@code 2^logNumConcurrent} streams in flight at once, {@code 2^logNumErrored} streams in error before the
         * DCI itself moves to error. The two are independent: libmlx5 44 checks each against its own cap only, the
         * kernel copies both into the QP context, and rdma-core's own DCI stream tests ({@code tests/mlx5_base.py})
         * create a DCI with more errored than concurrent streams. Refused here: {@code logNumConcurrent} above 16
         * (stream ids are {@code uint16_t}), {@code logNumErrored} above 31 (the QP context's 5-bit
         * {@code log_num_dci_errored_streams}), either negative. {@link #build()} refuses up front, naming
         * {@code dci_streams_caps}, a device whose {@code mlx5dv_query_device} reports no DCI streams or smaller
         * maxima.
         */
        public Builder dciStreams(int logNumConcurrent, int logNumErrored) {
            if (logNumConcurrent < 0 || logNumConcurrent > 16 || logNumErrored < 0 || logNumErrored > 31) {
                throw new IllegalArgumentException(CREATE + ": dci_streams.log_num_concurent " + logNumConcurrent
                        + " and log_num_errored " + logNumErrored + " must be 0..16 (stream ids are 16-bit) and 0..31 "
                        + "(the QP context's 5-bit log_num_dci_errored_streams)");
            }
            this.logNumConcurrent = logNumConcurrent;
            this.logNumErrored = logNumErrored;
            return this;
        }

        /**
         * {@code send_ops_flags} (default SEND, SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM, RDMA_READ): what
         * libmlx5 builds for a DCI ({@code MLX5_SUPPORTED_SEND_OPS_FLAGS_DCI}, RC's); must not be empty. The atomics
         * need a device whose {@code atomicCap} is not NONE (else the build's EOPNOTSUPP says so).
         */
        public Builder sendOps(Set<SendOperation> ops) {
            if (ops == null || ops.isEmpty()) {
                throw new IllegalArgumentException(CREATE + ": a DCI posts through the ibv_wr_* API only: sendOps "
                        + "must name at least one operation");
            }
            this.sendOps = EnumSet.copyOf(ops);
            return this;
        }

        /**
         * Creates the DCI in RESET. Refuses a non-mlx5 device by name; a kernel or device without DC gives
         * {@link dev.panverbs.core.UnsupportedVerbException} ({@code EOPNOTSUPP}).
         */
        public DcInitiator build() {
            Context context = pd.context();
            DynamicConnect.requireMlx5(context, CREATE);
            if (logNumConcurrent >= 0) {
                DynamicConnect.requireDciStreams(context, logNumConcurrent, logNumErrored);
            }
            String call = Errors.call(CREATE, "dc_type", "MLX5DV_DCTYPE_DCI", "maxSendWr", maxSendWr, "maxSendSge",
                    maxSendSge, "maxInlineData", maxInlineData, "sendOps", sendOps, "dciStreams", logNumConcurrent < 0
                    ? "none" : "log_num_concurent=" + logNumConcurrent + ", log_num_errored=" + logNumErrored);
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment attr = arena.allocate(ibv_qp_init_attr_ex.layout());
                MemorySegment cqHandle = NativeHandles.handle(cq, CREATE);
                ibv_qp_init_attr_ex.send_cq(attr, cqHandle);
                ibv_qp_init_attr_ex.recv_cq(attr, cqHandle); // the kernel wants one; a DCI never receives
                MemorySegment cap = ibv_qp_init_attr_ex.cap(attr);
                ibv_qp_cap.max_send_wr(cap, maxSendWr);
                ibv_qp_cap.max_send_sge(cap, maxSendSge);
                ibv_qp_cap.max_inline_data(cap, maxInlineData);
                ibv_qp_init_attr_ex.qp_type(attr, verbs_h.IBV_QPT_DRIVER());
                ibv_qp_init_attr_ex.sq_sig_all(attr, sqSigAll ? 1 : 0);
                ibv_qp_init_attr_ex.pd(attr, NativeHandles.pd(pd, CREATE));
                ibv_qp_init_attr_ex.comp_mask(attr, verbs_h.IBV_QP_INIT_ATTR_PD()
                        | verbs_h.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS());
                ibv_qp_init_attr_ex.send_ops_flags(attr, SendOperation.bits(sendOps));
                MemorySegment dv = arena.allocate(mlx5dv_qp_init_attr.layout());
                MemorySegment dc = mlx5dv_qp_init_attr.dc_init_attr(dv);
                mlx5dv_dc_init_attr.dc_type(dc, mlx5dv_h.MLX5DV_DCTYPE_DCI());
                if (logNumConcurrent >= 0) {
                    mlx5dv_qp_init_attr.comp_mask(dv, mlx5dv_h.MLX5DV_QP_INIT_ATTR_MASK_DC()
                            | mlx5dv_h.MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS());
                    MemorySegment st = mlx5dv_dc_init_attr.dci_streams(dc);
                    mlx5dv_dci_streams.log_num_concurent(st, (byte) logNumConcurrent);
                    mlx5dv_dci_streams.log_num_errored(st, (byte) logNumErrored);
                } else {
                    mlx5dv_qp_init_attr.comp_mask(dv, mlx5dv_h.MLX5DV_QP_INIT_ATTR_MASK_DC());
                }
                MemorySegment errno = Errno.allocateCapture(arena);
                MemorySegment handle = LibMlx5.mlx5dv_create_qp(errno, NativeHandles.context(context, CREATE), attr,
                        dv);
                if (handle.address() == 0) {
                    int e = Errno.get(errno);
                    throw DynamicConnect.createFailed(call, context.device().name(), e, "MLX5DV_DCTYPE_DCI",
                            e == verbs_h.EOPNOTSUPP() && atomicsOff(context));
                }
                QueuePair wrapped;
                try {
                    wrapped = NativeHandles.access().adoptQueuePair(pd, cq, cq, QueuePairType.DC_INITIATOR, handle,
                            sendOps, "ibv_destroy_qp", LibIbverbsQueues::ibv_destroy_qp);
                } catch (RuntimeException e) {
                    LibIbverbsQueues.ibv_destroy_qp(handle);
                    throw e;
                }
                return new DcInitiator(wrapped,
                        LibMlx5.mlx5dv_qp_ex_from_ibv_qp_ex(LibIbverbsQueues.ibv_qp_to_qp_ex(handle)),
                        logNumConcurrent < 0 ? 0 : 1 << logNumConcurrent);
            }
        }

        /** Atomics asked for on a device without them ({@code atomic_cap} NONE): libmlx5's EOPNOTSUPP then. */
        private boolean atomicsOff(Context context) {
            if (!sendOps.contains(SendOperation.ATOMIC_CMP_AND_SWP)
                    && !sendOps.contains(SendOperation.ATOMIC_FETCH_AND_ADD)) {
                return false;
            }
            try { // after the failure only: it must not hide the create's error
                return context.queryDevice().atomicCap() == AtomicCapability.NONE;
            } catch (RuntimeException e) {
                return false;
            }
        }

        private static int positive(String what, int n) {
            if (n < 1) {
                throw new IllegalArgumentException(CREATE + ": " + what + " must be at least 1, got " + n);
            }
            return n;
        }
    }
}
