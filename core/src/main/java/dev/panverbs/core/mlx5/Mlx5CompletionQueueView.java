package dev.panverbs.core.mlx5;

import java.lang.foreign.MemorySegment;

/**
 * An mlx5 CQ as {@code mlx5dv_init_obj(3)} reports it in {@code struct mlx5dv_cq}: the CQE buffer ({@code buf},
 * {@code cqe_cnt} entries of {@code cqe_size} bytes), the doorbell record ({@code dbrec}: consumer index, then the
 * arm word), the arm doorbell ({@code cq_uar + MLX5_CQ_DOORBELL}, 8 bytes) and the CQ number.
 */
public record Mlx5CompletionQueueView(MemorySegment buffer, int cqeCount, int cqeSize, MemorySegment doorbellRecord,
                                      MemorySegment armDoorbell, int cqn) {}
