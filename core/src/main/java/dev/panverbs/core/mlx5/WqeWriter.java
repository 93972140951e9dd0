package dev.panverbs.core.mlx5;

import dev.panverbs.bindings.mlx5dv.mlx5dv_h;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Writes RC send work queue entries into an mlx5 send queue and rings its doorbell: the bytes and the doorbell
 * decisions of libmlx5's {@code _mlx5_post_send} and {@code post_send_db} ({@code providers/mlx5/qp.c}, rdma-core
 * 44), which the tests prove by running that code on identical fake memory ({@code Mlx5SendOracleTest}).
 *
 * <p>State mirrors {@code struct mlx5_qp}'s send side: {@code cur_post} (WQEBBs, not masked), {@code head}/{@code
 * tail} (WRs, for the overflow check against {@code max_post}), {@code fm_cache} (the fence a previous
 * local-invalidate or bind asked for; always 0 here), the per-WQE {@code wqe_head}, and the BlueFlame offset that
 * toggles after every doorbell. {@link #write} is one WR; {@link #ring} ends the chain (libmlx5 rings once per
 * {@code ibv_post_send} call or {@code ibv_wr_complete}). Single producer; allocation-free; no downcall.
 */
final class WqeWriter {
    static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfLong RAW64 = ValueLayout.JAVA_LONG_UNALIGNED;
    static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;

    /** {@code enum ibv_wr_opcode} values this path writes. */
    static final int WR_RDMA_WRITE = 0, WR_RDMA_WRITE_WITH_IMM = 1, WR_SEND = 2, WR_SEND_WITH_IMM = 3,
            WR_RDMA_READ = 4, WR_ATOMIC_CMP_AND_SWP = 5, WR_ATOMIC_FETCH_AND_ADD = 6, WR_SEND_WITH_INV = 9;
    /** {@code enum ibv_send_flags}. */
    static final int SEND_FENCE = 1, SEND_SIGNALED = 2, SEND_SOLICITED = 4, SEND_INLINE = 8;

    static final int WQEBB = 64;
    private static final int CTRL_FENCE = mlx5dv_h.MLX5_WQE_CTRL_FENCE();
    private static final int CTRL_CQ_UPDATE = mlx5dv_h.MLX5_WQE_CTRL_CQ_UPDATE();
    private static final int CTRL_SOLICITED = mlx5dv_h.MLX5_WQE_CTRL_SOLICITED();
    private static final int INLINE_SEG = mlx5dv_h.MLX5_INLINE_SEG();
    private static final int ATOMIC_SIZE = 8;
    /** {@code mlx5_ib_opcode[]} of qp.c, indexed by {@code ibv_wr_opcode}; -1 where this path has no WQE. */
    private static final int[] MLX5_OPCODE = {
        mlx5dv_h.MLX5_OPCODE_RDMA_WRITE(), mlx5dv_h.MLX5_OPCODE_RDMA_WRITE_IMM(), mlx5dv_h.MLX5_OPCODE_SEND(),
        mlx5dv_h.MLX5_OPCODE_SEND_IMM(), mlx5dv_h.MLX5_OPCODE_RDMA_READ(), mlx5dv_h.MLX5_OPCODE_ATOMIC_CS(),
        mlx5dv_h.MLX5_OPCODE_ATOMIC_FA(), -1, -1, mlx5dv_h.MLX5_OPCODE_SEND_INVAL(),
    };

    private final MemorySegment sq;
    private final long qend;
    private final int wqeMask;
    private final MemorySegment dbrec;
    private final MemorySegment bf;
    private final int bfSize;
    private final boolean bfUsable;
    private final boolean preferBf;
    private final boolean shutUpBf;
    private final int qpnShifted;
    private final int sqSignalBits;
    private final int maxPost;
    private final Object bfLock;
    final int maxGs;
    final int maxInline;
    /** {@code sq.wqe_head[idx]}: the WR count when the WQE at {@code idx} was written (what a CQE retires to). */
    final int[] wqeHead;

    int curPost;
    int head;
    int tail;
    private int fmCache;
    private int bfOffset;
    // the chain being written (until ring)
    int nreq;
    private boolean inl;
    private long lastCtrl;
    private int lastSize;

