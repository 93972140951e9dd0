package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.verbs.verbs_h;
import org.junit.jupiter.api.Test;

/** Enum values equal the generated C constants. */
class QueuePairEnumsTest {

    @Test
    void queuePairStateValues() {
        assertThat(QueuePairState.RESET.value()).isEqualTo(verbs_h.IBV_QPS_RESET()).isZero();
        assertThat(QueuePairState.RTS.value()).isEqualTo(verbs_h.IBV_QPS_RTS()).isEqualTo(3);
        assertThat(QueuePairState.ERR.value()).isEqualTo(verbs_h.IBV_QPS_ERR()).isEqualTo(6);
        for (QueuePairState s : QueuePairState.values()) {
            assertThat(QueuePairState.of(s.value())).isSameAs(s);
        }
        assertThat(QueuePairState.of(99)).isSameAs(QueuePairState.UNKNOWN);
    }

    /** IB spec vol. 1, 10.3.1: which states refuse posts with an immediate error. */
    @Test
    void postingRulesPerState() {
        for (QueuePairState s : QueuePairState.values()) {
            boolean sends = s != QueuePairState.RESET && s != QueuePairState.INIT && s != QueuePairState.RTR;
            assertThat(s.acceptsSends()).as("send in %s", s).isEqualTo(sends);
            assertThat(s.acceptsReceives()).as("recv in %s", s).isEqualTo(s != QueuePairState.RESET);
        }
    }

    @Test
    void postRefusedInResetNamesStateAndWay() {
        PostException e = PostException.notReady("ibv_post_send", "QueuePair[RC 0x1 on rxe0]", QueuePairState.RESET,
                2, WorkRequestOpcode.class, WorkRequestOpcode.RDMA_WRITE.value());
        assertThat(e.errnoName()).isEqualTo("EINVAL");
        assertThat(e.badWrIndex()).isEqualTo(2);
        assertThat(e.getMessage()).isEqualTo("ibv_post_send(QueuePair[RC 0x1 on rxe0], wr[2], opcode=RDMA_WRITE) "
                + "failed: EINVAL (Invalid argument); refused before the provider: the QP is in RESET, and its send "
                + "queue accepts work requests from RTS on (IB spec 10.3.1: posting in RESET, INIT or RTR is an "
                + "immediate error); move it with toInit, toRtr and toRts first");
        PostException recv = PostException.notReady("ibv_post_recv", "QP", QueuePairState.RESET, 0, null, 0);
        assertThat(recv.getMessage()).contains("receive queue accepts work requests from INIT on")
                .contains("move it with toInit first");
        assertThat(PostException.notReady("ibv_wr_start", "QP", QueuePairState.RTR, 0, null, 0).getMessage())
                .startsWith("ibv_wr_start(QP) failed: EINVAL").contains("the QP is in RTR");
    }

    @Test
    void queuePairTypeValues() {
        assertThat(QueuePairType.RC.value()).isEqualTo(verbs_h.IBV_QPT_RC()).isEqualTo(2);
        assertThat(QueuePairType.UC.value()).isEqualTo(3);
        assertThat(QueuePairType.UD.value()).isEqualTo(4);
        for (QueuePairType t : QueuePairType.values()) {
            if (t != QueuePairType.DC_TARGET && t != QueuePairType.DC_INITIATOR) {
                assertThat(QueuePairType.of(t.value())).isSameAs(t);
            }
        }
        assertThat(QueuePairType.DC_TARGET.value()).isEqualTo(QueuePairType.DC_INITIATOR.value())
                .isEqualTo(verbs_h.IBV_QPT_DRIVER());
        // a DCI, a DCT and another provider's driver QP (EFA SRD) share the value: not guessed
        assertThatThrownBy(() -> QueuePairType.of(verbs_h.IBV_QPT_DRIVER()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("IBV_QPT_DRIVER").hasMessageContaining("provider-specific");
    }

    @Test
    void mtuAndMigrationValues() {
        assertThat(Mtu.MTU_256.value()).isEqualTo(1);
        assertThat(Mtu.MTU_4096.value()).isEqualTo(verbs_h.IBV_MTU_4096()).isEqualTo(5);
        assertThat(Mtu.of(3)).isSameAs(Mtu.MTU_1024);
        assertThat(PathMigrationState.ARMED.value()).isEqualTo(verbs_h.IBV_MIG_ARMED());
    }
}
