package dev.panverbs.bindings.mlx5;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import dev.panverbs.bindings.NativeLibraryException;
import dev.panverbs.bindings.mlx5dv.mlx5_cqe64;
import dev.panverbs.bindings.mlx5dv.mlx5_ib_uapi_query_port;
import dev.panverbs.bindings.mlx5dv.mlx5_wqe_av;
import dev.panverbs.bindings.mlx5dv.mlx5_wqe_ctrl_seg;
import dev.panverbs.bindings.mlx5dv.mlx5_wqe_data_seg;
import dev.panverbs.bindings.mlx5dv.mlx5_wqe_datagram_seg;
import dev.panverbs.bindings.mlx5dv.mlx5_wqe_eth_seg;
import dev.panverbs.bindings.mlx5dv.mlx5dv_clock_info;
import dev.panverbs.bindings.mlx5dv.mlx5dv_mkey_err;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Java twins of the {@code static inline} functions of rdma-core 44's {@code <infiniband/mlx5dv.h>}, which
 * have no symbol in libmlx5 and which jextract therefore drops. One static method per C function, with the
 * C name; each Javadoc quotes the C prototype so it can be diffed against the header.
 *
 * <p>This class holds the pure helpers (CQE, WQE segments, timestamps, DEVX bit fields) and the two
 * size-injecting wrappers; the twelve {@code mlx5dv_wr_*} builders that call through
 * {@code struct mlx5dv_qp_ex} are in {@link Mlx5dvInlineWr}. What a Direct-WQE path needs and the header
 * has no helper for is in {@link Mlx5WqeSegments} (raddr, atomic, inline, UD datagram segments) and
 * {@link Mlx5Cqe} (CQE field readers).
 *
 * <p>Conventions of the pure helpers:
 * <ul>
 * <li>A C {@code struct X *seg} becomes {@code (MemorySegment seg, long offset)}: the structure starts
 * {@code offset} bytes into {@code seg} (a whole send queue or CQ buffer, so that no slice is allocated).
 * Accesses are bounds-checked: an offset past the end throws {@link IndexOutOfBoundsException} where C would
 * write past the buffer. Nothing is allocated.</li>
 * <li>mlx5 hardware structures are big-endian; jextract maps {@code __be32} to plain native {@code int}, so
 * these helpers swap bytes themselves and write exactly the bytes the C helper writes (proven byte for
 * byte against the C header by {@code Mlx5dvInlineOracleTest}).</li>
 * <li>{@code uint8_t}/{@code uint16_t} parameters are {@code int}: only the low 8/16 bits are used, as C's
 * conversion to the parameter type does.</li>
 * </ul>
 * Thread safety: the helpers keep no state; concurrent writers of the same bytes must synchronise.
 */
public final class Mlx5dvInline {

    private Mlx5dvInline() {}

    // unaligned: a caller may build segments in any buffer (x86 has no penalty); WQEs are 64-byte aligned anyway
    static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfShort BE16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt HOST32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong HOST64 = ValueLayout.JAVA_LONG_UNALIGNED;

    private static final long CQE_OP_OWN = mlx5_cqe64.op_own$offset();

    private static final long CTRL_OPMOD_IDX_OPCODE = mlx5_wqe_ctrl_seg.opmod_idx_opcode$offset();
    private static final long CTRL_QPN_DS = mlx5_wqe_ctrl_seg.qpn_ds$offset();
    private static final long CTRL_SIGNATURE = mlx5_wqe_ctrl_seg.signature$offset();
    private static final long CTRL_DCI_STREAM_CHANNEL_ID = mlx5_wqe_ctrl_seg.dci_stream_channel_id$offset();
    private static final long CTRL_FM_CE_SE = mlx5_wqe_ctrl_seg.fm_ce_se$offset();
    private static final long CTRL_IMM = mlx5_wqe_ctrl_seg.imm$offset();

    private static final long DATA_BYTE_COUNT = mlx5_wqe_data_seg.byte_count$offset();
    private static final long DATA_LKEY = mlx5_wqe_data_seg.lkey$offset();
    private static final long DATA_ADDR = mlx5_wqe_data_seg.addr$offset();

