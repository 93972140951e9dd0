package dev.panverbs.core.mlx5;

import static dev.panverbs.core.mlx5.WqeWriter.SEND_INLINE;
import static dev.panverbs.core.mlx5.WqeWriter.WR_ATOMIC_CMP_AND_SWP;
import static dev.panverbs.core.mlx5.WqeWriter.WR_ATOMIC_FETCH_AND_ADD;
import static dev.panverbs.core.mlx5.WqeWriter.WR_RDMA_READ;
import static dev.panverbs.core.mlx5.WqeWriter.WR_RDMA_WRITE;
import static dev.panverbs.core.mlx5.WqeWriter.WR_RDMA_WRITE_WITH_IMM;
import static dev.panverbs.core.mlx5.WqeWriter.WR_SEND;
import static dev.panverbs.core.mlx5.WqeWriter.WR_SEND_WITH_IMM;
import static dev.panverbs.core.mlx5.WqeWriter.WR_SEND_WITH_INV;

import dev.panverbs.core.LocalKey;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.internal.DirectPath;
import java.lang.foreign.MemorySegment;

/**
 * Direct WQE posting to the send queue of an RC QP created by the core on an mlx5 device: Java writes each work
 * queue entry into the ConnectX send ring itself, updates the doorbell record and rings the doorbell (BlueFlame copy
 * or 8-byte doorbell), with no downcall: the bytes and rules of libmlx5's {@code mlx5_post_send} (rdma-core 44),
 * verified against that code on fake memory. Builds like {@link dev.panverbs.core.SendRequests}: an opcode method
 * starts a WR, {@link #sge} and {@link #inline} add its data, {@link #post()} writes and rings the pending WRs.
 *
 * <p>DMA safety is the core's: every WR is recorded in the QP's send-queue tracker with the keys its SGEs name
 * before the doorbell, the keys are re-checked after that record is published, and only the completion polled
 * through {@link DirectCompletionQueue} retires it, so {@code MemoryRegion.close()} refuses a region a posted WQE
 * still references. The QP's producer guard is held for each post, so a concurrent {@code ibv_post_send} through
 * the core waits or is refused; do not mix the core's post paths with this one on the same QP at all (libmlx5 does
 * not know the WQEs written here). BlueFlame copies into a register shared by several direct queues are serialised;
 * libmlx5's own lock for a shared register ({@code bf->need_lock}) is private, so a QP sharing its register with
 * QPs posted through libmlx5 at the same time is not protected against their BlueFlame copies. QPs created with
 * {@code sq_sig_all} are refused (requester scatter-to-CQE, see the constructor). Single producer; allocation-free
 * per WR.
 */
public final class DirectSendQueue {
    private static final String VERB = "mlx5 Direct WQE post";
    /**
     * One lock per BlueFlame register: QPs may share a register (libmlx5's {@code bf->need_lock}), and two BlueFlame
     * copies into one register must not interleave (an 8-byte doorbell is a single store and takes no lock).
     */
    private static final java.util.concurrent.ConcurrentHashMap<Long, Object> BF_LOCKS =
            new java.util.concurrent.ConcurrentHashMap<>();

    private final QueuePair qp;
    private final DirectPath path = DirectPath.get();
    private final DirectPath.SendSide side;
    final WqeWriter writer;
    /** The provider wr_id (tracker position and route token) of the WR whose WQE starts at each index. */
    final long[] sqWrid;
    private final int capacity;
    private final int maxSge;
    private final int maxInline;
    // pending WRs
    private int count;
    private final int[] opcode;
    private final int[] flags;
    private final int[] imm;
    private final long[] raddr;
    private final int[] rkey;
    private final long[] swap;
    private final long[] compareAdd;
    private final long[] wrIds;
    private final int[] nsge;
    private final int[] inlineBytes;
    // their SGEs, maxSge per WR
    private final long[] addr;
    private final int[] len;
    private final int[] lkey;
    private final long[] keyIds;
    private final Object[] snapshots;
    private final MemorySegment[] src;
    private final long[] srcOff;

