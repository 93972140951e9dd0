package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.verbs.ibv_ah_attr;
import dev.panverbs.bindings.verbs.ibv_global_route;
import dev.panverbs.bindings.verbs.ibv_qp_attr;
import dev.panverbs.bindings.verbs.ibv_qp_cap;
import dev.panverbs.bindings.verbs.verbs_h;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Each setter writes its ibv_qp_attr field (read back through the generated layout) and sets exactly its bit. */
class QueuePairAttributesTest {

    private static void setsOnly(QueuePairAttribute bit, int cMaskBit, Consumer<QueuePairAttributes> setter,
                                 Consumer<MemorySegment> check) {
        QueuePairAttributes a = new QueuePairAttributes();
        setter.accept(a);
        assertThat(a.mask()).as(bit.name()).isEqualTo(cMaskBit);
        assertThat(a.attributes()).containsExactly(bit);
        assertThat(a.isSet(bit)).isTrue();
        check.accept(a.segment());
    }

    @Test
    void everySetterWritesItsFieldAndSetsItsBit() {
        setsOnly(QueuePairAttribute.STATE, verbs_h.IBV_QP_STATE(), a -> a.qpState(QueuePairState.RTR),
                s -> assertThat(ibv_qp_attr.qp_state(s)).isEqualTo(verbs_h.IBV_QPS_RTR()));
        setsOnly(QueuePairAttribute.CUR_STATE, verbs_h.IBV_QP_CUR_STATE(), a -> a.curQpState(QueuePairState.RTS),
                s -> assertThat(ibv_qp_attr.cur_qp_state(s)).isEqualTo(verbs_h.IBV_QPS_RTS()));
        setsOnly(QueuePairAttribute.EN_SQD_ASYNC_NOTIFY, verbs_h.IBV_QP_EN_SQD_ASYNC_NOTIFY(),
                a -> a.enSqdAsyncNotify(true), s -> assertThat(ibv_qp_attr.en_sqd_async_notify(s)).isEqualTo((byte) 1));
        setsOnly(QueuePairAttribute.ACCESS_FLAGS, verbs_h.IBV_QP_ACCESS_FLAGS(),
                a -> a.qpAccessFlagsMask(verbs_h.IBV_ACCESS_REMOTE_READ()),
                s -> assertThat(ibv_qp_attr.qp_access_flags(s)).isEqualTo(verbs_h.IBV_ACCESS_REMOTE_READ()));
        setsOnly(QueuePairAttribute.PKEY_INDEX, verbs_h.IBV_QP_PKEY_INDEX(), a -> a.pkeyIndex(0xFFFE),
                s -> assertThat(ibv_qp_attr.pkey_index(s)).isEqualTo((short) 0xFFFE));
        setsOnly(QueuePairAttribute.PORT, verbs_h.IBV_QP_PORT(), a -> a.portNum(2),
                s -> assertThat(ibv_qp_attr.port_num(s)).isEqualTo((byte) 2));
        setsOnly(QueuePairAttribute.QKEY, verbs_h.IBV_QP_QKEY(), a -> a.qkey(0x11111111),
                s -> assertThat(ibv_qp_attr.qkey(s)).isEqualTo(0x11111111));
        setsOnly(QueuePairAttribute.PATH_MTU, verbs_h.IBV_QP_PATH_MTU(), a -> a.pathMtu(Mtu.MTU_1024),
                s -> assertThat(ibv_qp_attr.path_mtu(s)).isEqualTo(verbs_h.IBV_MTU_1024()));
        setsOnly(QueuePairAttribute.TIMEOUT, verbs_h.IBV_QP_TIMEOUT(), a -> a.timeout(14),
                s -> assertThat(ibv_qp_attr.timeout(s)).isEqualTo((byte) 14));
        setsOnly(QueuePairAttribute.RETRY_CNT, verbs_h.IBV_QP_RETRY_CNT(), a -> a.retryCnt(7),
                s -> assertThat(ibv_qp_attr.retry_cnt(s)).isEqualTo((byte) 7));
        setsOnly(QueuePairAttribute.RNR_RETRY, verbs_h.IBV_QP_RNR_RETRY(), a -> a.rnrRetry(6),
                s -> assertThat(ibv_qp_attr.rnr_retry(s)).isEqualTo((byte) 6));
        setsOnly(QueuePairAttribute.RQ_PSN, verbs_h.IBV_QP_RQ_PSN(), a -> a.rqPsn(0xABCDEF),
                s -> assertThat(ibv_qp_attr.rq_psn(s)).isEqualTo(0xABCDEF));
        setsOnly(QueuePairAttribute.SQ_PSN, verbs_h.IBV_QP_SQ_PSN(), a -> a.sqPsn(0x123456),
                s -> assertThat(ibv_qp_attr.sq_psn(s)).isEqualTo(0x123456));
        setsOnly(QueuePairAttribute.MAX_QP_RD_ATOMIC, verbs_h.IBV_QP_MAX_QP_RD_ATOMIC(), a -> a.maxRdAtomic(16),
                s -> assertThat(ibv_qp_attr.max_rd_atomic(s)).isEqualTo((byte) 16));
        setsOnly(QueuePairAttribute.MAX_DEST_RD_ATOMIC, verbs_h.IBV_QP_MAX_DEST_RD_ATOMIC(),
                a -> a.maxDestRdAtomic(8), s -> assertThat(ibv_qp_attr.max_dest_rd_atomic(s)).isEqualTo((byte) 8));
        setsOnly(QueuePairAttribute.MIN_RNR_TIMER, verbs_h.IBV_QP_MIN_RNR_TIMER(), a -> a.minRnrTimer(12),
                s -> assertThat(ibv_qp_attr.min_rnr_timer(s)).isEqualTo((byte) 12));
        setsOnly(QueuePairAttribute.PATH_MIG_STATE, verbs_h.IBV_QP_PATH_MIG_STATE(),
                a -> a.pathMigState(PathMigrationState.ARMED),
                s -> assertThat(ibv_qp_attr.path_mig_state(s)).isEqualTo(verbs_h.IBV_MIG_ARMED()));
        setsOnly(QueuePairAttribute.DEST_QPN, verbs_h.IBV_QP_DEST_QPN(), a -> a.destQpNum(0x11),
                s -> assertThat(ibv_qp_attr.dest_qp_num(s)).isEqualTo(0x11));
        setsOnly(QueuePairAttribute.RATE_LIMIT, verbs_h.IBV_QP_RATE_LIMIT(), a -> a.rateLimit(1000),
                s -> assertThat(ibv_qp_attr.rate_limit(s)).isEqualTo(1000));
        setsOnly(QueuePairAttribute.CAP, verbs_h.IBV_QP_CAP(), a -> a.cap(new QueuePairCapabilities(1, 2, 3, 4, 5)),
                s -> {
                    MemorySegment cap = ibv_qp_attr.cap(s);
                    assertThat(ibv_qp_cap.max_send_wr(cap)).isEqualTo(1);
                    assertThat(ibv_qp_cap.max_inline_data(cap)).isEqualTo(5);
                });
        byte[] gid = new byte[16];
        gid[0] = (byte) 0xfe;
        gid[15] = 7;
        AddressVector av = AddressVector.builder(1).dlid(0x1234).sl(3).grh(gid, 1, 64).trafficClass(5)
                .flowLabel(0xABCDE).build();
        setsOnly(QueuePairAttribute.AV, verbs_h.IBV_QP_AV(), a -> a.ahAttr(av), s -> {
            MemorySegment ah = ibv_qp_attr.ah_attr(s);
            assertThat(ibv_ah_attr.dlid(ah)).isEqualTo((short) 0x1234);
            assertThat(ibv_ah_attr.sl(ah)).isEqualTo((byte) 3);
            assertThat(ibv_ah_attr.is_global(ah)).isEqualTo((byte) 1);
            assertThat(ibv_ah_attr.port_num(ah)).isEqualTo((byte) 1);
            MemorySegment grh = ibv_ah_attr.grh(ah);
            assertThat(ibv_global_route.dgid(grh).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(gid);
            assertThat(ibv_global_route.sgid_index(grh)).isEqualTo((byte) 1);
            assertThat(ibv_global_route.hop_limit(grh)).isEqualTo((byte) 64);
            assertThat(ibv_global_route.traffic_class(grh)).isEqualTo((byte) 5);
            assertThat(ibv_global_route.flow_label(grh)).isEqualTo(0xABCDE);
            assertThat(AddressVector.readFrom(ah)).isEqualTo(av);
        });
        setsOnly(QueuePairAttribute.ALT_PATH, verbs_h.IBV_QP_ALT_PATH(), a -> a.altPath(av, 2, 9), s -> {
            assertThat(ibv_ah_attr.dlid(ibv_qp_attr.alt_ah_attr(s))).isEqualTo((short) 0x1234);
            assertThat(ibv_qp_attr.alt_pkey_index(s)).isEqualTo((short) 2);
            assertThat(ibv_qp_attr.alt_port_num(s)).isEqualTo((byte) 1);
            assertThat(ibv_qp_attr.alt_timeout(s)).isEqualTo((byte) 9);
        });
    }

    @Test
    void everyMaskBitHasASetterCovered() {
        // the enum names every IBV_QP_* bit exactly once
        int all = 0;
        for (QueuePairAttribute a : QueuePairAttribute.values()) {
            assertThat(Integer.bitCount(a.bit())).isEqualTo(1);
            assertThat(all & a.bit()).isZero();
            all |= a.bit();
        }
        int c = verbs_h.IBV_QP_STATE() | verbs_h.IBV_QP_CUR_STATE() | verbs_h.IBV_QP_EN_SQD_ASYNC_NOTIFY()
                | verbs_h.IBV_QP_ACCESS_FLAGS() | verbs_h.IBV_QP_PKEY_INDEX() | verbs_h.IBV_QP_PORT()
                | verbs_h.IBV_QP_QKEY() | verbs_h.IBV_QP_AV() | verbs_h.IBV_QP_PATH_MTU() | verbs_h.IBV_QP_TIMEOUT()
                | verbs_h.IBV_QP_RETRY_CNT() | verbs_h.IBV_QP_RNR_RETRY() | verbs_h.IBV_QP_RQ_PSN()
                | verbs_h.IBV_QP_MAX_QP_RD_ATOMIC() | verbs_h.IBV_QP_ALT_PATH() | verbs_h.IBV_QP_MIN_RNR_TIMER()
                | verbs_h.IBV_QP_SQ_PSN() | verbs_h.IBV_QP_MAX_DEST_RD_ATOMIC() | verbs_h.IBV_QP_PATH_MIG_STATE()
                | verbs_h.IBV_QP_CAP() | verbs_h.IBV_QP_DEST_QPN() | verbs_h.IBV_QP_RATE_LIMIT();
        assertThat(all).isEqualTo(c);
    }

    @Test
    void settersAccumulateAndClearResets() {
        QueuePairAttributes a = new QueuePairAttributes().qpState(QueuePairState.INIT).pkeyIndex(0).portNum(1)
                .qkey(7);
        assertThat(a.attributes()).containsExactlyInAnyOrder(QueuePairAttribute.STATE,
                QueuePairAttribute.PKEY_INDEX, QueuePairAttribute.PORT, QueuePairAttribute.QKEY);
        assertThat(a.qpState()).isEqualTo(QueuePairState.INIT);
        a.clear();
        assertThat(a.mask()).isZero();
        assertThat(a.qpState()).isNull();
        assertThat(ibv_qp_attr.qkey(a.segment())).isZero();
    }

    @Test
    void outOfRangeValuesAreRejected() {
        QueuePairAttributes a = new QueuePairAttributes();
        assertThatThrownBy(() -> a.rqPsn(1 << 24)).hasMessageContaining("rqPsn must be 0..16777215");
        assertThatThrownBy(() -> a.retryCnt(8)).hasMessageContaining("retryCnt must be 0..7");
        assertThatThrownBy(() -> a.rnrRetry(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.timeout(32)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.portNum(0)).hasMessageContaining("1-based");
        assertThatThrownBy(() -> a.minRnrTimer(32)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AddressVector.builder(1).grh(new byte[4], 0, 1))
                .hasMessageContaining("16 bytes");
        assertThat(a.mask()).isZero();
    }
}
