package dev.panverbs.core.mlx5;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.LibIbverbsQueues;
import dev.panverbs.bindings.ibverbs.QpExOps;
import dev.panverbs.bindings.mlx5.LibMlx5;
import dev.panverbs.bindings.mlx5.Mlx5dvInlineWr;
import dev.panverbs.bindings.mlx5dv.mlx5dv_h;
import dev.panverbs.bindings.mlx5dv.mlx5dv_mr_interleaved;
import dev.panverbs.bindings.mlx5dv.mlx5dv_qp_ex;
import dev.panverbs.bindings.mlx5dv.mlx5dv_qp_init_attr;
import dev.panverbs.bindings.verbs.ibv_qp_cap;
import dev.panverbs.bindings.verbs.ibv_qp_init_attr_ex;
import dev.panverbs.bindings.verbs.ibv_sge;
import dev.panverbs.bindings.verbs.verbs_h;
import dev.panverbs.core.Access;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.SendOperation;
import dev.panverbs.core.internal.DirectPath;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.Handshake;
import dev.panverbs.core.internal.HotMemory;
import dev.panverbs.core.internal.MkeyPath;
import dev.panverbs.core.internal.NativeHandles;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * An RC queue pair created with the UMR send operations ({@code mlx5dv_create_qp(3)} with
 * {@code MLX5DV_QP_EX_WITH_MR_INTERLEAVED | MLX5DV_QP_EX_WITH_MR_LIST} in {@code mlx5dv_qp_init_attr.send_ops_flags},
 * plus {@code IBV_QP_EX_WITH_LOCAL_INV}), and the UMR work requests that configure and invalidate
 * {@link IndirectMkey}s on it: {@link #configure} is one {@code ibv_wr_start}, {@code mlx5dv_wr_mr_interleaved} or
 * {@code mlx5dv_wr_mr_list} ({@code IBV_SEND_INLINE} added: libmlx5 requires it), {@code ibv_wr_complete}; the
 * completion ({@code IBV_WC_DRIVER1}) is polled from the QP's send CQ like any other and retires the WR by its slot.
 * {@link #queuePair()} is the core {@link QueuePair} (modify it to RTS, post other work on it as usual).
 *
 * <p>A UMR's layout entries are written inline into the WQE, so the QP's {@code max_inline_data} bounds them
 * (libmlx5: {@code (max_inline_data + 4) / 16 - 1} interleaved entries, {@code (max_inline_data + 4) / 16} SGEs);
 * {@link #maxInterleavedEntries()} and {@link #maxListEntries()} say how many; more is refused before the provider.
 * Same threading rules as the QP's other post paths (one producer; a {@link dev.panverbs.core.PostBatch} open on the
 * QP refuses a UMR until it is submitted).
 */
public final class UmrQueuePair {
    private static final MkeyPath PATH = MkeyPath.get();
    private static final DirectPath KEYS = DirectPath.get();
    private static final long ENTRY_SIZE = mlx5dv_mr_interleaved.sizeof();
    private static final long SGE_SIZE = ibv_sge.layout().byteSize();
    private static final int KIND_INTERLEAVED = 0;
    private static final int KIND_LIST = 1;
    private static final int KIND_INVALIDATE = 2;
    /** The access flags a UMR may grant ({@code mlx5_send_wr_set_mkey_access_flags} refuses others). */
    private static final Set<Access> UMR_ACCESS = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
            Access.REMOTE_READ, Access.REMOTE_ATOMIC);

    private final QueuePair qp;
    private final DirectPath.SendSide side;
    private final QpExOps ops;
    private final MemorySegment dvQp;
    private final int maxInterleaved;
    private final int maxList;
    /** The {@code struct mlx5dv_mr_interleaved[]} / {@code struct ibv_sge[]} handed to the builder. */
    private final HotMemory data;
    private final Object[] snapshots;

    UmrQueuePair(QueuePair qp, MemorySegment qpEx, MemorySegment dvQpEx, int maxInlineData) {
        this.qp = qp;
        this.side = DirectPath.get().sendSide(qp);
        this.ops = QpExOps.of(qpEx);
        this.dvQp = dvQpEx.reinterpret(mlx5dv_qp_ex.sizeof());
        int units = (maxInlineData + 4) / 16; // libmlx5: (max_inline_data + sizeof(inl_data_seg)) / 16
        this.maxInterleaved = Math.max(units - 1, 0);
        this.maxList = units;
        int n = Math.max(Math.max(maxInterleaved, maxList), 1);
        this.data = HotMemory.allocate(n * Math.max(ENTRY_SIZE, SGE_SIZE), 8);
        this.snapshots = new Object[n];
    }

    /**
     * Creates an RC QP in {@code pd} for UMRs ({@code mlx5dv_create_qp}): {@code sendOps} (for the QP's other
     * {@code ibv_wr_*} work; {@code LOCAL_INV} is always added) plus the mlx5 UMR operations, {@code maxInlineData}
     * bytes of inline data (it bounds the layouts, see above). Refuses a non-mlx5 device by name (for example "rxe0
     * is not an mlx5 device"); {@code EOPNOTSUPP} → {@link dev.panverbs.core.UnsupportedVerbException}.
     */
    public static UmrQueuePair create(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                                      int maxSendWr, int maxRecvWr, int maxInlineData, Set<SendOperation> sendOps) {
        String verb = "mlx5dv_create_qp";
        if (maxSendWr < 1 || maxRecvWr < 0 || maxInlineData < 0) { // else EINVAL, read as "no UMR support"
            throw new IllegalArgumentException(verb + ": maxSendWr " + maxSendWr + ", maxRecvWr " + maxRecvWr
                    + ", maxInlineData " + maxInlineData + ": maxSendWr must be >= 1, the others >= 0");
        }
        Objects.requireNonNull(sendOps, verb + ": sendOps");
        Mlx5.requireMlx5(pd.context(), verb);
        Set<SendOperation> ops = EnumSet.of(SendOperation.LOCAL_INV);
        ops.addAll(sendOps);
        String call = Errors.call(verb, "type", "RC", "maxSendWr", maxSendWr, "maxRecvWr", maxRecvWr,
                "maxInlineData", maxInlineData, "sendOps", ops, "mlx5 send_ops_flags", "MR_INTERLEAVED|MR_LIST");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_qp_init_attr_ex.layout());
            ibv_qp_init_attr_ex.send_cq(attr, NativeHandles.handle(sendCq, verb));
            ibv_qp_init_attr_ex.recv_cq(attr, NativeHandles.handle(recvCq, verb));
            MemorySegment cap = ibv_qp_init_attr_ex.cap(attr);
            ibv_qp_cap.max_send_wr(cap, maxSendWr);
            ibv_qp_cap.max_recv_wr(cap, maxRecvWr);
            ibv_qp_cap.max_send_sge(cap, 1);
            ibv_qp_cap.max_recv_sge(cap, 1);
            ibv_qp_cap.max_inline_data(cap, maxInlineData);
            ibv_qp_init_attr_ex.qp_type(attr, QueuePairType.RC.value());
            ibv_qp_init_attr_ex.pd(attr, NativeHandles.pd(pd, verb));
            ibv_qp_init_attr_ex.comp_mask(attr, verbs_h.IBV_QP_INIT_ATTR_PD()
                    | verbs_h.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS());
            ibv_qp_init_attr_ex.send_ops_flags(attr, SendOperation.bits(ops));
            MemorySegment dv = arena.allocate(mlx5dv_qp_init_attr.layout());
            mlx5dv_qp_init_attr.comp_mask(dv, mlx5dv_h.MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS());
            mlx5dv_qp_init_attr.send_ops_flags(dv, mlx5dv_h.MLX5DV_QP_EX_WITH_MR_INTERLEAVED()
                    | mlx5dv_h.MLX5DV_QP_EX_WITH_MR_LIST());
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment handle = LibMlx5.mlx5dv_create_qp(errno, NativeHandles.context(pd.context(), verb), attr,
                    dv);
            if (handle.address() == 0) {
                int e = Errno.get(errno);
                throw Errors.failure(call, e, e == verbs_h.EOPNOTSUPP() ? "UMR QPs need an mlx5 device with UMR "
                        + "support (ConnectX-5 or later)" : null);
            }
            int granted = ibv_qp_cap.max_inline_data(cap);
            QueuePair q = NativeHandles.access().adoptQueuePair(pd, sendCq, recvCq, QueuePairType.RC, handle, ops,
                    "ibv_destroy_qp", LibIbverbsQueues::ibv_destroy_qp);
            MemorySegment qpEx = LibIbverbsQueues.ibv_qp_to_qp_ex(handle);
            return new UmrQueuePair(q, qpEx, LibMlx5.mlx5dv_qp_ex_from_ibv_qp_ex(qpEx), granted);
        }
    }

    /** Wraps a QP whose {@code ibv_qp_ex} and {@code mlx5dv_qp_ex} another library made (host tests: a fake's). */
    static UmrQueuePair wrap(QueuePair qp, MemorySegment qpEx, MemorySegment dvQpEx, int maxInlineData) {
        return new UmrQueuePair(qp, qpEx, dvQpEx, maxInlineData);
    }

    /** The core queue pair: modify it to RTS, post other work, poll its CQ. */
    public QueuePair queuePair() {
        return qp;
    }

    /** How many interleaved entries fit one UMR WQE on this QP. */
    public int maxInterleavedEntries() {
        return maxInterleaved;
    }

    /** How many list entries (SGEs) fit one UMR WQE on this QP. */
    public int maxListEntries() {
        return maxList;
    }

    /**
     * Posts a UMR that configures {@code mkey} with {@code layout} and {@code access}: {@code
     * mlx5dv_wr_mr_interleaved(mqp, mkey, access, repeat_count, n, data)} or {@code mlx5dv_wr_mr_list(mqp, mkey,
     * access, n, sge)} between {@code ibv_wr_start} and {@code ibv_wr_complete}, with {@code wr_id = wrId} and
     * {@code sendFlags | IBV_SEND_INLINE}. From now on the mkey's key snapshot has the layout's length and rights,
     * and the layout's regions stay registered (see {@link IndirectMkey}); its earlier layout stays held until this
     * UMR's successful completion is handed to {@link IndirectMkey#completed} and no work request naming the mkey is
     * outstanding. Refused while an earlier UMR or invalidation of the mkey is outstanding on another QP.
     *
     * <p>Refused before the provider: an mkey of another PD or closed, access other than LOCAL_WRITE and REMOTE_*,
     * more entries than {@link IndirectMkey#maxEntries()} or this QP's inline room, an entry outside its region or in
     * another PD, a region closed or whose arena was closed; a region closed on another thread while the UMR is built
     * aborts it ({@code ibv_wr_abort}). Errors of {@code ibv_wr_complete} (libmlx5's deferred {@code EINVAL},
     * {@code ENOMEM}, {@code EOPNOTSUPP}) → {@link dev.panverbs.core.VerbsException}; nothing was posted.
     */
    public void configure(long wrId, int sendFlags, IndirectMkey mkey, Set<Access> access, MkeyLayout layout) {
        Objects.requireNonNull(layout, "mlx5dv_wr_mr_interleaved/mlx5dv_wr_mr_list: layout");
        boolean interleaved = layout instanceof MkeyLayout.Interleaved;
        String verb = interleaved ? "mlx5dv_wr_mr_interleaved" : "mlx5dv_wr_mr_list";
        Objects.requireNonNull(access, verb + ": access");
        checkMkey(mkey, verb);
        for (Access a : access) {
            if (!UMR_ACCESS.contains(a)) {
                throw new IllegalArgumentException(verb + ": access " + access + ": a UMR grants only " + UMR_ACCESS
                        + " (mlx5_send_wr_set_mkey_access_flags refuses the others)");
            }
        }
        int n = layout.entryCount();
        int room = Math.min(mkey.maxEntries(), interleaved ? maxInterleaved : maxList);
        if (n > room) {
            throw new IllegalArgumentException(verb + ": " + n + " entries; " + mkey + " takes " + mkey.maxEntries()
                    + " and one UMR WQE on " + qp + " holds " + (interleaved ? maxInterleaved : maxList)
                    + " (max_inline_data): at most " + room);
        }
        ProtectionDomain pd = qp.protectionDomain();
        int accessMask = Access.mask(access);
        synchronized (mkey) { // the provider reads the mkey: no destroy meanwhile
            mkey.checkOpen(verb);
            mkey.checkOrdered(side, qp, verb);
            enter(verb); // the producer guard before the shared arrays are written: one UMR at a time per QP
            try {
                configureEntered(verb, wrId, sendFlags, mkey, access, layout, interleaved, n, accessMask, pd);
            } finally {
                side.exit();
            }
        }
    }

    private void configureEntered(String verb, long wrId, int sendFlags, IndirectMkey mkey, Set<Access> access,
                                  MkeyLayout layout, boolean interleaved, int n, int accessMask, ProtectionDomain pd) {
        int repeat = 0;
        if (layout instanceof MkeyLayout.Interleaved il) {
            repeat = il.repeatCount();
            List<MkeyLayout.Entry> entries = il.entries();
            for (int i = 0; i < n; i++) {
                MkeyLayout.Entry e = entries.get(i);
                Object k = PATH.checkRegion(pd, e.region(), e.offset(), e.span(Integer.toUnsignedLong(repeat)),
                        verb);
                snapshots[i] = k;
                MemorySegment d = data.segment.asSlice(i * ENTRY_SIZE, ENTRY_SIZE);
                mlx5dv_mr_interleaved.addr(d, KEYS.address(k) + e.offset());
                mlx5dv_mr_interleaved.bytes_count(d, e.bytesCount());
                mlx5dv_mr_interleaved.bytes_skip(d, e.bytesSkip());
                mlx5dv_mr_interleaved.lkey(d, KEYS.lkey(k));
            }
        } else {
            List<MkeyLayout.Sge> sges = ((MkeyLayout.SgeList) layout).sges();
            for (int i = 0; i < n; i++) {
                MkeyLayout.Sge s = sges.get(i);
                Object k = PATH.checkRegion(pd, s.region(), s.offset(), s.length(), verb);
                snapshots[i] = k;
                long o = i * SGE_SIZE;
                data.segment.set(ValueLayout.JAVA_LONG, o, KEYS.address(k) + s.offset());
                data.segment.set(ValueLayout.JAVA_INT, o + 8, s.length());
                data.segment.set(ValueLayout.JAVA_INT, o + 12, KEYS.lkey(k));
            }
        }
        List<MemoryRegion> regions = layout.regions();
        List<MemoryRegion> added = regions.stream().filter(r -> !mkey.holding(r)).toList();
        for (MemoryRegion r : added) { // before the post's barrier: a racing close sees the hold or we see it
            PATH.hold(r, mkey.holds);
        }
        boolean posted = false;
        try {
            long position = post(verb, interleaved ? KIND_INTERLEAVED : KIND_LIST, wrId,
                    sendFlags | SendFlag.INLINE_BIT, mkey, accessMaskToIbv(access), repeat, n);
            mkey.namedBy(side, position, qp.qpNum(), wrId);
            posted = true;
        } finally {
            java.util.Arrays.fill(snapshots, 0, n, null);
            if (!posted) {
                for (MemoryRegion r : added) {
                    PATH.release(r, mkey.holds);
                }
            }
        }
        mkey.configured(layout, accessMask);
    }

    /**
     * Posts a local invalidation of {@code mkey} ({@code ibv_wr_local_inv(qpx, mkey->lkey)}): the device frees it;
     * its layout's regions stay held until this WR's successful completion is handed to
     * {@link IndirectMkey#completed} and no work request naming the mkey is outstanding (see {@link #configure}).
     */
    public void invalidate(long wrId, int sendFlags, IndirectMkey mkey) {
        String verb = "ibv_wr_local_inv";
        checkMkey(mkey, verb);
        synchronized (mkey) {
            mkey.checkOpen(verb);
            mkey.checkOrdered(side, qp, verb);
            enter(verb);
            try {
                long position = post(verb, KIND_INVALIDATE, wrId, sendFlags, mkey, 0, 0, 0);
                mkey.namedBy(side, position, qp.qpNum(), wrId);
            } finally {
                side.exit();
            }
            mkey.invalidated();
        }
    }

    private void checkMkey(IndirectMkey mkey, String verb) {
        Objects.requireNonNull(mkey, verb + ": mkey");
        if (mkey.protectionDomain() != qp.protectionDomain()) {
            throw new IllegalArgumentException(verb + ": " + mkey + " belongs to " + mkey.protectionDomain()
                    + ", not to the PD of " + qp + "; a UMR configures mkeys of its QP's PD");
        }
    }

    private static int accessMaskToIbv(Set<Access> access) {
        return Access.mask(access);
    }

    /** Takes the send queue's producer guard (one poster at a time; a close of the QP waits for it). */
    private void enter(String verb) {
        if (!side.enter()) {
            throw side.busy(verb);
        }
    }

    /**
     * One WR through the QP's send tracker, as the core's post paths do, under the producer guard ({@link #enter}; the
     * caller exits it): the record (caller wr_id, the mkey's tracking id) is published before the layout's regions are
     * re-checked after the handshake's barrier; a region gone stale aborts the WR ({@code ibv_wr_abort}), nothing
     * rung.
     */
    private long post(String verb, int kind, long wrId, int flags, IndirectMkey mkey, int access, int repeat, int n) {
        DirectPath.SendSide s = side;
        Handshake.postSide();
        s.checkOpen(verb);
        s.checkState(verb);
        if (s.room() < 1) {
            throw new IllegalStateException(verb + ": the send queue of " + qp + " is full (" + s.outstanding()
                    + " outstanding WRs): poll completions first");
        }
        long t = s.tail();
        s.reserve(t, 1);
        boolean reserved = true;
        boolean started = false;
        try {
            s.put(t, wrId, mkey.trackingId());
            ops.ibv_wr_start();
            started = true;
            ops.wr_id(s.encode(t));
            ops.wr_flags(flags);
            switch (kind) {
                case KIND_INTERLEAVED -> Mlx5dvInlineWr.mlx5dv_wr_mr_interleaved(dvQp, mkey.handle(), access,
                        repeat, n, data.segment);
                case KIND_LIST -> Mlx5dvInlineWr.mlx5dv_wr_mr_list(dvQp, mkey.handle(), access, n,
                        data.segment);
                default -> ops.ibv_wr_local_inv(mkey.lkey());
            }
            data.keepAlive();
            s.release(t + 1);
            reserved = false;
            s.publish(t + 1); // the mkey's reference is visible before the regions are re-read
            Handshake.postSide();
            for (int i = 0; i < n; i++) {
                if (KEYS.stale(snapshots[i])) {
                    throw PATH.staleRegion(snapshots[i], verb);
                }
            }
            started = false; // ibv_wr_complete ends the batch whatever it returns
            int rc = ops.ibv_wr_complete();
            if (rc != 0) {
                s.rollback(t);
                throw Errors.failure(Errors.call("ibv_wr_complete", "qp", qp, "wr", verb, "mkey", mkey), rc,
                        "libmlx5 reports a UMR it could not build here (EINVAL: the mkey or flags; ENOMEM: "
                                + "too many entries; EOPNOTSUPP: the QP lacks the UMR send ops); nothing was "
                                + "posted");
            }
            return t;
        } catch (RuntimeException | Error e) {
            if (started) {
                try {
                    ops.ibv_wr_abort();
                } catch (RuntimeException | Error suppressed) {
                    e.addSuppressed(suppressed);
                }
                s.rollback(t);
            }
            if (reserved) {
                s.release(t);
            }
            throw e;
        }
    }
}