    DirectSendQueue(QueuePair qp, Mlx5QueuePairView view, DirectCompletionQueue cq, boolean bfUsable, boolean preferBf,
                    boolean shutUpBf) {
        if (qp.type() != QueuePairType.RC) {
            throw new UnsupportedOperationException("Direct WQE posting writes RC WQEs; " + qp + " is " + qp.type());
        }
        if (view.sqStride() != WqeWriter.WQEBB) {
            throw new IllegalArgumentException("send queue stride " + view.sqStride() + ", expected 64");
        }
        if (cq.completionQueue() != qp.sendCq()) {
            throw new IllegalArgumentException(cq.completionQueue() + " is not the send CQ of " + qp);
        }
        this.qp = qp;
        this.side = path.sendSide(qp);
        if (side.sigAll()) {
            // mlx5_ib enables requester scatter-to-CQE for sq_sig_all RC QPs: RDMA READ and atomic results of up to
            // 32 bytes then arrive inside the CQE and the provider copies them out at poll time, which this path
            // does not do
            throw new UnsupportedOperationException("Direct WQE posting on " + qp + ": the QP was created with "
                    + "sq_sig_all, for which the kernel enables requester scatter-to-CQE (small READ/atomic results "
                    + "land in the CQE); create it without sqSigAll and signal WRs with SendFlag.SIGNALED_BIT");
        }
        if (side.outstanding() != 0) {
            throw new IllegalStateException(qp + " has " + side.outstanding() + " outstanding send work requests; "
                    + "open the direct path before posting through the core, or after their completions were polled");
        }
        this.capacity = Math.max(qp.capabilities().maxSendWr(), 1);
        this.maxSge = Math.max(qp.capabilities().maxSendSge(), 1);
        this.maxInline = qp.capabilities().maxInlineData();
        int curPost = view.doorbellRecord().get(WqeWriter.BE32, 4) & 0xFFFF; // where libmlx5 left the producer
        this.writer = new WqeWriter(view.sqBuffer(), view.sqWqeCount(), view.doorbellRecord(),
                view.blueFlameRegister(), view.blueFlameSize(), bfUsable, preferBf, shutUpBf, view.qpNum(),
                0, capacity, maxSge, maxInline, curPost,
                BF_LOCKS.computeIfAbsent(view.blueFlameRegister().address(), a -> new Object()));
        this.sqWrid = new long[view.sqWqeCount()];
        this.opcode = new int[capacity];
        this.flags = new int[capacity];
        this.imm = new int[capacity];
        this.raddr = new long[capacity];
        this.rkey = new int[capacity];
        this.swap = new long[capacity];
        this.compareAdd = new long[capacity];
        this.wrIds = new long[capacity];
        this.nsge = new int[capacity];
        this.inlineBytes = new int[capacity];
        int s = capacity * maxSge;
        this.addr = new long[s];
        this.len = new int[s];
        this.lkey = new int[s];
        this.keyIds = new long[s];
        this.snapshots = new Object[s];
        this.src = new MemorySegment[s];
        this.srcOff = new long[s];
        cq.poller.target(view.qpNum()).send(sqWrid, (idx, providerWrId) -> {
            writer.completed(idx);
            return side.retire(providerWrId);
        });
    }

    /**
     * The direct send path of {@code qp} (an RC QP in a state that can post, with no outstanding send WRs) whose
     * completions are read through {@code sendCq} (the direct view of {@code qp.sendCq()}). Refuses a non-mlx5
     * device ("rxe0 is not an mlx5 device").
     */
    public static DirectSendQueue open(QueuePair qp, DirectCompletionQueue sendCq) {
        Mlx5QueuePairView view = Mlx5.queuePairView(qp);
        return new DirectSendQueue(qp, view, sendCq, view.blueFlameSize() != 0, Mlx5.preferBf(), Mlx5.shutUpBf());
    }