    /**
     * @param sq       the send queue buffer, {@code wqeCount * 64} bytes ({@code mlx5dv_qp.sq.buf})
     * @param dbrec    the QP doorbell record, 8 bytes ({@code mlx5dv_qp.dbrec}); the send counter is at +4
     * @param bf       the BlueFlame register, {@code 2 * bfSize} bytes ({@code mlx5dv_qp.bf.reg})
     * @param bfUsable {@code mlx5dv_qp.bf.size != 0} (libmlx5: {@code bf->uuarn != 0})
     * @param curPost  the producer counter to start from ({@code sq.cur_post}, 0 for a new QP)
     */
    WqeWriter(MemorySegment sq, int wqeCount, MemorySegment dbrec, MemorySegment bf, int bfSize, boolean bfUsable,
              boolean preferBf, boolean shutUpBf, int qpn, int sqSignalBits, int maxPost, int maxGs, int maxInline,
              int curPost) {
        this(sq, wqeCount, dbrec, bf, bfSize, bfUsable, preferBf, shutUpBf, qpn, sqSignalBits, maxPost, maxGs,
                maxInline, curPost, new Object());
    }

    /** @param bfLock held during a BlueFlame copy: the same object for every writer of one register */
    WqeWriter(MemorySegment sq, int wqeCount, MemorySegment dbrec, MemorySegment bf, int bfSize, boolean bfUsable,
              boolean preferBf, boolean shutUpBf, int qpn, int sqSignalBits, int maxPost, int maxGs, int maxInline,
              int curPost, Object bfLock) {
        this.bfLock = bfLock;
        if (Integer.bitCount(wqeCount) != 1 || sq.byteSize() < (long) wqeCount * WQEBB) {
            throw new IllegalArgumentException("send queue of " + wqeCount + " WQEBBs over " + sq.byteSize()
                    + " bytes");
        }
        this.sq = sq.asSlice(0, (long) wqeCount * WQEBB);
        this.qend = (long) wqeCount * WQEBB;
        this.wqeMask = wqeCount - 1;
        this.dbrec = dbrec;
        this.bf = bf;
        this.bfSize = bfSize;
        this.bfUsable = bfUsable;
        this.preferBf = preferBf;
        this.shutUpBf = shutUpBf;
        this.qpnShifted = qpn << 8;
        this.sqSignalBits = sqSignalBits;
        this.maxPost = maxPost;
        this.maxGs = maxGs;
        this.maxInline = maxInline;
        this.wqeHead = new int[wqeCount];
        this.curPost = curPost;
        this.head = curPost;
        this.tail = curPost;
    }

    int wqeCount() {
        return wqeMask + 1;
    }

    /** libmlx5's {@code mlx5_wq_overflow}: whether one more WR after the {@link #nreq} of this chain overflows. */
    boolean full() {
        return Integer.compareUnsigned(head - tail + nreq, maxPost) >= 0;
    }

    /**
     * Writes one WR and returns the index of its first WQEBB ({@code cur_post & (wqe_cnt - 1)} before it). The caller
     * checked {@link #full()}, the opcode, {@code nsge <= maxGs} and the inline total against {@link #maxInline}.
     * SGE {@code i} is {@code (addr[from + i], len[from + i], lkey[from + i])}; for {@code SEND_INLINE} its bytes
     * are read from {@code src[from + i]} at {@code srcOff[from + i]} instead.
     */
    int write(int opcode, int flags, int immOrInv, long raddr, int rkey, long swap, long compareAdd, int nsge,
              int from, long[] addr, int[] len, int[] lkey, MemorySegment[] src, long[] srcOff) {
        MemorySegment q = sq;
        int idx = curPost & wqeMask;
        long ctrl = (long) idx * WQEBB;
        int fence = (flags & SEND_FENCE) != 0 ? CTRL_FENCE : fmCache;
        fmCache = 0;
        q.set(BE32, ctrl + 8, 0);
        q.set(U8, ctrl + 11, (byte) (sqSignalBits | fence | ((flags & SEND_SIGNALED) != 0 ? CTRL_CQ_UPDATE : 0)
                | ((flags & SEND_SOLICITED) != 0 ? CTRL_SOLICITED : 0)));
        q.set(BE32, ctrl + 12, opcode == WR_SEND_WITH_IMM || opcode == WR_RDMA_WRITE_WITH_IMM
                || opcode == WR_SEND_WITH_INV ? immOrInv : 0);
        long seg = ctrl + 16;
        int size = 1;
        boolean atomic = opcode == WR_ATOMIC_CMP_AND_SWP || opcode == WR_ATOMIC_FETCH_AND_ADD;
        if (opcode == WR_RDMA_READ || opcode == WR_RDMA_WRITE || opcode == WR_RDMA_WRITE_WITH_IMM || atomic) {
            q.set(BE64, seg, raddr); // set_raddr_seg
            q.set(BE32, seg + 8, rkey);
            q.set(BE32, seg + 12, 0);
            seg += 16;
            size++;
            if (atomic) { // set_atomic_seg: FA writes only swap_add (compare stays as it was, the HCA ignores it)
                if (opcode == WR_ATOMIC_CMP_AND_SWP) {
                    q.set(BE64, seg, swap);
                    q.set(BE64, seg + 8, compareAdd);
                } else {
                    q.set(BE64, seg, compareAdd);
                }
                seg += 16;
                size++;
            }
        }
        if ((flags & SEND_INLINE) != 0 && nsge > 0) {
            size += writeInline(seg, from, nsge, len, src, srcOff);
            inl = true;
        } else {
            long d = seg;
            for (int i = from; i < from + nsge; i++) {
                if (d == qend) {
                    d = 0;
                }
                int l = len[i];
                if (l != 0) { // set_data_ptr_seg / set_data_ptr_seg_atomic; empty SGEs take no segment
                    q.set(BE32, d, atomic ? ATOMIC_SIZE : l);
                    q.set(BE32, d + 4, lkey[i]);
                    q.set(BE64, d + 8, addr[i]);
                    d += 16;
                    size++;
                }
            }
        }
        q.set(BE32, ctrl, ((curPost & 0xffff) << 8) | MLX5_OPCODE[opcode]);
        q.set(BE32, ctrl + 4, size | qpnShifted);
        wqeHead[idx] = head + nreq;
        curPost += (size * 16 + WQEBB - 1) / WQEBB;
        nreq++;
        lastCtrl = ctrl;
        lastSize = size;
        return idx;
    }

