package dev.panverbs.core;

import static dev.panverbs.bindings.verbs.verbs_h.*;

/**
 * The status of a work completion ({@code enum ibv_wc_status}, see {@code ibv_poll_cq(3)}). A completion status is
 * data, not an exception: check {@link WorkCompletion#status()}. Only for {@link #SUCCESS} are the other fields of a
 * completion (opcode, byte length, immediate data) valid. {@link #description()} is the text of
 * {@code ibv_wc_status_str(3)}.
 */
public enum WorkCompletionStatus {
    /** {@code IBV_WC_SUCCESS}. */
    SUCCESS(IBV_WC_SUCCESS(), "success"),
    /** {@code IBV_WC_LOC_LEN_ERR}: message longer than the receive buffer, or beyond the local MR. */
    LOC_LEN_ERR(IBV_WC_LOC_LEN_ERR(), "local length error"),
    /** {@code IBV_WC_LOC_QP_OP_ERR}: malformed WR (e.g. too much inline data, bad opcode for the QP). */
    LOC_QP_OP_ERR(IBV_WC_LOC_QP_OP_ERR(), "local QP operation error"),
    /** {@code IBV_WC_LOC_EEC_OP_ERR}. */
    LOC_EEC_OP_ERR(IBV_WC_LOC_EEC_OP_ERR(), "local EE context operation error"),
    /** {@code IBV_WC_LOC_PROT_ERR}: the local buffer is not covered by a valid MR with the needed access (lkey). */
    LOC_PROT_ERR(IBV_WC_LOC_PROT_ERR(), "local protection error"),
    /** {@code IBV_WC_WR_FLUSH_ERR}: the QP went to the error state while the WR was outstanding. */
    WR_FLUSH_ERR(IBV_WC_WR_FLUSH_ERR(), "Work Request Flushed Error"),
    /** {@code IBV_WC_MW_BIND_ERR}. */
    MW_BIND_ERR(IBV_WC_MW_BIND_ERR(), "memory management operation error"),
    /** {@code IBV_WC_BAD_RESP_ERR}. */
    BAD_RESP_ERR(IBV_WC_BAD_RESP_ERR(), "bad response error"),
    /** {@code IBV_WC_LOC_ACCESS_ERR}: protection error on a local data buffer during an RDMA READ response. */
    LOC_ACCESS_ERR(IBV_WC_LOC_ACCESS_ERR(), "local access error"),
    /** {@code IBV_WC_REM_INV_REQ_ERR}: the responder found the request invalid (e.g. length beyond its MR). */
    REM_INV_REQ_ERR(IBV_WC_REM_INV_REQ_ERR(), "remote invalid request error"),
    /** {@code IBV_WC_REM_ACCESS_ERR}: bad rkey, address outside the remote MR, or access not granted. */
    REM_ACCESS_ERR(IBV_WC_REM_ACCESS_ERR(), "remote access error"),
    /** {@code IBV_WC_REM_OP_ERR}: the responder could not complete the operation. */
    REM_OP_ERR(IBV_WC_REM_OP_ERR(), "remote operation error"),
    /** {@code IBV_WC_RETRY_EXC_ERR}: no ACK within {@code timeout * (retry_cnt + 1)}; the peer is gone. */
    RETRY_EXC_ERR(IBV_WC_RETRY_EXC_ERR(), "transport retry counter exceeded"),
    /** {@code IBV_WC_RNR_RETRY_EXC_ERR}: the peer had no receive WR posted, {@code rnr_retry} times. */
    RNR_RETRY_EXC_ERR(IBV_WC_RNR_RETRY_EXC_ERR(), "RNR retry counter exceeded"),
    /** {@code IBV_WC_LOC_RDD_VIOL_ERR}. */
    LOC_RDD_VIOL_ERR(IBV_WC_LOC_RDD_VIOL_ERR(), "local RDD violation error"),
    /** {@code IBV_WC_REM_INV_RD_REQ_ERR}. */
    REM_INV_RD_REQ_ERR(IBV_WC_REM_INV_RD_REQ_ERR(), "remote invalid RD request"),
    /** {@code IBV_WC_REM_ABORT_ERR}. */
    REM_ABORT_ERR(IBV_WC_REM_ABORT_ERR(), "aborted error"),
    /** {@code IBV_WC_INV_EECN_ERR}. */
    INV_EECN_ERR(IBV_WC_INV_EECN_ERR(), "invalid EE context number"),
    /** {@code IBV_WC_INV_EEC_STATE_ERR}. */
    INV_EEC_STATE_ERR(IBV_WC_INV_EEC_STATE_ERR(), "invalid EE context state"),
    /** {@code IBV_WC_FATAL_ERR}. */
    FATAL_ERR(IBV_WC_FATAL_ERR(), "fatal error"),
    /** {@code IBV_WC_RESP_TIMEOUT_ERR}. */
    RESP_TIMEOUT_ERR(IBV_WC_RESP_TIMEOUT_ERR(), "response timeout error"),
    /** {@code IBV_WC_GENERAL_ERR}: provider-specific, see {@link WorkCompletion#vendorErr()}. */
    GENERAL_ERR(IBV_WC_GENERAL_ERR(), "general error"),
    /** {@code IBV_WC_TM_ERR}. */
    TM_ERR(IBV_WC_TM_ERR(), "TM error"),
    /** {@code IBV_WC_TM_RNDV_INCOMPLETE}. */
    TM_RNDV_INCOMPLETE(IBV_WC_TM_RNDV_INCOMPLETE(), "TM software rendezvous");

    private static final WorkCompletionStatus[] BY_VALUE = new WorkCompletionStatus[32];

    static {
        for (WorkCompletionStatus s : values()) {
            BY_VALUE[s.value] = s;
        }
    }

    private final int value;
    private final String description;

    WorkCompletionStatus(int value, String description) {
        this.value = value;
        this.description = description;
    }

    /** The C value ({@code IBV_WC_*}). */
    public int value() {
        return value;
    }

    /** The text {@code ibv_wc_status_str(3)} returns for this status. */
    public String description() {
        return description;
    }

    /**
     * The constant for a C value; an unknown value (a newer provider) maps to {@link #GENERAL_ERR}. Allocation-free:
     * safe on the poll path.
     */
    public static WorkCompletionStatus of(int value) {
        if (value >= 0 && value < BY_VALUE.length) {
            WorkCompletionStatus s = BY_VALUE[value];
            if (s != null) {
                return s;
            }
        }
        return GENERAL_ERR;
    }
}
