package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An {@link AddressHandle} is tracked by the UD send queues like a memory region: {@code close()}
 * ({@code ibv_destroy_ah}) is refused while an outstanding send names it, on both post paths, and a send staged with
 * an AH closed before the post is refused by the post, nothing posted. Over the fake provider (a UD QP whose sends the
 * fake executes like RC sends; the AH is a stand-in handle whose destroy is counted).
 */
class AddressHandleTrackingTest {
    private static FakeProvider fake;

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
    }

    /** The wr_ids completed (the fake completes a SEND without a posted receive with RNR_RETRY_EXC_ERR). */
    private static java.util.List<Long> wrIds(CompletionQueue cq) {
        return DataPathHostTest.drain(cq).stream().map(c -> c[0]).toList();
    }

    private static AddressHandle ah(AtomicInteger destroyed) {
        return AddressHandle.wrap(fake.protectionDomain(), Arena.global().allocate(64),
                AddressVector.builder(1).build(), h -> destroyed.incrementAndGet());
    }

    @Test
    void closeIsRefusedWhileAClassicUdSendNamesItAndAllowedOnceItsCompletionIsPolled() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair ud = fake.createUdQp(cq, 16, EnumSet.noneOf(SendOperation.class));
        MemoryRegion buf = fake.buffer(0x71);
        AtomicInteger destroyed = new AtomicInteger();
        AddressHandle ah = ah(destroyed);
        ud.sendRequests().send(1, 0).ud(ah, 7, 0x11).sge(buf, 0, 32)
                .send(2, SendFlag.SIGNALED_BIT).ud(ah, 7, 0x11).sge(buf, 32, 32).post();
        assertThatThrownBy(ah::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_destroy_ah").hasMessageContaining("2 outstanding UD send")
                .hasMessageContaining("poll their completions");
        assertThat(ah.isClosed()).isFalse();
        assertThat(destroyed).hasValue(0);
        // the AH is still usable after the refusal
        ud.sendRequests().send(3, SendFlag.SIGNALED_BIT).ud(ah, 7, 0x11).sge(buf, 0, 8).post();
        assertThat(wrIds(ud.sendCq())).contains(2L, 3L); // and 1, whose error completion the fake reports
        ah.close();
        assertThat(destroyed).hasValue(1);
        buf.close();
        ud.close();
    }

    @Test
    void closeIsRefusedWhileABatchUdSendNamesIt() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair ud = fake.createUdQp(cq, 16, EnumSet.of(SendOperation.SEND));
        MemoryRegion buf = fake.buffer(0x72);
        AtomicInteger destroyed = new AtomicInteger();
        AddressHandle ah = ah(destroyed);
        try (PostBatch b = ud.startSend()) {
            b.send(5, SendFlag.SIGNALED_BIT).setUdAddr(ah, 9, 0x11).setSge(buf, 0, 32);
            b.submit();
        }
        assertThatThrownBy(ah::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_destroy_ah").hasMessageContaining("1 outstanding UD send");
        assertThat(wrIds(cq)).containsExactly(5L);
        ah.close();
        assertThat(destroyed).hasValue(1);
        buf.close();
    }

    @Test
    void aSendStagedWithAnAhClosedBeforeThePostIsRefusedOnBothPaths() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair ud = fake.createUdQp(cq, 16, EnumSet.of(SendOperation.SEND));
        MemoryRegion buf = fake.buffer(0x73);
        AddressHandle ah = ah(new AtomicInteger());
        SendRequests wrs = ud.sendRequests().send(1, SendFlag.SIGNALED_BIT).ud(ah, 7, 0x11).sge(buf, 0, 32);
        PostBatch b = ud.startSend();
        b.send(2, SendFlag.SIGNALED_BIT).setUdAddr(ah, 7, 0x11).setSge(buf, 0, 32);
        ah.close(); // nothing outstanding names it: allowed
        assertThatThrownBy(b::submit).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_wr_complete").hasMessageContaining("work request 0")
                .hasMessageContaining(ah.toString());
        assertThat(b.isOpen()).as("aborted").isFalse();
        assertThatThrownBy(wrs::post).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_post_send").hasMessageContaining(ah.toString())
                .hasMessageContaining("Nothing was posted");
        assertThat(ud.sendQueue.tracker.outstanding()).as("nothing published").isZero();
        assertThat(DataPathHostTest.drain(cq)).as("nothing reached the provider").isEmpty();
        // the chain is re-addressed and posts
        AddressHandle other = ah(new AtomicInteger());
        wrs.clear().send(3, SendFlag.SIGNALED_BIT).ud(other, 7, 0x11).sge(buf, 0, 32).post();
        assertThat(wrIds(cq)).containsExactly(3L);
        buf.close();
    }

    @Test
    void theReferencesFollowAChainRestagedBehindABatch() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair ud = fake.createUdQp(cq, 16, EnumSet.of(SendOperation.SEND));
        MemoryRegion buf = fake.buffer(0x74);
        AddressHandle chainAh = ah(new AtomicInteger());
        AddressHandle batchAh = ah(new AtomicInteger());
        SendRequests wrs = ud.sendRequests().send(1, SendFlag.SIGNALED_BIT).ud(chainAh, 7, 0x11).sge(buf, 0, 32);
        try (PostBatch b = ud.startSend()) { // the pending chain moves after the batch's slots
            b.send(2, SendFlag.SIGNALED_BIT).setUdAddr(batchAh, 7, 0x11).setSge(buf, 0, 32);
            b.submit();
        }
        wrs.post();
        assertThatThrownBy(chainAh::close).hasMessageContaining("1 outstanding UD send");
        assertThatThrownBy(batchAh::close).hasMessageContaining("1 outstanding UD send");
        assertThat(wrIds(cq)).containsExactlyInAnyOrder(1L, 2L);
        chainAh.close();
        batchAh.close();
        buf.close();
    }

    @Test
    void closingTheQpOrItsPdReleasesTheReferences() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair ud = fake.createUdQp(cq, 16, EnumSet.noneOf(SendOperation.class));
        MemoryRegion buf = fake.buffer(0x75);
        AtomicInteger destroyed = new AtomicInteger();
        AddressHandle ah = ah(destroyed);
        ud.sendRequests().send(1, SendFlag.SIGNALED_BIT).ud(ah, 7, 0x11).sge(buf, 0, 32).post();
        assertThatThrownBy(ah::close).hasMessageContaining("1 outstanding UD send");
        ud.close(); // destroying the QP retires its WRs
        ah.close();
        assertThat(destroyed).hasValue(1);
        buf.close();
    }
}