    private static final long AV = mlx5_wqe_datagram_seg.av$offset();
    private static final long AV_DC_KEY = AV + mlx5_wqe_av.key$offset() + mlx5_wqe_av.key.dc_key$offset();
    private static final long AV_DQP_DCT = AV + mlx5_wqe_av.dqp_dct$offset();
    private static final long AV_STAT_RATE_SL = AV + mlx5_wqe_av.stat_rate_sl$offset();
    private static final long AV_FL_MLID = AV + mlx5_wqe_av.fl_mlid$offset();
    private static final long AV_RLID = AV + mlx5_wqe_av.rlid$offset();
    private static final long AV_RMAC = AV + mlx5_wqe_av.rmac$offset();
    private static final long AV_TCLASS = AV + mlx5_wqe_av.tclass$offset();
    private static final long AV_HOP_LIMIT = AV + mlx5_wqe_av.hop_limit$offset();
    private static final long AV_GRH_GID_FL = AV + mlx5_wqe_av.grh_gid_fl$offset();
    private static final long AV_RGID = AV + mlx5_wqe_av.rgid$offset();
    private static final int RMAC_BYTES = (int) mlx5_wqe_av.rmac$layout().byteSize();
    private static final int RGID_BYTES = (int) mlx5_wqe_av.rgid$layout().byteSize();

    private static final long ETH_CS_FLAGS = mlx5_wqe_eth_seg.cs_flags$offset();
    private static final long ETH_MSS = mlx5_wqe_eth_seg.mss$offset();
    private static final long ETH_INLINE_HDR_SZ = mlx5_wqe_eth_seg.inline_hdr_sz$offset();
    private static final long ETH_INLINE_HDR_START = mlx5_wqe_eth_seg.inline_hdr_start$offset();

    // ---------------------------------------------------------------------------------------------
    // CQE helpers: bits of op_own, the last byte of struct mlx5_cqe64
    //
    //   op_own (byte 63):  7 6 5 4 | 3 2 | 1  | 0
    //                      opcode  | fmt | se | owner
    // ---------------------------------------------------------------------------------------------

    /**
     * The ownership bit of a CQE. C: {@code uint8_t mlx5dv_get_cqe_owner(struct mlx5_cqe64 *cqe)}
     * (rdma-core 44 mlx5dv.h). The CQE is software-owned when this equals the wrap parity of the consumer
     * index; read the other CQE fields only after an acquire fence (libmlx5 issues {@code lfence}).
     */
    public static int mlx5dv_get_cqe_owner(MemorySegment cqe, long offset) {
        return cqe.get(JAVA_BYTE, offset + CQE_OP_OWN) & 0x1;
    }

    /**
     * Replaces the ownership bit of a CQE, keeping bits 1-7 of {@code op_own}.
     * C: {@code void mlx5dv_set_cqe_owner(struct mlx5_cqe64 *cqe, uint8_t val)} (rdma-core 44 mlx5dv.h).
     */
    public static void mlx5dv_set_cqe_owner(MemorySegment cqe, long offset, int val) {
        byte opOwn = cqe.get(JAVA_BYTE, offset + CQE_OP_OWN);
        cqe.set(JAVA_BYTE, offset + CQE_OP_OWN, (byte) ((val & 0x1) | (opOwn & ~0x1)));
    }

    /** The solicited-event bit. C: {@code uint8_t mlx5dv_get_cqe_se(struct mlx5_cqe64 *cqe)} (rdma-core 44 mlx5dv.h). */
    public static int mlx5dv_get_cqe_se(MemorySegment cqe, long offset) {
        return (cqe.get(JAVA_BYTE, offset + CQE_OP_OWN) >> 1) & 0x1;
    }

    /**
     * The CQE format (0 plain; 1 and 2 received data scattered into the CQE, as {@code MLX5_INLINE_SCATTER_32}
     * / {@code _64}; 3 compressed block). C: {@code uint8_t mlx5dv_get_cqe_format(struct mlx5_cqe64 *cqe)}
     * (rdma-core 44 mlx5dv.h).
     */
    public static int mlx5dv_get_cqe_format(MemorySegment cqe, long offset) {
        return (cqe.get(JAVA_BYTE, offset + CQE_OP_OWN) >> 2) & 0x3;
    }

    /**
     * The CQE opcode ({@code MLX5_CQE_REQ} 0 ... {@code MLX5_CQE_INVALID} 15).
     * C: {@code uint8_t mlx5dv_get_cqe_opcode(struct mlx5_cqe64 *cqe)} (rdma-core 44 mlx5dv.h).
     */
    public static int mlx5dv_get_cqe_opcode(MemorySegment cqe, long offset) {
        return (cqe.get(JAVA_BYTE, offset + CQE_OP_OWN) & 0xFF) >>> 4;
    }

