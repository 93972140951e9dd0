package dev.panverbs.tools.transport;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CreditReturnTest {
    @Test
    void thresholdIsAQuarterBoundedByUsableCredits() {
        assertThat(new CreditReturn(64).threshold()).isEqualTo(16);
        assertThat(new CreditReturn(2).threshold()).isEqualTo(1);
        assertThat(new CreditReturn(5).threshold()).isEqualTo(1);
        assertThat(new CreditReturn(8).threshold()).isEqualTo(2);
    }

    @Test
    void explicitReturnDueAtThresholdAndTakeEmpties() {
        CreditReturn r = new CreditReturn(8);
        r.reposted();
        assertThat(r.explicitDue()).isFalse();
        r.reposted();
        assertThat(r.explicitDue()).isTrue();
        assertThat(r.take()).isEqualTo(2);
        assertThat(r.pending()).isZero();
        assertThat(r.explicitDue()).isFalse();
    }
}
