package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The shared receive queue's tracker: per-slot retirement in any order, stale completions retire nothing, several
 * pollers retire concurrently, and the routes that bring an SRQ's completion to it from any CQ.
 */
class SrqTrackerTest {
    private final long mrA = 7; // KeySnapshot.trackingId values
    private final long mrB = 8;

    /** Claims and publishes one receive; returns the wr_id the provider would carry. */
    private static long post(SrqTracker t, long wrId, long... keys) {
        int slot = t.claim(wrId, keys, 0, keys.length);
        t.publish();
        return t.providerWrId(slot);
    }

    @Test
    void completionsRetireTheirOwnReceiveInAnyOrder() {
        SrqTracker t = new SrqTracker(4, 2);
        t.routeToken(SrqRoutes.FIRST_TOKEN + 3);
        long r1 = post(t, 101, mrA);
        long r2 = post(t, 102, mrB);
        long r3 = post(t, 103, mrA, mrB);
        assertThat(r1 >>> WorkQueueTracker.POSITION_BITS).isEqualTo(SrqRoutes.FIRST_TOKEN + 3);
        assertThat(r1).as("the SRQ token sets the sign bit").isNegative();
        assertThat(t.outstanding()).isEqualTo(3);
        assertThat(t.room()).isEqualTo(1);
        assertThat(t.references(mrA)).isEqualTo(2);
        // the last posted completes first (another QP took it): only it retires, unlike a FIFO queue
        assertThat(t.retire(r3)).isEqualTo(103);
        assertThat(t.outstanding()).isEqualTo(2);
        assertThat(t.references(mrA)).isEqualTo(1);
        assertThat(t.references(mrB)).isEqualTo(1);
        assertThat(t.retire(r1)).isEqualTo(101);
        assertThat(t.references(mrA)).isZero();
        assertThat(t.retire(r2)).isEqualTo(102);
        assertThat(t.outstanding()).isZero();
        assertThat(t.references(mrB)).isZero();
    }

    @Test
    void aStaleOrRepeatedCompletionRetiresNothing() {
        SrqTracker t = new SrqTracker(2, 1);
        t.routeToken(SrqRoutes.FIRST_TOKEN);
        long r1 = post(t, 1, mrA);
        assertThat(t.retire(r1)).isEqualTo(1);
        long r2 = post(t, 2, mrA); // may reuse r1's slot, with a new stamp
        assertThat(t.retire(r1)).as("r1 again: its stamp is dead").isEqualTo(r1);
        assertThat(t.outstanding()).isEqualTo(1);
        assertThat(t.references(mrA)).isEqualTo(1);
        assertThat(t.retire(r2 ^ (1L << 20))).as("a stamp never handed out").isEqualTo(r2 ^ (1L << 20));
        assertThat(t.retire(r2)).isEqualTo(2);
        assertThat(t.outstanding()).isZero();
    }

    @Test
    void slotsAreReusedAfterRetirementAndTheCapacityHolds() {
        SrqTracker t = new SrqTracker(3, 1);
        t.routeToken(SrqRoutes.FIRST_TOKEN);
        List<Long> ids = new ArrayList<>();
        for (int round = 0; round < 50; round++) {
            while (t.room() > 0) {
                ids.add(post(t, round * 10L + ids.size(), mrA));
            }
            assertThat(t.outstanding()).isEqualTo(3);
            long middle = ids.remove(1); // retire out of order, one at a time
            t.retire(middle);
            assertThat(t.room()).isEqualTo(1);
        }
        assertThat(ids).hasSize(2);
        assertThat(ids).doesNotHaveDuplicates();
    }

    @Test
    void aResizeChangesHowManyReceivesAreAdmittedWithinTheReservedSlots() {
        SrqTracker t = new SrqTracker(2, 8, 1);
        post(t, 1, mrA);
        post(t, 2, mrA);
        assertThat(t.room()).isZero();
        t.resize(8);
        assertThat(t.room()).isEqualTo(6);
        for (int i = 0; i < 6; i++) {
            post(t, 10 + i, mrB);
        }
        assertThat(t.outstanding()).isEqualTo(8);
        assertThat(t.references(mrB)).isEqualTo(6);
        t.resize(4); // shrinking below what is posted only stops admitting
        assertThat(t.room()).isNegative();
        assertThat(t.reserved()).isEqualTo(8);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> t.resize(9))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void releaseForgetsWhatTheProviderRefused() {
        SrqTracker t = new SrqTracker(4, 1);
        int[] slots = new int[4];
        for (int i = 0; i < 4; i++) {
            slots[i] = t.claim(i, new long[] {mrA}, 0, 1);
        }
        t.publish();
        long second = t.providerWrId(slots[1]);
        t.release(slots, 1, 4); // bad_wr = WR 1: WRs 1..3 were not posted
        assertThat(t.outstanding()).isEqualTo(1);
        assertThat(t.references(mrA)).isEqualTo(1);
        assertThat(t.retire(second)).as("a released WR never completes").isEqualTo(second);
        assertThat(t.outstanding()).isEqualTo(1);
    }

