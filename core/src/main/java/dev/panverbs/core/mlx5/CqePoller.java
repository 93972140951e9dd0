package dev.panverbs.core.mlx5;

import static dev.panverbs.core.mlx5.WqeWriter.BE32;
import static dev.panverbs.core.mlx5.WqeWriter.BE64;

import dev.panverbs.bindings.mlx5dv.mlx5_cqe64;
import dev.panverbs.bindings.mlx5dv.mlx5_err_cqe;
import dev.panverbs.bindings.verbs.ibv_wc;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Reads 64-byte CQEs straight from an mlx5 CQ buffer into {@code struct ibv_wc} entries: libmlx5's
 * {@code poll_cq}/{@code mlx5_poll_one}/{@code mlx5_parse_cqe} for CQE version 0 ({@code providers/mlx5/cq.c},
 * rdma-core 44), field for field, proven against that code by {@code Mlx5PollOracleTest}. Software owns the CQE at
 * {@code cons_index} when its opcode is not INVALID and its owner bit equals bit {@code log2(ncqe)} of
 * {@code cons_index}; the loads that follow are ordered after that check (acquire fence), and after the pass the
 * consumer index goes to the CQ doorbell record ({@code dbrec[0] = be32(cons_index & 0xffffff)}). The arm doorbell
 * is {@code mlx5_arm_cq}'s.
 *
 * <p>A completion names its QP by number; each QP whose completions arrive here is a {@link Target} holding the
 * {@code wr_id} of every send WQE (by WQE index; a CQE's {@code wqe_counter} names the first WQEBB of the WQE) and
 * of every receive WQE (in order). Single consumer; allocation-free; no downcall.
 */
final class CqePoller {
    /** libmlx5's {@code CQ_POLL_ERR}: a CQE this poller cannot attribute (unknown QP, SRQ, signature error). */
    static final int POLL_ERR = -2;

    private static final ValueLayout.OfShort BE16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt HOST32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong HOST64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
    /**
     * All of native memory, a constant: C2 folds its scope and size, so an access at an address below
     * {@link #ADDR_BITS} plus a 32-bit offset is one {@code mov} (as {@code WqeWriter} writes WQEs). The poll reaches
     * the CQ ring at its base plus a masked index, and the {@code ibv_wc} array after one bounds check per poll.
     */
    private static final MemorySegment NATIVE = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
    /** User-space addresses on x86-64 and aarch64 are below 2^56 (checked for the ring and the array). */
    private static final long ADDR_BITS = (1L << 56) - 1;

    static final long WC_SIZE = ibv_wc.layout().byteSize();
    /** The most completions one poll returns: {@code n * WC_SIZE} stays below 2^31 (an int offset in the loop). */
    private static final int MAX_POLL = 1 << 24;
    private static final long WC_WR_ID = ibv_wc.wr_id$offset();
    private static final long WC_STATUS = ibv_wc.status$offset();
    private static final long WC_OPCODE = ibv_wc.opcode$offset();
    private static final long WC_VENDOR_ERR = ibv_wc.vendor_err$offset();
    private static final long WC_BYTE_LEN = ibv_wc.byte_len$offset();
    private static final long WC_IMM = ibv_wc.imm_data$offset();
    private static final long WC_QP_NUM = ibv_wc.qp_num$offset();
    private static final long WC_SRC_QP = ibv_wc.src_qp$offset();
    private static final long WC_FLAGS = ibv_wc.wc_flags$offset();
    private static final long WC_PKEY_INDEX = ibv_wc.pkey_index$offset();
    private static final long WC_SLID = ibv_wc.slid$offset();
    private static final long WC_SL = ibv_wc.sl$offset();
    private static final long WC_DLID_PATH_BITS = ibv_wc.dlid_path_bits$offset();

    private static final long CQE_ML_PATH = mlx5_cqe64.ml_path$offset();
    private static final long CQE_SLID = mlx5_cqe64.slid$offset();
    private static final long CQE_FLAGS_RQPN = mlx5_cqe64.flags_rqpn$offset();
    private static final long CQE_SRQN_UIDX = mlx5_cqe64.srqn_uidx$offset();
    private static final long CQE_IMM = mlx5_cqe64.imm_inval_pkey$offset();
    private static final long CQE_APP = mlx5_cqe64.app$offset();
    private static final long CQE_BYTE_CNT = mlx5_cqe64.byte_cnt$offset();
    private static final long CQE_SOP_DROP_QPN = mlx5_cqe64.sop_drop_qpn$offset();
    private static final long CQE_WQE_COUNTER = mlx5_cqe64.wqe_counter$offset();
    private static final long CQE_OP_OWN = mlx5_cqe64.op_own$offset();
    private static final long ERR_VENDOR = mlx5_err_cqe.vendor_err_synd$offset();
    private static final long ERR_SYNDROME = mlx5_err_cqe.syndrome$offset();

    // mlx5dv.h CQE opcodes and ibv_wc vocabulary (verbs.h)
    private static final int CQE_REQ = 0, CQE_RESP_WR_IMM = 1, CQE_RESP_SEND = 2, CQE_RESP_SEND_IMM = 3,
            CQE_RESP_SEND_INV = 4, CQE_NO_PACKET = 6, CQE_SIG_ERR = 12, CQE_REQ_ERR = 13,
            CQE_RESP_ERR = 14, CQE_INVALID = 15;
    private static final int WC_SEND = 0, WC_RDMA_WRITE = 1, WC_RDMA_READ = 2, WC_COMP_SWAP = 3, WC_FETCH_ADD = 4,
            WC_RECV = 128, WC_RECV_RDMA_WITH_IMM = 129;
    private static final int WC_GRH = 1, WC_WITH_IMM = 2, WC_WITH_INV = 8;
    /** mlx5_handle_error_cqe: {@code ibv_wc_status} by syndrome; IBV_WC_GENERAL_ERR (21) elsewhere. */
    private static final byte[] STATUS_BY_SYNDROME = new byte[256];

    static {
        java.util.Arrays.fill(STATUS_BY_SYNDROME, (byte) 21);
        int[][] map = {{0x01, 1}, {0x02, 2}, {0x04, 4}, {0x05, 5}, {0x06, 6}, {0x10, 7}, {0x11, 8}, {0x12, 9},
            {0x13, 10}, {0x14, 11}, {0x15, 12}, {0x16, 13}, {0x22, 16}};
        for (int[] m : map) {
            STATUS_BY_SYNDROME[m[0]] = (byte) m[1];
        }
    }

    /**
     * What the poller knows of one QP completing here: its send side (the {@code wr_id} of the send WQE at each index;
     * a CQE's {@code wqe_counter} names the first WQEBB of the WQE) and/or its receive side (the {@code wr_id} of each
     * receive WQE, consumed in order), each with what retires a completion. A side that is null is not attributed.
     */
    static final class Target {
        final int qpn;
        /**
         * By send WQE index {@code i}: the provider wr_id (tracker position and route token, what retires, once per
         * poll) of the WR whose WQE starts there. Or null.
         */
        long[] sq;
        int sqMask;
        /**
         * The caller's wr_ids (what each completion reports): the send tracker's slot records, where the poster
         * writes each WR's record anyway, at {@code ((int) sq[i] & slotMask) * slotStride} (the position's slot:
         * the low bits of the provider wr_id). Read before the poll retires the WR, so the slot is still its own.
         */
        long[] wrIds;
        int slotMask;
        int slotStride;
        SendCompletionSink sink;
        long[] rqWrid;
        int rqMask;
        int rqTail;
        RecvCompletionSink rsink;

        Target(int qpn) {
            this.qpn = qpn;
        }

        /** A target with only a receive side (tests). */
        Target(int qpn, long[] rqWrid) {
            this(qpn);
            receive(rqWrid, 0, null);
        }

        /**
         * @param sq the provider wr_id by WQE index (see {@link #sq}; a power of two WQEs)
         * @param wrIds the caller's wr_ids by slot (see {@link #wrIds}; {@code slotMask + 1} slots of
         *           {@code slotStride} longs)
         * @param s called once per poll with the last completed WQE (completions of a send queue arrive in order,
         *          and a completion retires every WR before it), not once per completion
         */
        void send(long[] sq, long[] wrIds, int slotMask, int slotStride, SendCompletionSink s) {
            this.sqMask = sq.length - 1;
            this.sink = s;
            this.wrIds = wrIds;
            this.slotMask = slotMask;
            this.slotStride = slotStride;
            this.sq = sq;
        }

        /** The caller's wr_id of the WR whose WQE starts at {@code idx}. */
        long wrId(int idx) {
            return wrIds[((int) sq[idx] & slotMask) * slotStride];
        }

        void receive(long[] wrid, int tail, RecvCompletionSink s) {
            this.rqMask = wrid.length - 1;
            this.rqTail = tail;
            this.rsink = s;
            this.rqWrid = wrid;
        }
    }

    /** The send side a completion retires: returns the wr_id to report for the WQE at {@code idx}. */
    interface SendCompletionSink {
        long completed(int idx, long providerWrId);
    }

    /** The receive side a completion retires (the oldest outstanding receive): returns the wr_id to report. */
    interface RecvCompletionSink {
        long completed(long providerWrId);
    }

    private final MemorySegment buf;
    /** {@code buf}'s address (the poll's NATIVE loads). */
    private final long bufBase;
    private final int cqeMask;
    /** log2(ncqe): the bit of {@code cons_index} the owner bit of the current lap equals. */
    private final int ownerShift;
    private final MemorySegment dbrec;
    private final MemorySegment armDoorbell;
    private final int cqn;
    private final boolean cqeV1;
    private Target[] targets = new Target[0];
    private Target cur;
    /** The target whose send retirement is deferred to the end of the poll, and its last completed WQE. */
    private Target retireTarget;
    private int retireIdx;
    int consIndex;
    int armSn;
    /** How many completions the last poll that returned {@link #POLL_ERR} had written before the refused CQE. */
    int polledBeforeError;

    /**
     * @param buf          the CQ buffer, {@code ncqe * 64} bytes ({@code mlx5dv_cq.buf}, CQE size 64)
     * @param dbrec        the CQ doorbell record, 8 bytes ({@code mlx5dv_cq.dbrec})
     * @param armDoorbell  the 8-byte arm doorbell ({@code mlx5dv_cq.cq_uar + MLX5_CQ_DOORBELL})
     */
    CqePoller(MemorySegment buf, int ncqe, MemorySegment dbrec, MemorySegment armDoorbell, int cqn, int consIndex) {
        this(buf, ncqe, dbrec, armDoorbell, cqn, consIndex, false);
    }

    /**
     * @param cqeV1 CQE version 1 ({@code MLX5DV_CONTEXT_FLAGS_CQE_V1}): {@code srqn_uidx} holds the QP's user index,
     *              not an SRQ number, so it does not mark an SRQ receive
     */
    CqePoller(MemorySegment buf, int ncqe, MemorySegment dbrec, MemorySegment armDoorbell, int cqn, int consIndex,
              boolean cqeV1) {
        this.cqeV1 = cqeV1;
        if (Integer.bitCount(ncqe) != 1 || ncqe > 1 << 24 || buf.byteSize() < (long) ncqe * 64 || !buf.isNative()
                || (buf.address() & ~ADDR_BITS) != 0) {
            throw new IllegalArgumentException("CQ of " + ncqe + " CQEs over " + buf);
        }
        this.buf = buf.asSlice(0, (long) ncqe * 64);
        this.bufBase = buf.address();
        this.cqeMask = ncqe - 1;
        this.ownerShift = Integer.numberOfTrailingZeros(ncqe);
        this.dbrec = dbrec;
        this.armDoorbell = armDoorbell;
        this.cqn = cqn;
        this.consIndex = consIndex;
    }

    /** Adds (or replaces) the QP {@code t.qpn} (control path: copies the table). */
    synchronized void attach(Target t) {
        detach(t.qpn);
        Target[] n = java.util.Arrays.copyOf(targets, targets.length + 1);
        n[n.length - 1] = t;
        targets = n;
    }

    /** The target of {@code qpn}, created and attached if this CQ has none yet (control path). */
    synchronized Target target(int qpn) {
        for (Target t : targets) {
            if (t.qpn == qpn) {
                return t;
            }
        }
        Target t = new Target(qpn);
        attach(t);
        return t;
    }

    synchronized void detach(int qpn) {
        retireDeferred();
        targets = java.util.Arrays.stream(targets).filter(x -> x.qpn != qpn).toArray(Target[]::new);
        cur = null;
    }

    private Target find(int qpn) {
        Target c = cur;
        if (c != null && c.qpn == qpn) {
            return c;
        }
        for (Target t : targets) {
            if (t.qpn == qpn) {
                cur = t;
                return t;
            }
        }
        return null;
    }

    /**
     * Polls up to {@code ne} completions into {@code wcs} (consecutive {@code struct ibv_wc}) and returns how many,
     * or {@link #POLL_ERR} as {@code mlx5_poll_cq} does. Fields libmlx5 leaves unwritten stay as they were.
     *
     * <p>The common case, a requester CQE of RDMA WRITE or SEND of the last QP seen, is decoded in the loop itself:
     * everything it needs is loaded once per poll (the acquire fence after each owner check makes C2 reload every
     * field after it, so per-CQE field reads would be loads per CQE), the CQE and the {@code ibv_wc} are reached at
     * addresses through {@link #NATIVE} (one {@code mov} each; the entry's bounds are checked once per poll, the
     * CQE's by the ring mask), and its retirement is deferred in a local. Anything else goes to {@link #parse}.
     */
    int poll(MemorySegment wcs, int ne) {
        ne = Math.min(ne, MAX_POLL);
        checkArray(wcs, ne);
        final long cb = bufBase & ADDR_BITS; // the mask tells C2 it is below 2^56 (it is: the constructor checks)
        final int mask = cqeMask;
        final int shift = ownerShift;
        final long wb = wcs.address() & ADDR_BITS; // native and in user space (checkArray)
        int ci = consIndex;
        int n = 0;
        int err = 0;
        // the fast path's QP (cur), as locals: key = 0x0a << 24 | its QP number (0: none), see below
        Target t = cur;
        int key = fastKey(t);
        long[] sq = key == 0 ? null : t.sq;
        long[] wrIds = key == 0 ? null : t.wrIds;
        int slotMask = key == 0 ? 0 : t.slotMask;
        int stride = key == 0 ? 0 : t.slotStride;
        int last = -1; // t's last completed send WQE in this poll (retired once, at the end)
        for (; n < ne; n++) {
            long ca = cb + Integer.toUnsignedLong((ci & mask) << 6);
            int opOwn = NATIVE.get(U8, ca + CQE_OP_OWN) & 0xFF;
            int lap = ci >>> shift & 1; // the owner bit of software's CQEs in this lap
            // opcode REQ (0) and software's owner bit in one test; anything else (invalid, not ours) below
            if (((opOwn ^ lap) & 0xF1) == 0) {
                ci++;
                VarHandle.acquireFence(); // udma_from_device_barrier: the CQE's contents after its owner bit
                // sop_drop_qpn, wqe_counter, signature, op_own: one load
                long word = NATIVE.get(BE64, ca + CQE_SOP_DROP_QPN);
                int sopDropQpn = (int) (word >>> 32);
                // RDMA WRITE (0x08) or SEND (0x0a) of the fast QP: | 0x02 << 24 maps the one onto the other
                if ((sopDropQpn | 0x0200_0000) == key) {
                    int idx = ((int) word >>> 16) & (sq.length - 1);
                    long wa = wb + Integer.toUnsignedLong(n * (int) WC_SIZE);
                    NATIVE.set(HOST64, wa + WC_WR_ID, wrIds[((int) sq[idx] & slotMask) * stride]);
                    // status IBV_WC_SUCCESS and opcode in one store: sopDropQpn ^ key is 0 for SEND (0x0a) and bit 25
                    // for RDMA WRITE (0x08), which becomes IBV_WC_RDMA_WRITE (1) at the opcode's place
                    long opcode = sopDropQpn ^ key;
                    NATIVE.set(HOST64, wa + WC_STATUS, LITTLE_ENDIAN ? opcode << 7 : opcode >>> 25);
                    NATIVE.set(HOST32, wa + WC_QP_NUM, sopDropQpn & 0xFF_FFFF);
                    NATIVE.set(HOST32, wa + WC_FLAGS, 0);
                    last = idx;
                    continue;
                }
            } else if ((opOwn >>> 4) == CQE_INVALID || (opOwn & 1) != lap) {
                break;
            } else {
                ci++;
                VarHandle.acquireFence();
            }
            consIndex = ci;
            if (last >= 0) {
                deferRetire(t, last);
                last = -1;
            }
            err = parse((long) ((ci - 1) & mask) << 6, opOwn, wcs, (long) n * WC_SIZE);
            if (err != 0) {
                break;
            }
            t = cur; // parse may have found another QP: the fast path follows it
            key = fastKey(t);
            sq = key == 0 ? null : t.sq;
            wrIds = key == 0 ? null : t.wrIds;
            slotMask = key == 0 ? 0 : t.slotMask;
            stride = key == 0 ? 0 : t.slotStride;
        }
        consIndex = ci;
        if (last >= 0) {
            deferRetire(t, last);
        }
        retireDeferred();
        dbrec.set(BE32, 0, ci & 0xFF_FFFF);
        if (err == POLL_ERR) {
            polledBeforeError = n;
            return POLL_ERR;
        }
        return n;
    }

    /** {@code 0x0a << 24 | qpn} of a target whose send side is attached, else 0 (no fast path). */
    private static int fastKey(Target t) {
        return t == null || t.sq == null ? 0 : 0x0A00_0000 | t.qpn;
    }

    /**
     * Refuses an {@code ibv_wc} array the poll's NATIVE stores must not use for {@code ne} entries: not native, not
     * in user space, or too small (cold; before any CQE is consumed).
     */
    private static void checkArray(MemorySegment wcs, int ne) {
        if (!wcs.isNative() || (wcs.address() & ~ADDR_BITS) != 0 || (long) ne * WC_SIZE > wcs.byteSize()) {
            throw new IllegalArgumentException("mlx5 direct CQE poll of " + ne + " completions into " + wcs
                    + ": needs native memory in user space of " + ne + " * " + WC_SIZE + " bytes");
        }
    }

    private void deferRetire(Target t, int idx) {
        Target r = retireTarget;
        if (r != t) { // stored once per target and poll: a reference store pays the GC's barriers (~13 instructions)
            if (r != null) {
                retireDeferred();
            }
            retireTarget = t;
        }
        retireIdx = idx;
    }

    /** Retires the deferred target through its last completed WQE (before the poll returns). */
    private void retireDeferred() {
        Target r = retireTarget;
        if (r != null) {
            retireTarget = null;
            r.sink.completed(retireIdx, r.sq[retireIdx]);
        }
    }

    /** The caller's wr_id of the send WQE at {@code idx} of {@code t}, retiring it at the end of the poll. */
    private long sendCompleted(Target t, int idx) {
        if (t.sink != null) {
            deferRetire(t, idx);
        }
        return t.wrId(idx);
    }

    private int parse(long off, int opOwn, MemorySegment wc, long w) {
        MemorySegment c = buf;
        int sopDropQpn = c.get(BE32, off + CQE_SOP_DROP_QPN);
        int qpn = sopDropQpn & 0xFF_FFFF;
        wc.set(HOST32, w + WC_FLAGS, 0);
        wc.set(HOST32, w + WC_QP_NUM, qpn);
        int opcode = opOwn >>> 4;
        switch (opcode) {
            case CQE_REQ -> {
                Target t = find(qpn);
                if (t == null || t.sq == null) {
                    return POLL_ERR;
                }
                int idx = (c.get(BE16, off + CQE_WQE_COUNTER) & 0xFFFF) & t.sqMask;
                int flags = 0;
                switch (sopDropQpn >>> 24) {
                    case 0x09 -> { // RDMA_WRITE_IMM
                        flags = WC_WITH_IMM;
                        wc.set(HOST32, w + WC_OPCODE, WC_RDMA_WRITE);
                    }
                    case 0x08 -> wc.set(HOST32, w + WC_OPCODE, WC_RDMA_WRITE);
                    case 0x0b -> { // SEND_IMM
                        flags = WC_WITH_IMM;
                        wc.set(HOST32, w + WC_OPCODE, WC_SEND);
                    }
                    case 0x0a, 0x01 -> wc.set(HOST32, w + WC_OPCODE, WC_SEND);
                    case 0x10 -> {
                        wc.set(HOST32, w + WC_OPCODE, WC_RDMA_READ);
                        wc.set(HOST32, w + WC_BYTE_LEN, c.get(BE32, off + CQE_BYTE_CNT));
                    }
                    case 0x11 -> {
                        wc.set(HOST32, w + WC_OPCODE, WC_COMP_SWAP);
                        wc.set(HOST32, w + WC_BYTE_LEN, 8);
                    }
                    case 0x12 -> {
                        wc.set(HOST32, w + WC_OPCODE, WC_FETCH_ADD);
                        wc.set(HOST32, w + WC_BYTE_LEN, 8);
                    }
                    // UMR, SET_PSV, NOP, MMO: libmlx5 reports sq.wr_data[idx], which is 0 for every WQE but its
                    // memory-window binds and local invalidates (not written by this path)
                    case 0x25, 0x20, 0x00, 0x2f -> wc.set(HOST32, w + WC_OPCODE, 0);
                    case 0x0e -> wc.set(HOST32, w + WC_OPCODE, 7); // TSO: IBV_WC_TSO
                    default -> { } // reserved: libmlx5 leaves the opcode unwritten
                }
                wc.set(HOST32, w + WC_FLAGS, flags);
                wc.set(HOST64, w + WC_WR_ID, sendCompleted(t, idx));
                wc.set(HOST32, w + WC_STATUS, 0);
            }
            case CQE_RESP_WR_IMM, CQE_RESP_SEND, CQE_RESP_SEND_IMM, CQE_RESP_SEND_INV -> {
                if (!cqeV1 && (c.get(BE32, off + CQE_SRQN_UIDX) & 0xFF_FFFF) != 0) {
                    return POLL_ERR; // an SRQ's receive: not attributed by this poller
                }
                Target t = find(qpn);
                if (t == null || t.rqWrid == null) {
                    return POLL_ERR;
                }
                wc.set(HOST32, w + WC_BYTE_LEN, c.get(BE32, off + CQE_BYTE_CNT));
                long rwr = t.rqWrid[t.rqTail & t.rqMask];
                t.rqTail++;
                wc.set(HOST64, w + WC_WR_ID, t.rsink == null ? rwr : t.rsink.completed(rwr));
                int flags = 0;
                int imm = c.get(HOST32, off + CQE_IMM);
                switch (opcode) {
                    case CQE_RESP_WR_IMM -> {
                        wc.set(HOST32, w + WC_OPCODE, WC_RECV_RDMA_WITH_IMM);
                        flags = WC_WITH_IMM;
                        wc.set(HOST32, w + WC_IMM, imm);
                    }
                    case CQE_RESP_SEND -> wc.set(HOST32, w + WC_OPCODE, WC_RECV);
                    case CQE_RESP_SEND_IMM -> {
                        wc.set(HOST32, w + WC_OPCODE, WC_RECV);
                        flags = WC_WITH_IMM;
                        wc.set(HOST32, w + WC_IMM, imm);
                    }
                    default -> {
                        wc.set(HOST32, w + WC_OPCODE, WC_RECV);
                        flags = WC_WITH_INV;
                        wc.set(HOST32, w + WC_IMM, c.get(BE32, off + CQE_IMM)); // invalidated_rkey, host order
                    }
                }
                int flagsRqpn = c.get(BE32, off + CQE_FLAGS_RQPN);
                wc.set(ValueLayout.JAVA_SHORT_UNALIGNED, w + WC_SLID, c.get(BE16, off + CQE_SLID));
                wc.set(U8, w + WC_SL, (byte) ((flagsRqpn >>> 24) & 0xF));
                wc.set(HOST32, w + WC_SRC_QP, flagsRqpn & 0xFF_FFFF);
                wc.set(U8, w + WC_DLID_PATH_BITS, (byte) (c.get(U8, off + CQE_ML_PATH) & 0x7F));
                wc.set(HOST32, w + WC_FLAGS, flags | (((flagsRqpn >>> 28) & 3) != 0 ? WC_GRH : 0));
                wc.set(ValueLayout.JAVA_SHORT_UNALIGNED, w + WC_PKEY_INDEX,
                        (short) c.get(BE32, off + CQE_IMM));
                wc.set(HOST32, w + WC_STATUS, 0);
            }
            case CQE_NO_PACKET, CQE_SIG_ERR -> {
                return POLL_ERR; // tag matching and signature errors are outside this path
            }
            case CQE_REQ_ERR, CQE_RESP_ERR -> {
                int syndrome = c.get(U8, off + ERR_SYNDROME) & 0xFF;
                wc.set(HOST32, w + WC_STATUS, STATUS_BY_SYNDROME[syndrome]);
                wc.set(HOST32, w + WC_VENDOR_ERR, c.get(U8, off + ERR_VENDOR) & 0xFF);
                Target t = find(qpn);
                if (opcode == CQE_REQ_ERR) {
                    if (t == null || t.sq == null) {
                        return POLL_ERR;
                    }
                    int idx = (c.get(BE16, off + CQE_WQE_COUNTER) & 0xFFFF) & t.sqMask;
                    wc.set(HOST64, w + WC_WR_ID, sendCompleted(t, idx));
                } else {
                    boolean srq = !cqeV1 && (c.get(BE32, off + CQE_SRQN_UIDX) & 0xFF_FFFF) != 0;
                    if (srq || t == null || t.rqWrid == null) {
                        return POLL_ERR;
                    }
                    long rwr = t.rqWrid[t.rqTail & t.rqMask];
                    t.rqTail++;
                    wc.set(HOST64, w + WC_WR_ID, t.rsink == null ? rwr : t.rsink.completed(rwr));
                }
            }
            default -> { } // RESIZE_CQ and reserved opcodes: libmlx5 reports the entry with nothing else written
        }
        return 0;
    }

    /**
     * Requests an event for the next completion ({@code solicited}: the next solicited one): {@code mlx5_arm_cq}'s
     * doorbell record {@code dbrec[1]} and 64-bit arm doorbell.
     */
    void arm(boolean solicited) {
        int sn = armSn & 3;
        int ci = consIndex & 0xFF_FFFF;
        int cmd = solicited ? 1 << 24 : 0; // MLX5_CQ_DB_REQ_NOT_SOL / MLX5_CQ_DB_REQ_NOT
        int hi = sn << 28 | cmd | ci;
        dbrec.set(BE32, 4, hi);
        VarHandle.fullFence(); // mmio_wc_start
        armDoorbell.set(BE64, 0, ((long) hi << 32) | (cqn & 0xFFFF_FFFFL));
        VarHandle.fullFence(); // mmio_flush_writes
    }

    /** A completion event arrived ({@code mlx5_cq_event}): the next arm uses the next sequence number. */
    void eventArrived() {
        armSn++;
    }
}
