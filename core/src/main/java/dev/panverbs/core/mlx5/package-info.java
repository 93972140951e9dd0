/**
 * mlx5 direct verbs on the core's objects: {@link dev.panverbs.core.mlx5.Mlx5} (device support, capabilities,
 * {@code mlx5dv_init_obj} views), {@link dev.panverbs.core.mlx5.DirectSendQueue} (Direct WQE posting: Java writes
 * the ConnectX send ring and rings the doorbell) and {@link dev.panverbs.core.mlx5.DirectCompletionQueue} (direct
 * CQE polling), and the Dynamically Connected transport ({@link dev.panverbs.core.mlx5.DcInitiator},
 * {@link dev.panverbs.core.mlx5.DcTarget}, {@code mlx5dv_create_qp} with {@code MLX5DV_QP_INIT_ATTR_MASK_DC}). No downcall and no allocation per work request or completion; the core's tracker keeps every memory
 * region a posted WQE references registered until its completion is polled.
 *
 * <p>What is verified where: the WQE bytes, doorbell record, BlueFlame/doorbell writes, CQE decoding, consumer
 * index and arm doorbell equal those of libmlx5's own code (rdma-core 44's {@code qp.c.o}/{@code cq.c.o} from
 * {@code libmlx5.a}, run on fake objects in plain memory by the host tests). Execution on a ConnectX device needs
 * the hardware lane (see README).
 */
package dev.panverbs.core.mlx5;
