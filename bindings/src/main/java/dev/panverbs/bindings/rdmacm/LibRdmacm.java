package dev.panverbs.bindings.rdmacm;

import dev.panverbs.bindings.Downcalls;
import dev.panverbs.bindings.Errno;
import java.lang.foreign.MemorySegment;

/**
 * Exported librdmacm functions (rdma-core 44, {@code <rdma/rdma_cma.h>}): event channels, connection
 * identifiers, address and route resolution, connection establishment and teardown, multicast, and the QP that
 * rdma_cm creates for an ID. Each method has the C name and forwards its arguments unchanged;
 * {@code MemorySegment} stands for every C pointer.
 *
 * <p>Error contract: librdmacm reports every failure as -1 (or NULL) with the reason in {@code errno}, so every
 * method that can fail takes an {@link Errno} capture segment first; read {@link Errno#get} only after a failure.
 * Nothing here throws on an rdma_cm failure; a missing librdmacm or symbol throws
 * {@link dev.panverbs.bindings.NativeLibraryException} naming the package.
 *
 * <p>Struct layouts ({@code rdma_cm_id}, {@code rdma_cm_event}, {@code rdma_conn_param}, {@code rdma_ud_param},
 * {@code sockaddr_in}...) are jextract's, in {@code dev.panverbs.bindings.rdmacma}.
 */
public final class LibRdmacm {

    private LibRdmacm() {}

