package dev.panverbs.core.mlx5;

/**
 * What {@code mlx5dv_query_device(3)} reports ({@code struct mlx5dv_context}) that the direct paths care about.
 *
 * @param version          {@code version}
 * @param flags            {@code flags} ({@code MLX5DV_CONTEXT_FLAGS_*}: CQE version 1, MPW, CQE compression...)
 * @param compMask         {@code comp_mask}: which optional fields the provider filled
 * @param cqeVersion       1 when {@code MLX5DV_CONTEXT_FLAGS_CQE_V1} is set (CQEs carry user indexes), else 0
 * @param maxDynamicBfregs {@code max_dynamic_bfregs}: BlueFlame registers a context can allocate dynamically
 * @param stridingRq       {@code striding_rq_caps.supported_qpts != 0}
 * @param dcOdpCaps        {@code dc_odp_caps}: on-demand paging capabilities of DC transport
 */
public record Mlx5Capabilities(int version, long flags, long compMask, int cqeVersion, int maxDynamicBfregs,
                               boolean stridingRq, int dcOdpCaps) {}
