package dev.panverbs.core;

import java.util.List;
import java.util.Optional;

/**
 * One entry of a port's GID table ({@code struct ibv_gid_entry}, {@code ibv_query_gid_ex(3)},
 * {@code ibv_query_gid_table(3)}). GIDs are valid only while the port is ACTIVE or ARMED (RDMAmojo), and on
 * RoCE they follow the IP addresses of the netdev, so entries appear and vanish at run time.
 *
 * @param gid         the GID
 * @param index       its index in the port's table: the {@code sgid_index} of an address vector
 * @param portNum     the port, 1-based
 * @param type        IB, RoCE v1 or RoCE v2
 * @param ndevIfindex the Linux interface index of the netdev a RoCE GID belongs to (0 on IB)
 */
public record GidEntry(Gid gid, int index, int portNum, GidType type, int ndevIfindex) {

    /**
     * The index of the RoCE v2 GID for {@code address} on {@code portNum} in {@code table}: the entry whose GID
     * is the address (IPv4 mapped as {@code ::ffff:a.b.c.d}) and whose type is ROCE_V2. This is the
     * {@code sgid_index} to use for RoCE v2 traffic from that address (perftest's {@code -x}).
     */
    public static Optional<GidEntry> findRoceV2(List<GidEntry> table, int portNum, java.net.InetAddress address) {
        Gid wanted = Gid.of(address);
        return table.stream()
                .filter(e -> e.portNum == portNum && e.type == GidType.ROCE_V2 && e.gid.equals(wanted))
                .findFirst();
    }
}
