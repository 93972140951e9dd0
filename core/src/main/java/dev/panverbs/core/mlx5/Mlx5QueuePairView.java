package dev.panverbs.core.mlx5;

import java.lang.foreign.MemorySegment;

/**
 * The send side of an mlx5 QP as {@code mlx5dv_init_obj(3)} reports it in {@code struct mlx5dv_qp}: the send queue
 * buffer ({@code sq.buf}, {@code sq.wqe_cnt} basic blocks of {@code sq.stride} = 64 bytes), the doorbell record
 * ({@code dbrec}; the send counter is its second big-endian word) and the BlueFlame register ({@code bf.reg},
 * two halves of {@code bf.size} bytes; size 0: no BlueFlame, doorbells go to {@code bf.reg} 8 bytes at a time).
 * Segments are sized to exactly that memory.
 */
public record Mlx5QueuePairView(MemorySegment sqBuffer, int sqWqeCount, int sqStride, MemorySegment doorbellRecord,
                                MemorySegment blueFlameRegister, int blueFlameSize, int qpNum) {}
