package dev.panverbs.bindings.ibverbs;

import dev.panverbs.bindings.Downcalls;
import dev.panverbs.bindings.Errno;
import java.lang.foreign.MemorySegment;

/**
 * Exported libibverbs functions (rdma-core 44, {@code <infiniband/verbs.h>}) for completion channels,
 * completion queues, queue pairs, shared receive queues and address handles, with the conventions of
 * {@link LibIbverbs}. The data path of these objects (post, poll, notify) is inline in C and lives in
 * {@link VerbsInline}.
 */
public final class LibIbverbsQueues {

    private LibIbverbsQueues() {}

    // ---- completion channels and completion queues ----

    /**
     * {@code struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)}: NULL + errno. The
     * first argument is an {@link Errno} capture segment.
     */
    public static MemorySegment ibv_create_comp_channel(MemorySegment errno, MemorySegment context) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_create_comp_channel, "ibv_create_comp_channel")
                    .invokeExact(errno, context);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)}: 0 or an errno value (EBUSY: CQs
     * still use it).
     */
    public static int ibv_destroy_comp_channel(MemorySegment channel) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_destroy_comp_channel, "ibv_destroy_comp_channel")
                    .invokeExact(channel);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context, struct
     * ibv_comp_channel *channel, int comp_vector)}: NULL + errno. The first argument is an {@link Errno} capture
     * segment.
     */
    public static MemorySegment ibv_create_cq(
            MemorySegment errno, MemorySegment context, int cqe, MemorySegment cqContext, MemorySegment channel,
            int compVector) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_create_cq, "ibv_create_cq")
                    .invokeExact(errno, context, cqe, cqContext, channel, compVector);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int ibv_resize_cq(struct ibv_cq *cq, int cqe)}: 0 or an errno value. */
    public static int ibv_resize_cq(MemorySegment cq, int cqe) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_resize_cq, "ibv_resize_cq").invokeExact(cq, cqe);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int ibv_destroy_cq(struct ibv_cq *cq)}: 0 or an errno value. */
    public static int ibv_destroy_cq(MemorySegment cq) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_destroy_cq, "ibv_destroy_cq").invokeExact(cq);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)}: 0, or
     * -1 + errno. Blocks until a completion event arrives (unless the channel fd is non-blocking: EAGAIN), so this
     * handle is not critical. The first argument is an {@link Errno} capture segment.
     */
    public static int ibv_get_cq_event(
            MemorySegment errno, MemorySegment channel, MemorySegment cq, MemorySegment cqContext) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_get_cq_event, "ibv_get_cq_event")
                    .invokeExact(errno, channel, cq, cqContext);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)}. */
    public static void ibv_ack_cq_events(MemorySegment cq, int nevents) {
        try {
            IbverbsHandles.linked(IbverbsHandles.ibv_ack_cq_events, "ibv_ack_cq_events").invokeExact(cq, nevents);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    // ---- queue pairs ----

    /**
     * {@code struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)}: NULL +
     * errno; writes the actual capabilities back into {@code qp_init_attr->cap}. The first argument is an {@link
     * Errno} capture segment.
     */
    public static MemorySegment ibv_create_qp(MemorySegment errno, MemorySegment pd, MemorySegment qpInitAttr) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_create_qp, "ibv_create_qp")
                    .invokeExact(errno, pd, qpInitAttr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask, struct ibv_qp_init_attr
     * *init_attr)}: 0 or an errno value.
     */
    public static int ibv_query_qp(MemorySegment qp, MemorySegment attr, int attrMask, MemorySegment initAttr) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_query_qp, "ibv_query_qp")
                    .invokeExact(qp, attr, attrMask, initAttr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)}: 0 or an errno value
     * (EINVAL: bad attribute or mask for the transition).
     */
    public static int ibv_modify_qp(MemorySegment qp, MemorySegment attr, int attrMask) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_modify_qp, "ibv_modify_qp")
                    .invokeExact(qp, attr, attrMask);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int ibv_destroy_qp(struct ibv_qp *qp)}: 0 or an errno value. */
    public static int ibv_destroy_qp(MemorySegment qp) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_destroy_qp, "ibv_destroy_qp").invokeExact(qp);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)}: NULL unless the QP was created with {@code
     * IBV_QP_INIT_ATTR_SEND_OPS_FLAGS}; the result has the same address as {@code qp}.
     */
    public static MemorySegment ibv_qp_to_qp_ex(MemorySegment qp) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_qp_to_qp_ex, "ibv_qp_to_qp_ex").invokeExact(qp);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)}: 0, or the
     * {@code enum ibv_query_qp_data_in_order_caps} bits.
     */
    public static int ibv_query_qp_data_in_order(MemorySegment qp, int op, int flags) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_query_qp_data_in_order, "ibv_query_qp_data_in_order")
                    .invokeExact(qp, op, flags);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)}: 0 or an errno value. */
    public static int ibv_query_ece(MemorySegment qp, MemorySegment ece) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_query_ece, "ibv_query_ece").invokeExact(qp, ece);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)}: 0 or an errno value. */
    public static int ibv_set_ece(MemorySegment qp, MemorySegment ece) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_set_ece, "ibv_set_ece").invokeExact(qp, ece);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)}: 0 or an errno
     * value.
     */
    public static int ibv_attach_mcast(MemorySegment qp, MemorySegment gid, short lid) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_attach_mcast, "ibv_attach_mcast")
                    .invokeExact(qp, gid, lid);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)}: 0 or an errno
     * value.
     */
    public static int ibv_detach_mcast(MemorySegment qp, MemorySegment gid, short lid) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_detach_mcast, "ibv_detach_mcast")
                    .invokeExact(qp, gid, lid);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    // ---- shared receive queues ----

    /**
     * {@code struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr)}: NULL +
     * errno. The first argument is an {@link Errno} capture segment.
     */
    public static MemorySegment ibv_create_srq(MemorySegment errno, MemorySegment pd, MemorySegment srqInitAttr) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_create_srq, "ibv_create_srq")
                    .invokeExact(errno, pd, srqInitAttr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask)}: 0 or an
     * errno value.
     */
    public static int ibv_modify_srq(MemorySegment srq, MemorySegment srqAttr, int srqAttrMask) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_modify_srq, "ibv_modify_srq")
                    .invokeExact(srq, srqAttr, srqAttrMask);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr)}: 0 or an errno value. */
    public static int ibv_query_srq(MemorySegment srq, MemorySegment srqAttr) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_query_srq, "ibv_query_srq").invokeExact(srq, srqAttr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int ibv_destroy_srq(struct ibv_srq *srq)}: 0 or an errno value. */
    public static int ibv_destroy_srq(MemorySegment srq) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_destroy_srq, "ibv_destroy_srq").invokeExact(srq);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    // ---- address handles ----

    /**
     * {@code struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)}: NULL + errno. The first
     * argument is an {@link Errno} capture segment.
     */
    public static MemorySegment ibv_create_ah(MemorySegment errno, MemorySegment pd, MemorySegment attr) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_create_ah, "ibv_create_ah")
                    .invokeExact(errno, pd, attr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int ibv_destroy_ah(struct ibv_ah *ah)}: 0 or an errno value. */
    public static int ibv_destroy_ah(MemorySegment ah) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_destroy_ah, "ibv_destroy_ah").invokeExact(ah);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc, struct
     * ibv_grh *grh, struct ibv_ah_attr *ah_attr)}: 0, or non-zero (-1 + errno, or an errno value from the GID
     * lookup). The first argument is an {@link Errno} capture segment.
     */
    public static int ibv_init_ah_from_wc(
            MemorySegment errno, MemorySegment context, byte portNum, MemorySegment wc, MemorySegment grh,
            MemorySegment ahAttr) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_init_ah_from_wc, "ibv_init_ah_from_wc")
                    .invokeExact(errno, context, portNum, wc, grh, ahAttr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
     * uint8_t port_num)}: NULL + errno. The first argument is an {@link Errno} capture segment.
     */
    public static MemorySegment ibv_create_ah_from_wc(
            MemorySegment errno, MemorySegment pd, MemorySegment wc, MemorySegment grh, byte portNum) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_create_ah_from_wc, "ibv_create_ah_from_wc")
                    .invokeExact(errno, pd, wc, grh, portNum);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr, uint8_t
     * eth_mac[6], uint16_t *vid)}: 0 or an errno value.
     */
    public static int ibv_resolve_eth_l2_from_gid(
            MemorySegment context, MemorySegment attr, MemorySegment ethMac, MemorySegment vid) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_resolve_eth_l2_from_gid, "ibv_resolve_eth_l2_from_gid")
                    .invokeExact(context, attr, ethMac, vid);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }
}
