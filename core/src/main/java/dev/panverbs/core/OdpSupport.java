package dev.panverbs.core;

/**
 * The post-time side of on-demand paging: which {@link OdpCapabilities.Operation} a work request performs on its
 * local buffers, and which operations a transport may run on ODP memory ({@code struct ibv_odp_caps}'s
 * {@code per_transport_caps}: {@code rc_odp_caps}, {@code uc_odp_caps}, {@code ud_odp_caps}, and
 * {@code xrc_odp_caps} of {@code ibv_device_attr_ex}). Registration ({@link MemoryRegion}) checks only that some
 * transport has ODP; the post paths check each SGE over an ODP key against the WR's operation and the QP's
 * transport, so a WR the device would fail (or fault on) is refused by name before the provider sees it. All cold:
 * reached only for ODP keys.
 */
final class OdpSupport {
    private OdpSupport() {
    }

    /** The operation bits of {@code type}'s transport; {@code null}: a shared receive queue (any transport). */
    static int mask(OdpCapabilities caps, QueuePairType type) {
        if (!caps.supported()) {
            return 0;
        }
        if (type == null) {
            return bits(caps.rc()) | bits(caps.uc()) | bits(caps.ud()) | bits(caps.xrc());
        }
        return switch (type) {
            case RC -> bits(caps.rc());
            case UC -> bits(caps.uc());
            case UD -> bits(caps.ud());
            case XRC_SEND, XRC_RECV -> bits(caps.xrc());
            case RAW_PACKET, DC_INITIATOR, DC_TARGET -> 0; // DC's are mlx5dv_context.dc_odp_caps: not read here
        };
    }

    private static int bits(java.util.Set<OdpCapabilities.Operation> ops) {
        int m = 0;
        for (OdpCapabilities.Operation o : ops) {
            m |= o.value();
        }
        return m;
    }

    /** The operation of a send WR with {@code ibv_wr_opcode} {@code opcode} on its local SGEs. */
    static OdpCapabilities.Operation operation(int opcode) {
        for (WorkRequestOpcode op : WorkRequestOpcode.values()) {
            if (op.value() == opcode) {
                return operation(op);
            }
        }
        return OdpCapabilities.Operation.SEND;
    }

    /** The operation of a {@link PostBatch} WR whose {@link SendOperation} has ordinal {@code ordinal}. */
    static OdpCapabilities.Operation operationOfBatch(int ordinal) {
        return operation(WorkRequestOpcode.valueOf(SendOperation.values()[ordinal].name()));
    }

    static OdpCapabilities.Operation operation(WorkRequestOpcode op) {
        return switch (op) {
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> OdpCapabilities.Operation.WRITE;
            case RDMA_READ -> OdpCapabilities.Operation.READ;
            case ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD, ATOMIC_WRITE -> OdpCapabilities.Operation.ATOMIC;
            default -> OdpCapabilities.Operation.SEND;
        };
    }

    /** The refusal: names the queue, the region, the operation, the transport and the capability bit. */
    static UnsupportedVerbException refused(String queue, QueuePairType type, OdpCapabilities.Operation receive,
                                            LocalKey key, OdpCapabilities.Operation op, String device) {
        boolean srq = receive == OdpCapabilities.Operation.SRQ_RECV;
        String field = srq ? "any of rc/uc/ud/xrc_odp_caps" : switch (type) {
            case RC -> "rc_odp_caps";
            case UC -> "uc_odp_caps";
            case UD -> "ud_odp_caps";
            case XRC_SEND, XRC_RECV -> "xrc_odp_caps";
            case RAW_PACKET -> "(no ODP for raw packet QPs)";
            case DC_INITIATOR, DC_TARGET -> "(DC ODP, mlx5dv_context.dc_odp_caps, is not supported by panverbs)";
        };
        String verb = op == OdpCapabilities.Operation.RECV ? "ibv_post_recv"
                : op == OdpCapabilities.Operation.SRQ_RECV ? "ibv_post_srq_recv" : "ibv_post_send";
        return new UnsupportedVerbException(verb + "(" + queue + ", SGE over " + key + ")",
                "on-demand paging for " + op + (srq ? " on shared receive queues" : " on " + type + " queue pairs")
                        + ": " + device + " does not report IBV_ODP_SUPPORT_" + op + " in " + field
                        + "; register this buffer without Access.ON_DEMAND",
                "IBV_ODP_SUPPORT_" + op + " (" + field + ")");
    }
}
