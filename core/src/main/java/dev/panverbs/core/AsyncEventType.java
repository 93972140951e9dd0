package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;

/**
 * The type of an asynchronous event, C {@code enum ibv_event_type} ({@code ibv_get_async_event(3)}), with
 * what kind of object it concerns.
 */
public enum AsyncEventType {
    /** {@code IBV_EVENT_CQ_ERR}: a CQ overran; the CQ is in error. */
    CQ_ERR(verbs_h.IBV_EVENT_CQ_ERR(), Element.CQ),
    /** {@code IBV_EVENT_QP_FATAL}: a QP error that the QP cannot report in a completion; the QP is in the error state. */
    QP_FATAL(verbs_h.IBV_EVENT_QP_FATAL(), Element.QP),
    /** {@code IBV_EVENT_QP_REQ_ERR}: invalid request local work queue error (a responder detected a transport error). */
    QP_REQ_ERR(verbs_h.IBV_EVENT_QP_REQ_ERR(), Element.QP),
    /** {@code IBV_EVENT_QP_ACCESS_ERR}: local access violation (bad rkey, length or access rights seen as responder). */
    QP_ACCESS_ERR(verbs_h.IBV_EVENT_QP_ACCESS_ERR(), Element.QP),
    /** {@code IBV_EVENT_COMM_EST}: communication established: the first packet arrived on a QP in RTR. */
    COMM_EST(verbs_h.IBV_EVENT_COMM_EST(), Element.QP),
    /** {@code IBV_EVENT_SQ_DRAINED}: the send queue of a QP in SQD has drained. */
    SQ_DRAINED(verbs_h.IBV_EVENT_SQ_DRAINED(), Element.QP),
    /** {@code IBV_EVENT_PATH_MIG}: the path migrated to the alternate path. */
    PATH_MIG(verbs_h.IBV_EVENT_PATH_MIG(), Element.QP),
    /** {@code IBV_EVENT_PATH_MIG_ERR}: path migration failed. */
    PATH_MIG_ERR(verbs_h.IBV_EVENT_PATH_MIG_ERR(), Element.QP),
    /** {@code IBV_EVENT_DEVICE_FATAL}: the device failed; close every object and the context. */
    DEVICE_FATAL(verbs_h.IBV_EVENT_DEVICE_FATAL(), Element.DEVICE),
    /** {@code IBV_EVENT_PORT_ACTIVE}: the port became ACTIVE. */
    PORT_ACTIVE(verbs_h.IBV_EVENT_PORT_ACTIVE(), Element.PORT),
    /** {@code IBV_EVENT_PORT_ERR}: the port left ACTIVE (link down); connections through it will fail. */
    PORT_ERR(verbs_h.IBV_EVENT_PORT_ERR(), Element.PORT),
    /** {@code IBV_EVENT_LID_CHANGE}: the port's LID changed. */
    LID_CHANGE(verbs_h.IBV_EVENT_LID_CHANGE(), Element.PORT),
    /** {@code IBV_EVENT_PKEY_CHANGE}: the port's P_Key table changed. */
    PKEY_CHANGE(verbs_h.IBV_EVENT_PKEY_CHANGE(), Element.PORT),
    /** {@code IBV_EVENT_SM_CHANGE}: the subnet manager changed. */
    SM_CHANGE(verbs_h.IBV_EVENT_SM_CHANGE(), Element.PORT),
    /** {@code IBV_EVENT_SRQ_ERR}: an SRQ error; the SRQ is in error. */
    SRQ_ERR(verbs_h.IBV_EVENT_SRQ_ERR(), Element.SRQ),
    /** {@code IBV_EVENT_SRQ_LIMIT_REACHED}: the SRQ fell below its armed limit ({@code ibv_modify_srq} srq_limit). */
    SRQ_LIMIT_REACHED(verbs_h.IBV_EVENT_SRQ_LIMIT_REACHED(), Element.SRQ),
    /** {@code IBV_EVENT_QP_LAST_WQE_REACHED}: a QP attached to an SRQ consumed its last WQE after moving to error. */
    QP_LAST_WQE_REACHED(verbs_h.IBV_EVENT_QP_LAST_WQE_REACHED(), Element.QP),
    /** {@code IBV_EVENT_CLIENT_REREGISTER}: the subnet manager asks clients to re-register. */
    CLIENT_REREGISTER(verbs_h.IBV_EVENT_CLIENT_REREGISTER(), Element.PORT),
    /** {@code IBV_EVENT_GID_CHANGE}: the port's GID table changed (on RoCE: an IP address came or went). */
    GID_CHANGE(verbs_h.IBV_EVENT_GID_CHANGE(), Element.PORT),
    /** {@code IBV_EVENT_WQ_FATAL}: a work queue failed. */
    WQ_FATAL(verbs_h.IBV_EVENT_WQ_FATAL(), Element.WQ);

    /** What an event's {@code element} union holds ({@code struct ibv_async_event}: cq, qp, srq, wq or port_num). */
    public enum Element {
        /** A completion queue. */
        CQ,
        /** A queue pair. */
        QP,
        /** A shared receive queue. */
        SRQ,
        /** A work queue. */
        WQ,
        /** A port number. */
        PORT,
        /** Nothing: the whole device. */
        DEVICE
    }

    private final int value;
    private final Element element;

    AsyncEventType(int value, Element element) {
        this.value = value;
        this.element = element;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    /** What kind of object the event concerns. */
    public Element element() {
        return element;
    }

    /** The constant for a C value. */
    public static AsyncEventType of(int value) {
        for (AsyncEventType t : values()) {
            if (t.value == value) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown ibv_event_type " + value);
    }
}
