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
 * tail} (WRs, for the overflow check against {@code max_post}; the caller sets {@code tail}) and the BlueFlame offset that
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
    /** Bit {@code ibv_wr_opcode} set: the WR carries an immediate / a remote-address segment / an atomic segment. */
    static final int IMM_OPS = 1 << WR_RDMA_WRITE_WITH_IMM | 1 << WR_SEND_WITH_IMM | 1 << WR_SEND_WITH_INV;
    static final int RADDR_OPS = 1 << WR_RDMA_WRITE | 1 << WR_RDMA_WRITE_WITH_IMM | 1 << WR_RDMA_READ
            | 1 << WR_ATOMIC_CMP_AND_SWP | 1 << WR_ATOMIC_FETCH_AND_ADD;
    static final int ATOMIC_OPS = 1 << WR_ATOMIC_CMP_AND_SWP | 1 << WR_ATOMIC_FETCH_AND_ADD;
    /**
     * The control segment's fm_ce_se bits (FENCE, CQ_UPDATE, SOLICITED) by {@code flags & 7}: a constant array of
     * constant length, so C2 indexes it with no range check and no branch on the flags.
     */
    private static final int[] FM_CE_SE = fmCeSeTable();
    /** {@link #FM_CE_SE} as control-segment bytes 8-15 (native order: fm_ce_se is byte 11), the immediate 0. */
    static final long[] CTRL_WORD1 = ctrlWord1Table();
    /** {@code mlx5_ib_opcode[]} of qp.c, indexed by {@code ibv_wr_opcode}; -1 where this path has no WQE. */
    static final int[] MLX5_OPCODE = {
        mlx5dv_h.MLX5_OPCODE_RDMA_WRITE(), mlx5dv_h.MLX5_OPCODE_RDMA_WRITE_IMM(), mlx5dv_h.MLX5_OPCODE_SEND(),
        mlx5dv_h.MLX5_OPCODE_SEND_IMM(), mlx5dv_h.MLX5_OPCODE_RDMA_READ(), mlx5dv_h.MLX5_OPCODE_ATOMIC_CS(),
        mlx5dv_h.MLX5_OPCODE_ATOMIC_FA(), -1, -1, mlx5dv_h.MLX5_OPCODE_SEND_INVAL(),
    };

    /**
     * All of native memory as one segment, held in a constant: C2 folds its scope and size. The hot WQE stores go
     * through it at {@link #at} addresses, which are inside the ring by construction (offset masks) and, for C2,
     * provably below its size (constant masks), so a store is one {@code mov}: no per-store scope loads, no
     * per-store bounds branch. The ring stays mapped while the QP's producer guard is held, which every post-path
     * call checks first.
     */
    static final MemorySegment NATIVE = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
    /** User-space addresses on x86-64 (57-bit with LA57: the user half is below 2^56); checked at construction. */
    private static final long ADDR_BITS = (1L << 56) - 1;
    /** Ring offsets (a ring is far below 4 GiB): bounds every offset C2 sees. */
    private static final long RING_BITS = (1L << 32) - 1;
    /**
     * WQEBB indexes (a ring is at most 2^25 WQEBBs, 2 GiB; checked at construction): an index masked with it is
     * provably in {@code [0, 2^25)} for C2, so its byte offset {@code idx << 6} is a non-negative int.
     */
    private static final int INDEX_BITS = (1 << 25) - 1;

    private final MemorySegment sq;
    /** The ring's address and {@code (qend - 1) & ~7}: {@code sqBase + (off & putMask)} is an 8-byte slot in it. */
    private final long sqBase;
    private final long putMask;
    final long qend;
    final int wqeMask;
    private final MemorySegment dbrec;
    private final MemorySegment bf;
    /** The send counter's address in the doorbell record, and the BlueFlame register's: {@link #NATIVE} accesses. */
    private final long dbrecSend;
    private final long bfBase;
    private final int bfSize;
    private final boolean bfUsable;
    private final boolean preferBf;
    private final boolean shutUpBf;
    /** {@code htobe32(qpn << 8)} as a native int: the QP-number bytes of control word 1 (its last byte is ds). */
    private final int qpnDs;
    /**
     * Control-segment bytes 0-7 as one big-endian long, its constant part: {@code qpn << 8} (bytes 4-6); the one-call
     * WR ORs in the WQE index, opcode and ds and swaps once ({@link #writeOne}).
     */
    final long qpnWord;
    /** {@code sq_signal_bits} in the position of fm_ce_se in control-segment bytes 8-15 (native order). */
    final long sigWord;
    private final int sqSignalBits;
    private final int maxPost;
    private final Object bfLock;
    final int maxGs;
    final int maxInline;

    int curPost;
    int head;
    int tail;
    private int bfOffset;
    // the chain being written (until ring)
    int nreq;
    private boolean inl;
    /**
     * The last builder WR's control segment (its ds byte, read back at the doorbell, is its size), valid while
     * {@link #lastEnd} is {@link #curPost}: otherwise the last WR is a one-call WR, one WQEBB at {@code curPost - 1}
     * (so {@link #writeOne} stores neither). {@link #ring} and {@link #abort} set {@code lastEnd} to a counter no chain
     * reaches (half the counter space away; a chain is at most a ring).
     */
    private long lastCtrl;
    private int lastEnd;

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
        if (!sq.isNative()) {
            throw new IllegalArgumentException("the send queue must be native memory");
        }
        this.sqBase = sq.address();
        if ((sqBase & ~ADDR_BITS) != 0 || wqeCount - 1 > INDEX_BITS) {
            throw new IllegalArgumentException("send queue at 0x" + Long.toHexString(sqBase) + " of " + wqeCount
                    + " WQEBBs: outside the user address space this writer assumes");
        }
        this.qend = (long) wqeCount * WQEBB;
        this.putMask = (qend - 1) & ~7L;
        this.wqeMask = wqeCount - 1;
        this.dbrec = dbrec;
        this.bf = bf;
        if (!dbrec.isNative() || dbrec.byteSize() < 8 || !bf.isNative() || bf.byteSize() < (long) bfSize + 8
                || ((dbrec.address() | bf.address()) & ~ADDR_BITS) != 0) {
            throw new IllegalArgumentException("doorbell record " + dbrec + " (8 bytes) or BlueFlame register " + bf
                    + " (" + bfSize + " + 8 bytes at least) not in native user memory");
        }
        this.dbrecSend = dbrec.address() + 4;
        this.bfBase = bf.address();
        this.bfSize = bfSize;
        this.bfUsable = bfUsable;
        this.preferBf = preferBf;
        this.shutUpBf = shutUpBf;
        this.qpnDs = Integer.reverseBytes(qpn << 8);
        this.qpnWord = (qpn << 8) & 0xFFFF_FFFFL;
        this.sigWord = (long) sqSignalBits << 24;
        this.sqSignalBits = sqSignalBits;
        this.maxPost = maxPost;
        this.maxGs = maxGs;
        this.maxInline = maxInline;
        this.curPost = curPost;
        this.head = curPost;
        this.tail = curPost;
        this.lastEnd = curPost ^ Integer.MIN_VALUE;
    }

    private static int[] fmCeSeTable() {
        int[] t = new int[8];
        for (int f = 0; f < 8; f++) {
            t[f] = ((f & SEND_FENCE) != 0 ? CTRL_FENCE : 0) | ((f & SEND_SIGNALED) != 0 ? CTRL_CQ_UPDATE : 0)
                    | ((f & SEND_SOLICITED) != 0 ? CTRL_SOLICITED : 0);
        }
        return t;
    }

    private static long[] ctrlWord1Table() {
        long[] t = new long[8];
        for (int f = 0; f < 8; f++) {
            t[f] = (long) FM_CE_SE[f] << 24;
        }
        return t;
    }

    int wqeCount() {
        return wqeMask + 1;
    }

    /** libmlx5's {@code mlx5_wq_overflow}: whether one more WR after the {@link #nreq} of this chain overflows. */
    boolean full() {
        return full(nreq);
    }

    /** {@link #full()} after {@code pending} WRs of this chain (a caller that counts them, see {@link #writeOne}). */
    boolean full(int pending) {
        return Integer.compareUnsigned(head - tail + pending, maxPost) >= 0;
    }

    /**
     * Writes one WR and returns the index of its first WQEBB ({@code cur_post & (wqe_cnt - 1)} before it): {@link
     * #begin}, one {@link #data} or {@link #inlineData} per SGE, {@link #end}. The caller checked {@link #full()}, the
     * opcode, {@code nsge <= maxGs} and the inline total against {@link #maxInline}. SGE {@code i} is
     * {@code (addr[from + i], len[from + i], lkey[from + i])}; for {@code SEND_INLINE} its bytes are read from
     * {@code src[from + i]} at {@code srcOff[from + i]} instead.
     */
    int write(int opcode, int flags, int immOrInv, long raddr, int rkey, long swap, long compareAdd, int nsge,
              int from, long[] addr, int[] len, int[] lkey, MemorySegment[] src, long[] srcOff) {
        int idx = begin(opcode, flags, immOrInv, raddr, rkey, swap, compareAdd);
        boolean inline = (flags & SEND_INLINE) != 0;
        for (int i = from; i < from + nsge; i++) {
            if (inline) {
                inlineData(src[i], srcOff[i], len[i]);
            } else {
                data(addr[i], len[i], lkey[i]);
            }
        }
        end();
        return idx;
    }

    // ---- one WR written straight into the ring, segment by segment, as libmlx5's ibv_wr_* builders do ----
    // Beyond cur_post the ring belongs to the producer: the NIC reads a WQE only once the doorbell record and the
    // doorbell name it, so a WR is written while it is built, and a chain that is not rung is dropped by resetting
    // cur_post. Each 8 bytes of a segment are one native-order store of byte-swapped values.

    /** The WR being built: its control segment's offset, next segment's offset, size in 16-byte units. */
    long wCtrl;
    long wSeg;
    int wSize;
    /** Its control word 0 (WQE index, opcode) byte-swapped; atomic data segments; inline payload bytes so far. */
    int wWord0;
    boolean wAtomic;
    boolean wInline;
    int wInlineBytes;

    /**
     * Starts a WR at {@code cur_post}: control segment bytes 8-15 (signal, fence and solicited bits, immediate), and
     * the remote-address and atomic segments of the opcodes that have them; returns the WQE's index. The caller
     * checked the room and the opcode.
     */
    int begin(int opcode, int flags, int immOrInv, long raddr, int rkey, long swap, long compareAdd) {
        // small enough for C2 to inline into the caller (FreqInlineSize): the atomic segment is a call of its own
        int cp = curPost;
        int idx = cp & wqeMask;
        long ctrl = (long) idx * WQEBB;
        int fmCeSe = fmCeSe(flags);
        int imm = ((IMM_OPS >>> opcode) & 1) != 0 ? Integer.reverseBytes(immOrInv) : 0;
        // bytes 8-11 be32(fm_ce_se): signature, 2 reserved, fm_ce_se; bytes 12-15 the immediate (big-endian)
        put(ctrl + 8, ((long) fmCeSe << 24) | ((long) imm << 32));
        long seg = ctrl + 16;
        int size = 1;
        if (((RADDR_OPS >>> opcode) & 1) != 0) {
            put(seg, Long.reverseBytes(raddr)); // set_raddr_seg
            put(seg + 8, Integer.reverseBytes(rkey) & 0xFFFF_FFFFL);
            seg += 16;
            size++;
        }
        boolean atomic = ((ATOMIC_OPS >>> opcode) & 1) != 0;
        if (atomic) {
            atomicSeg(seg, opcode, swap, compareAdd);
            seg += 16;
            size++;
        }
        wCtrl = ctrl;
        wSeg = seg;
        wSize = size;
        wWord0 = Integer.reverseBytes(((cp & 0xffff) << 8) | MLX5_OPCODE[opcode]);
        wAtomic = atomic;
        wInline = false;
        wInlineBytes = 0;
        return idx;
    }

    /**
     * A whole WR of RDMA WRITE, SEND or RDMA READ with one SGE ({@code len} 0: none) in one pass: the bytes of
     * {@link #begin}, {@link #data}, {@link #end}, without the per-segment state those keep between calls (each
     * field store costs a store slot per WR). Its segments (control, remote address, data: at most 48 bytes) never
     * wrap. Returns the WQE's index; the caller checked the room and the opcode.
     */
    int writeOne(int opcode, int flags, long raddr, int rkey, long addr, int len, int lkey) {
        return writeOneBe(opcode, flags, raddr, rkey, addr, len, lkeyWord(lkey));
    }

    /** A data segment's bytes 4-7, {@code be32(lkey)}, in place in a native-order long: swapped once per key. */
    static long lkeyWord(int lkey) {
        return (long) Integer.reverseBytes(lkey) << 32;
    }

    /** {@link #writeOne} with the lkey pre-swapped ({@link #lkeyWord}): the data segment's first 8 bytes need one OR. */
    int writeOneBe(int opcode, int flags, long raddr, int rkey, long addr, int len, long lkeyBe) {
        // under FreqInlineSize (325 bytecodes), so C2 inlines it into the caller. Each 8 bytes are one native store
        // of one byte-swapped big-endian long; the constant parts (qpn, opcode, ds, fm_ce_se) are pre-built
        int cp = curPost;
        // the 48 bytes written here are in this one WQEBB. Not wqebb(index(cp)) as the burst: with that (and the
        // provider wr_id's index unmasked) the benchmark's per-WR loop compiled to 117-127 instructions, with this 112
        long w = (sqBase & ADDR_BITS) + (((long) (cp & wqeMask) << 6) & (RING_BITS & ~63L));
        MemorySegment m = NATIVE;
        m.set(RAW64, w + 8, CTRL_WORD1[flags & 7] | sigWord); // no immediate: bytes 12-15 are 0
        long seg = w + 16;
        int size = 1;
        if (opcode != WR_SEND) {
            m.set(RAW64, seg, Long.reverseBytes(raddr));
            m.set(RAW64, seg + 8, Long.reverseBytes((long) rkey << 32)); // rkey, 4 reserved bytes
            seg += 16;
            size++;
        }
        if (len != 0) {
            m.set(RAW64, seg, lkeyBe | (Integer.reverseBytes(len) & 0xFFFF_FFFFL)); // byte_count, lkey
            m.set(RAW64, seg + 8, Long.reverseBytes(addr));
            size++;
        }
        // bytes 0-7: opmod 0, wqe_index (16 bits), opcode, qpn (24 bits), ds
        m.set(RAW64, w, Long.reverseBytes(((long) (cp & 0xffff) << 40) | ((long) oneCallOpcode(opcode) << 32)
                | qpnWord | size));
        // one WQEBB (48 bytes at most); nreq is not counted here: the caller rings with its own count, and the ring
        // finds this WQE at curPost - 1 (lastEnd is not curPost)
        curPost = cp + 1;
        return cp & wqeMask;
    }

    private static final int OP_RDMA_WRITE = MLX5_OPCODE[WR_RDMA_WRITE], OP_SEND = MLX5_OPCODE[WR_SEND],
            OP_RDMA_READ = MLX5_OPCODE[WR_RDMA_READ];

    /**
     * {@code mlx5_ib_opcode[opcode]} of the one-call opcodes, a constant where {@code opcode} is one (C2 folds static
     * final fields, not array elements: the array load and the {@code or} of its value go).
     */
    static int oneCallOpcode(int opcode) {
        return opcode == WR_RDMA_WRITE ? OP_RDMA_WRITE : opcode == WR_SEND ? OP_SEND
                : opcode == WR_RDMA_READ ? OP_RDMA_READ : MLX5_OPCODE[opcode];
    }

    /** Stores 8 bytes at ring offset {@code off} (8-aligned, below {@code qend}; the mask keeps it in the ring). */
    void put(long off, long v) {
        NATIVE.set(RAW64, (sqBase & ADDR_BITS) + (off & putMask & RING_BITS), v);
    }

    /**
     * The WQEBB index of counter {@code cp}, {@code cp & (wqe_cnt - 1)}: the constant mask changes nothing (the ring
     * has at most 2^25 WQEBBs) but bounds it for C2 ({@link #INDEX_BITS}).
     */
    int index(int cp) {
        return cp & wqeMask & INDEX_BITS;
    }

    /**
     * The address of WQEBB {@code idx} (from {@link #index}): {@code idx << 6} is a non-negative int for C2, so
     * {@code wqebb(idx) + k} for a constant {@code k < 64} is provably below {@link #NATIVE}'s size: one load (the
     * base) and no 64-bit mask.
     */
    long wqebb(int idx) {
        return (sqBase & ADDR_BITS) + (idx << 6);
    }

    /**
     * The address of the WQEBB at ring offset {@code ctrl} (a multiple of 64 below {@code qend}): its 64 bytes are in
     * the ring, and {@code at(ctrl) + k} for a constant {@code k < 64} is provably below {@link #NATIVE}'s size.
     */
    private long at(long ctrl) {
        return (sqBase & ADDR_BITS) + (ctrl & putMask & RING_BITS & ~63L);
    }

    /** The control segment's fm_ce_se byte for {@code flags} (consumes the fence a previous WR asked for). */
    int fmCeSe(int flags) {
        // libmlx5's fm_cache (a fence asked for by a previous local invalidate or bind) is always 0: this path writes
        // neither, so it is not kept
        return sqSignalBits | FM_CE_SE[flags & 7];
    }

    /**
     * A WQE of {@code size} 16-byte units was written at {@code ctrl}: cur_post, the chain's count, the last WQE (its
     * size is in its control segment).
     * libmlx5's {@code wqe_head[idx]} (what a CQE moves {@code tail} to) is not kept: the direct queue's room is its
     * tracker's, and the oracle sets {@link #tail} itself.
     */
    private void wrote(long ctrl, int size) {
        int n = nreq;
        curPost += (size * 16 + WQEBB - 1) / WQEBB;
        nreq = n + 1;
        lastCtrl = ctrl;
        lastEnd = curPost;
    }

    /** set_atomic_seg: FA writes only swap_add (compare stays as it was, the HCA ignores it). */
    void atomicSeg(long seg, int opcode, long swap, long compareAdd) {
        if (opcode == WR_ATOMIC_CMP_AND_SWP) {
            put(seg, Long.reverseBytes(swap));
            put(seg + 8, Long.reverseBytes(compareAdd));
        } else {
            put(seg, Long.reverseBytes(compareAdd));
        }
    }

    /** set_data_ptr_seg (set_data_ptr_seg_atomic: length 8) of the WR being built; an empty SGE takes no segment. */
    void data(long addr, int len, int lkey) {
        if (len == 0) {
            return;
        }
        long d = wSeg;
        if (d == qend) {
            d = 0;
        }
        int l = wAtomic ? ATOMIC_SIZE : len;
        put(d, (Integer.reverseBytes(l) & 0xFFFF_FFFFL) | ((long) Integer.reverseBytes(lkey) << 32));
        put(d + 8, Long.reverseBytes(addr));
        wSeg = d + 16;
        wSize++;
    }

    /**
     * set_data_inl_seg of the WR being built: appends {@code len} bytes of {@code src} at {@code off} to its inline
     * payload (after the segment's 4-byte header, which {@link #end} writes), wrapping at the queue's end.
     */
    void inlineData(MemorySegment src, long off, int len) {
        MemorySegment q = sq;
        long w = wSeg + 4 + wInlineBytes;
        if (w >= qend) {
            w -= qend;
        }
        long first = Math.min(len, qend - w);
        MemorySegment.copy(src, off, q, w, first);
        if (first < len) {
            MemorySegment.copy(src, off + first, q, 0, len - first);
        }
        // counted only once copied: a copy refused (another thread's confined arena, an arena closed meanwhile)
        // leaves the WR as it was, not claiming bytes the ring never received
        wInline = true;
        wInlineBytes += len;
    }

    /** Ends the WR being built: the inline header, control segment bytes 0-7 (index, opcode, QP number, size). */
    void end() {
        MemorySegment q = sq;
        int size = wSize;
        if (wInline) {
            int total = wInlineBytes;
            if (total != 0) {
                q.set(BE32, wSeg, total | INLINE_SEG);
                size += (total + 4 + 15) / 16;
            }
            inl = true;
        }
        long ctrl = wCtrl;
        put(ctrl, (wWord0 & 0xFFFF_FFFFL) | ((long) (qpnDs | (size << 24)) << 32));
        wrote(ctrl, size);
    }

    /** Drops the WRs written since the last {@link #ring} (a chain refused before its doorbell): cur_post returns. */
    void abort(int chainStart) {
        curPost = chainStart;
        lastEnd = chainStart ^ Integer.MIN_VALUE;
        nreq = 0;
        inl = false;
    }

    /**
     * Ends the chain (post_send_db): publishes the WQEs with the doorbell record, then writes the doorbell: a
     * BlueFlame copy of a single WQE when libmlx5 would, else the first 8 bytes of the last WQE's control segment.
     * Nothing happens for an empty chain. libmlx5's barriers: a full fence before the doorbell (mmio_wc_start).
     */
    void ring() {
        ring(false);
    }

    /**
     * {@link #ring()}; {@code wqesFenced}: the caller ran a full fence after the last WQE store (DirectSendQueue's
     * publish), so none is needed before the doorbell. Why that is enough on x86 (the only platform this path
     * claims; libmlx5 uses sfence there): mmio_wc_start orders the WQE and doorbell-record stores (write-back
     * memory) before the doorbell's stores to the write-combining UAR. The WQEs are ordered by that earlier locked
     * instruction, which drains the store buffer. The record store that follows it is a plain store, and x86 makes
     * a core's stores visible in program order (the WC store leaves the store buffer after it; the record is read
     * by the device through coherent DMA). A late record costs no safety anyway: the doorbell itself names the
     * WQE counter. The locked instruction after the doorbell (mmio_flush_writes) stays: it flushes the WC buffer,
     * without which the doorbell could linger.
     */
    void ring(boolean wqesFenced) {
        ring(wqesFenced, nreq);
    }

    /**
     * {@link #ring(boolean)} of a chain of {@code n} WRs, counted by the caller ({@link #writeOne} does not count):
     * {@code n} replaces {@link #nreq}.
     */
    void ring(boolean wqesFenced, int n) {
        if (n == 0) {
            return;
        }
        head += n;
        // udma_to_device_barrier (a compiler barrier on x86): the WQE stores before the record store
        VarHandle.releaseFence();
        NATIVE.set(BE32, dbrecSend & ADDR_BITS, curPost & 0xffff);
        if (!wqesFenced) {
            // mmio_wc_start (sfence on x86): a locked instruction also drains the write-combining buffers
            VarHandle.fullFence();
        }
        MemorySegment reg = bf;
        long dst = bfOffset;
        long last = lastEnd == curPost ? lastCtrl : (long) ((curPost - 1) & wqeMask) * WQEBB;
        lastCtrl = last; // bfCopy's source
        lastEnd = curPost ^ Integer.MIN_VALUE;
        int lastSize = NATIVE.get(U8, at(last) + 7) & 0xFF; // ds: the last byte of be32(qpn << 8 | ds)
        if (!shutUpBf && n == 1 && bfUsable && (inl || preferBf) && lastSize > 1 && lastSize <= bfSize / 16) {
            synchronized (bfLock) { // libmlx5's mmio_wc_spinlock for a shared register
                bfCopy(reg, dst, lastSize);
                VarHandle.fullFence(); // mmio_flush_writes, inside the lock as libmlx5 does
            }
        } else {
            // mmio_write64_be of the control segment's first 8 bytes; dst is 0 or bfSize (& bfSize: identity), both
            // with 8 bytes of the register after them (checked at construction)
            NATIVE.set(RAW64, (bfBase & ADDR_BITS) + (dst & bfSize & RING_BITS), NATIVE.get(RAW64, at(last)));
            VarHandle.fullFence(); // mmio_flush_writes
        }
        bfOffset ^= bfSize;
        nreq = 0;
        inl = false;
    }

    /** mlx5_bf_copy: the WQE in 64-byte units of 8-byte stores, its source wrapping at the ring's end. */
    private void bfCopy(MemorySegment reg, long dst, int lastSize) {
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
        return NATIVE.get(BE32, dbrecSend & ADDR_BITS);
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
}