    /** {@code struct rdma_event_channel *rdma_create_event_channel(void)}: NULL + errno (ENODEV: no RDMA device or the rdma_ucm module is not loaded). The first argument is an {@link Errno} capture segment. */
    public static MemorySegment rdma_create_event_channel(MemorySegment errno) {
        try {
            return (MemorySegment) RdmacmHandles.linked(RdmacmHandles.rdma_create_event_channel, "rdma_create_event_channel").invokeExact(errno);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code void rdma_destroy_event_channel(struct rdma_event_channel *channel)}: every ID on it must be destroyed first. */
    public static void rdma_destroy_event_channel(MemorySegment channel) {
        try {
            RdmacmHandles.linked(RdmacmHandles.rdma_destroy_event_channel, "rdma_destroy_event_channel").invokeExact(channel);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context, enum rdma_port_space ps)}: 0, or -1 + errno. The first argument is an {@link Errno} capture segment. */
    public static int rdma_create_id(MemorySegment errno, MemorySegment channel, MemorySegment id, MemorySegment context, int ps) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_create_id, "rdma_create_id").invokeExact(errno, channel, id, context, ps);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_destroy_id(struct rdma_cm_id *id)}: 0, or -1 + errno. Blocks until every event reported for the ID has been acknowledged ({@link #rdma_ack_cm_event}). The first argument is an {@link Errno} capture segment. */
    public static int rdma_destroy_id(MemorySegment errno, MemorySegment id) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_destroy_id, "rdma_destroy_id").invokeExact(errno, id);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)}: 0, or -1 + errno. The first argument is an {@link Errno} capture segment. */
    public static int rdma_bind_addr(MemorySegment errno, MemorySegment id, MemorySegment addr) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_bind_addr, "rdma_bind_addr").invokeExact(errno, id, addr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr, int timeout_ms)}: 0, or -1 + errno; the result arrives as ADDR_RESOLVED or ADDR_ERROR. The first argument is an {@link Errno} capture segment. */
    public static int rdma_resolve_addr(MemorySegment errno, MemorySegment id, MemorySegment srcAddr, MemorySegment dstAddr, int timeoutMs) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_resolve_addr, "rdma_resolve_addr").invokeExact(errno, id, srcAddr, dstAddr, timeoutMs);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)}: 0, or -1 + errno; the result arrives as ROUTE_RESOLVED or ROUTE_ERROR. The first argument is an {@link Errno} capture segment. */
    public static int rdma_resolve_route(MemorySegment errno, MemorySegment id, int timeoutMs) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_resolve_route, "rdma_resolve_route").invokeExact(errno, id, timeoutMs);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)}: 0, or -1 + errno; sets {@code id->qp} and moves the QP to INIT (RC) or RTS (UD). The first argument is an {@link Errno} capture segment. */
    public static int rdma_create_qp(MemorySegment errno, MemorySegment id, MemorySegment pd, MemorySegment qpInitAttr) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_create_qp, "rdma_create_qp").invokeExact(errno, id, pd, qpInitAttr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code void rdma_destroy_qp(struct rdma_cm_id *id)}: {@code ibv_destroy_qp(id->qp)} (its result is lost), then {@code id->qp = NULL}. */
    public static void rdma_destroy_qp(MemorySegment id) {
        try {
            RdmacmHandles.linked(RdmacmHandles.rdma_destroy_qp, "rdma_destroy_qp").invokeExact(id);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)}: 0, or -1 + errno; the result arrives as ESTABLISHED, REJECTED, UNREACHABLE or CONNECT_ERROR. The first argument is an {@link Errno} capture segment. */
    public static int rdma_connect(MemorySegment errno, MemorySegment id, MemorySegment connParam) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_connect, "rdma_connect").invokeExact(errno, id, connParam);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_establish(struct rdma_cm_id *id)}: 0, or -1 + errno (for an ID that connected without a QP). The first argument is an {@link Errno} capture segment. */
    public static int rdma_establish(MemorySegment errno, MemorySegment id) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_establish, "rdma_establish").invokeExact(errno, id);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_listen(struct rdma_cm_id *id, int backlog)}: 0, or -1 + errno. The first argument is an {@link Errno} capture segment. */
    public static int rdma_listen(MemorySegment errno, MemorySegment id, int backlog) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_listen, "rdma_listen").invokeExact(errno, id, backlog);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)}: 0, or -1 + errno. The first argument is an {@link Errno} capture segment. */
    public static int rdma_accept(MemorySegment errno, MemorySegment id, MemorySegment connParam) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_accept, "rdma_accept").invokeExact(errno, id, connParam);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)}: 0, or -1 + errno. The first argument is an {@link Errno} capture segment. */
    public static int rdma_reject(MemorySegment errno, MemorySegment id, MemorySegment privateData, byte privateDataLen) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_reject, "rdma_reject").invokeExact(errno, id, privateData, privateDataLen);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)}: 0, or -1 + errno. The first argument is an {@link Errno} capture segment. */
    public static int rdma_notify(MemorySegment errno, MemorySegment id, int event) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_notify, "rdma_notify").invokeExact(errno, id, event);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_disconnect(struct rdma_cm_id *id)}: 0, or -1 + errno; moves the ID's QP to ERR first. The first argument is an {@link Errno} capture segment. */
    public static int rdma_disconnect(MemorySegment errno, MemorySegment id) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_disconnect, "rdma_disconnect").invokeExact(errno, id);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)}: 0, or -1 + errno; the result arrives as MULTICAST_JOIN or MULTICAST_ERROR. The first argument is an {@link Errno} capture segment. */
    public static int rdma_join_multicast(MemorySegment errno, MemorySegment id, MemorySegment addr, MemorySegment context) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_join_multicast, "rdma_join_multicast").invokeExact(errno, id, addr, context);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)}: 0, or -1 + errno. The first argument is an {@link Errno} capture segment. */
    public static int rdma_leave_multicast(MemorySegment errno, MemorySegment id, MemorySegment addr) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_leave_multicast, "rdma_leave_multicast").invokeExact(errno, id, addr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)}: 0, or -1 + errno (EAGAIN on a non-blocking channel with nothing queued). Blocks on a blocking channel: call it after {@code poll(2)} said the channel's fd is readable. The first argument is an {@link Errno} capture segment. */
    public static int rdma_get_cm_event(MemorySegment errno, MemorySegment channel, MemorySegment event) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_get_cm_event, "rdma_get_cm_event").invokeExact(errno, channel, event);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_ack_cm_event(struct rdma_cm_event *event)}: 0, or -1 + errno; frees the event. The first argument is an {@link Errno} capture segment. */
    public static int rdma_ack_cm_event(MemorySegment errno, MemorySegment event) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_ack_cm_event, "rdma_ack_cm_event").invokeExact(errno, event);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code __be16 rdma_get_src_port(struct rdma_cm_id *id)}: network byte order. */
    public static short rdma_get_src_port(MemorySegment id) {
        try {
            return (short) RdmacmHandles.linked(RdmacmHandles.rdma_get_src_port, "rdma_get_src_port").invokeExact(id);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code __be16 rdma_get_dst_port(struct rdma_cm_id *id)}: network byte order. */
    public static short rdma_get_dst_port(MemorySegment id) {
        try {
            return (short) RdmacmHandles.linked(RdmacmHandles.rdma_get_dst_port, "rdma_get_dst_port").invokeExact(id);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code const char *rdma_event_str(enum rdma_cm_event_type event)}: a static string. */
    public static MemorySegment rdma_event_str(int event) {
        try {
            return (MemorySegment) RdmacmHandles.linked(RdmacmHandles.rdma_event_str, "rdma_event_str").invokeExact(event);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)}: 0, or -1 + errno. The first argument is an {@link Errno} capture segment. */
    public static int rdma_set_option(MemorySegment errno, MemorySegment id, int level, int optname, MemorySegment optval, long optlen) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_set_option, "rdma_set_option").invokeExact(errno, id, level, optname, optval, optlen);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)}: 0, or -1 + errno. The first argument is an {@link Errno} capture segment. */
    public static int rdma_migrate_id(MemorySegment errno, MemorySegment id, MemorySegment channel) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_migrate_id, "rdma_migrate_id").invokeExact(errno, id, channel);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)}: 0, or -1 + errno. The first argument is an {@link Errno} capture segment. */
    public static int rdma_init_qp_attr(MemorySegment errno, MemorySegment id, MemorySegment qpAttr, MemorySegment qpAttrMask) {
        try {
            return (int) RdmacmHandles.linked(RdmacmHandles.rdma_init_qp_attr, "rdma_init_qp_attr").invokeExact(errno, id, qpAttr, qpAttrMask);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code struct ibv_context **rdma_get_devices(int *num_devices)}: NULL + errno; the contexts belong to librdmacm. Free the array with {@link #rdma_free_devices}. The first argument is an {@link Errno} capture segment. */
    public static MemorySegment rdma_get_devices(MemorySegment errno, MemorySegment numDevices) {
        try {
            return (MemorySegment) RdmacmHandles.linked(RdmacmHandles.rdma_get_devices, "rdma_get_devices").invokeExact(errno, numDevices);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code void rdma_free_devices(struct ibv_context **list)}. */
    public static void rdma_free_devices(MemorySegment list) {
        try {
            RdmacmHandles.linked(RdmacmHandles.rdma_free_devices, "rdma_free_devices").invokeExact(list);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }
}