    /** Over a view the caller built (fake memory in tests). */
    static DirectSendQueue over(QueuePair qp, Mlx5QueuePairView view, DirectCompletionQueue sendCq,
                                boolean preferBf, boolean shutUpBf) {
        return new DirectSendQueue(qp, view, sendCq, view.blueFlameSize() != 0, preferBf, shutUpBf);
    }

    public QueuePair queuePair() {
        return qp;
    }

    /** Drops the WRs started and not yet posted (after {@link #post()} posted fewer for lack of room). */
    public void clear() {
        shift(count);
    }

    /** WRs started and not yet posted. */
    public int pending() {
        return count;
    }

    // ---- opcodes: each starts a WR (sendFlags: SendFlag.*_BIT) ----

    /** {@code IBV_WR_RDMA_WRITE} to {@code remoteAddr} in the peer's region {@code rkey}. */
    public DirectSendQueue rdmaWrite(long wrId, int sendFlags, int rkey, long remoteAddr) {
        return start(WR_RDMA_WRITE, wrId, sendFlags, 0, remoteAddr, rkey, 0, 0);
    }

    /** {@code IBV_WR_RDMA_WRITE_WITH_IMM}; {@code immData} in host order. */
    public DirectSendQueue rdmaWriteWithImm(long wrId, int sendFlags, int rkey, long remoteAddr, int immData) {
        return start(WR_RDMA_WRITE_WITH_IMM, wrId, sendFlags, immData, remoteAddr, rkey, 0, 0);
    }

    /** {@code IBV_WR_SEND}. */
    public DirectSendQueue send(long wrId, int sendFlags) {
        return start(WR_SEND, wrId, sendFlags, 0, 0, 0, 0, 0);
    }

    /** {@code IBV_WR_SEND_WITH_IMM}; {@code immData} in host order. */
    public DirectSendQueue sendWithImm(long wrId, int sendFlags, int immData) {
        return start(WR_SEND_WITH_IMM, wrId, sendFlags, immData, 0, 0, 0, 0);
    }

    /** {@code IBV_WR_SEND_WITH_INV}: send and invalidate {@code invalidateRkey} at the receiver. */
    public DirectSendQueue sendWithInv(long wrId, int sendFlags, int invalidateRkey) {
        return start(WR_SEND_WITH_INV, wrId, sendFlags, invalidateRkey, 0, 0, 0, 0);
    }

    /** {@code IBV_WR_RDMA_READ} from {@code remoteAddr} in the peer's region {@code rkey} into the SGEs. */
    public DirectSendQueue rdmaRead(long wrId, int sendFlags, int rkey, long remoteAddr) {
        return start(WR_RDMA_READ, wrId, sendFlags, 0, remoteAddr, rkey, 0, 0);
    }

    /** {@code IBV_WR_ATOMIC_CMP_AND_SWP}; the original 8 bytes land in the (single, 8-byte) SGE. */
    public DirectSendQueue atomicCmpSwp(long wrId, int sendFlags, int rkey, long remoteAddr, long compare,
                                        long swapValue) {
        return start(WR_ATOMIC_CMP_AND_SWP, wrId, sendFlags, 0, remoteAddr, rkey, swapValue, compare);
    }

    /** {@code IBV_WR_ATOMIC_FETCH_AND_ADD}; the original 8 bytes land in the (single, 8-byte) SGE. */
    public DirectSendQueue atomicFetchAdd(long wrId, int sendFlags, int rkey, long remoteAddr, long add) {
        return start(WR_ATOMIC_FETCH_AND_ADD, wrId, sendFlags, 0, remoteAddr, rkey, 0, add);
    }

