package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * An address handle closed between {@link SendRequests#ud} and the post: the staged WR holds the destroyed
 * {@code ibv_ah} pointer, which the provider would read (a use after free); the post refuses it by name instead.
 */
class AddressHandleMisuseIT extends DataPathResources {
    private static final int QKEY = 0x1234;

    /** A UD QP in RTS on {@code cq}. */
    private QueuePair udQp(CompletionQueue cq) {
        QueuePair ud = pd.createQp(QueuePairType.UD, cq, cq).build();
        ud.toInit(PORT, QKEY);
        ud.toRtr();
        ud.toRts(0);
        return ud;
    }

    @Test
    void aStagedUdSendWhoseAddressHandleWasClosedIsRefusedAtPost() {
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair ud = udQp(cq);
        MemoryRegion mr = pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE));
        AddressHandle ah = pd.createAh(path());
        SendRequests s = ud.sendRequests();
        s.send(1, SendFlag.SIGNALED_BIT).sge(mr, 0, 64).ud(ah, ud.qpNum(), QKEY);
        ah.close();
        assertThatThrownBy(s::post).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_post_send: work request 0").hasMessageContaining(ah.toString())
                .hasMessageContaining("Nothing was posted");
        assertThat(ud.sendQueue.tracker.outstanding()).isZero();
        assertThat(s.pending()).isEqualTo(1);
        assertThatThrownBy(() -> s.ud(ah, ud.qpNum(), QKEY)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        // addressed again through a live AH, the same WR goes out
        AddressHandle fresh = pd.createAh(path());
        s.ud(fresh, ud.qpNum(), QKEY);
        assertThat(s.post()).isEqualTo(1);
        WorkCompletion wc = pollOne(cq);
        assertThat(wc.wrId()).isEqualTo(1);
        assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
    }

    @Test
    void closingAnAddressHandleNamedByAnOutstandingSendIsRefusedUntilItsCompletionIsPolled() {
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair ud = udQp(cq);
        MemoryRegion mr = pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE));
        AddressHandle ah = pd.createAh(path());
        ud.sendRequests().send(1, SendFlag.SIGNALED_BIT).sge(mr, 0, 64).ud(ah, ud.qpNum(), QKEY).post();
        assertThatThrownBy(ah::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_destroy_ah").hasMessageContaining("1 outstanding UD send");
        assertThat(ah.isClosed()).isFalse();
        assertThat(pollOne(cq).wrId()).isEqualTo(1);
        ah.close();
        assertThat(ah.isClosed()).isTrue();
    }
}
