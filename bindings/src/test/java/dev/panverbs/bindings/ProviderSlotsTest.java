package dev.panverbs.bindings;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Without a translation (nothing in the bindings module installs one), a missing slot is an
 * {@link UnsupportedSlotException} carrying its parts. Core's translation is tested in core, where it is installed.
 */
class ProviderSlotsTest {

    @Test
    void missingSlotWithoutTranslationIsUnsupportedSlotExceptionWithItsParts() {
        RuntimeException e = ProviderSlots.missing("ibv_wr_send", "ibv_qp_ex.wr_send", "the QP was created without X");
        assertThat(e).isInstanceOf(UnsupportedSlotException.class).isInstanceOf(UnsupportedOperationException.class)
                .hasMessage("ibv_wr_send: ibv_qp_ex.wr_send is NULL: the QP was created without X");
        UnsupportedSlotException s = (UnsupportedSlotException) e;
        assertThat(s.verb()).isEqualTo("ibv_wr_send");
        assertThat(s.slot()).isEqualTo("ibv_qp_ex.wr_send");
        assertThat(s.reason()).isEqualTo("the QP was created without X");
    }
}
