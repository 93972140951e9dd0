package dev.panverbs.core;

/**
 * The attributes of a shared receive queue, C {@code struct ibv_srq_attr} as {@code ibv_query_srq(3)} returns it.
 *
 * @param maxWr    the most outstanding receive work requests ({@code max_wr})
 * @param maxSge   the most scatter/gather entries per receive ({@code max_sge})
 * @param srqLimit the armed limit ({@code srq_limit}); 0 when not armed (or after the limit event fired)
 */
public record SharedReceiveQueueAttributes(int maxWr, int maxSge, int srqLimit) {
}