    private DirectSendQueue start(int op, long wrId, int sendFlags, int immOrInv, long ra, int rk, long sw, long ca) {
        if (count == capacity) {
            throw new IllegalStateException(VERB + ": " + capacity + " WRs are pending on " + qp
                    + " (max_send_wr); post() them first");
        }
        if ((sendFlags & ~(SendFlag.SIGNALED_BIT | SendFlag.SOLICITED_BIT | SendFlag.FENCE_BIT)) != 0) {
            throw new IllegalArgumentException(VERB + ": send flags 0x" + Integer.toHexString(sendFlags)
                    + " (SIGNALED, SOLICITED and FENCE apply; inline data is added with inline())");
        }
        int i = count++;
        opcode[i] = op;
        flags[i] = sendFlags;
        imm[i] = immOrInv;
        raddr[i] = ra;
        rkey[i] = rk;
        swap[i] = sw;
        compareAdd[i] = ca;
        wrIds[i] = wrId;
        nsge[i] = 0;
        inlineBytes[i] = 0;
        return this;
    }

    private int current(String what) {
        if (count == 0) {
            throw new IllegalStateException(VERB + ": " + what + " before any WR was started on " + qp);
        }
        int i = count - 1;
        if (nsge[i] == maxSge) {
            throw new IllegalArgumentException(VERB + ": WR " + i + " already has max_send_sge=" + maxSge + " SGEs");
        }
        return i;
    }

    /** Adds an SGE over {@code [offset, offset + length)} of {@code key} to the current WR. */
    public DirectSendQueue sge(LocalKey key, long offset, int length) {
        int i = current("sge()");
        int op = opcode[i];
        if ((flags[i] & SEND_INLINE) != 0) {
            throw new IllegalArgumentException(VERB + ": WR " + i + " carries inline data; it cannot also name SGEs");
        }
        boolean atomic = op == WR_ATOMIC_CMP_AND_SWP || op == WR_ATOMIC_FETCH_AND_ADD;
        if (atomic && (length != 8 || nsge[i] != 0)) {
            throw new IllegalArgumentException(VERB + ": an atomic WR takes one 8-byte SGE, not " + length + " bytes");
        }
        Object snap = path.checkSge(qp, key, offset, length, op == WR_RDMA_READ || atomic,
                atomic ? "an atomic" : "RDMA READ");
        int s = i * maxSge + nsge[i]++;
        addr[s] = path.address(snap) + offset;
        len[s] = length;
        lkey[s] = path.lkey(snap);
        keyIds[s] = path.trackingId(snap);
        snapshots[s] = snap;
        return this;
    }

    /**
     * Adds {@code data} as inline payload of the current WR (RDMA WRITE and SEND opcodes): copied into the WQE at
     * {@link #post()}, so {@code data} must stay valid until then; it needs no memory region. The WR's inline bytes
     * may not exceed the QP's {@code max_inline_data}.
     */
    public DirectSendQueue inline(MemorySegment data) {
        int i = current("inline()");
        int op = opcode[i];
        if (op == WR_RDMA_READ || op == WR_ATOMIC_CMP_AND_SWP || op == WR_ATOMIC_FETCH_AND_ADD) {
            throw new IllegalArgumentException(VERB + ": inline data applies to RDMA WRITE and SEND, not opcode " + op);
        }
        if (nsge[i] > 0 && (flags[i] & SEND_INLINE) == 0) {
            throw new IllegalArgumentException(VERB + ": WR " + i + " names SGEs; it cannot also carry inline data");
        }
        if (!data.isNative()) {
            throw new IllegalArgumentException(VERB + ": inline data must be a native segment");
        }
        long total = inlineBytes[i] + data.byteSize();
        if (total > maxInline) {
            throw new IllegalArgumentException(VERB + ": " + total + " inline bytes on WR " + i + " exceed "
                    + "max_inline_data=" + maxInline + " of " + qp);
        }
        flags[i] |= SEND_INLINE;
        inlineBytes[i] = (int) total;
        int s = i * maxSge + nsge[i]++;
        len[s] = (int) data.byteSize();
        src[s] = data;
        srcOff[s] = 0;
        keyIds[s] = 0;
        snapshots[s] = null;
        return this;
    }

