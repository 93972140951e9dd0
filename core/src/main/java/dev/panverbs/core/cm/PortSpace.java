package dev.panverbs.core.cm;

import dev.panverbs.bindings.rdmacma.rdma_cma_h;
import dev.panverbs.core.QueuePairType;

/**
 * {@code enum rdma_port_space}: the namespace of an ID's port, which also fixes its QP type.
 */
public enum PortSpace {
    /** {@code RDMA_PS_TCP}: reliable connected (RC) QPs, connection semantics like TCP. */
    TCP(rdma_cma_h.RDMA_PS_TCP(), QueuePairType.RC),
    /** {@code RDMA_PS_UDP}: unreliable datagram (UD) QPs; "connect" resolves the peer's QP number and qkey (SIDR). */
    UDP(rdma_cma_h.RDMA_PS_UDP(), QueuePairType.UD);

    private final int value;
    private final QueuePairType qpType;

    PortSpace(int value, QueuePairType qpType) {
        this.value = value;
        this.qpType = qpType;
    }

    /** The C value. */
    public int value() {
        return value;
    }

    /** The QP type {@code rdma_create_qp} creates for an ID of this port space. */
    public QueuePairType qpType() {
        return qpType;
    }
}
