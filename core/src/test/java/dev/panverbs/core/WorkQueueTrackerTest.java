package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Recording, publishing, rollback and O(1) retirement by position (the provider's wr_id names the slot). */
class WorkQueueTrackerTest {
    private final long mrA = 7;  // KeySnapshot.trackingId values
    private final long mrB = 8;

    /** Records one WR at the tail and publishes it; returns the wr_id the provider would carry. */
    private static long post(WorkQueueTracker t, long wrId, long... keys) {
        long p = t.tail();
        t.put(p, wrId, keys, 0, keys.length);
        t.publish(p + 1);
        return t.encode(p);
    }

    @Test
    void aCompletionRetiresEverythingUpToItsWrAndReturnsTheCallersId() {
        WorkQueueTracker t = new WorkQueueTracker(8, 2);
        t.routeToken(5);
        post(t, 1, mrA);                      // unsignaled
        post(t, 2, mrB);                      // unsignaled
        long third = post(t, 3, mrA, mrB);    // signaled: its completion covers the two before it
        assertThat(third >>> WorkQueueTracker.POSITION_BITS).isEqualTo(5);
        assertThat(t.outstanding()).isEqualTo(3);
        assertThat(t.references(mrA)).isEqualTo(2);
        assertThat(t.room()).isEqualTo(5);
        assertThat(t.retire(third)).isEqualTo(3);
        assertThat(t.outstanding()).isZero();
        assertThat(t.references(mrA)).isZero();
        assertThat(t.references(mrB)).isZero();
    }

    @Test
    void callerIdsMayRepeatAndEachCompletionStillNamesItsOwnSlot() {
        WorkQueueTracker t = new WorkQueueTracker(4, 1);
        long a = post(t, 42, mrA);
        long b = post(t, 42, mrB);
        assertThat(t.retire(a)).isEqualTo(42);
        assertThat(t.references(mrA)).isZero();
        assertThat(t.references(mrB)).isEqualTo(1);
        assertThat(t.retire(b)).isEqualTo(42);
        assertThat(t.outstanding()).isZero();
    }

    @Test
    void errorAndFlushCompletionsRetireThroughTheirOwnWr() {
        WorkQueueTracker t = new WorkQueueTracker(4, 1);
        long w10 = post(t, 10, mrA);
        long w11 = post(t, 11, mrB);
        long w12 = post(t, 12, mrB);
        assertThat(t.retire(w10)).isEqualTo(10); // WR 10 failed: unsignaled WRs complete on error
        assertThat(t.references(mrA)).isZero();
        assertThat(t.references(mrB)).isEqualTo(2);
        assertThat(t.retire(w11)).isEqualTo(11); // flushed
        assertThat(t.retire(w12)).isEqualTo(12);
        assertThat(t.outstanding()).isZero();
    }

    @Test
    void staleOrForeignIdsRetireNothingButRecentOnesStillMapBack() {
        WorkQueueTracker t = new WorkQueueTracker(4, 1);
        long w1 = post(t, 101, mrA);
        long w2 = post(t, 102, mrA);
        assertThat(t.retire(w2)).isEqualTo(102);
        assertThat(t.retire(w1)).as("already retired: the caller's id, nothing moves").isEqualTo(101);
        assertThat(t.outstanding()).isZero();
        long never = t.encode(t.tail() + 3);
        assertThat(t.retire(never)).as("a position never handed out").isEqualTo(never);
        assertThat(t.outstanding()).isZero();
    }

    @Test
    void rollbackForgetsWhatTheProviderRefused() {
        WorkQueueTracker t = new WorkQueueTracker(8, 1);
        long p = t.tail();
        for (int i = 0; i < 4; i++) {
            t.put(p + i, i, new long[] {mrA}, 0, 1);
        }
        t.publish(p + 4);
        assertThat(t.references(mrA)).isEqualTo(4);
        t.rollback(p + 1); // bad_wr = WR 1
        assertThat(t.outstanding()).isEqualTo(1);
        assertThat(t.references(mrA)).isEqualTo(1);
        assertThat(t.tail()).isEqualTo(p + 1);
    }

    @Test
    void ringWrapsAndReportsRoom() {
        WorkQueueTracker t = new WorkQueueTracker(3, 1);
        for (int round = 0; round < 10; round++) {
            long a = post(t, round, mrA);
            long b = post(t, 100 + round, mrB);
            assertThat(t.room()).isEqualTo(1);
            assertThat(t.retire(a)).isEqualTo(round);
            assertThat(t.retire(b)).isEqualTo(100 + round);
        }
        assertThat(t.room()).isEqualTo(3);
    }

    @Test
    void retireAllForgetsEverything() {
        WorkQueueTracker t = new WorkQueueTracker(4, 1);
        post(t, 1, mrA);
        post(t, 2, mrA);
        t.retireAll();
        assertThat(t.outstanding()).isZero();
        assertThat(t.references(mrA)).isZero();
    }

    @Test
    void aWrStagedWithoutAnSgeCarriesNoReferenceOfTheSlotsPreviousLap() {
        // stageWr's count 0 is what a WR that ends without an SGE (LOCAL_INV, an empty SEND or WRITE)
        // is published with: its slot still holds the references of the WR one lap before
        WorkQueueTracker t = new WorkQueueTracker(1, 2); // two slots: position p and p + 2 share one
        for (int i = 0; i < 8; i++) {
            boolean sges = (i & 2) == 0; // two WRs with two references, then two without in the same slots
            long p = t.tail();
            t.stageWr(p, i);
            if (sges) {
                t.stageRef(p, 0, mrA);
                t.stageRef(p, 1, mrB);
            }
            t.publish(p + 1);
            assertThat(t.references(mrA)).as("WR %d", i).isEqualTo(sges ? 1 : 0);
            assertThat(t.references(mrB)).as("WR %d", i).isEqualTo(sges ? 1 : 0);
            assertThat(t.retire(t.encode(p))).isEqualTo(i);
        }
    }

    @Test
    void putCopiesOnlyTheWrsOwnSges() {
        WorkQueueTracker t = new WorkQueueTracker(4, 3);
        long[] staged = {mrA, mrB, 99, mrB, 0}; // WR 0: SGEs 0..2 (2 used); WR 1: SGEs 3..5 (1 used, 1 inline)
        long p = t.tail();
        t.put(p, 1, staged, 0, 2);
        t.put(p + 1, 2, staged, 3, 2);
        t.publish(p + 2);
        assertThat(t.references(mrA)).isEqualTo(1);
        assertThat(t.references(mrB)).isEqualTo(2);
        assertThat(t.references(99)).isZero(); // beyond WR 0's num_sge
        assertThat(t.retire(t.encode(p + 1))).isEqualTo(2);
        assertThat(t.references(mrB)).isZero();
    }
}