    /**
     * Writes the pending WRs into the send ring and rings the doorbell once; returns how many were posted (fewer when
     * the queue has room for fewer: the rest stay pending). Records every WR and its keys in the QP's tracker before
     * the doorbell and refuses ({@link IllegalStateException}, nothing posted) if a key was closed or re-registered
     * since it was added.
     */
    public int post() {
        int n = count;
        if (n == 0) {
            return 0;
        }
        DirectPath.SendSide s = side;
        if (!s.enter()) {
            throw s.busy(VERB);
        }
        try {
            s.checkOpen(VERB); // after the mark: a close that passed this waits for the post (CallGuard)
            s.checkState(VERB);
            if ((writer.dbrecCounter() & 0xFFFF) != (writer.curPost & 0xFFFF)) {
                throw new IllegalStateException(VERB + ": the doorbell record of " + qp + " no longer holds this "
                        + "queue's producer counter: the QP went through RESET (libmlx5 restarts its counters) or was "
                        + "posted through libmlx5; open a new DirectSendQueue");
            }
            int take = Math.min(n, s.room());
            if (take <= 0) {
                return 0;
            }
            long t = s.tail();
            int ms = maxSge;
            s.restage(t + take); // once, before the slots are written (not once per WR)
            for (int k = 0; k < take; k++) {
                s.put(t + k, wrIds[k], keyIds, k * ms, (flags[k] & SEND_INLINE) != 0 ? 0 : nsge[k]);
            }
            s.publish(t + take); // references visible before the keys are re-read (MemoryRegion.close's handshake)
            Object checked = null; // a snapshot re-read after the fence above: the same one need not be read again
            for (int k = 0; k < take; k++) {
                if ((flags[k] & SEND_INLINE) == 0) {
                    for (int j = 0; j < nsge[k]; j++) {
                        Object snap = snapshots[k * ms + j];
                        if (snap != checked) {
                            if (path.stale(snap)) {
                                s.rollback(t);
                                throw path.staleKey(qp, snap, VERB);
                            }
                            checked = snap;
                        }
                    }
                }
            }
            WqeWriter w = writer;
            for (int k = 0; k < take; k++) {
                int idx = w.write(opcode[k], flags[k], imm[k], raddr[k], rkey[k], swap[k], compareAdd[k], nsge[k],
                        k * ms, addr, len, lkey, src, srcOff);
                sqWrid[idx] = s.encode(t + k);
            }
            w.ring();
            shift(take);
            return take;
        } finally {
            s.exit();
        }
    }

    /** Drops the first {@code take} pending WRs (all of them, usually). */
    private void shift(int take) {
        int rest = count - take;
        if (rest > 0) {
            int ms = maxSge;
            System.arraycopy(opcode, take, opcode, 0, rest);
            System.arraycopy(flags, take, flags, 0, rest);
            System.arraycopy(imm, take, imm, 0, rest);
            System.arraycopy(raddr, take, raddr, 0, rest);
            System.arraycopy(rkey, take, rkey, 0, rest);
            System.arraycopy(swap, take, swap, 0, rest);
            System.arraycopy(compareAdd, take, compareAdd, 0, rest);
            System.arraycopy(wrIds, take, wrIds, 0, rest);
            System.arraycopy(nsge, take, nsge, 0, rest);
            System.arraycopy(inlineBytes, take, inlineBytes, 0, rest);
            System.arraycopy(addr, take * ms, addr, 0, rest * ms);
            System.arraycopy(len, take * ms, len, 0, rest * ms);
            System.arraycopy(lkey, take * ms, lkey, 0, rest * ms);
            System.arraycopy(keyIds, take * ms, keyIds, 0, rest * ms);
            System.arraycopy(snapshots, take * ms, snapshots, 0, rest * ms);
            System.arraycopy(src, take * ms, src, 0, rest * ms);
            System.arraycopy(srcOff, take * ms, srcOff, 0, rest * ms);
        }
        java.util.Arrays.fill(snapshots, rest * maxSge, count * maxSge, null); // no stale key kept reachable
        java.util.Arrays.fill(src, rest * maxSge, count * maxSge, null);
        count = rest;
    }
}
