package dev.panverbs.core.cm;

import dev.panverbs.bindings.rdmacma.rdma_conn_param;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * {@code struct rdma_conn_param}: what {@code rdma_connect}, {@code rdma_accept} send and what a
 * CONNECT_REQUEST or ESTABLISHED event carries.
 *
 * @param privateData        user bytes carried by the CM message (at most 56 for a connect, 196 for an accept
 *                           over IB/RoCE; UD: 180); never null
 * @param responderResources RDMA READ/atomic operations the local side accepts in flight ({@code responder_resources})
 * @param initiatorDepth     RDMA READ/atomic operations the local side issues in flight ({@code initiator_depth})
 * @param flowControl        whether the local side's hardware does end-to-end flow control ({@code flow_control})
 * @param retryCount         transport retries, 0-7 ({@code retry_count}); ignored by accept
 * @param rnrRetryCount      receiver-not-ready retries, 0-7 (7: infinite) ({@code rnr_retry_count})
 * @param srq                whether the QP receives through an SRQ ({@code srq}); used only without a QP
 * @param qpNum              the QP number; used only by an ID without a QP ({@code qp_num})
 */
public record ConnectionParameters(byte[] privateData, int responderResources, int initiatorDepth,
                                   boolean flowControl, int retryCount, int rnrRetryCount, boolean srq, int qpNum) {

    /** The most private data rdma_cm carries in a connect request over IB/RoCE (a REQ's 92 bytes less its header). */
    public static final int MAX_CONNECT_PRIVATE_DATA = 56;

    /** Copies {@code privateData} and checks the ranges. */
    public ConnectionParameters {
        privateData = privateData == null ? new byte[0] : privateData.clone();
        if (privateData.length > 255) {
            throw new IllegalArgumentException("private data is " + privateData.length
                    + " bytes; rdma_conn_param.private_data_len is a uint8_t (rdma_cm carries at most 196)");
        }
        checkByte("responderResources", responderResources);
        checkByte("initiatorDepth", initiatorDepth);
        if (retryCount < 0 || retryCount > 7 || rnrRetryCount < 0 || rnrRetryCount > 7) {
            throw new IllegalArgumentException("retryCount and rnrRetryCount are 3-bit fields (0-7): " + retryCount
                    + ", " + rnrRetryCount);
        }
    }

    /** What rdma-core's {@code rping} uses: one READ each way, 7 retries, infinite RNR retries, no private data. */
    public static ConnectionParameters defaults() {
        return new ConnectionParameters(new byte[0], 1, 1, false, 7, 7, false, 0);
    }

    /** These parameters with {@code data} as private data. */
    public ConnectionParameters withPrivateData(byte[] data) {
        return new ConnectionParameters(data, responderResources, initiatorDepth, flowControl, retryCount,
                rnrRetryCount, srq, qpNum);
    }

    /** These parameters with other READ/atomic depths. */
    public ConnectionParameters withDepths(int responderResources, int initiatorDepth) {
        return new ConnectionParameters(privateData, responderResources, initiatorDepth, flowControl, retryCount,
                rnrRetryCount, srq, qpNum);
    }

    /** These parameters for an ID without a QP of its own: {@code qpNum} is the application's QP. */
    public ConnectionParameters withQpNum(int qpNum) {
        if (qpNum < 0 || qpNum > 0xFFFFFF) {
            throw new IllegalArgumentException("a QP number is 24 bits: " + qpNum);
        }
        return new ConnectionParameters(privateData, responderResources, initiatorDepth, flowControl, retryCount,
                rnrRetryCount, srq, qpNum);
    }

    /** The private data (a copy). */
    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    /** Allocates and fills a {@code struct rdma_conn_param} (and its private data) in {@code arena}. */
    MemorySegment toNative(Arena arena) {
        MemorySegment p = arena.allocate(rdma_conn_param.layout());
        if (privateData.length > 0) {
            MemorySegment data = arena.allocate(privateData.length);
            data.copyFrom(MemorySegment.ofArray(privateData));
            rdma_conn_param.private_data(p, data);
        }
        rdma_conn_param.private_data_len(p, (byte) privateData.length);
        rdma_conn_param.responder_resources(p, (byte) responderResources);
        rdma_conn_param.initiator_depth(p, (byte) initiatorDepth);
        rdma_conn_param.flow_control(p, (byte) (flowControl ? 1 : 0));
        rdma_conn_param.retry_count(p, (byte) retryCount);
        rdma_conn_param.rnr_retry_count(p, (byte) rnrRetryCount);
        rdma_conn_param.srq(p, (byte) (srq ? 1 : 0));
        rdma_conn_param.qp_num(p, qpNum);
        return p;
    }

    /** Reads an event's {@code struct rdma_conn_param}. */
    static ConnectionParameters fromNative(MemorySegment p) {
        return new ConnectionParameters(copy(rdma_conn_param.private_data(p), rdma_conn_param.private_data_len(p)),
                Byte.toUnsignedInt(rdma_conn_param.responder_resources(p)),
                Byte.toUnsignedInt(rdma_conn_param.initiator_depth(p)), rdma_conn_param.flow_control(p) != 0,
                rdma_conn_param.retry_count(p) & 7, rdma_conn_param.rnr_retry_count(p) & 7, rdma_conn_param.srq(p) != 0,
                rdma_conn_param.qp_num(p));
    }

    static byte[] copy(MemorySegment data, byte length) {
        int n = Byte.toUnsignedInt(length);
        if (n == 0 || data.address() == 0) {
            return new byte[0];
        }
        return data.reinterpret(n).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    }

    private static void checkByte(String name, int v) {
        if (v < 0 || v > 255) {
            throw new IllegalArgumentException(name + " is a uint8_t: " + v);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConnectionParameters c && Arrays.equals(privateData, c.privateData)
                && responderResources == c.responderResources && initiatorDepth == c.initiatorDepth
                && flowControl == c.flowControl && retryCount == c.retryCount && rnrRetryCount == c.rnrRetryCount
                && srq == c.srq && qpNum == c.qpNum;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(privateData) * 31 + qpNum;
    }

    @Override
    public String toString() {
        return "ConnectionParameters[privateData=" + privateData.length + " bytes, responderResources="
                + responderResources + ", initiatorDepth=" + initiatorDepth + ", retryCount=" + retryCount
                + ", rnrRetryCount=" + rnrRetryCount + ", qpNum=" + qpNum + "]";
    }
}
