package dev.panverbs.bindings.mlx5;

import dev.panverbs.bindings.Downcalls;
import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.NativeLibraryException;
import java.lang.foreign.MemorySegment;

/**
 * Exported libmlx5 functions (rdma-core 44, {@code <infiniband/mlx5dv.h>}) that the mlx5 extensions of core
 * build on: device support and queries, {@code mlx5dv_init_obj} (queue buffers for Direct WQE posting and CQE
 * polling), mlx5 QP/CQ creation (DC initiators and targets, mlx5 options), UMR memory keys and device memory.
 * Typed static methods over {@code static final} downcall handles, exactly as {@code ibverbs.LibIbverbs}: each
 * method has the C name and forwards its arguments unchanged; {@code MemorySegment} stands for every C pointer.
 * The DEVX, flow-steering and DR functions are not bound.
 *
 * <p>Error contract, per method: "NULL + errno" methods take an {@link Errno} capture segment first and the
 * caller reads {@link Errno#get} only after a failure; "an errno value" methods return it directly. Every
 * function answers EOPNOTSUPP for an object that is not mlx5's (it checks the device's provider first). Nothing
 * here throws on a verbs failure; a missing libmlx5 ({@code ibverbs-providers}) or symbol throws
 * {@link NativeLibraryException}.
 *
 * <p>The {@code static inline} functions of mlx5dv.h are not exported symbols; their Java twins are in
 * {@link Mlx5dvInline} (helpers, segments) and {@link Mlx5dvInlineWr} (the {@code mlx5dv_wr_*} builders).
 */
public final class LibMlx5 {

    private LibMlx5() {}

    // ---- devices and contexts ----

