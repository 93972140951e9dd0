package dev.panverbs.core;

import dev.panverbs.bindings.verbs.ibv_device_attr;
import java.lang.foreign.MemorySegment;

/**
 * The resource limits of a device ({@code struct ibv_device_attr}, {@code ibv_query_device(3)}): the largest
 * counts and sizes it supports. Requests above them fail with EINVAL or ENOMEM; check them up front.
 *
 * @param maxQp                 queue pairs
 * @param maxQpWr               outstanding work requests per queue
 * @param maxSge                scatter/gather entries per send or receive request
 * @param maxSgeRd              scatter/gather entries per RDMA read request
 * @param maxCq                 completion queues
 * @param maxCqe                entries per completion queue
 * @param maxMr                 memory regions
 * @param maxPd                 protection domains
 * @param maxQpRdAtom           outstanding RDMA reads and atomics a QP may be the target of
 * @param maxEeRdAtom           the same per EE context
 * @param maxResRdAtom          the device-wide total of incoming RDMA read/atomic resources
 * @param maxQpInitRdAtom       outstanding RDMA reads and atomics a QP may initiate
 * @param maxEeInitRdAtom       the same per EE context
 * @param maxEe                 EE contexts
 * @param maxRdd                reliable datagram domains
 * @param maxMw                 memory windows (0: none)
 * @param maxRawIpv6Qp          raw IPv6 datagram QPs
 * @param maxRawEthyQp          raw Ethertype datagram QPs
 * @param maxMcastGrp           multicast groups
 * @param maxMcastQpAttach      QPs per multicast group
 * @param maxTotalMcastQpAttach QP attachments to multicast groups in total
 * @param maxAh                 address handles
 * @param maxSrq                shared receive queues (0: none)
 * @param maxSrqWr              work requests per SRQ
 * @param maxSrqSge             scatter/gather entries per SRQ receive request
 * @param maxPkeys              P_Key table entries
 */
public record DeviceLimits(int maxQp, int maxQpWr, int maxSge, int maxSgeRd, int maxCq, int maxCqe, int maxMr,
                           int maxPd, int maxQpRdAtom, int maxEeRdAtom, int maxResRdAtom, int maxQpInitRdAtom,
                           int maxEeInitRdAtom, int maxEe, int maxRdd, int maxMw, int maxRawIpv6Qp,
                           int maxRawEthyQp, int maxMcastGrp, int maxMcastQpAttach, int maxTotalMcastQpAttach,
                           int maxAh, int maxSrq, int maxSrqWr, int maxSrqSge, int maxPkeys) {

    static DeviceLimits read(MemorySegment a) {
        return new DeviceLimits(ibv_device_attr.max_qp(a), ibv_device_attr.max_qp_wr(a), ibv_device_attr.max_sge(a),
                ibv_device_attr.max_sge_rd(a), ibv_device_attr.max_cq(a), ibv_device_attr.max_cqe(a),
                ibv_device_attr.max_mr(a), ibv_device_attr.max_pd(a), ibv_device_attr.max_qp_rd_atom(a),
                ibv_device_attr.max_ee_rd_atom(a), ibv_device_attr.max_res_rd_atom(a),
                ibv_device_attr.max_qp_init_rd_atom(a), ibv_device_attr.max_ee_init_rd_atom(a),
                ibv_device_attr.max_ee(a), ibv_device_attr.max_rdd(a), ibv_device_attr.max_mw(a),
                ibv_device_attr.max_raw_ipv6_qp(a), ibv_device_attr.max_raw_ethy_qp(a),
                ibv_device_attr.max_mcast_grp(a), ibv_device_attr.max_mcast_qp_attach(a),
                ibv_device_attr.max_total_mcast_qp_attach(a), ibv_device_attr.max_ah(a), ibv_device_attr.max_srq(a),
                ibv_device_attr.max_srq_wr(a), ibv_device_attr.max_srq_sge(a),
                Short.toUnsignedInt(ibv_device_attr.max_pkeys(a)));
    }
}
