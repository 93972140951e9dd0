package dev.panverbs.core.mlx5;

/**
 * What rdma-core 44's {@code mlx5dv_query_device(3)} reports about the Dynamically Connected transport
 * ({@code struct mlx5dv_context}: {@code dc_odp_caps} with {@code MLX5DV_CONTEXT_MASK_DC_ODP_CAPS},
 * {@code dci_streams_caps} with {@code MLX5DV_CONTEXT_MASK_DCI_STREAMS}). rdma-core 44 has no "DC supported" bit: a
 * kernel or device without DC refuses {@code mlx5dv_create_qp} itself, which {@link DynamicConnect} reports as
 * {@link dev.panverbs.core.UnsupportedVerbException} naming the DC type.
 *
 * @param device              the device's name
 * @param dcOdpCaps           {@code dc_odp_caps} ({@code IBV_ODP_SUPPORT_*} bits for DC; 0 when not reported)
 * @param dciStreams          whether {@code dci_streams_caps} was reported ({@code comp_mask} kept the bit)
 * @param maxLogNumConcurrent {@code dci_streams_caps.max_log_num_concurent}
 * @param maxLogNumErrored    {@code dci_streams_caps.max_log_num_errored}
 */
public record DcCapabilities(String device, int dcOdpCaps, boolean dciStreams, int maxLogNumConcurrent,
                             int maxLogNumErrored) {}
