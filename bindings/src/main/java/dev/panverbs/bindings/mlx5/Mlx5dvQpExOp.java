package dev.panverbs.bindings.mlx5;

import dev.panverbs.bindings.ProviderSlots;
import dev.panverbs.bindings.mlx5dv.mlx5dv_qp_ex;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;

/**
 * The twelve work-request builder slots of {@code struct mlx5dv_qp_ex} (rdma-core 44 mlx5dv.h), one per
 * {@code mlx5dv_wr_*} inline of {@link Mlx5dvInlineWr}, with what makes libmlx5 fill each one.
 *
 * <p>libmlx5 leaves a slot NULL when the QP was not created for that operation, and the C inline calls
 * it unchecked (SIGSEGV). Check once when the QP is created ({@link #isAvailable}, {@link #require}) and
 * refuse the capability up front; the builders also check on every call and throw the exception of
 * {@link ProviderSlots#missing} naming the operation, as every other provider slot of these bindings does.
 */
public enum Mlx5dvQpExOp {
    /** {@code wr_set_dc_addr}. */
    SET_DC_ADDR("mlx5dv_wr_set_dc_addr", mlx5dv_qp_ex.wr_set_dc_addr$offset(), Hint.DCI),
    /** {@code wr_mr_interleaved}. */
    MR_INTERLEAVED("mlx5dv_wr_mr_interleaved", mlx5dv_qp_ex.wr_mr_interleaved$offset(),
            "an RC QP created by mlx5dv_create_qp with MLX5DV_QP_EX_WITH_MR_INTERLEAVED in send_ops_flags"),
    /** {@code wr_mr_list}. */
    MR_LIST("mlx5dv_wr_mr_list", mlx5dv_qp_ex.wr_mr_list$offset(),
            "an RC QP created by mlx5dv_create_qp with MLX5DV_QP_EX_WITH_MR_LIST in send_ops_flags"),
    /** {@code wr_mkey_configure}. */
    MKEY_CONFIGURE("mlx5dv_wr_mkey_configure", mlx5dv_qp_ex.wr_mkey_configure$offset(), Hint.MKEY),
    /** {@code wr_set_mkey_access_flags}. */
    SET_MKEY_ACCESS_FLAGS("mlx5dv_wr_set_mkey_access_flags", mlx5dv_qp_ex.wr_set_mkey_access_flags$offset(), Hint.MKEY),
    /** {@code wr_set_mkey_layout_list}. */
    SET_MKEY_LAYOUT_LIST("mlx5dv_wr_set_mkey_layout_list", mlx5dv_qp_ex.wr_set_mkey_layout_list$offset(), Hint.MKEY),
    /** {@code wr_set_mkey_layout_interleaved}. */
    SET_MKEY_LAYOUT_INTERLEAVED("mlx5dv_wr_set_mkey_layout_interleaved",
            mlx5dv_qp_ex.wr_set_mkey_layout_interleaved$offset(), Hint.MKEY),
    /** {@code wr_set_mkey_sig_block}. */
    SET_MKEY_SIG_BLOCK("mlx5dv_wr_set_mkey_sig_block", mlx5dv_qp_ex.wr_set_mkey_sig_block$offset(), Hint.MKEY),
    /** {@code wr_raw_wqe}. */
    RAW_WQE("mlx5dv_wr_raw_wqe", mlx5dv_qp_ex.wr_raw_wqe$offset(),
            "a QP created by mlx5dv_create_qp with MLX5DV_QP_EX_WITH_RAW_WQE in send_ops_flags"),
    /** {@code wr_set_dc_addr_stream}. */
    SET_DC_ADDR_STREAM("mlx5dv_wr_set_dc_addr_stream", mlx5dv_qp_ex.wr_set_dc_addr_stream$offset(), Hint.DCI),
    /** {@code wr_memcpy}. */
    MEMCPY("mlx5dv_wr_memcpy", mlx5dv_qp_ex.wr_memcpy$offset(),
            "an RC or DCI QP created by mlx5dv_create_qp with MLX5DV_QP_EX_WITH_MEMCPY in send_ops_flags "
                    + "(mlx5dv_context.max_wr_memcpy_length > 0)"),
    /** {@code wr_set_mkey_crypto}. */
    SET_MKEY_CRYPTO("mlx5dv_wr_set_mkey_crypto", mlx5dv_qp_ex.wr_set_mkey_crypto$offset(), Hint.MKEY);

    private static final class Hint {
        static final String DCI = "a DCI: IBV_QPT_DRIVER created by mlx5dv_create_qp with dc_type MLX5DV_DCTYPE_DCI";
        static final String MKEY = "an RC QP created by mlx5dv_create_qp with MLX5DV_QP_EX_WITH_MKEY_CONFIGURE in "
                + "send_ops_flags";
    }

    private final String verb;
    private final long offset;
    private final String enabledBy;

    Mlx5dvQpExOp(String verb, long offset, String enabledBy) {
        this.verb = verb;
        this.offset = offset;
        this.enabledBy = enabledBy;
    }

    /** The C inline that calls this slot, e.g. {@code mlx5dv_wr_memcpy}. */
    public String verb() {
        return verb;
    }

    /** The C name of the slot, e.g. {@code wr_memcpy}. */
    public String slot() {
        return "wr_" + name().toLowerCase(Locale.ROOT);
    }

    /** Byte offset of the function pointer in {@code struct mlx5dv_qp_ex}. */
    public long offset() {
        return offset;
    }

    /** What must hold at QP creation for libmlx5 to fill the slot. */
    public String enabledBy() {
        return enabledBy;
    }

    /** Whether libmlx5 filled this slot of {@code mqp} (a {@code struct mlx5dv_qp_ex}). */
    public boolean isAvailable(MemorySegment mqp) {
        return mqp.get(ValueLayout.ADDRESS, offset).address() != 0;
    }

    /** Throws the exception of {@link ProviderSlots#missing} naming the operation unless {@link #isAvailable}. */
    public void require(MemorySegment mqp) {
        if (!isAvailable(mqp)) {
            throw unavailable();
        }
    }

    /** The exception for a NULL slot; built off the hot path. */
    RuntimeException unavailable() {
        return ProviderSlots.missing(verb, "mlx5dv_qp_ex." + slot(), "libmlx5 fills it only for " + enabledBy);
    }
}
