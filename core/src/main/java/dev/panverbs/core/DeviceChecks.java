package dev.panverbs.core;

import static dev.panverbs.bindings.verbs.verbs_h.*;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.verbs.ibv_ah_attr;
import dev.panverbs.bindings.verbs.ibv_global_route;
import dev.panverbs.bindings.verbs.ibv_qp_attr;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Requested values checked against what the device reports, before a verb answers a bare {@code EINVAL} (or, for a
 * path MTU above the port's, silently accepts it): ports, GID indexes, path MTU, queue sizes. The refusal is the
 * {@link VerbsException} the verb would raise ({@code EINVAL}), with the attribute, the device's limit and the valid
 * values in the hint. Control path only: these query the device.
 */
final class DeviceChecks {
    private DeviceChecks() {}

    /** The {@code EINVAL} a verb would answer, refused before the call with {@code detail} as the hint. */
    static VerbsException invalid(String call, String detail) {
        int e = EINVAL();
        return new VerbsException(call, e, Errno.name(e), Errno.strerror(e), "refused before the call: " + detail);
    }

    /** {@code requested <= limit}, else {@code EINVAL} naming the attribute and the device limit. */
    static void atMost(String call, String attribute, long requested, String limitName, long limit, String accessor) {
        if (requested > limit) {
            throw invalid(call, attribute + "=" + requested + " exceeds the device's " + limitName + " of " + limit
                    + " (" + accessor + ")");
        }
    }

    /** {@code port} exists on the device, else {@code EINVAL} listing the valid port numbers. */
    static void port(Context ctx, String call, int port) {
        int count = ctx.attributes().physPortCnt();
        if (port < 1 || port > count) {
            throw invalid(call, "port " + port + " does not exist: " + ctx.device().name() + " has " + count
                    + (count == 1 ? " port, number 1" : " ports, numbered 1 to " + count)
                    + " (DeviceAttributes.physPortCnt())");
        }
    }

    /** GID {@code index} lies inside {@code port}'s GID table, else {@code EINVAL} listing the valid entries. */
    static void sgidIndex(Context ctx, String call, int port, int index) {
        int length = ctx.queryPort(port).gidTblLen();
        if (index < 0 || index >= length) {
            throw invalid(call, "GID index " + index + " is outside port " + port + "'s GID table of " + length
                    + " entries; " + validGids(ctx, port));
        }
        boolean empty;
        try {
            empty = ctx.queryGidEntry(port, index).isEmpty();
        } catch (VerbsException oldKernel) {
            empty = ctx.queryGid(port, index).isZero();
        }
        if (empty) { // the kernel would answer ENODATA
            throw invalid(call, "GID index " + index + " of port " + port + " is an empty slot; "
                    + validGids(ctx, port));
        }
    }

    /** The path MTU is at most the port's active MTU (rxe accepts more, then its packets never arrive). */
    static void pathMtu(Context ctx, String call, int port, Mtu mtu) {
        PortAttributes p = ctx.queryPort(port);
        if (mtu.value() > p.activeMtu().value()) {
            throw invalid(call, "path MTU " + mtu.bytes() + " exceeds port " + port + "'s active MTU of "
                    + p.activeMtu().bytes() + " (PortAttributes.activeMtu(); on RoCE derived from the netdev MTU); "
                    + "use the smaller of both sides' active MTUs (QueuePairEndpoint.pathMtu)");
        }
    }

    /**
     * The checks of an {@code ibv_modify_qp} that names a port, a GID or a path MTU: {@code qpPort} is the QP's
     * port if known (0 otherwise), used for the MTU when the attributes carry no address vector.
     */
    static void modifyQp(Context ctx, String call, QueuePairAttributes attrs, int qpPort) {
        int mask = attrs.mask();
        MemorySegment a = attrs.segment();
        int port = qpPort;
        if ((mask & IBV_QP_PORT()) != 0) {
            port = Byte.toUnsignedInt(ibv_qp_attr.port_num(a));
            port(ctx, call, port);
        }
        if ((mask & IBV_QP_AV()) != 0) {
            MemorySegment av = ibv_qp_attr.ah_attr(a);
            port = Byte.toUnsignedInt(ibv_ah_attr.port_num(av));
            port(ctx, call, port);
            if (ibv_ah_attr.is_global(av) != 0) {
                sgidIndex(ctx, call, port, Byte.toUnsignedInt(ibv_global_route.sgid_index(ibv_ah_attr.grh(av))));
            }
        }
        if ((mask & IBV_QP_PATH_MTU()) != 0 && port > 0) {
            pathMtu(ctx, call, port, Mtu.of(ibv_qp_attr.path_mtu(a)));
        }
    }

    /** The ports and GID indexes of an address vector ({@code ibv_create_ah}). */
    static void addressVector(Context ctx, String call, AddressVector av) {
        port(ctx, call, av.portNum());
        if (av.isGlobal()) {
            sgidIndex(ctx, call, av.portNum(), av.sgidIndex());
        }
    }

    /**
     * {@code valid GID indexes on port 1: 0 (IB fe80::...), 1 (ROCE_V2 10.77.0.1)}: for hints. Falls back to
     * {@code ibv_query_gid} on kernels without the GID table query.
     */
    static String validGids(Context ctx, int port) {
        try {
            return listGids(ctx, port);
        } catch (RuntimeException e) { // a hint must not hide the failure it explains
            return "list the valid GIDs with Context.queryGidTable() (" + e.getMessage() + ")";
        }
    }

    private static String listGids(Context ctx, int port) {
        List<String> valid = new ArrayList<>();
        try {
            for (GidEntry e : ctx.queryGidTable()) {
                if (e.portNum() == port) {
                    valid.add(e.index() + " (" + e.type() + " " + e.gid() + ")");
                }
            }
        } catch (VerbsException unsupported) {
            int length = Math.min(ctx.queryPort(port).gidTblLen(), 256);
            for (int i = 0; i < length; i++) {
                Gid g = ctx.queryGid(port, i);
                if (!g.isZero()) {
                    valid.add(i + " (" + g + ")");
                }
            }
        }
        return valid.isEmpty() ? "port " + port + " has no valid GID (is its netdev up and addressed?)"
                : "valid GID indexes on port " + port + ": " + String.join(", ", valid)
                        + " (Context.queryGidTable(); on RoCE pick the ROCE_V2 entry of your address with "
                        + "Context.roceV2GidIndex)";
    }
}
