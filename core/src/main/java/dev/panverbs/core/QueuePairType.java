package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;

/**
 * The transport service of a queue pair ({@code enum ibv_qp_type}, see {@code ibv_create_qp(3)}).
 * panverbs creates {@link #RC}, {@link #UC} and {@link #UD} QPs, and mlx5's Dynamically Connected ones
 * ({@code dev.panverbs.core.mlx5.DynamicConnect}); the other constants exist so that
 * {@link QueuePair#query()} can report any QP the provider describes.
 */
public enum QueuePairType {
    /** {@code IBV_QPT_RC}: reliable connected; SEND, RDMA WRITE/READ, atomics. */
    RC(verbs_h.IBV_QPT_RC()),
    /** {@code IBV_QPT_UC}: unreliable connected; SEND and RDMA WRITE, no READ nor atomics. */
    UC(verbs_h.IBV_QPT_UC()),
    /** {@code IBV_QPT_UD}: unreliable datagram; SEND only, each WR names an address handle, MTU-sized messages. */
    UD(verbs_h.IBV_QPT_UD()),
    /** {@code IBV_QPT_RAW_PACKET}: raw Ethernet frames (not created by panverbs). */
    RAW_PACKET(verbs_h.IBV_QPT_RAW_PACKET()),
    /** {@code IBV_QPT_XRC_SEND}: XRC initiator (XRC_INI): {@code pd.createQp(XRC_SEND, cq, cq)}, sends only. */
    XRC_SEND(verbs_h.IBV_QPT_XRC_SEND()),
    /** {@code IBV_QPT_XRC_RECV}: XRC target (XRC_TGT): {@link XrcDomain#createTargetQp()}. */
    XRC_RECV(verbs_h.IBV_QPT_XRC_RECV()),
    /**
     * {@code IBV_QPT_DRIVER} with mlx5's {@code MLX5DV_DCTYPE_DCI}: a DC initiator ({@code mlx5dv_create_qp(3)}),
     * send-only, each WR addressed with {@code mlx5dv_wr_set_dc_addr}; see {@code dev.panverbs.core.mlx5.DcInitiator}.
     * {@link #of} refuses {@code IBV_QPT_DRIVER}: the C type does not tell a DCI from a DCT or another provider's QP.
     */
    DC_INITIATOR(verbs_h.IBV_QPT_DRIVER()),
    /**
     * {@code IBV_QPT_DRIVER} with {@code MLX5DV_DCTYPE_DCT}: a DC target, receiving into an SRQ; see
     * {@code dev.panverbs.core.mlx5.DcTarget}.
     */
    DC_TARGET(verbs_h.IBV_QPT_DRIVER());

    private final int value;

    QueuePairType(int value) {
        this.value = value;
    }

    /** The C value ({@code IBV_QPT_*}). */
    public int value() {
        return value;
    }

    /**
     * The constant for a C {@code enum ibv_qp_type} value. {@code IBV_QPT_DRIVER} is refused
     * ({@link IllegalArgumentException}): a provider-specific QP (an mlx5 DCI or DCT, an EFA SRD QP...) that the value
     * alone does not identify.
     */
    public static QueuePairType of(int value) {
        if (value == verbs_h.IBV_QPT_DRIVER()) {
            throw new IllegalArgumentException("ibv_qp_type IBV_QPT_DRIVER (" + value + ") is a provider-specific QP "
                    + "(an mlx5 DC initiator or target, another provider's own type): the value alone does not tell "
                    + "which");
        }
        for (QueuePairType t : values()) {
            if (t.value == value) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown ibv_qp_type " + value);
    }
}
