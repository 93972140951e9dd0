package dev.panverbs.bindings.mlx5;

import dev.panverbs.bindings.Downcalls;
import dev.panverbs.bindings.ProviderDowncalls;
import dev.panverbs.bindings.ProviderSlots;
import dev.panverbs.bindings.mlx5dv.mlx5dv_qp_ex;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Java twins of the twelve {@code mlx5dv_wr_*} {@code static inline} work-request builders of rdma-core 44's
 * {@code <infiniband/mlx5dv.h>}. Each C inline is one unchecked indirect call {@code mqp->wr_X(mqp, ...)}
 * through a function pointer of {@code struct mlx5dv_qp_ex}; each twin reads the same slot, refuses a NULL
 * one with the exception of {@link ProviderSlots#missing} naming the operation (C would SIGSEGV, see
 * {@link Mlx5dvQpExOp}), and calls it through a {@code static final} address-first downcall handle linked by
 * {@link ProviderDowncalls#hot}, the policy of every provider slot.
 *
 * <p>{@code mqp} is the {@code struct mlx5dv_qp_ex} that the exported {@code mlx5dv_qp_ex_from_ibv_qp_ex}
 * returns for the QP (it lies inside libmlx5's private QP object, so it cannot be computed in Java; call that
 * function once per QP), reinterpreted to at least {@code sizeof(struct mlx5dv_qp_ex)} bytes.
 *
 * <p>Use: only between {@code ibv_wr_start} and {@code ibv_wr_complete}/{@code ibv_wr_abort} of the same
 * QP's {@code ibv_qp_ex}, on the thread that called {@code ibv_wr_start} (libmlx5 holds the SQ lock in
 * between). The builders return nothing; errors surface in {@code ibv_wr_complete}. Every handle is
 * {@code critical(false)} (unless {@value ProviderDowncalls#NO_CRITICAL_PROPERTY} is set): the libmlx5 builders
 * only write WQEs into the send queue, never block and never call back into Java. Struct pointers passed in must be native
 * segments. {@code uint8_t}/{@code uint16_t} parameters are {@code int}, truncated as C's conversion does.
 */
public final class Mlx5dvInlineWr {

    private Mlx5dvInlineWr() {}

    private static MethodHandle slotHandle(FunctionDescriptor descriptor) {
        return ProviderDowncalls.hot(descriptor);
    }

    // the slot types are jextract's, so the handles follow the installed header
    private static final MethodHandle SET_DC_ADDR = slotHandle(mlx5dv_qp_ex.wr_set_dc_addr.descriptor());
    private static final MethodHandle MR_INTERLEAVED = slotHandle(mlx5dv_qp_ex.wr_mr_interleaved.descriptor());
    private static final MethodHandle MR_LIST = slotHandle(mlx5dv_qp_ex.wr_mr_list.descriptor());
    private static final MethodHandle MKEY_CONFIGURE = slotHandle(mlx5dv_qp_ex.wr_mkey_configure.descriptor());
    private static final MethodHandle SET_MKEY_ACCESS_FLAGS =
            slotHandle(mlx5dv_qp_ex.wr_set_mkey_access_flags.descriptor());
    private static final MethodHandle SET_MKEY_LAYOUT_LIST = slotHandle(mlx5dv_qp_ex.wr_set_mkey_layout_list.descriptor());
    private static final MethodHandle SET_MKEY_LAYOUT_INTERLEAVED =
            slotHandle(mlx5dv_qp_ex.wr_set_mkey_layout_interleaved.descriptor());
    private static final MethodHandle SET_MKEY_SIG_BLOCK = slotHandle(mlx5dv_qp_ex.wr_set_mkey_sig_block.descriptor());
    private static final MethodHandle RAW_WQE = slotHandle(mlx5dv_qp_ex.wr_raw_wqe.descriptor());
    private static final MethodHandle SET_DC_ADDR_STREAM = slotHandle(mlx5dv_qp_ex.wr_set_dc_addr_stream.descriptor());
    private static final MethodHandle MEMCPY = slotHandle(mlx5dv_qp_ex.wr_memcpy.descriptor());
    private static final MethodHandle SET_MKEY_CRYPTO = slotHandle(mlx5dv_qp_ex.wr_set_mkey_crypto.descriptor());

    private static final long OFF_SET_DC_ADDR = mlx5dv_qp_ex.wr_set_dc_addr$offset();
    private static final long OFF_MR_INTERLEAVED = mlx5dv_qp_ex.wr_mr_interleaved$offset();
    private static final long OFF_MR_LIST = mlx5dv_qp_ex.wr_mr_list$offset();
    private static final long OFF_MKEY_CONFIGURE = mlx5dv_qp_ex.wr_mkey_configure$offset();
    private static final long OFF_SET_MKEY_ACCESS_FLAGS = mlx5dv_qp_ex.wr_set_mkey_access_flags$offset();
    private static final long OFF_SET_MKEY_LAYOUT_LIST = mlx5dv_qp_ex.wr_set_mkey_layout_list$offset();
    private static final long OFF_SET_MKEY_LAYOUT_INTERLEAVED = mlx5dv_qp_ex.wr_set_mkey_layout_interleaved$offset();
    private static final long OFF_SET_MKEY_SIG_BLOCK = mlx5dv_qp_ex.wr_set_mkey_sig_block$offset();
    private static final long OFF_RAW_WQE = mlx5dv_qp_ex.wr_raw_wqe$offset();
    private static final long OFF_SET_DC_ADDR_STREAM = mlx5dv_qp_ex.wr_set_dc_addr_stream$offset();
    private static final long OFF_MEMCPY = mlx5dv_qp_ex.wr_memcpy$offset();
    private static final long OFF_SET_MKEY_CRYPTO = mlx5dv_qp_ex.wr_set_mkey_crypto$offset();

    /** The slot's function address; a NULL slot throws (cold path in {@link Mlx5dvQpExOp#unavailable}). */
    private static MemorySegment slot(MemorySegment mqp, long offset, Mlx5dvQpExOp op) {
        MemorySegment fn = mqp.get(ValueLayout.ADDRESS, offset);
        if (fn.address() == 0) {
            throw op.unavailable();
        }
        return fn;
    }

    private static AssertionError unreachable(Throwable t) {
        return Downcalls.unreachable(t);
    }

    /**
     * Sets the DC target (address handle, remote DCT number, DC access key) of the WR being built on a DCI.
     * C: {@code void mlx5dv_wr_set_dc_addr(struct mlx5dv_qp_ex *mqp, struct ibv_ah *ah, uint32_t remote_dctn,
     * uint64_t remote_dc_key)} (rdma-core 44 mlx5dv.h); see mlx5dv_wr_post(3).
     */
    public static void mlx5dv_wr_set_dc_addr(MemorySegment mqp, MemorySegment ah, int remoteDctn, long remoteDcKey) {
        MemorySegment fn = slot(mqp, OFF_SET_DC_ADDR, Mlx5dvQpExOp.SET_DC_ADDR);
        try {
            SET_DC_ADDR.invokeExact(fn, mqp, ah, remoteDctn, remoteDcKey);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * Like {@link #mlx5dv_wr_set_dc_addr}, on DCI stream {@code streamId} ({@code uint16_t}). C:
     * {@code void mlx5dv_wr_set_dc_addr_stream(struct mlx5dv_qp_ex *mqp, struct ibv_ah *ah, uint32_t remote_dctn,
     * uint64_t remote_dc_key, uint16_t stream_id)} (rdma-core 44 mlx5dv.h); see mlx5dv_wr_post(3).
     */
    public static void mlx5dv_wr_set_dc_addr_stream(MemorySegment mqp, MemorySegment ah, int remoteDctn,
                                                    long remoteDcKey, int streamId) {
        MemorySegment fn = slot(mqp, OFF_SET_DC_ADDR_STREAM, Mlx5dvQpExOp.SET_DC_ADDR_STREAM);
        try {
            SET_DC_ADDR_STREAM.invokeExact(fn, mqp, ah, remoteDctn, remoteDcKey, (short) streamId);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * Posts a UMR that makes {@code mkey} an interleaved (repeating) view of {@code numInterleaved} entries of
     * {@code struct mlx5dv_mr_interleaved} at {@code data}. C: {@code void mlx5dv_wr_mr_interleaved(struct
     * mlx5dv_qp_ex *mqp, struct mlx5dv_mkey *mkey, uint32_t access_flags, uint32_t repeat_count, uint16_t
     * num_interleaved, struct mlx5dv_mr_interleaved *data)} (rdma-core 44 mlx5dv.h).
     */
    public static void mlx5dv_wr_mr_interleaved(MemorySegment mqp, MemorySegment mkey, int accessFlags,
                                                int repeatCount, int numInterleaved, MemorySegment data) {
        MemorySegment fn = slot(mqp, OFF_MR_INTERLEAVED, Mlx5dvQpExOp.MR_INTERLEAVED);
        try {
            MR_INTERLEAVED.invokeExact(fn, mqp, mkey, accessFlags, repeatCount, (short) numInterleaved, data);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * Posts a UMR that makes {@code mkey} the concatenation of {@code numSges} {@code struct ibv_sge} at
     * {@code sge}. C: {@code void mlx5dv_wr_mr_list(struct mlx5dv_qp_ex *mqp, struct mlx5dv_mkey *mkey,
     * uint32_t access_flags, uint16_t num_sges, struct ibv_sge *sge)} (rdma-core 44 mlx5dv.h).
     */
    public static void mlx5dv_wr_mr_list(MemorySegment mqp, MemorySegment mkey, int accessFlags, int numSges,
                                         MemorySegment sge) {
        MemorySegment fn = slot(mqp, OFF_MR_LIST, Mlx5dvQpExOp.MR_LIST);
        try {
            MR_LIST.invokeExact(fn, mqp, mkey, accessFlags, (short) numSges, sge);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * Starts configuring {@code mkey}; exactly {@code numSetters} ({@code uint8_t}) {@code
     * mlx5dv_wr_set_mkey_*} calls must follow. C: {@code void mlx5dv_wr_mkey_configure(struct mlx5dv_qp_ex
     * *mqp, struct mlx5dv_mkey *mkey, uint8_t num_setters, struct mlx5dv_mkey_conf_attr *attr)} (rdma-core 44
     * mlx5dv.h); see mlx5dv_wr_mkey_configure(3).
     */
    public static void mlx5dv_wr_mkey_configure(MemorySegment mqp, MemorySegment mkey, int numSetters,
                                                MemorySegment attr) {
        MemorySegment fn = slot(mqp, OFF_MKEY_CONFIGURE, Mlx5dvQpExOp.MKEY_CONFIGURE);
        try {
            MKEY_CONFIGURE.invokeExact(fn, mqp, mkey, (byte) numSetters, attr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * Sets the access flags ({@code enum ibv_access_flags}) of the mkey being configured. C: {@code void
     * mlx5dv_wr_set_mkey_access_flags(struct mlx5dv_qp_ex *mqp, uint32_t access_flags)} (rdma-core 44 mlx5dv.h).
     */
    public static void mlx5dv_wr_set_mkey_access_flags(MemorySegment mqp, int accessFlags) {
        MemorySegment fn = slot(mqp, OFF_SET_MKEY_ACCESS_FLAGS, Mlx5dvQpExOp.SET_MKEY_ACCESS_FLAGS);
        try {
            SET_MKEY_ACCESS_FLAGS.invokeExact(fn, mqp, accessFlags);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * Sets the layout of the mkey being configured to {@code numSges} {@code struct ibv_sge}. C: {@code void
     * mlx5dv_wr_set_mkey_layout_list(struct mlx5dv_qp_ex *mqp, uint16_t num_sges, const struct ibv_sge *sge)}
     * (rdma-core 44 mlx5dv.h).
     */
    public static void mlx5dv_wr_set_mkey_layout_list(MemorySegment mqp, int numSges, MemorySegment sge) {
        MemorySegment fn = slot(mqp, OFF_SET_MKEY_LAYOUT_LIST, Mlx5dvQpExOp.SET_MKEY_LAYOUT_LIST);
        try {
            SET_MKEY_LAYOUT_LIST.invokeExact(fn, mqp, (short) numSges, sge);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * Sets an interleaved layout for the mkey being configured. C: {@code void
     * mlx5dv_wr_set_mkey_layout_interleaved(struct mlx5dv_qp_ex *mqp, uint32_t repeat_count, uint16_t
     * num_interleaved, const struct mlx5dv_mr_interleaved *data)} (rdma-core 44 mlx5dv.h).
     */
    public static void mlx5dv_wr_set_mkey_layout_interleaved(MemorySegment mqp, int repeatCount, int numInterleaved,
                                                             MemorySegment data) {
        MemorySegment fn = slot(mqp, OFF_SET_MKEY_LAYOUT_INTERLEAVED, Mlx5dvQpExOp.SET_MKEY_LAYOUT_INTERLEAVED);
        try {
            SET_MKEY_LAYOUT_INTERLEAVED.invokeExact(fn, mqp, repeatCount, (short) numInterleaved, data);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * Sets the signature-offload block attributes ({@code struct mlx5dv_sig_block_attr}) of the mkey being
     * configured. C: {@code void mlx5dv_wr_set_mkey_sig_block(struct mlx5dv_qp_ex *mqp, const struct
     * mlx5dv_sig_block_attr *attr)} (rdma-core 44 mlx5dv.h).
     */
    public static void mlx5dv_wr_set_mkey_sig_block(MemorySegment mqp, MemorySegment attr) {
        MemorySegment fn = slot(mqp, OFF_SET_MKEY_SIG_BLOCK, Mlx5dvQpExOp.SET_MKEY_SIG_BLOCK);
        try {
            SET_MKEY_SIG_BLOCK.invokeExact(fn, mqp, attr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * Sets the crypto attributes ({@code struct mlx5dv_crypto_attr}) of the mkey being configured. C:
     * {@code void mlx5dv_wr_set_mkey_crypto(struct mlx5dv_qp_ex *mqp, const struct mlx5dv_crypto_attr *attr)}
     * (rdma-core 44 mlx5dv.h).
     */
    public static void mlx5dv_wr_set_mkey_crypto(MemorySegment mqp, MemorySegment attr) {
        MemorySegment fn = slot(mqp, OFF_SET_MKEY_CRYPTO, Mlx5dvQpExOp.SET_MKEY_CRYPTO);
        try {
            SET_MKEY_CRYPTO.invokeExact(fn, mqp, attr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * Posts a complete, caller-built WQE; its control segment's DS field gives the size. C: {@code void
     * mlx5dv_wr_raw_wqe(struct mlx5dv_qp_ex *mqp, const void *wqe)} (rdma-core 44 mlx5dv.h).
     */
    public static void mlx5dv_wr_raw_wqe(MemorySegment mqp, MemorySegment wqe) {
        MemorySegment fn = slot(mqp, OFF_RAW_WQE, Mlx5dvQpExOp.RAW_WQE);
        try {
            RAW_WQE.invokeExact(fn, mqp, wqe);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }

    /**
     * Posts a DMA memcpy performed by the HCA from ({@code srcLkey}, {@code srcAddr}) to ({@code destLkey},
     * {@code destAddr}), at most {@code mlx5dv_context.max_wr_memcpy_length} bytes. C: {@code void
     * mlx5dv_wr_memcpy(struct mlx5dv_qp_ex *mqp, uint32_t dest_lkey, uint64_t dest_addr, uint32_t src_lkey,
     * uint64_t src_addr, size_t length)} (rdma-core 44 mlx5dv.h); see mlx5dv_wr_post(3).
     */
    public static void mlx5dv_wr_memcpy(MemorySegment mqp, int destLkey, long destAddr, int srcLkey, long srcAddr,
                                        long length) {
        MemorySegment fn = slot(mqp, OFF_MEMCPY, Mlx5dvQpExOp.MEMCPY);
        try {
            MEMCPY.invokeExact(fn, mqp, destLkey, destAddr, srcLkey, srcAddr, length);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw unreachable(t);
        }
    }
}
