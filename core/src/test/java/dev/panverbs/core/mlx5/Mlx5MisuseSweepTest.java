package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.MisuseSweep;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link MisuseSweep} over the mlx5 direct queues on the PRM device model ({@link Mlx5Fixture}): every public method
 * of {@link DirectSendQueue}, {@link DirectReceiveQueue} and {@link DirectCompletionQueue}, with one argument at a
 * time set to a boundary or misuse value, answers with a documented exception that names the operation, or works;
 * after each call the chain is cleared and the completions drained, and the queue still posts.
 */
class Mlx5MisuseSweepTest extends Mlx5Fixture {

    private MisuseSweep sweep() {
        MemoryRegion closed = fp.register(arena.allocate(256, 64), 0x3334);
        closed.close();
        return new MisuseSweep(mrLocal, fp.register(fp.newPd(), arena.allocate(256, 64), 0x5556), closed)
                .alsoNaming("mlx5 Direct WQE post").alsoNaming("mlx5 direct receive post")
                .alsoNaming("mlx5 direct CQE poll").alsoNaming("mlx5 direct arm");
    }

    private void reset() {
        dsq.clear();
        while (dcq.poll(wcs) > 0) {
            // drain what the calls that posted completed
        }
    }

    @Test
    void theDirectSendQueueAnswersEveryMisuseByNameAndStaysUsable() throws Throwable {
        MisuseSweep s = sweep();
        s.sweep("DirectSendQueue", () -> dsq, Set.of(), this::reset);
        assertThat(s.misfits()).isEmpty();
        assertThat(s.calls()).as("calls made").isGreaterThan(50);
        stillUsable(77);
    }

    @Test
    void theDirectReceiveAndCompletionQueuesAnswerEveryMisuseByName() throws Throwable {
        MisuseSweep s = sweep();
        DirectReceiveQueue drq = receiveQueue();
        s.sweep("DirectReceiveQueue", () -> drq, Set.of(), () -> {
            drq.clear();
            reset();
        });
        s.sweep("DirectCompletionQueue", () -> dcq, Set.of(), this::reset);
        assertThat(s.misfits()).isEmpty();
        assertThat(s.calls()).as("calls made").isGreaterThan(50);
        stillUsable(78);
    }
}