    // ---------------------------------------------------------------------------------------------
    // WQE segments
    // ---------------------------------------------------------------------------------------------

    /**
     * Fills a 16-byte control segment. C: {@code void mlx5dv_set_ctrl_seg(struct mlx5_wqe_ctrl_seg *seg,
     * uint16_t pi, uint8_t opcode, uint8_t opmod, uint32_t qp_num, uint8_t fm_ce_se, uint8_t ds,
     * uint8_t signature, uint32_t imm)} (rdma-core 44 mlx5dv.h).
     * <pre>
     *  byte   0       1  2       3        4  5  6    7    8      9  10        11         12 .. 15
     *       +-------+---------+--------+----------+----+------+-----------+----------+--------------+
     *       | opmod | pi BE16 | opcode | qp_num   | ds | sig  | untouched | fm_ce_se | imm as given |
     *       |       |         |        | BE, 24 b |    |      | (stream)  |          |              |
     *       +-------+---------+--------+----------+----+------+-----------+----------+--------------+
     * </pre>
     * {@code imm} is stored as given, without a byte swap: pass immediate data already in network order
     * ({@code htobe32}), and {@code htobe32(rkey)} for SEND_WITH_INV ({@code Integer.reverseBytes} on x86).
     * Bytes 9-10 ({@code dci_stream_channel_id}) are <em>not</em> written, as in C: zero them, or use
     * {@link #mlx5dv_x86_set_ctrl_seg}, which does.
     */
    public static void mlx5dv_set_ctrl_seg(MemorySegment seg, long offset, int pi, int opcode, int opmod, int qpNum,
                                           int fmCeSe, int ds, int signature, int imm) {
        seg.set(BE32, offset + CTRL_OPMOD_IDX_OPCODE, (opmod & 0xFF) << 24 | (pi & 0xFFFF) << 8 | (opcode & 0xFF));
        seg.set(BE32, offset + CTRL_QPN_DS, qpNum << 8 | (ds & 0xFF));
        seg.set(JAVA_BYTE, offset + CTRL_FM_CE_SE, (byte) fmCeSe);
        seg.set(JAVA_BYTE, offset + CTRL_SIGNATURE, (byte) signature);
        seg.set(HOST32, offset + CTRL_IMM, imm);
    }

    /**
     * The SSE variant of {@link #mlx5dv_set_ctrl_seg}: same parameters and bytes, except that its single
     * 16-byte store also zeroes bytes 9-10 ({@code dci_stream_channel_id}). C:
     * {@code void mlx5dv_x86_set_ctrl_seg(...)}, declared only when {@code __SSE3__} is defined (rdma-core 44
     * mlx5dv.h; it needs SSSE3's {@code _mm_shuffle_epi8}). In Java it is plain stores on every CPU.
     */
    public static void mlx5dv_x86_set_ctrl_seg(MemorySegment seg, long offset, int pi, int opcode, int opmod,
                                               int qpNum, int fmCeSe, int ds, int signature, int imm) {
        mlx5dv_set_ctrl_seg(seg, offset, pi, opcode, opmod, qpNum, fmCeSe, ds, signature, imm);
        seg.set(BE16, offset + CTRL_DCI_STREAM_CHANNEL_ID, (short) 0);
    }

