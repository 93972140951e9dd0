package dev.panverbs.core.mlx5;

import dev.panverbs.bindings.mlx5.LibMlx5;
import dev.panverbs.bindings.mlx5dv.mlx5dv_context;
import dev.panverbs.bindings.mlx5dv.mlx5dv_cq;
import dev.panverbs.bindings.mlx5dv.mlx5dv_h;
import dev.panverbs.bindings.mlx5dv.mlx5dv_obj;
import dev.panverbs.bindings.mlx5dv.mlx5dv_qp;
import dev.panverbs.bindings.verbs.ibv_context;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.UnsupportedVerbException;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.NativeHandles;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * mlx5 direct verbs ({@code <infiniband/mlx5dv.h>}) on the core's objects: whether a device is driven by libmlx5
 * ({@code mlx5dv_is_supported}), its mlx5 capabilities ({@code mlx5dv_query_device}), and the direct views of a
 * QP's send queue and a CQ's buffer ({@code mlx5dv_init_obj}) on which {@link DirectSendQueue} and
 * {@link DirectCompletionQueue} work. Any other device is refused up front by name (for example
 * "rxe0 is not an mlx5 device"), never with a raw {@code EOPNOTSUPP} later.
 */
public final class Mlx5 {
    /** The capability a non-mlx5 device lacks, as {@link UnsupportedVerbException#capability()} names it. */
    public static final String CAPABILITY = "mlx5 direct verbs (a ConnectX device driven by libmlx5)";

    private Mlx5() {}

    /** {@code mlx5dv_is_supported(context->device)}: whether libmlx5 drives this device. */
    public static boolean isSupported(Context context) {
        MemorySegment ctx = NativeHandles.context(context, "mlx5dv_is_supported");
        return LibMlx5.mlx5dv_is_supported(ibv_context.device(ctx.reinterpret(ibv_context.sizeof())));
    }

    /** Refuses a context whose device is not an mlx5 device, naming it. */
    public static void requireMlx5(Context context, String verb) {
        if (!isSupported(context)) {
            String name = context.device().name();
            throw new UnsupportedVerbException(verb, name + " is not an mlx5 device (mlx5dv_is_supported returned "
                    + "false): Direct WQE posting, direct CQE polling and UMR mkeys drive ConnectX objects "
                    + "themselves; use the verbs paths (SendRequests, PostBatch, CompletionQueue.poll, MemoryRegion) "
                    + "on " + name, CAPABILITY);
        }
    }

