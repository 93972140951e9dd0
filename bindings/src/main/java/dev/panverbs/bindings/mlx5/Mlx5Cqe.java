package dev.panverbs.bindings.mlx5;

import static dev.panverbs.bindings.mlx5.Mlx5dvInline.BE16;
import static dev.panverbs.bindings.mlx5.Mlx5dvInline.BE32;
import static dev.panverbs.bindings.mlx5.Mlx5dvInline.BE64;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import dev.panverbs.bindings.mlx5dv.mlx5_cqe64;
import dev.panverbs.bindings.mlx5dv.mlx5_err_cqe;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Readers of the big-endian fields of a 64-byte mlx5 CQE ({@code struct mlx5_cqe64}, and
 * {@code struct mlx5_err_cqe} for opcodes {@code MLX5_CQE_REQ_ERR}/{@code MLX5_CQE_RESP_ERR}) that a
 * Direct-CQ poller needs besides the {@code op_own} bits of {@link Mlx5dvInline}. rdma-core 44 has no helper
 * for them (libmlx5's {@code cq.c} reads them inline with {@code be16toh}/{@code be32toh}); each method is
 * named after the member and returns what {@code beNNtoh(cqe->member)} gives in C, byte-compared with C by
 * {@code Mlx5dvInlineOracleTest}.
 * <pre>
 *  mlx5_cqe64:  22 slid BE16 | 24 flags_rqpn BE32 (GRH, SL | src QP) | 32 srqn_uidx BE32
 *               36 imm_inval_pkey (imm: network order; inval rkey: BE32) | 44 byte_cnt BE32
 *               48 timestamp BE64 | 56 sop_drop_qpn BE32 (QPN in bits 0-23) | 60 wqe_counter BE16
 *               62 signature | 63 op_own
 *  mlx5_err_cqe: 54 vendor_err_synd | 55 syndrome | 56 s_wqe_opcode_qpn BE32 (opcode 31-24, QPN 23-0)
 * </pre>
 * Read these only after the CQE is software-owned and an acquire fence has ordered the loads (libmlx5:
 * {@code udma_from_device_barrier}). Conventions as in {@link Mlx5dvInline}: {@code (segment, offset)},
 * bounds-checked, allocation-free.
 */
public final class Mlx5Cqe {

    private Mlx5Cqe() {}

    private static final ValueLayout.OfInt HOST32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final long SLID = mlx5_cqe64.slid$offset();
    private static final long FLAGS_RQPN = mlx5_cqe64.flags_rqpn$offset();
    private static final long SRQN_UIDX = mlx5_cqe64.srqn_uidx$offset();
    private static final long IMM_INVAL_PKEY = mlx5_cqe64.imm_inval_pkey$offset();
    private static final long BYTE_CNT = mlx5_cqe64.byte_cnt$offset();
    private static final long TIMESTAMP = mlx5_cqe64.timestamp$offset();
    private static final long SOP_DROP_QPN = mlx5_cqe64.sop_drop_qpn$offset();
    private static final long WQE_COUNTER = mlx5_cqe64.wqe_counter$offset();
    private static final long ERR_VENDOR_ERR_SYND = mlx5_err_cqe.vendor_err_synd$offset();
    private static final long ERR_SYNDROME = mlx5_err_cqe.syndrome$offset();
    private static final long ERR_S_WQE_OPCODE_QPN = mlx5_err_cqe.s_wqe_opcode_qpn$offset();

    /** Low 16 bits of the producer index of the completed WQE: {@code be16toh(cqe->wqe_counter)}. */
    public static int wqe_counter(MemorySegment cqe, long offset) {
        return cqe.get(BE16, offset + WQE_COUNTER) & 0xFFFF;
    }

    /** {@code be32toh(cqe->sop_drop_qpn)}; the QP number is its low 24 bits ({@link #qpn}). */
    public static int sop_drop_qpn(MemorySegment cqe, long offset) {
        return cqe.get(BE32, offset + SOP_DROP_QPN);
    }

    /** The QP number of the completion: {@code be32toh(cqe->sop_drop_qpn) & 0xffffff}. */
    public static int qpn(MemorySegment cqe, long offset) {
        return sop_drop_qpn(cqe, offset) & 0xFF_FFFF;
    }

    /** Received byte count (responder) or RDMA READ/atomic length (requester): {@code be32toh(cqe->byte_cnt)}. */
    public static int byte_cnt(MemorySegment cqe, long offset) {
        return cqe.get(BE32, offset + BYTE_CNT);
    }

    /**
     * Immediate data exactly as {@code ibv_wc.imm_data} holds it (network order, no swap; libmlx5 copies
     * {@code cqe->imm_inval_pkey} unchanged).
     */
    public static int imm_data(MemorySegment cqe, long offset) {
        return cqe.get(HOST32, offset + IMM_INVAL_PKEY);
    }

    /** The rkey invalidated by a SEND_WITH_INV: {@code be32toh(cqe->imm_inval_pkey)}. */
    public static int invalidated_rkey(MemorySegment cqe, long offset) {
        return cqe.get(BE32, offset + IMM_INVAL_PKEY);
    }

    /**
     * {@code be32toh(cqe->flags_rqpn)}: source QP in bits 0-23 (UD), SL in 24-27, GRH indication in 28-29
     * (libmlx5 sets {@code IBV_WC_GRH} when non-zero).
     */
    public static int flags_rqpn(MemorySegment cqe, long offset) {
        return cqe.get(BE32, offset + FLAGS_RQPN);
    }

    /** {@code be32toh(cqe->srqn_uidx)}: SRQ number or user index in bits 0-23. */
    public static int srqn_uidx(MemorySegment cqe, long offset) {
        return cqe.get(BE32, offset + SRQN_UIDX);
    }

    /** Source LID (InfiniBand UD/UC responder): {@code be16toh(cqe->slid)}. */
    public static int slid(MemorySegment cqe, long offset) {
        return cqe.get(BE16, offset + SLID) & 0xFFFF;
    }

    /** Raw HCA clock of the completion: {@code be64toh(cqe->timestamp)}; see {@link Mlx5dvInline#mlx5dv_ts_to_ns}. */
    public static long timestamp(MemorySegment cqe, long offset) {
        return cqe.get(BE64, offset + TIMESTAMP);
    }

    /** Error syndrome of an error CQE ({@code MLX5_CQE_SYNDROME_*}, e.g. 0x05 flushed, 0x15 retry exceeded). */
    public static int syndrome(MemorySegment cqe, long offset) {
        return cqe.get(JAVA_BYTE, offset + ERR_SYNDROME) & 0xFF;
    }

    /** Vendor error syndrome of an error CQE ({@code ibv_wc.vendor_err}). */
    public static int vendor_err_synd(MemorySegment cqe, long offset) {
        return cqe.get(JAVA_BYTE, offset + ERR_VENDOR_ERR_SYND) & 0xFF;
    }

    /**
     * {@code be32toh(err_cqe->s_wqe_opcode_qpn)}: opcode of the failed WQE in bits 24-31, QPN in 0-23 (PRM
     * layout). The C member is declared {@code uint32_t} but holds big-endian data; libmlx5 v44 does not read it.
     */
    public static int s_wqe_opcode_qpn(MemorySegment cqe, long offset) {
        return cqe.get(BE32, offset + ERR_S_WQE_OPCODE_QPN);
    }
}