    /**
     * {@code bool mlx5dv_is_supported(struct ibv_device *device)}: whether the device is driven by libmlx5
     * (mlx5dv_is_supported(3)). Never fails; {@code device} is an entry of {@code ibv_get_device_list}.
     */
    public static boolean mlx5dv_is_supported(MemorySegment device) {
        try {
            return (boolean) Mlx5Handles.linked(Mlx5Handles.mlx5dv_is_supported, "mlx5dv_is_supported")
                    .invokeExact(device);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code struct ibv_context *mlx5dv_open_device(struct ibv_device *device, struct mlx5dv_context_attr
     * *attr)}: NULL + errno (EOPNOTSUPP: not an mlx5 device), mlx5dv_open_device(3). Opens the device with
     * mlx5 flags (e.g. {@code MLX5DV_CONTEXT_FLAGS_DEVX}); close it with {@code ibv_close_device}. The
     * first argument is an {@link Errno} capture segment.
     */
    public static MemorySegment mlx5dv_open_device(MemorySegment errno, MemorySegment device, MemorySegment attr) {
        try {
            return (MemorySegment) Mlx5Handles.linked(Mlx5Handles.mlx5dv_open_device, "mlx5dv_open_device")
                    .invokeExact(errno, device, attr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int mlx5dv_query_device(struct ibv_context *ctx_in, struct mlx5dv_context *attrs_out)}: 0 or
     * an errno value (EOPNOTSUPP: not an mlx5 context), mlx5dv_query_device(3). Set
     * {@code attrs_out->comp_mask} to the fields wanted first; the provider clears the bits it does not
     * fill.
     */
    public static int mlx5dv_query_device(MemorySegment context, MemorySegment attrsOut) {
        try {
            return (int) Mlx5Handles.linked(Mlx5Handles.mlx5dv_query_device, "mlx5dv_query_device")
                    .invokeExact(context, attrsOut);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int mlx5dv_init_obj(struct mlx5dv_obj *obj, uint64_t obj_type)} (the default {@code MLX5_1.2}
     * version, as a C program built against rdma-core 44 links): 0 or an errno value (EINVAL: no object
     * given, EOPNOTSUPP: not an mlx5 object), mlx5dv_init_obj(3). Fills the {@code out} structs (queue
     * buffers, doorbell records, UAR) of the objects named by the {@code MLX5DV_OBJ_*} bits; the basis of
     * Direct WQE posting and CQE polling.
     */
    public static int mlx5dv_init_obj(MemorySegment obj, long objType) {
        try {
            return (int) Mlx5Handles.linked(Mlx5Handles.mlx5dv_init_obj, "mlx5dv_init_obj")
                    .invokeExact(obj, objType);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int mlx5dv_set_context_attr(struct ibv_context *context, enum mlx5dv_set_ctx_attr_type type,
     * void *attr)}: 0 or an errno value (EOPNOTSUPP, EINVAL), mlx5dv_set_context_attr(3).
     */
    public static int mlx5dv_set_context_attr(MemorySegment context, int type, MemorySegment attr) {
        try {
            return (int) Mlx5Handles.linked(Mlx5Handles.mlx5dv_set_context_attr, "mlx5dv_set_context_attr")
                    .invokeExact(context, type, attr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int mlx5dv_get_clock_info(struct ibv_context *context, struct mlx5dv_clock_info *clock_info)}:
     * 0 or an errno value (EOPNOTSUPP, EINVAL: the kernel exposes no clock page), mlx5dv_get_clock_info(3).
     * Input of the inline {@code mlx5dv_ts_to_ns} ({@link Mlx5dvInline}).
     */
    public static int mlx5dv_get_clock_info(MemorySegment context, MemorySegment clockInfo) {
        try {
            return (int) Mlx5Handles.linked(Mlx5Handles.mlx5dv_get_clock_info, "mlx5dv_get_clock_info")
                    .invokeExact(context, clockInfo);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    // ---- queue pairs, completion queues, device memory ----

    /**
     * {@code struct ibv_qp *mlx5dv_create_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex
     * *qp_attr, struct mlx5dv_qp_init_attr *mlx5_qp_attr)}: NULL + errno (EOPNOTSUPP: not an mlx5 context
     * or an unsupported option; EINVAL; ENOMEM), mlx5dv_create_qp(3). Creates RC/UD QPs with mlx5 options,
     * DC initiators and targets ({@code IBV_QPT_DRIVER}); destroy with {@code ibv_destroy_qp}. The first
     * argument is an {@link Errno} capture segment.
     */
    public static MemorySegment mlx5dv_create_qp(
            MemorySegment errno, MemorySegment context, MemorySegment qpAttr, MemorySegment mlx5QpAttr) {
        try {
            return (MemorySegment) Mlx5Handles.linked(Mlx5Handles.mlx5dv_create_qp, "mlx5dv_create_qp")
                    .invokeExact(errno, context, qpAttr, mlx5QpAttr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code struct mlx5dv_qp_ex *mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp)}: the {@code struct
     * mlx5dv_qp_ex} inside libmlx5's private QP object (mlx5dv_wr_post(3)), as a zero-length segment;
     * reinterpret it to {@code mlx5dv_qp_ex.sizeof()} for {@link Mlx5dvInlineWr}. Pure pointer arithmetic,
     * never fails; {@code qp} must be an mlx5 QP created with {@code send_ops_flags}.
     */
    public static MemorySegment mlx5dv_qp_ex_from_ibv_qp_ex(MemorySegment qp) {
        try {
            return (MemorySegment) Mlx5Handles.linked(
                    Mlx5Handles.mlx5dv_qp_ex_from_ibv_qp_ex, "mlx5dv_qp_ex_from_ibv_qp_ex")
                    .invokeExact(qp);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int mlx5dv_dci_stream_id_reset(struct ibv_qp *qp, uint16_t stream_id)}: 0 or an errno value
     * (EOPNOTSUPP, EINVAL: not a DCI with streams), mlx5dv_dci_stream_id_reset(3). Moves an errored DCI
     * stream back to a usable state.
     */
    public static int mlx5dv_dci_stream_id_reset(MemorySegment qp, short streamId) {
        try {
            return (int) Mlx5Handles.linked(Mlx5Handles.mlx5dv_dci_stream_id_reset, "mlx5dv_dci_stream_id_reset")
                    .invokeExact(qp, streamId);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int mlx5dv_map_ah_to_qp(struct ibv_ah *ah, uint32_t qp_num)}: 0 or an errno value
     * (EOPNOTSUPP), mlx5dv_map_ah_to_qp(3).
     */
    public static int mlx5dv_map_ah_to_qp(MemorySegment ah, int qpNum) {
        try {
            return (int) Mlx5Handles.linked(Mlx5Handles.mlx5dv_map_ah_to_qp, "mlx5dv_map_ah_to_qp")
                    .invokeExact(ah, qpNum);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int mlx5dv_query_qp_lag_port(struct ibv_qp *qp, uint8_t *port_num, uint8_t *active_port_num)}:
     * 0 or an errno value (EOPNOTSUPP: no LAG), mlx5dv_query_qp_lag_port(3).
     */
    public static int mlx5dv_query_qp_lag_port(
            MemorySegment qp, MemorySegment portNum, MemorySegment activePortNum) {
        try {
            return (int) Mlx5Handles.linked(Mlx5Handles.mlx5dv_query_qp_lag_port, "mlx5dv_query_qp_lag_port")
                    .invokeExact(qp, portNum, activePortNum);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int mlx5dv_modify_qp_lag_port(struct ibv_qp *qp, uint8_t port_num)}: 0 or an errno value
     * (EOPNOTSUPP, EINVAL), mlx5dv_modify_qp_lag_port(3).
     */
    public static int mlx5dv_modify_qp_lag_port(MemorySegment qp, byte portNum) {
        try {
            return (int) Mlx5Handles.linked(Mlx5Handles.mlx5dv_modify_qp_lag_port, "mlx5dv_modify_qp_lag_port")
                    .invokeExact(qp, portNum);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int mlx5dv_modify_qp_udp_sport(struct ibv_qp *qp, uint16_t udp_sport)}: 0 or an errno value
     * (EOPNOTSUPP: not RoCE v2 or no capability), mlx5dv_modify_qp_udp_sport(3).
     */
    public static int mlx5dv_modify_qp_udp_sport(MemorySegment qp, short udpSport) {
        try {
            return (int) Mlx5Handles.linked(Mlx5Handles.mlx5dv_modify_qp_udp_sport, "mlx5dv_modify_qp_udp_sport")
                    .invokeExact(qp, udpSport);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int mlx5dv_reserved_qpn_alloc(struct ibv_context *ctx, uint32_t *qpn)}: 0 or an errno value
     * (EOPNOTSUPP, ENOMEM), mlx5dv_reserved_qpn_alloc(3). Release with
     * {@link #mlx5dv_reserved_qpn_dealloc}.
     */
    public static int mlx5dv_reserved_qpn_alloc(MemorySegment context, MemorySegment qpn) {
        try {
            return (int) Mlx5Handles.linked(Mlx5Handles.mlx5dv_reserved_qpn_alloc, "mlx5dv_reserved_qpn_alloc")
                    .invokeExact(context, qpn);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int mlx5dv_reserved_qpn_dealloc(struct ibv_context *ctx, uint32_t qpn)}: 0 or an errno value
     * (EOPNOTSUPP, EINVAL), mlx5dv_reserved_qpn_alloc(3).
     */
    public static int mlx5dv_reserved_qpn_dealloc(MemorySegment context, int qpn) {
        try {
            return (int) Mlx5Handles.linked(Mlx5Handles.mlx5dv_reserved_qpn_dealloc, "mlx5dv_reserved_qpn_dealloc")
                    .invokeExact(context, qpn);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code struct ibv_cq_ex *mlx5dv_create_cq(struct ibv_context *context, struct ibv_cq_init_attr_ex
     * *cq_attr, struct mlx5dv_cq_init_attr *mlx5_cq_attr)}: NULL + errno (EOPNOTSUPP, EINVAL, ENOMEM),
     * mlx5dv_create_cq(3). An extended CQ with mlx5 options (CQE compression, CQE size, padding); destroy
     * with {@code ibv_destroy_cq}. The first argument is an {@link Errno} capture segment.
     */
    public static MemorySegment mlx5dv_create_cq(
            MemorySegment errno, MemorySegment context, MemorySegment cqAttr, MemorySegment mlx5CqAttr) {
        try {
            return (MemorySegment) Mlx5Handles.linked(Mlx5Handles.mlx5dv_create_cq, "mlx5dv_create_cq")
                    .invokeExact(errno, context, cqAttr, mlx5CqAttr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code struct ibv_dm *mlx5dv_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *dm_attr,
     * struct mlx5dv_alloc_dm_attr *mlx5_dm_attr)}: NULL + errno (EOPNOTSUPP, EINVAL, ENOMEM),
     * mlx5dv_alloc_dm(3). Device memory of a given type (MEMIC, steering SW ICM); free with
     * {@code ibv_free_dm}. The first argument is an {@link Errno} capture segment.
     */
    public static MemorySegment mlx5dv_alloc_dm(
            MemorySegment errno, MemorySegment context, MemorySegment dmAttr, MemorySegment mlx5DmAttr) {
        try {
            return (MemorySegment) Mlx5Handles.linked(Mlx5Handles.mlx5dv_alloc_dm, "mlx5dv_alloc_dm")
                    .invokeExact(errno, context, dmAttr, mlx5DmAttr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    // ---- memory keys ----

    /**
     * {@code struct mlx5dv_mkey *mlx5dv_create_mkey(struct mlx5dv_mkey_init_attr *mkey_init_attr)}: NULL +
     * errno (EOPNOTSUPP, EINVAL, ENOMEM), mlx5dv_create_mkey(3). An indirect mkey to be configured by a UMR
     * ({@code mlx5dv_wr_mkey_configure}, {@link Mlx5dvInlineWr}); destroy with
     * {@link #mlx5dv_destroy_mkey}. The first argument is an {@link Errno} capture segment.
     */
    public static MemorySegment mlx5dv_create_mkey(MemorySegment errno, MemorySegment mkeyInitAttr) {
        try {
            return (MemorySegment) Mlx5Handles.linked(Mlx5Handles.mlx5dv_create_mkey, "mlx5dv_create_mkey")
                    .invokeExact(errno, mkeyInitAttr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int mlx5dv_destroy_mkey(struct mlx5dv_mkey *mkey)}: 0 or an errno value (EOPNOTSUPP; the DEVX
     * destroy's errno, e.g. EBUSY while a QP still uses it), mlx5dv_create_mkey(3).
     */
    public static int mlx5dv_destroy_mkey(MemorySegment mkey) {
        try {
            return (int) Mlx5Handles.linked(Mlx5Handles.mlx5dv_destroy_mkey, "mlx5dv_destroy_mkey")
                    .invokeExact(mkey);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    // ---- size-taking functions behind mlx5dv.h inlines ----

    /**
     * {@code int _mlx5dv_query_port(struct ibv_context *context, uint32_t port_num, struct mlx5dv_port
     * *info, size_t info_len)}: 0 or an errno value (EOPNOTSUPP on devices without the capability). C
     * callers use the inline {@link Mlx5dvInline#mlx5dv_query_port}, which passes {@code sizeof(struct
     * mlx5dv_port)}.
     */
    public static int _mlx5dv_query_port(MemorySegment context, int portNum, MemorySegment info, long infoLen) {
        try {
            return (int) Mlx5Handles.linked(Mlx5Handles._mlx5dv_query_port, "_mlx5dv_query_port")
                    .invokeExact(context, portNum, info, infoLen);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int _mlx5dv_mkey_check(struct mlx5dv_mkey *mkey, struct mlx5dv_mkey_err *err_info, size_t
     * err_info_size)}: 0 or an errno value. C callers use the inline
     * {@link Mlx5dvInline#mlx5dv_mkey_check}, which passes {@code sizeof(struct mlx5dv_mkey_err)}.
     */
    public static int _mlx5dv_mkey_check(MemorySegment mkey, MemorySegment errInfo, long errInfoSize) {
        try {
            return (int) Mlx5Handles.linked(Mlx5Handles._mlx5dv_mkey_check, "_mlx5dv_mkey_check")
                    .invokeExact(mkey, errInfo, errInfoSize);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }
}