    /** set_data_inl_seg: the payloads back to back after a 4-byte header, wrapping at the queue's end. */
    private int writeInline(long seg, int from, int nsge, int[] len, MemorySegment[] src, long[] srcOff) {
        MemorySegment q = sq;
        long w = seg + 4;
        int total = 0;
        for (int i = from; i < from + nsge; i++) {
            int l = len[i];
            total += l;
            long first = Math.min(l, qend - w);
            MemorySegment.copy(src[i], srcOff[i], q, w, first);
            if (first < l) {
                MemorySegment.copy(src[i], srcOff[i] + first, q, 0, l - first);
                w = l - first;
            } else {
                w += l;
            }
        }
        if (total == 0) {
            return 0;
        }
        q.set(BE32, seg, total | INLINE_SEG);
        return (total + 4 + 15) / 16;
    }

    /**
     * Ends the chain (post_send_db): publishes the WQEs with the doorbell record, then writes the doorbell: a
     * BlueFlame copy of a single WQE when libmlx5 would, else the first 8 bytes of the last WQE's control segment.
     * Nothing happens for an empty chain.
     */
    void ring() {
        int n = nreq;
        if (n == 0) {
            return;
        }
        head += n;
        // udma_to_device_barrier (a compiler barrier on x86): the WQE stores before the record store
        VarHandle.releaseFence();
        dbrec.set(BE32, 4, curPost & 0xffff);
        // mmio_wc_start (sfence on x86): a locked instruction also drains the write-combining buffers
        VarHandle.fullFence();
        MemorySegment reg = bf;
        long dst = bfOffset;
        if (!shutUpBf && n == 1 && bfUsable && (inl || preferBf) && lastSize > 1 && lastSize <= bfSize / 16) {
            synchronized (bfLock) { // libmlx5's mmio_wc_spinlock for a shared register
                bfCopy(reg, dst);
                VarHandle.fullFence(); // mmio_flush_writes, inside the lock as libmlx5 does
            }
        } else {
            reg.set(RAW64, dst, sq.get(RAW64, lastCtrl)); // mmio_write64_be of the control segment's first 8 bytes
            VarHandle.fullFence(); // mmio_flush_writes
        }
        bfOffset ^= bfSize;
        nreq = 0;
        inl = false;
    }

    /** mlx5_bf_copy: the WQE in 64-byte units of 8-byte stores, its source wrapping at the ring's end. */
    private void bfCopy(MemorySegment reg, long dst) {
        MemorySegment q = sq;
        long s = lastCtrl;
        for (int bytes = (lastSize * 16 + 63) & ~63; bytes > 0; bytes -= 64) {
            for (int k = 0; k < 64; k += 8) {
                reg.set(RAW64, dst + k, q.get(RAW64, s + k));
            }
            dst += 64;
            s += 64;
            if (s == qend) {
                s = 0;
            }
        }
    }

    /** The send counter in the doorbell record ({@code be32toh(dbrec[1])}). */
    int dbrecCounter() {
        return dbrec.get(BE32, 4);
    }

    /** The BlueFlame register (tests). */
    MemorySegment bfRegister() {
        return bf;
    }

    /** The lock of this writer's BlueFlame register (tests). */
    Object bfLock() {
        return bfLock;
    }

    /** {@code bf->offset}: which BlueFlame half the next doorbell uses. */
    int bfOffset() {
        return bfOffset;
    }

    /** A completion for the WQE at {@code idx} retires the WRs up to it ({@code wq->tail = wqe_head[idx] + 1}). */
    void completed(int idx) {
        tail = wqeHead[idx & wqeMask] + 1;
    }
}
