package dev.panverbs.core.cm;

import dev.panverbs.bindings.rdmacma.ibv_ah_attr;
import dev.panverbs.bindings.rdmacma.ibv_global_route;
import dev.panverbs.bindings.rdmacma.rdma_ud_param;
import dev.panverbs.core.AddressVector;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A copy of one {@code struct rdma_cm_event}, taken before the event was acknowledged ({@code rdma_ack_cm_event}):
 * holding it pins nothing native, and nothing needs to be released.
 *
 * @param type       {@code event}
 * @param status     {@code status}: 0, a negative errno (ADDR_ERROR, UNREACHABLE: {@code -ETIMEDOUT}...), or for
 *                   REJECTED the IB CM reject reason (8: no listener on that port, 28: the consumer rejected)
 * @param id         {@code id}: the ID the event is for; for CONNECT_REQUEST the new passive-side ID, owned by
 *                   the channel until it is closed (accept or reject it)
 * @param listenId   {@code listen_id}: the listening ID of a CONNECT_REQUEST, else {@code null}
 * @param connection {@code param.conn} for connected (TCP port space) events that carry it, else {@code null}
 * @param datagram   {@code param.ud} for UD events (UDP port space, multicast), else {@code null}
 */
public record CmEvent(CmEventType type, int status, CmId id, CmId listenId, ConnectionParameters connection,
                      Datagram datagram) {

    /**
     * {@code struct rdma_ud_param}: how to reach the peer of a UD ID or a multicast group.
     *
     * @param privateData the private data of the SIDR reply or request
     * @param address     {@code ah_attr}, for {@link dev.panverbs.core.ProtectionDomain#createAh}
     * @param qpNum       the remote QP number (0xFFFFFF for a multicast group)
     * @param qkey        the remote qkey
     */
    public record Datagram(byte[] privateData, AddressVector address, int qpNum, int qkey) {
        public Datagram {
            privateData = privateData.clone();
        }

        @Override
        public byte[] privateData() {
            return privateData.clone();
        }

        static Datagram fromNative(MemorySegment ud) {
            MemorySegment ah = ud.asSlice(rdma_ud_param.ah_attr$offset(), ibv_ah_attr.sizeof());
            AddressVector.Builder b = AddressVector.builder(Byte.toUnsignedInt(ibv_ah_attr.port_num(ah)))
                    .dlid(Short.toUnsignedInt(ibv_ah_attr.dlid(ah)))
                    .sl(Byte.toUnsignedInt(ibv_ah_attr.sl(ah)))
                    .srcPathBits(Byte.toUnsignedInt(ibv_ah_attr.src_path_bits(ah)))
                    .staticRate(Byte.toUnsignedInt(ibv_ah_attr.static_rate(ah)));
            if (ibv_ah_attr.is_global(ah) != 0) {
                MemorySegment grh = ibv_ah_attr.grh(ah);
                byte[] dgid = grh.asSlice(ibv_global_route.dgid$offset(), 16).toArray(ValueLayout.JAVA_BYTE);
                b.grh(dgid, Byte.toUnsignedInt(ibv_global_route.sgid_index(grh)),
                                Byte.toUnsignedInt(ibv_global_route.hop_limit(grh)))
                        .trafficClass(Byte.toUnsignedInt(ibv_global_route.traffic_class(grh)))
                        .flowLabel(ibv_global_route.flow_label(grh));
            }
            return new Datagram(ConnectionParameters.copy(rdma_ud_param.private_data(ud),
                    rdma_ud_param.private_data_len(ud)), b.build(), rdma_ud_param.qp_num(ud), rdma_ud_param.qkey(ud));
        }
    }

    /** The private data the event carries (empty when none): {@code param.conn} or {@code param.ud}'s. */
    public byte[] privateData() {
        return connection != null ? connection.privateData() : datagram != null ? datagram.privateData() : new byte[0];
    }

    @Override
    public String toString() {
        return "CmEvent[" + type + (status != 0 ? " status=" + status : "") + " on " + id
                + (listenId != null ? " (listener " + listenId + ")" : "") + "]";
    }
}
