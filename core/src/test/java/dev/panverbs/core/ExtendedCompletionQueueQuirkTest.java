package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Which providers end a poll pass inside ibv_next_poll (fixed in rdma-core 55 for rxe). */
class ExtendedCompletionQueueQuirkTest {

    @Test
    void onlyRxeBeforeRdmaCore55EndsThePassInNextPoll() {
        assertThat(ExtendedCompletionQueue.nextPollEndsPass(0xFFFFFF, 44)).isTrue();
        assertThat(ExtendedCompletionQueue.nextPollEndsPass(0xFFFFFF, 54)).isTrue();
        assertThat(ExtendedCompletionQueue.nextPollEndsPass(0xFFFFFF, 55)).isFalse();
        assertThat(ExtendedCompletionQueue.nextPollEndsPass(0x02c9, 44)).as("mlx5").isFalse();
        assertThat(ExtendedCompletionQueue.nextPollEndsPass(0xFFFFFF, -1)).as("unknown release").isFalse();
    }
}
