package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Retirement of outstanding WRs (and their region references) in completion order. */
class WorkQueueTrackerTest {
    private final long mrA = 7;  // MemoryRegion.trackingId values
    private final long mrB = 8;

    @Test
    void unsignaledWrsRetireWithTheNextSignaledCompletion() {
        WorkQueueTracker t = new WorkQueueTracker(8, 2);
        t.record(1, false, new long[] {mrA}, 0, 1);
        t.record(2, false, new long[] {mrB}, 0, 1);
        t.record(3, true, new long[] {mrA, mrB}, 0, 2);
        assertThat(t.outstanding()).isEqualTo(3);
        assertThat(t.references(mrA)).isEqualTo(2);
        assertThat(t.room()).isEqualTo(5);
        // a success completion for an unsignaled wr_id cannot exist: nothing retires
        assertThat(t.retire(1, false)).isZero();
        assertThat(t.retire(3, false)).isEqualTo(3);
        assertThat(t.outstanding()).isZero();
        assertThat(t.references(mrA)).isZero();
        assertThat(t.references(mrB)).isZero();
    }

    @Test
    void errorCompletionsRetireThroughTheirOwnWr() {
        WorkQueueTracker t = new WorkQueueTracker(4, 1);
        t.record(10, false, new long[] {mrA}, 0, 1);
        t.record(11, false, new long[] {mrB}, 0, 1);
        t.record(12, true, new long[] {mrB}, 0, 1);
        assertThat(t.retire(10, true)).isEqualTo(1); // e.g. WR 10 failed: unsignaled WRs complete on error
        assertThat(t.references(mrA)).isZero();
        assertThat(t.references(mrB)).isEqualTo(2);
        assertThat(t.retire(11, true)).isEqualTo(1); // flushed
        assertThat(t.retire(12, true)).isEqualTo(1);
        assertThat(t.outstanding()).isZero();
    }

    @Test
    void ringWrapsAndReportsRoom() {
        WorkQueueTracker t = new WorkQueueTracker(3, 1);
        for (int round = 0; round < 10; round++) {
            t.record(round, true, new long[] {mrA}, 0, 1);
            t.record(100 + round, true, new long[] {mrB}, 0, 1);
            assertThat(t.room()).isEqualTo(1);
            assertThat(t.headIs(round)).isTrue();
            assertThat(t.retire(round, false)).isEqualTo(1);
            assertThat(t.retire(100 + round, false)).isEqualTo(1);
        }
        assertThat(t.room()).isEqualTo(3);
    }

    @Test
    void retireAllForgetsEverything() {
        WorkQueueTracker t = new WorkQueueTracker(4, 1);
        t.record(1, true, new long[] {mrA}, 0, 1);
        t.record(2, false, new long[] {mrA}, 0, 1);
        t.retireAll();
        assertThat(t.outstanding()).isZero();
        assertThat(t.references(mrA)).isZero();
        assertThat(t.headIs(1)).isFalse();
    }

    @Test
    void recordCopiesOnlyTheWrsOwnSges() {
        WorkQueueTracker t = new WorkQueueTracker(4, 3);
        long[] staged = {mrA, mrB, 99, mrB, 0}; // WR 0: SGEs 0..2 (2 used); WR 1: SGEs 3..5 (1 used, 1 inline)
        t.record(1, false, staged, 0, 2);
        t.record(2, true, staged, 3, 2);
        assertThat(t.references(mrA)).isEqualTo(1);
        assertThat(t.references(mrB)).isEqualTo(2);
        assertThat(t.references(99)).isZero(); // beyond WR 0's num_sge
        assertThat(t.retire(2, false)).isEqualTo(2);
        assertThat(t.references(mrB)).isZero();
    }
}
