package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;

/**
 * The state of a queue pair ({@code enum ibv_qp_state}, see {@code ibv_modify_qp(3)}). A QP is created in
 * {@link #RESET} and is driven through {@link #INIT}, {@link #RTR} (ready to receive) and {@link #RTS} (ready to
 * send); any state may go to {@link #ERR} or back to {@link #RESET}.
 */
public enum QueuePairState {
    /** {@code IBV_QPS_RESET}: newly created; posting send WRs fails, receive WRs are refused by most providers. */
    RESET(verbs_h.IBV_QPS_RESET(), false),
    /** {@code IBV_QPS_INIT}: receive WRs may be posted but are not processed. */
    INIT(verbs_h.IBV_QPS_INIT(), false),
    /** {@code IBV_QPS_RTR}: ready to receive; incoming messages are processed. */
    RTR(verbs_h.IBV_QPS_RTR(), false),
    /** {@code IBV_QPS_RTS}: ready to send; send WRs are processed. */
    RTS(verbs_h.IBV_QPS_RTS(), true),
    /** {@code IBV_QPS_SQD}: send queue drained. */
    SQD(verbs_h.IBV_QPS_SQD(), true),
    /** {@code IBV_QPS_SQE}: send queue error (UC/UD only); the receive side still works. */
    SQE(verbs_h.IBV_QPS_SQE(), true),
    /** {@code IBV_QPS_ERR}: error; outstanding WRs complete with {@code WR_FLUSH_ERR}. */
    ERR(verbs_h.IBV_QPS_ERR(), true),
    /** {@code IBV_QPS_UNKNOWN}: the provider could not tell. */
    UNKNOWN(verbs_h.IBV_QPS_UNKNOWN(), true);

    private static final QueuePairState[] BY_VALUE = new QueuePairState[8];

    static {
        for (QueuePairState s : values()) {
            BY_VALUE[s.value] = s;
        }
    }

    private final int value;
    /** {@link #acceptsSends()}, precomputed: the post reads one field instead of comparing three constants. */
    private final boolean sends;

    QueuePairState(int value, boolean sends) {
        this.value = value;
        this.sends = sends;
    }

    /** The C value ({@code IBV_QPS_*}). */
    public int value() {
        return value;
    }

    /**
     * Whether a send work request may be posted in this state. IB spec vol. 1, 10.3.1: posting to the send queue in
     * RESET, INIT or RTR is an immediate error; in SQD it is queued, in SQE and ERR it completes with a flush error.
     * {@link #UNKNOWN} is left to the provider.
     */
    boolean acceptsSends() {
        return sends;
    }

    /** Whether a receive work request may be posted: from INIT on (10.3.1: RESET is an immediate error). */
    boolean acceptsReceives() {
        return this != RESET;
    }

    /** The constant for a C {@code enum ibv_qp_state} value; out-of-range values map to {@link #UNKNOWN}. */
    public static QueuePairState of(int value) {
        return value >= 0 && value < BY_VALUE.length && BY_VALUE[value] != null ? BY_VALUE[value] : UNKNOWN;
    }
}
