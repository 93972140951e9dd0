package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A classic chain is staged straight into its queue's tracker while it is built ({@link WorkRequests#startWr}), at
 * the positions after the tail. Other post paths of the same queue (a {@link PostBatch}) may post, or roll back,
 * while a chain is half built or half posted: the chain is moved ({@link WorkRequests#restage}) and every
 * completion still gives back the caller's {@code wr_id}, in posting order, with the keys referenced until then.
 * Over the fake provider ({@link FakeProvider}), on every build.
 */
class StagedChainHostTest {
    private static FakeProvider fake;

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
    }

    @Test
    void aBatchPostedWhileAChainIsBuiltCompletesFirstAndTheChainKeepsItsIds() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 8, 8, 0, EnumSet.of(SendOperation.RDMA_WRITE));
        MemoryRegion a = fake.buffer(0x31);
        MemoryRegion b = fake.buffer(0x32);
        SendRequests s = qp.sendRequests();
        s.rdmaWrite(10, SendFlag.SIGNALED_BIT, 0x99, 0x1000).sge(a, 0, 64);
        s.rdmaWrite(11, SendFlag.SIGNALED_BIT, 0x99, 0x1040).sge(a, 64, 64);
        try (PostBatch batch = qp.startSend()) { // takes the positions the chain was staged at
            batch.rdmaWrite(20, SendFlag.SIGNALED_BIT, 0x99, 0x2000).setSge(b, 0, 64);
            batch.submit();
        }
        assertThat(s.post()).isEqualTo(2);
        assertThat(qp.sendQueue.tracker.outstanding()).isEqualTo(3);
        // both regions are referenced by posted, unpolled WRs
        assertThatThrownBy(a::close).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(b::close).isInstanceOf(IllegalStateException.class);
        assertThat(DataPathHostTest.drainOk(cq)).containsExactly(20L, 10L, 11L);
        assertThat(qp.sendQueue.tracker.outstanding()).isZero();
        a.close();
        b.close();
        qp.close();
    }

    @Test
    void aChainBuiltWhileABatchIsOpenIsStagedAfterTheBatchWhetherSubmittedOrAborted() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 4, 8, 0, EnumSet.of(SendOperation.RDMA_WRITE));
        MemoryRegion a = fake.buffer(0x35);
        MemoryRegion b = fake.buffer(0x36);
        SendRequests s = qp.sendRequests();
        s.rdmaWrite(10, SendFlag.SIGNALED_BIT, 0x99, 0x1000).sge(a, 0, 64); // pending when the batch opens
        try (PostBatch batch = qp.startSend()) { // the batch is staged in the tracker at the tail
            batch.rdmaWrite(20, SendFlag.SIGNALED_BIT, 0x99, 0x2000).setSge(b, 0, 64);
            s.rdmaWrite(11, SendFlag.SIGNALED_BIT, 0x99, 0x1040).sge(a, 64, 64); // built while the batch is open
            batch.rdmaWrite(21, SendFlag.SIGNALED_BIT, 0x99, 0x2040).setSge(b, 64, 64);
            batch.submit();
        }
        assertThat(s.post()).isEqualTo(2);
        assertThat(DataPathHostTest.drainOk(cq)).containsExactly(20L, 21L, 10L, 11L);
        // a chain started (from empty) inside a batch: staged after the batch's WRs, not over them
        try (PostBatch batch = qp.startSend()) {
            batch.rdmaWrite(22, SendFlag.SIGNALED_BIT, 0x99, 0x2000).setSge(b, 0, 64);
            s.rdmaWrite(12, SendFlag.SIGNALED_BIT, 0x99, 0x1000).sge(a, 0, 64);
            batch.rdmaWrite(23, SendFlag.SIGNALED_BIT, 0x99, 0x2040).setSge(b, 64, 64);
            batch.submit();
        }
        assertThat(s.post()).isEqualTo(1);
        assertThat(DataPathHostTest.drainOk(cq)).containsExactly(22L, 23L, 12L);
        // the same, then the batch aborted: the chain alone is posted
        PostBatch aborted = qp.startSend();
        aborted.rdmaWrite(30, SendFlag.SIGNALED_BIT, 0x99, 0x2000).setSge(b, 0, 64);
        s.rdmaWrite(40, SendFlag.SIGNALED_BIT, 0x99, 0x1000).sge(a, 0, 64);
        aborted.rdmaWrite(31, SendFlag.SIGNALED_BIT, 0x99, 0x2000).setSge(b, 0, 64);
        aborted.close();
        assertThat(qp.sendQueue.tracker.outstanding()).isZero();
        assertThat(s.post()).isEqualTo(1);
        assertThatThrownBy(a::close).as("referenced by WR 40").isInstanceOf(IllegalStateException.class);
        b.close(); // the aborted batch's WRs reference nothing
        assertThat(DataPathHostTest.drainOk(cq)).containsExactly(40L);
        a.close();
        qp.close();
    }

    @Test
    void aPartlyPostedChainResumesAfterABatchAndAnAbortedBatch() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 4, 8, 0, EnumSet.of(SendOperation.RDMA_WRITE));
        MemoryRegion mr = fake.buffer(0x41);
        MemoryRegion gone = fake.buffer(0x42);
        SendRequests s = qp.sendRequests();
        for (int i = 0; i < 3; i++) {
            s.rdmaWrite(100 + i, SendFlag.SIGNALED_BIT, 0x99, 0x1000).sge(mr, 0, 64);
        }
        assertThat(s.post()).isEqualTo(3);
        for (int i = 0; i < 3; i++) {
            s.rdmaWrite(200 + i, SendFlag.SIGNALED_BIT, 0x99, 0x1000).sge(mr, 0, 64);
        }
        assertThat(s.post()).as("room for one more of 4").isEqualTo(1);
        assertThat(s.pending()).isEqualTo(2);
        assertThat(DataPathHostTest.drainOk(cq)).containsExactly(100L, 101L, 102L, 200L);
        // a batch whose key was closed after setSge rolls back the positions it had published...
        PostBatch aborted = qp.startSend();
        aborted.rdmaWrite(300, SendFlag.SIGNALED_BIT, 0x99, 0x1000).setSge(gone, 0, 64);
        gone.close();
        assertThatThrownBy(aborted::submit).isInstanceOf(IllegalStateException.class);
        // ...a good one takes them
        try (PostBatch batch = qp.startSend()) {
            batch.rdmaWrite(400, SendFlag.SIGNALED_BIT, 0x99, 0x1000).setSge(mr, 0, 64);
            batch.submit();
        }
        assertThat(s.post()).isEqualTo(2);
        assertThat(DataPathHostTest.drainOk(cq)).containsExactly(400L, 201L, 202L);
        mr.close();
        qp.close();
    }

    @Test
    void chainsAndBatchesInterleavedAroundTheRingManyTimesKeepEveryId() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 4, 8, 0, EnumSet.of(SendOperation.RDMA_WRITE));
        MemoryRegion mr = fake.buffer(0x51);
        SendRequests s = qp.sendRequests();
        long id = 1;
        for (int round = 0; round < 200; round++) { // 200 x 3 WRs: the 8-slot ring wraps 75 times
            List<Long> expected = new ArrayList<>();
            long first = id++;
            s.rdmaWrite(first, SendFlag.SIGNALED_BIT, 0x99, 0x1000).sge(mr, 0, 64);
            if (round % 2 == 0) {
                long batched = id++;
                try (PostBatch batch = qp.startSend()) {
                    batch.rdmaWrite(batched, SendFlag.SIGNALED_BIT, 0x99, 0x1000).setSge(mr, 0, 64);
                    batch.submit();
                }
                expected.add(batched);
            }
            long second = id++;
            s.rdmaWrite(second, round % 3 == 0 ? 0 : SendFlag.SIGNALED_BIT, 0x99, 0x1000).sge(mr, 0, 64);
            assertThat(s.post()).isEqualTo(2);
            expected.add(first);
            if (round % 3 != 0) {
                expected.add(second);
            }
            if (round % 3 == 0) { // an unsignaled last WR: a signaled one behind it retires it
                long third = id++;
                s.rdmaWrite(third, SendFlag.SIGNALED_BIT, 0x99, 0x1000).sge(mr, 0, 64);
                assertThat(s.post()).isEqualTo(1);
                expected.add(third);
            }
            assertThat(DataPathHostTest.drainOk(cq)).as("round %d", round).containsExactlyElementsOf(expected);
            assertThat(qp.sendQueue.tracker.outstanding()).isZero();
        }
        mr.close();
        qp.close();
    }
}