    @Test
    void retireAllForgetsEverything() {
        SrqTracker t = new SrqTracker(8, 1);
        long r = post(t, 1, mrA);
        post(t, 2, mrB);
        t.retireAll();
        assertThat(t.outstanding()).isZero();
        assertThat(t.references(mrA)).isZero();
        assertThat(t.retire(r)).isEqualTo(r);
        assertThat(t.room()).isEqualTo(8);
    }

    /** Two pollers (two CQs) retire completions of one SRQ at once while the producer keeps posting. */
    @Test
    void concurrentPollersRetireEachReceiveExactlyOnce() throws Exception {
        SrqTracker t = new SrqTracker(64, 1);
        t.routeToken(SrqRoutes.FIRST_TOKEN + 1);
        int total = 200_000;
        ConcurrentLinkedQueue<Long> wire = new ConcurrentLinkedQueue<>(); // the "NIC": hands completions out
        AtomicLong sum = new AtomicLong();
        AtomicLong retired = new AtomicLong();
        CountDownLatch done = new CountDownLatch(2);
        Runnable poller = () -> {
            try {
                while (retired.get() < total) {
                    Long id = wire.poll();
                    if (id == null) {
                        Thread.onSpinWait();
                        continue;
                    }
                    long wrId = t.retire(id);
                    assertThat(wrId).isNotEqualTo(id);
                    sum.addAndGet(wrId);
                    retired.incrementAndGet();
                    wire.size(); // a little jitter between the two pollers
                }
            } finally {
                done.countDown();
            }
        };
        Thread p1 = new Thread(poller, "poller-1");
        Thread p2 = new Thread(poller, "poller-2");
        p1.start();
        p2.start();
        long[] key = {mrA};
        for (int i = 1; i <= total; i++) {
            while (t.room() == 0) {
                Thread.onSpinWait();
            }
            int slot = t.claim(i, key, 0, 1);
            t.publish();
            wire.add(t.providerWrId(slot));
        }
        done.await();
        assertThat(sum.get()).as("every caller id exactly once").isEqualTo((long) total * (total + 1) / 2);
        assertThat(t.outstanding()).isZero();
        assertThat(t.references(mrA)).isZero();
    }

    @Test
    void aCompletionWithAnSrqTokenReachesTheSrqFromAnyCqsRoutes() {
        SrqTracker t = new SrqTracker(4, 1);
        t.routeToken(SrqRoutes.attach(t));
        assertThat(SrqRoutes.isAttached(t)).isTrue();
        CompletionRoutes cqA = new CompletionRoutes();
        CompletionRoutes cqB = new CompletionRoutes();
        long r1 = post(t, 11, mrA);
        long r2 = post(t, 12, mrA);
        // two CQs that know nothing of the SRQ: the sign bit sends the lookup to SrqRoutes
        assertThat(CompletionRoutes.retire(cqA.table(), r2)).isEqualTo(12);
        assertThat(CompletionRoutes.retire(cqB.table(), r1)).isEqualTo(11);
        assertThat(t.outstanding()).isZero();
        assertThat(CompletionRoutes.retire(cqA.table(), 5L)).as("a plain wr_id is not ours").isEqualTo(5L);
        long r3 = post(t, 13, mrA);
        SrqRoutes.detach(t);
        assertThat(SrqRoutes.isAttached(t)).isFalse();
        assertThat(CompletionRoutes.retire(cqA.table(), r3)).as("token freed: not routed").isEqualTo(r3);
        assertThat(t.outstanding()).isEqualTo(1);
    }

    @Test
    void cqTokensStayBelowTheSrqHalf() {
        assertThat(SrqRoutes.FIRST_TOKEN).isEqualTo(0x8000);
        assertThat(CompletionRoutes.MAX_CQ_TOKEN).isLessThan(SrqRoutes.FIRST_TOKEN);
        long highestCqWrId = ((long) CompletionRoutes.MAX_CQ_TOKEN << WorkQueueTracker.POSITION_BITS)
                | WorkQueueTracker.POSITION_MASK;
        assertThat(highestCqWrId).as("a CQ token never sets the sign bit").isPositive();
    }
}
