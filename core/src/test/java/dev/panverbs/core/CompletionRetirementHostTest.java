package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The classic poll's retirement ({@code CompletionQueue.retire}) over completions written straight into the
 * {@code ibv_wc} array: which work queue and slot each {@code wr_id} names, in the corners a provider rarely
 * reaches (a 48-bit position that wrapped, another queue's id next to the range of the run's queue, a stale id
 * inside a run). The queues are real ones of a QP over the fake provider; their positions are set through the
 * tracker (the provider would need 2^48 posts to get there).
 */
class CompletionRetirementHostTest {
    private static final long WRAP = 1L << WorkQueueTracker.POSITION_BITS;
    private static FakeProvider fake;

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
    }

    /** Queue {@code t}'s WRs at positions [head, tail), each with caller wr_id {@code idBase + position}. */
    private static void outstanding(WorkQueueTracker t, long head, long tail, long idBase) {
        for (long p = head; p < tail; p++) {
            t.put(p, idBase + p, 0);
        }
        t.publish(tail);
        t.advanceHead(head);
        assertThat(t.outstanding()).isEqualTo((int) (tail - head));
    }

    private static void write(WorkCompletions wcs, long... providerWrIds) {
        for (int i = 0; i < providerWrIds.length; i++) {
            wcs.array().set(ValueLayout.JAVA_LONG_UNALIGNED, i * WorkCompletions.WC_SIZE, providerWrIds[i]);
        }
        wcs.count(providerWrIds.length);
    }

    private static long wrIdOf(WorkCompletions wcs, int i) {
        return wcs.array().get(ValueLayout.JAVA_LONG_UNALIGNED, i * WorkCompletions.WC_SIZE);
    }

    @Test
    void anotherQueuesIdNextToAWrappedRangeIsNotTakenForThisQueues() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 16, 16, 0, EnumSet.noneOf(SendOperation.class));
        WorkQueueTracker s = qp.sendQueue.tracker;
        WorkQueueTracker r = qp.receiveQueue.tracker;
        // a: the queue whose token is one above b's, so b's ids just below the 48-bit wrap sit right under a's range
        WorkQueueTracker a = (r.encode(0) >>> 48) == (s.encode(0) >>> 48) + 1 ? r : s;
        WorkQueueTracker b = a == r ? s : r;
        assertThat(a.encode(0) >>> 48).isEqualTo((b.encode(0) >>> 48) + 1);
        outstanding(a, WRAP - 3, WRAP + 2, 1000);  // a wrapped: its newest position mod 2^48 is 1
        outstanding(b, WRAP - 5, WRAP - 1, 5000);
        WorkCompletions wcs = WorkCompletions.allocate(4);
        // a's WR at 2^48, then b's at 2^48 - 2: (a's newest id) - (b's id) = 3, inside a's 5 outstanding
        write(wcs, a.encode(WRAP), b.encode(WRAP - 2));
        cq.retire(wcs, 2);
        assertThat(wrIdOf(wcs, 0)).isEqualTo(1000 + WRAP);
        assertThat(wrIdOf(wcs, 1)).as("b's own caller id").isEqualTo(5000 + WRAP - 2);
        assertThat(a.outstanding()).as("a retired through 2^48").isEqualTo(1);
        assertThat(b.outstanding()).as("b retired through 2^48 - 2").isEqualTo(0);
        qp.close();
    }

    @Test
    void aRunRetiresAcrossTheWrapAndLeavesStaleIdsAsTheyAre() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 16, 16, 0, EnumSet.noneOf(SendOperation.class));
        WorkQueueTracker s = qp.sendQueue.tracker;
        outstanding(s, WRAP - 4, WRAP + 3, 7000);
        long stale = s.encode(WRAP - 40); // retired long ago: never outstanding now
        long foreign = 0x0000_0000_0000_0042L; // token 0: no queue of this CQ
        WorkCompletions wcs = WorkCompletions.allocate(8);
        write(wcs, s.encode(WRAP - 4), stale, s.encode(WRAP - 1), foreign, s.encode(WRAP + 1), s.encode(WRAP));
        cq.retire(wcs, 6);
        assertThat(wrIdOf(wcs, 0)).isEqualTo(7000 + WRAP - 4);
        assertThat(wrIdOf(wcs, 1)).as("stale: unchanged").isEqualTo(stale);
        assertThat(wrIdOf(wcs, 2)).isEqualTo(7000 + WRAP - 1);
        assertThat(wrIdOf(wcs, 3)).as("not ours: unchanged").isEqualTo(foreign);
        assertThat(wrIdOf(wcs, 4)).isEqualTo(7000 + WRAP + 1);
        assertThat(wrIdOf(wcs, 5)).isEqualTo(7000 + WRAP);
        assertThat(s.outstanding()).as("retired through the newest completed, 2^48 + 1").isEqualTo(1);
        qp.close();
    }

    @Test
    void beforeAnyWrapTheWholeRangeOfAQueueAndNothingOutsideItRetires() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 16, 16, 0, EnumSet.noneOf(SendOperation.class));
        WorkQueueTracker s = qp.sendQueue.tracker;
        outstanding(s, 20, 36, 100); // 16 outstanding: the capacity
        WorkCompletions wcs = WorkCompletions.allocate(4);
        // one past the newest (never posted), the oldest, one before it (retired), the newest
        write(wcs, s.encode(36), s.encode(20), s.encode(19), s.encode(35));
        cq.retire(wcs, 4);
        assertThat(wrIdOf(wcs, 0)).isEqualTo(s.encode(36));
        assertThat(wrIdOf(wcs, 1)).isEqualTo(120);
        assertThat(wrIdOf(wcs, 2)).isEqualTo(s.encode(19));
        assertThat(wrIdOf(wcs, 3)).isEqualTo(135);
        assertThat(s.outstanding()).isZero();
        qp.close();
    }
}