    /**
     * Fills a 48-byte datagram segment (address vector of a UD or DC send). C:
     * {@code void mlx5dv_set_dgram_seg(struct mlx5_wqe_datagram_seg *seg, uint64_t key, uint32_t dqp_dct,
     * uint8_t ext, uint8_t stat_rate_sl, uint8_t fl_mlid, uint16_t rlid, uint8_t *rmac, uint8_t tclass,
     * uint8_t hop_limit, uint32_t grh_gid_fi, uint8_t *rgid)} (rdma-core 44 mlx5dv.h).
     * <pre>
     *  0 .. 7  key (BE64)            8 .. 11 ext&lt;&lt;31 | dqp_dct (BE32)   12 stat_rate_sl  13 fl_mlid
     *  14..15  rlid (BE16)           16..19  (untouched)                20..25 rmac    26 tclass  27 hop_limit
     *  28..31  grh_gid_fi (BE32)     32..47  rgid
     * </pre>
     * Pitfall kept from C: the whole 64-bit {@code key} is stored big-endian, so a 32-bit Q_Key passed as
     * {@code key} lands in bytes 4-7, not in {@code av.key.qkey.qkey} (bytes 0-3) where libmlx5 puts it;
     * for UD pass {@code (long) qkey << 32}, or use {@link Mlx5WqeSegments#set_datagram_seg}.
     *
     * @param rmac 6 bytes, read from its start
     * @param rgid 16 bytes, read from its start
     */
    public static void mlx5dv_set_dgram_seg(MemorySegment seg, long offset, long key, int dqpDct, int ext,
                                            int statRateSl, int flMlid, int rlid, MemorySegment rmac, int tclass,
                                            int hopLimit, int grhGidFi, MemorySegment rgid) {
        seg.set(BE64, offset + AV_DC_KEY, key);
        seg.set(BE32, offset + AV_DQP_DCT, ext << 31 | dqpDct);
        seg.set(JAVA_BYTE, offset + AV_STAT_RATE_SL, (byte) statRateSl);
        seg.set(JAVA_BYTE, offset + AV_FL_MLID, (byte) flMlid);
        seg.set(BE16, offset + AV_RLID, (short) rlid);
        MemorySegment.copy(rmac, 0, seg, offset + AV_RMAC, RMAC_BYTES);
        seg.set(JAVA_BYTE, offset + AV_TCLASS, (byte) tclass);
        seg.set(JAVA_BYTE, offset + AV_HOP_LIMIT, (byte) hopLimit);
        seg.set(BE32, offset + AV_GRH_GID_FL, grhGidFi);
        MemorySegment.copy(rgid, 0, seg, offset + AV_RGID, RGID_BYTES);
    }

    /**
     * Fills a 16-byte data (scatter/gather pointer) segment: BE32 length, BE32 lkey, BE64 address. C:
     * {@code void mlx5dv_set_data_seg(struct mlx5_wqe_data_seg *seg, uint32_t length, uint32_t lkey,
     * uintptr_t address)} (rdma-core 44 mlx5dv.h).
     */
    public static void mlx5dv_set_data_seg(MemorySegment seg, long offset, int length, int lkey, long address) {
        seg.set(BE32, offset + DATA_BYTE_COUNT, length);
        seg.set(BE32, offset + DATA_LKEY, lkey);
        seg.set(BE64, offset + DATA_ADDR, address);
    }

    /**
     * The SSE variant of {@link #mlx5dv_set_data_seg}; writes identical bytes. C:
     * {@code void mlx5dv_x86_set_data_seg(...)}, declared only when {@code __SSE3__} is defined (rdma-core 44
     * mlx5dv.h).
     */
    public static void mlx5dv_x86_set_data_seg(MemorySegment seg, long offset, int length, int lkey, long address) {
        mlx5dv_set_data_seg(seg, offset, length, lkey, address);
    }

    /**
     * Fills the Ethernet segment of a RAW_PACKET send: byte 4 cs_flags, BE16 mss at 6, BE16 inline_hdr_sz
     * at 12, then {@code inlineHdrSz} header bytes from byte 14 on (past {@code inline_hdr[16]} for headers
     * over 18 bytes, as in C). Reserved bytes are not cleared. C: {@code void mlx5dv_set_eth_seg(struct
     * mlx5_wqe_eth_seg *seg, uint8_t cs_flags, uint16_t mss, uint16_t inline_hdr_sz, uint8_t
     * *inline_hdr_start)} (rdma-core 44 mlx5dv.h).
     *
     * @param inlineHdrStart the packet headers, read from its start; too short a source or destination
     *                       throws {@link IndexOutOfBoundsException} where C's memcpy would overrun
     */
    public static void mlx5dv_set_eth_seg(MemorySegment seg, long offset, int csFlags, int mss, int inlineHdrSz,
                                          MemorySegment inlineHdrStart) {
        seg.set(JAVA_BYTE, offset + ETH_CS_FLAGS, (byte) csFlags);
        seg.set(BE16, offset + ETH_MSS, (short) mss);
        seg.set(BE16, offset + ETH_INLINE_HDR_SZ, (short) inlineHdrSz);
        MemorySegment.copy(inlineHdrStart, 0, seg, offset + ETH_INLINE_HDR_START, inlineHdrSz & 0xFFFF);
    }