    /** {@code mlx5dv_query_device(3)}; refuses a non-mlx5 device. */
    public static Mlx5Capabilities query(Context context) {
        requireMlx5(context, "mlx5dv_query_device");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attrs = arena.allocate(mlx5dv_context.layout());
            mlx5dv_context.comp_mask(attrs, mlx5dv_h.MLX5DV_CONTEXT_MASK_STRIDING_RQ()
                    | mlx5dv_h.MLX5DV_CONTEXT_MASK_DYN_BFREGS() | mlx5dv_h.MLX5DV_CONTEXT_MASK_DC_ODP_CAPS());
            int rc = LibMlx5.mlx5dv_query_device(NativeHandles.context(context, "mlx5dv_query_device"), attrs);
            if (rc != 0) {
                throw Errors.failure("mlx5dv_query_device", rc);
            }
            long flags = mlx5dv_context.flags(attrs);
            return new Mlx5Capabilities(mlx5dv_context.version(attrs) & 0xFF, flags, mlx5dv_context.comp_mask(attrs),
                    (flags & mlx5dv_h.MLX5DV_CONTEXT_FLAGS_CQE_V1()) != 0 ? 1 : 0,
                    mlx5dv_context.max_dynamic_bfregs(attrs),
                    dev.panverbs.bindings.mlx5dv.mlx5dv_striding_rq_caps.supported_qpts(mlx5dv_context.striding_rq_caps(attrs)) != 0,
                    mlx5dv_context.dc_odp_caps(attrs));
        }
    }

    /** {@code mlx5dv_init_obj(MLX5DV_OBJ_QP)}: the send side of {@code qp}. Refuses a non-mlx5 device. */
    public static Mlx5QueuePairView queuePairView(QueuePair qp) {
        requireMlx5(qp.protectionDomain().context(), "mlx5dv_init_obj");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = qpObject(qp, arena);
            MemorySegment sq = mlx5dv_qp.sq(out);
            int wqeCnt = mlx5dv_qp.sq.wqe_cnt(sq);
            int stride = mlx5dv_qp.sq.stride(sq);
            MemorySegment bf = mlx5dv_qp.bf(out);
            int bfSize = mlx5dv_qp.bf.size(bf);
            return new Mlx5QueuePairView(mlx5dv_qp.sq.buf(sq).reinterpret((long) wqeCnt * stride), wqeCnt, stride,
                    mlx5dv_qp.dbrec(out).reinterpret(8), mlx5dv_qp.bf.reg(bf).reinterpret(Math.max(2L * bfSize, 8)),
                    bfSize, qp.qpNum());
        }
    }

    /** {@code mlx5dv_init_obj(MLX5DV_OBJ_QP)}: the receive side of {@code qp}. Refuses a non-mlx5 device. */
    public static Mlx5ReceiveQueueView receiveQueueView(QueuePair qp) {
        requireMlx5(qp.protectionDomain().context(), "mlx5dv_init_obj");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = qpObject(qp, arena);
            MemorySegment rq = mlx5dv_qp.rq(out);
            int wqeCnt = mlx5dv_qp.rq.wqe_cnt(rq);
            int stride = mlx5dv_qp.rq.stride(rq);
            return new Mlx5ReceiveQueueView(mlx5dv_qp.rq.buf(rq).reinterpret((long) wqeCnt * stride), wqeCnt, stride,
                    mlx5dv_qp.dbrec(out).reinterpret(8), qp.qpNum());
        }
    }

    /** {@code mlx5dv_init_obj(MLX5DV_OBJ_QP)}: {@code qp}'s {@code struct mlx5dv_qp}, allocated in {@code arena}. */
    private static MemorySegment qpObject(QueuePair qp, Arena arena) {
        MemorySegment obj = arena.allocate(mlx5dv_obj.layout());
        MemorySegment out = arena.allocate(mlx5dv_qp.layout());
        MemorySegment in = mlx5dv_obj.qp(obj);
        mlx5dv_obj.qp.in(in, NativeHandles.handle(qp, "mlx5dv_init_obj"));
        mlx5dv_obj.qp.out(in, out);
        int rc = LibMlx5.mlx5dv_init_obj(obj, mlx5dv_h.MLX5DV_OBJ_QP());
        if (rc != 0) {
            throw Errors.failure("mlx5dv_init_obj(MLX5DV_OBJ_QP)", rc);
        }
        return out;
    }

    /** {@code mlx5dv_init_obj(MLX5DV_OBJ_CQ)}: the buffer and doorbells of {@code cq}. Refuses a non-mlx5 device. */
    public static Mlx5CompletionQueueView completionQueueView(CompletionQueue cq) {
        requireMlx5(cq.context(), "mlx5dv_init_obj");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment obj = arena.allocate(mlx5dv_obj.layout());
            MemorySegment out = arena.allocate(mlx5dv_cq.layout());
            MemorySegment in = mlx5dv_obj.cq(obj);
            mlx5dv_obj.cq.in(in, NativeHandles.handle(cq, "mlx5dv_init_obj"));
            mlx5dv_obj.cq.out(in, out);
            int rc = LibMlx5.mlx5dv_init_obj(obj, mlx5dv_h.MLX5DV_OBJ_CQ());
            if (rc != 0) {
                throw Errors.failure("mlx5dv_init_obj(MLX5DV_OBJ_CQ)", rc);
            }
            int n = mlx5dv_cq.cqe_cnt(out);
            int size = mlx5dv_cq.cqe_size(out);
            return new Mlx5CompletionQueueView(mlx5dv_cq.buf(out).reinterpret((long) n * size), n, size,
                    mlx5dv_cq.dbrec(out).reinterpret(8),
                    mlx5dv_cq.cq_uar(out).reinterpret(0x28).asSlice(mlx5dv_h.MLX5_CQ_DOORBELL(), 8),
                    mlx5dv_cq.cqn(out));
        }
    }

    /** {@code MLX5_POST_SEND_PREFER_BF} as libmlx5 reads it at context creation (default on). */
    static boolean preferBf() {
        String env = System.getenv("MLX5_POST_SEND_PREFER_BF");
        return env == null || !env.equals("0");
    }

    /** {@code MLX5_SHUT_UP_BF} as libmlx5 reads it at context creation (default off). */
    static boolean shutUpBf() {
        String env = System.getenv("MLX5_SHUT_UP_BF");
        return env != null && !env.equals("0");
    }
}
