package dev.panverbs.tools.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ImmediateTest {
    @Test
    void encodeKindAndArgument() {
        int imm = Immediate.encode(Immediate.SHUTDOWN, 0);
        assertThat(imm).isEqualTo(0x8000_0000);
        assertThat(Immediate.kind(imm)).isEqualTo(Immediate.SHUTDOWN);
        int credit = Immediate.encode(Immediate.CREDIT, 17);
        assertThat(credit).isEqualTo(0x4000_0011);
        assertThat(Immediate.kind(credit)).isEqualTo(Immediate.CREDIT);
        assertThat(Immediate.argument(credit)).isEqualTo(17);
    }

    @Test
    void requestIdCarriesSlotAndGeneration() {
        int id = Immediate.requestId(0xffff, 0x3fff);
        assertThat(id).isEqualTo(Immediate.MAX_ARGUMENT);
        assertThat(Immediate.slot(id)).isEqualTo(0xffff);
        assertThat(Immediate.generation(id)).isEqualTo(0x3fff);
        int imm = Immediate.encode(Immediate.RESPONSE, id);
        assertThat(Immediate.kind(imm)).isEqualTo(Immediate.RESPONSE);
        assertThat(Immediate.argument(imm)).isEqualTo(id);
        // generations wrap inside their 14 bits
        assertThat(Immediate.generation(Immediate.requestId(3, 0x4001))).isEqualTo(1);
    }

    @Test
    void encodeRejectsOverflow() {
        assertThatThrownBy(() -> Immediate.encode(4, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Immediate.encode(0, 1 << 30)).isInstanceOf(IllegalArgumentException.class);
    }
}