    // ---------------------------------------------------------------------------------------------
    // Clock
    // ---------------------------------------------------------------------------------------------

    private static final long CLOCK_NSEC = mlx5dv_clock_info.nsec$offset();
    private static final long CLOCK_LAST_CYCLES = mlx5dv_clock_info.last_cycles$offset();
    private static final long CLOCK_FRAC = mlx5dv_clock_info.frac$offset();
    private static final long CLOCK_MULT = mlx5dv_clock_info.mult$offset();
    private static final long CLOCK_SHIFT = mlx5dv_clock_info.shift$offset();
    private static final long CLOCK_MASK = mlx5dv_clock_info.mask$offset();

    /**
     * Converts a raw HCA timestamp (e.g. {@code ibv_wc_read_completion_ts}) to nanoseconds of the real-time
     * clock, using a {@code struct mlx5dv_clock_info} from {@code mlx5dv_get_clock_info(3)}. All arithmetic is
     * unsigned 64-bit as in C; a timestamp more than half the counter range ahead of {@code last_cycles} is
     * taken as an older one. The clock info must be refreshed at least every
     * {@code max_clock_info_update_nsec}. C: {@code uint64_t mlx5dv_ts_to_ns(struct mlx5dv_clock_info
     * *clock_info, uint64_t device_timestamp)} (rdma-core 44 mlx5dv.h).
     */
    public static long mlx5dv_ts_to_ns(MemorySegment clockInfo, long deviceTimestamp) {
        long lastCycles = clockInfo.get(HOST64, CLOCK_LAST_CYCLES);
        long mask = clockInfo.get(HOST64, CLOCK_MASK);
        long mult = clockInfo.get(HOST32, CLOCK_MULT) & 0xFFFF_FFFFL;
        long frac = clockInfo.get(HOST64, CLOCK_FRAC);
        int shift = clockInfo.get(HOST32, CLOCK_SHIFT); // C shifts by it as is; >>> uses its low 6 bits, as x86 does
        long nsec = clockInfo.get(HOST64, CLOCK_NSEC);
        long delta = (deviceTimestamp - lastCycles) & mask;
        if (Long.compareUnsigned(delta, mask >>> 1) > 0) {
            delta = (lastCycles - deviceTimestamp) & mask;
            return nsec - ((delta * mult - frac) >>> shift);
        }
        return nsec + ((delta * mult + frac) >>> shift);
    }

    // ---------------------------------------------------------------------------------------------
    // DEVX: PRM bit fields. Bit offsets count from the most significant bit of each big-endian dword.
    // ---------------------------------------------------------------------------------------------

    /**
     * Writes a field of {@code bitSz} bits at bit offset {@code bitOff} of a PRM structure (the
     * {@code DEVX_SET} macro's worker). C: {@code void _devx_set(void *p, uint32_t value, size_t bit_off,
     * size_t bit_sz)} (rdma-core 44 mlx5dv.h).
     *
     * @throws IllegalArgumentException if the field is empty or crosses a dword boundary (undefined in C)
     */
    public static void _devx_set(MemorySegment p, long offset, int value, long bitOff, long bitSz) {
        int shift = devxShift(bitOff, bitSz);
        int mask = (int) ((1L << bitSz) - 1);
        long at = offset + bitOff / 32 * 4;
        int word = p.get(BE32, at);
        p.set(BE32, at, (word & ~(mask << shift)) | (value & mask) << shift);
    }

    /**
     * Reads a field of {@code bitSz} bits at bit offset {@code bitOff} (the {@code DEVX_GET} macro's worker).
     * C: {@code uint32_t _devx_get(const void *p, size_t bit_off, size_t bit_sz)} (rdma-core 44 mlx5dv.h).
     *
     * @throws IllegalArgumentException if the field is empty or crosses a dword boundary (undefined in C)
     */
    public static int _devx_get(MemorySegment p, long offset, long bitOff, long bitSz) {
        int shift = devxShift(bitOff, bitSz);
        int mask = (int) ((1L << bitSz) - 1);
        return (p.get(BE32, offset + bitOff / 32 * 4) >>> shift) & mask;
    }

    /**
     * Writes a big-endian 64-bit field at the 64-bit word holding bit {@code bitOff} (the {@code DEVX_SET64}
     * worker). C: {@code void _devx_set64(void *p, uint64_t v, size_t bit_off)} (rdma-core 44 mlx5dv.h).
     */
    public static void _devx_set64(MemorySegment p, long offset, long v, long bitOff) {
        p.set(BE64, offset + bitOff / 64 * 8, v);
    }

