package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;

import java.util.EnumSet;
import java.util.Set;

/**
 * One attribute of a queue pair, i.e. one bit of {@code enum ibv_qp_attr_mask} ({@code IBV_QP_*}, see
 * {@code ibv_modify_qp(3)}). Users never assemble masks: each setter of {@link QueuePairAttributes} sets its bit.
 * This enum names the bits in {@link InvalidTransitionException#missing()} / {@link InvalidTransitionException#extra()}
 * and in {@link QueuePairAttributes#attributes()}.
 */
public enum QueuePairAttribute {
    /** {@code IBV_QP_STATE}: the next state. */
    STATE(verbs_h.IBV_QP_STATE(), "qpState"),
    /** {@code IBV_QP_CUR_STATE}: the state the caller believes the QP is in. */
    CUR_STATE(verbs_h.IBV_QP_CUR_STATE(), "curQpState"),
    /** {@code IBV_QP_EN_SQD_ASYNC_NOTIFY}. */
    EN_SQD_ASYNC_NOTIFY(verbs_h.IBV_QP_EN_SQD_ASYNC_NOTIFY(), "enSqdAsyncNotify"),
    /** {@code IBV_QP_ACCESS_FLAGS}: remote access allowed on the responder side. */
    ACCESS_FLAGS(verbs_h.IBV_QP_ACCESS_FLAGS(), "qpAccessFlags"),
    /** {@code IBV_QP_PKEY_INDEX}. */
    PKEY_INDEX(verbs_h.IBV_QP_PKEY_INDEX(), "pkeyIndex"),
    /** {@code IBV_QP_PORT}: the physical port number. */
    PORT(verbs_h.IBV_QP_PORT(), "portNum"),
    /** {@code IBV_QP_QKEY}: UD queue key. */
    QKEY(verbs_h.IBV_QP_QKEY(), "qkey"),
    /** {@code IBV_QP_AV}: primary path address vector ({@code ah_attr}). */
    AV(verbs_h.IBV_QP_AV(), "ahAttr"),
    /** {@code IBV_QP_PATH_MTU}. */
    PATH_MTU(verbs_h.IBV_QP_PATH_MTU(), "pathMtu"),
    /** {@code IBV_QP_TIMEOUT}: local ACK timeout, 4.096 us * 2^timeout. */
    TIMEOUT(verbs_h.IBV_QP_TIMEOUT(), "timeout"),
    /** {@code IBV_QP_RETRY_CNT}. */
    RETRY_CNT(verbs_h.IBV_QP_RETRY_CNT(), "retryCnt"),
    /** {@code IBV_QP_RNR_RETRY}. */
    RNR_RETRY(verbs_h.IBV_QP_RNR_RETRY(), "rnrRetry"),
    /** {@code IBV_QP_RQ_PSN}. */
    RQ_PSN(verbs_h.IBV_QP_RQ_PSN(), "rqPsn"),
    /** {@code IBV_QP_MAX_QP_RD_ATOMIC}: outstanding RDMA READ/atomics as initiator. */
    MAX_QP_RD_ATOMIC(verbs_h.IBV_QP_MAX_QP_RD_ATOMIC(), "maxRdAtomic"),
    /** {@code IBV_QP_ALT_PATH}: alternate path (APM). */
    ALT_PATH(verbs_h.IBV_QP_ALT_PATH(), "altPath"),
    /** {@code IBV_QP_MIN_RNR_TIMER}. */
    MIN_RNR_TIMER(verbs_h.IBV_QP_MIN_RNR_TIMER(), "minRnrTimer"),
    /** {@code IBV_QP_SQ_PSN}. */
    SQ_PSN(verbs_h.IBV_QP_SQ_PSN(), "sqPsn"),
    /** {@code IBV_QP_MAX_DEST_RD_ATOMIC}: outstanding RDMA READ/atomics as responder. */
    MAX_DEST_RD_ATOMIC(verbs_h.IBV_QP_MAX_DEST_RD_ATOMIC(), "maxDestRdAtomic"),
    /** {@code IBV_QP_PATH_MIG_STATE}. */
    PATH_MIG_STATE(verbs_h.IBV_QP_PATH_MIG_STATE(), "pathMigState"),
    /** {@code IBV_QP_CAP}: resize the queues (rarely supported). */
    CAP(verbs_h.IBV_QP_CAP(), "cap"),
    /** {@code IBV_QP_DEST_QPN}: the remote QP number. */
    DEST_QPN(verbs_h.IBV_QP_DEST_QPN(), "destQpNum"),
    /** {@code IBV_QP_RATE_LIMIT}: packet pacing (raw packet QPs). */
    RATE_LIMIT(verbs_h.IBV_QP_RATE_LIMIT(), "rateLimit");

    private final int bit;
    private final String setter;

    QueuePairAttribute(int bit, String setter) {
        this.bit = bit;
        this.setter = setter;
    }

    /** The mask bit ({@code IBV_QP_*}). */
    public int bit() {
        return bit;
    }

    /** The {@link QueuePairAttributes} setter that sets this attribute, for error messages. */
    public String setter() {
        return setter;
    }

    /** The attributes whose bits are set in a C {@code ibv_qp_attr_mask}. */
    public static Set<QueuePairAttribute> fromMask(int mask) {
        EnumSet<QueuePairAttribute> set = EnumSet.noneOf(QueuePairAttribute.class);
        for (QueuePairAttribute a : values()) {
            if ((mask & a.bit) != 0) {
                set.add(a);
            }
        }
        return set;
    }

    /** The C mask of a set of attributes. */
    public static int toMask(Set<QueuePairAttribute> attributes) {
        int mask = 0;
        for (QueuePairAttribute a : attributes) {
            mask |= a.bit;
        }
        return mask;
    }
}
