package dev.panverbs.core.mlx5;

import java.lang.foreign.MemorySegment;

/**
 * The receive side of an mlx5 QP as {@code mlx5dv_init_obj(3)} reports it in {@code struct mlx5dv_qp}: the receive
 * queue buffer ({@code rq.buf}, {@code rq.wqe_cnt} WQEs of {@code rq.stride} bytes) and the doorbell record
 * ({@code dbrec}; the receive counter is its first big-endian word).
 */
public record Mlx5ReceiveQueueView(MemorySegment rqBuffer, int rqWqeCount, int rqStride, MemorySegment doorbellRecord,
                                   int qpNum) {}
