package dev.panverbs.core;

import dev.panverbs.bindings.verbs.ibv_qp_cap;

import java.lang.foreign.MemorySegment;

/**
 * The sizes of a queue pair's queues ({@code struct ibv_qp_cap}, see {@code ibv_create_qp(3)}). After creation the
 * provider may round each value up; {@link QueuePair#capabilities()} reports the values actually granted.
 *
 * @param maxSendWr     outstanding send WRs ({@code max_send_wr})
 * @param maxRecvWr     outstanding receive WRs ({@code max_recv_wr})
 * @param maxSendSge    scatter/gather entries per send WR ({@code max_send_sge})
 * @param maxRecvSge    scatter/gather entries per receive WR ({@code max_recv_sge})
 * @param maxInlineData bytes a send WR may carry inline ({@code max_inline_data})
 */
public record QueuePairCapabilities(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge,
                                    int maxInlineData) {

    /** Validates that no value is negative. */
    public QueuePairCapabilities {
        if (maxSendWr < 0 || maxRecvWr < 0 || maxSendSge < 0 || maxRecvSge < 0 || maxInlineData < 0) {
            throw new IllegalArgumentException("queue pair capabilities must not be negative: " + this);
        }
    }

    void writeTo(MemorySegment cap) {
        ibv_qp_cap.max_send_wr(cap, maxSendWr);
        ibv_qp_cap.max_recv_wr(cap, maxRecvWr);
        ibv_qp_cap.max_send_sge(cap, maxSendSge);
        ibv_qp_cap.max_recv_sge(cap, maxRecvSge);
        ibv_qp_cap.max_inline_data(cap, maxInlineData);
    }

    static QueuePairCapabilities readFrom(MemorySegment cap) {
        return new QueuePairCapabilities(ibv_qp_cap.max_send_wr(cap), ibv_qp_cap.max_recv_wr(cap),
                ibv_qp_cap.max_send_sge(cap), ibv_qp_cap.max_recv_sge(cap), ibv_qp_cap.max_inline_data(cap));
    }
}
