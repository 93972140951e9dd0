package dev.panverbs.tools.transport;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CreditReturnTest {
    @Test
    void thresholdIsAQuarterOfTheUsableCredits() {
        assertThat(new CreditReturn(63).threshold()).isEqualTo(15);
        assertThat(new CreditReturn(1).threshold()).isEqualTo(1);
        assertThat(new CreditReturn(7).threshold()).isEqualTo(1);
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
