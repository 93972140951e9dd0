package dev.panverbs.tools.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SlotTableTest {
    private static final ResponseHandler H = response -> { };

    @Test
    void slotIsFreeOnlyAfterSendCompletionAndResponse() {
        SlotTable t = new SlotTable(1);
        int slot = t.tryAcquire(H);
        assertThat(slot).isZero();
        assertThat(t.tryAcquire(H)).isEqualTo(-1);
        int id = t.requestId(slot);
        // the response may be polled before the send completion
        assertThat(t.responseArrived(id)).isEqualTo(slot);
        assertThat(t.handler(slot)).isSameAs(H);
        assertThat(t.responseHandled(slot)).isFalse();
        assertThat(t.tryAcquire(H)).isEqualTo(-1);
        assertThat(t.sendCompleted(slot)).isTrue();
        assertThat(t.inUse()).isZero();
        assertThat(t.tryAcquire(H)).isZero();
    }

    @Test
    void oneWaySlotFreedBySendCompletion() {
        SlotTable t = new SlotTable(2);
        int slot = t.tryAcquire(null);
        assertThat(t.sendCompleted(slot)).isTrue();
        assertThatThrownBy(() -> t.responseArrived(t.requestId(slot))).isInstanceOf(RpcProtocolException.class);
    }

    @Test
    void staleGenerationIsAProtocolError() {
        SlotTable t = new SlotTable(1);
        int slot = t.tryAcquire(H);
        int firstId = t.requestId(slot);
        t.responseHandled(t.responseArrived(firstId));
        t.sendCompleted(slot);
        int again = t.tryAcquire(H);
        assertThat(again).isEqualTo(slot);
        assertThat(t.requestId(again)).isNotEqualTo(firstId);
        assertThatThrownBy(() -> t.responseArrived(firstId)).isInstanceOf(RpcProtocolException.class)
                .hasMessageContaining("which is not outstanding");
    }

    @Test
    void unknownSlotIsAProtocolError() {
        SlotTable t = new SlotTable(4);
        assertThatThrownBy(() -> t.responseArrived(Immediate.requestId(9, 1)))
                .isInstanceOf(RpcProtocolException.class).hasMessageContaining("slot 9");
    }

    @Test
    void drainHandlersFailsOutstandingCallsOnly() {
        SlotTable t = new SlotTable(3);
        ResponseHandler a = r -> { };
        ResponseHandler b = r -> { };
        t.tryAcquire(a);
        t.tryAcquire(null);
        int done = t.tryAcquire(b);
        t.responseHandled(t.responseArrived(t.requestId(done)));
        assertThat(t.drainHandlers()).containsExactly(a);
    }

    @Test
    void doubleSendCompletionRejected() {
        SlotTable t = new SlotTable(1);
        int slot = t.tryAcquire(H);
        t.sendCompleted(slot);
        assertThatThrownBy(() -> t.sendCompleted(slot)).isInstanceOf(IllegalStateException.class);
    }
}