    /**
     * Reads the big-endian 64-bit word holding bit {@code bitOff} (the {@code DEVX_GET64} worker).
     * C: {@code uint64_t _devx_get64(const void *p, size_t bit_off)} (rdma-core 44 mlx5dv.h).
     */
    public static long _devx_get64(MemorySegment p, long offset, long bitOff) {
        return p.get(BE64, offset + bitOff / 64 * 8);
    }

    private static int devxShift(long bitOff, long bitSz) {
        if (bitOff < 0 || bitSz < 1 || bitSz > 32 || (bitOff & 0x1f) + bitSz > 32) {
            throw new IllegalArgumentException("DEVX field of " + bitSz + " bits at bit " + bitOff
                    + " does not fit one 32-bit word (C's _devx_set/_devx_get would be undefined)");
        }
        return (int) (32 - bitSz - (bitOff & 0x1f));
    }

    // ---------------------------------------------------------------------------------------------
    // Size-injecting wrappers around exported libmlx5 functions
    // ---------------------------------------------------------------------------------------------

    /** sizeof(struct mlx5dv_port): the header's {@code mlx5dv_port} is a macro alias of this uapi struct. */
    static final long MLX5DV_PORT_SIZE = mlx5_ib_uapi_query_port.layout().byteSize();
    /** sizeof(struct mlx5dv_mkey_err). */
    static final long MLX5DV_MKEY_ERR_SIZE = mlx5dv_mkey_err.layout().byteSize();

    /**
     * Queries mlx5-specific port attributes (vport, steering ICM addresses, reg_c0) into {@code info}, a
     * {@code struct mlx5dv_port} (40 bytes). Calls the exported {@link LibMlx5#_mlx5dv_query_port} with
     * {@code sizeof(struct mlx5dv_port)}, as the C inline does. C: {@code int mlx5dv_query_port(struct
     * ibv_context *context, uint32_t port_num, struct mlx5dv_port *info)} (rdma-core 44 mlx5dv.h); see
     * mlx5dv_query_port(3). Returns 0 or an errno value (EOPNOTSUPP on devices without the capability).
     * Blocks in the kernel: not for hot paths.
     *
     * @throws IllegalArgumentException if {@code info} is smaller than {@code struct mlx5dv_port}
     * @throws NativeLibraryException if libmlx5 (ibverbs-providers) is not installed
     */
    public static int mlx5dv_query_port(MemorySegment context, int portNum, MemorySegment info) {
        requireSize(info, MLX5DV_PORT_SIZE, "mlx5dv_query_port", "struct mlx5dv_port");
        return LibMlx5._mlx5dv_query_port(context, portNum, info, MLX5DV_PORT_SIZE);
    }

    /**
     * Checks an mkey's signature status after a signature-offload operation, filling {@code errInfo}, a
     * {@code struct mlx5dv_mkey_err} (32 bytes). Calls the exported {@link LibMlx5#_mlx5dv_mkey_check} with
     * {@code sizeof(struct mlx5dv_mkey_err)}. C: {@code int mlx5dv_mkey_check(struct mlx5dv_mkey *mkey,
     * struct mlx5dv_mkey_err *err_info)} (rdma-core 44 mlx5dv.h); see mlx5dv_mkey_check(3). Returns 0 or an
     * errno value.
     *
     * @throws IllegalArgumentException if {@code errInfo} is smaller than {@code struct mlx5dv_mkey_err}
     * @throws NativeLibraryException if libmlx5 (ibverbs-providers) is not installed
     */
    public static int mlx5dv_mkey_check(MemorySegment mkey, MemorySegment errInfo) {
        requireSize(errInfo, MLX5DV_MKEY_ERR_SIZE, "mlx5dv_mkey_check", "struct mlx5dv_mkey_err");
        return LibMlx5._mlx5dv_mkey_check(mkey, errInfo, MLX5DV_MKEY_ERR_SIZE);
    }

    private static void requireSize(MemorySegment s, long size, String verb, String type) {
        if (s.byteSize() < size) {
            throw new IllegalArgumentException(verb + ": the output segment has " + s.byteSize() + " bytes, "
                    + type + " needs " + size + " (the C function would write past it)");
        }
    }
}
