package dev.panverbs.core;

import dev.panverbs.bindings.verbs.ibv_qp_attr;
import dev.panverbs.bindings.verbs.ibv_qp_init_attr;

import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * A queue pair's attributes as {@code ibv_query_qp(3)} reported them: an immutable copy, not a live view.
 *
 * @param qpNum          the QP number
 * @param type           the transport type
 * @param state          {@code qp_state}
 * @param pathMtu        {@code path_mtu}, or {@code null} for UD
 * @param qkey           {@code qkey} (UD)
 * @param rqPsn          {@code rq_psn}
 * @param sqPsn          {@code sq_psn}
 * @param destQpNum      {@code dest_qp_num}
 * @param accessFlags    {@code qp_access_flags}
 * @param cap            {@code cap}: the granted queue sizes
 * @param ahAttr         {@code ah_attr}: the primary path (meaningless for UD)
 * @param pkeyIndex      {@code pkey_index}
 * @param portNum        {@code port_num}
 * @param timeout        {@code timeout}
 * @param retryCnt       {@code retry_cnt}
 * @param rnrRetry       {@code rnr_retry}
 * @param minRnrTimer    {@code min_rnr_timer}
 * @param maxRdAtomic    {@code max_rd_atomic}
 * @param maxDestRdAtomic {@code max_dest_rd_atomic}
 * @param sqDraining     {@code sq_draining}
 * @param sqSigAll       {@code sq_sig_all} of the init attributes
 */
public record QueuePairInfo(int qpNum, QueuePairType type, QueuePairState state, Mtu pathMtu, int qkey, int rqPsn,
                            int sqPsn, int destQpNum, Set<Access> accessFlags, QueuePairCapabilities cap,
                            AddressVector ahAttr, int pkeyIndex, int portNum, int timeout, int retryCnt, int rnrRetry,
                            int minRnrTimer, int maxRdAtomic, int maxDestRdAtomic, boolean sqDraining,
                            boolean sqSigAll) {

    static QueuePairInfo readFrom(int qpNum, QueuePairType type, MemorySegment a, MemorySegment init) {
        int mtu = ibv_qp_attr.path_mtu(a);
        MemorySegment ah = ibv_qp_attr.ah_attr(a);
        AddressVector av = Byte.toUnsignedInt(ibv_qp_attr.port_num(a)) == 0
                && Byte.toUnsignedInt(dev.panverbs.bindings.verbs.ibv_ah_attr.port_num(ah)) == 0
                ? null : readAv(ah, Byte.toUnsignedInt(ibv_qp_attr.port_num(a)));
        return new QueuePairInfo(qpNum, type, QueuePairState.of(ibv_qp_attr.qp_state(a)),
                mtu >= 1 && mtu <= 5 ? Mtu.of(mtu) : null, ibv_qp_attr.qkey(a), ibv_qp_attr.rq_psn(a),
                ibv_qp_attr.sq_psn(a), ibv_qp_attr.dest_qp_num(a), Access.fromMask(ibv_qp_attr.qp_access_flags(a)),
                QueuePairCapabilities.readFrom(ibv_qp_attr.cap(a)), av,
                Short.toUnsignedInt(ibv_qp_attr.pkey_index(a)), Byte.toUnsignedInt(ibv_qp_attr.port_num(a)),
                Byte.toUnsignedInt(ibv_qp_attr.timeout(a)), Byte.toUnsignedInt(ibv_qp_attr.retry_cnt(a)),
                Byte.toUnsignedInt(ibv_qp_attr.rnr_retry(a)), Byte.toUnsignedInt(ibv_qp_attr.min_rnr_timer(a)),
                Byte.toUnsignedInt(ibv_qp_attr.max_rd_atomic(a)), Byte.toUnsignedInt(ibv_qp_attr.max_dest_rd_atomic(a)),
                ibv_qp_attr.sq_draining(a) != 0, ibv_qp_init_attr.sq_sig_all(init) != 0);
    }

    private static AddressVector readAv(MemorySegment ah, int qpPort) {
        // some providers leave ah_attr.port_num 0 and report the port in the QP's port_num
        if (dev.panverbs.bindings.verbs.ibv_ah_attr.port_num(ah) == 0) {
            if (qpPort == 0) {
                return null;
            }
            dev.panverbs.bindings.verbs.ibv_ah_attr.port_num(ah, (byte) qpPort);
        }
        return AddressVector.readFrom(ah);
    }
}
