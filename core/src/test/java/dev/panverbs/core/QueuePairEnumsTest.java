package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

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

    @Test
    void queuePairTypeValues() {
        assertThat(QueuePairType.RC.value()).isEqualTo(verbs_h.IBV_QPT_RC()).isEqualTo(2);
        assertThat(QueuePairType.UC.value()).isEqualTo(3);
        assertThat(QueuePairType.UD.value()).isEqualTo(4);
        for (QueuePairType t : QueuePairType.values()) {
            assertThat(QueuePairType.of(t.value())).isSameAs(t);
        }
    }

    @Test
    void mtuAndMigrationValues() {
        assertThat(Mtu.MTU_256.value()).isEqualTo(1);
        assertThat(Mtu.MTU_4096.value()).isEqualTo(verbs_h.IBV_MTU_4096()).isEqualTo(5);
        assertThat(Mtu.of(3)).isSameAs(Mtu.MTU_1024);
        assertThat(PathMigrationState.ARMED.value()).isEqualTo(verbs_h.IBV_MIG_ARMED());
    }
}
