package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The SRQ-related asynchronous events on a real device: {@code IBV_EVENT_QP_LAST_WQE_REACHED} for a QP attached to
 * an SRQ that is moved to the error state (the consumer's signal that no more receives of the SRQ will complete on
 * that QP, so it may be destroyed), with the QP as its element, where the device raises it; rxe in Linux 6.1 raises
 * neither it nor {@code IBV_EVENT_SRQ_ERR} (its responder has no such path), which is asserted there, so a kernel that
 * starts raising them is noticed. Either way the SRQ keeps serving its other QPs.
 */
class SrqAsyncEventIT extends DataPathResources {

    @Test
    void aQpOnAnSrqMovedToErrorRaisesLastWqeReachedWhereTheDeviceHasIt() {
        SharedReceiveQueue srq = pd.createSrq(8).build();
        CompletionQueue cq = ctx.createCq(32).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).srq(srq).build();
        connect(a, b);
        MemoryRegion rx = pd.allocate(4L * 64, ALL_REMOTE);
        MemoryRegion tx = pd.allocate(64, ALL_REMOTE);
        ReceiveRequests rwrs = srq.receiveRequests();
        for (int k = 0; k < 4; k++) {
            rwrs.recv(k).sge(rx, k * 64L, 64);
        }
        rwrs.post();
        a.sendRequests().send(9, SendFlag.SIGNALED_BIT).sge(tx, 0, 64).post();
        assertThat(awaitSuccesses(cq, 2, Duration.ofMillis(50))).hasSize(2);
        assertThat(asyncEvents(Duration.ZERO)).as("no stale event").isEmpty();

        b.toErr();
        List<AsyncEvent> events = new ArrayList<>();
        if (isRxe()) {
            events.addAll(asyncEvents(Duration.ofSeconds(2)));
            assertThat(events).as("rxe (Linux 6.1) raises no SRQ event for a QP moved to ERR").isEmpty();
        } else {
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (events.stream().noneMatch(e -> e.type() == AsyncEventType.QP_LAST_WQE_REACHED)
                    && System.nanoTime() < deadline) {
                ctx.getAsyncEvent(Duration.ofMillis(500)).ifPresent(events::add);
            }
            AsyncEvent last = events.stream().filter(e -> e.type() == AsyncEventType.QP_LAST_WQE_REACHED)
                    .findFirst().orElseThrow(() -> new AssertionError("no QP_LAST_WQE_REACHED within 10 s; events: "
                            + events));
            assertThat(last.type().element()).isEqualTo(AsyncEventType.Element.QP);
            assertThat(last.element()).isSameAs(b);
            assertThat(last.qpNum()).isEqualTo(b.qpNum());
            assertThat(last.toString()).contains("QP_LAST_WQE_REACHED").contains(String.valueOf(b.qpNum()));
            events.addAll(asyncEvents(Duration.ofMillis(300)));
        }
        assertThat(events).as("the SRQ itself stays usable: no SRQ_ERR")
                .noneMatch(e -> e.type() == AsyncEventType.SRQ_ERR);
        // the SRQ still serves its other QPs: the receives b left behind are consumed by a new QP
        QueuePair c = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair d = pd.createQp(QueuePairType.RC, cq, cq).srq(srq).build();
        connect(c, d);
        c.sendRequests().send(10, SendFlag.SIGNALED_BIT).sge(tx, 0, 64).post();
        List<Long> done = awaitSuccesses(cq, 2, Duration.ofMillis(50));
        assertThat(done).hasSize(2).contains(10L);
    }
}
