package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.FakeProvider;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.MisuseSweep;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.SendOperation;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link MisuseSweep} over the mlx5 direct queues on the PRM device model ({@link Mlx5Fixture}): every public method
 * of {@link DirectSendQueue}, {@link DirectReceiveQueue} and {@link DirectCompletionQueue}, with one argument at a
 * time set to a boundary or misuse value, answers with a documented exception that names the operation, or works;
 * likewise {@link DirectDcQueue} with DC addresses of a closed AH or of another PD; after each call the chain is
 * cleared and the completions drained, and the queue still posts.
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
        assertThat(s.calls()).as("calls made").isGreaterThan(10);
        stillUsable(78);
    }

    @Test
    void theDirectDcQueueAnswersEveryMisuseByName() throws Throwable {
        ProtectionDomain pd = fp.protectionDomain();
        AddressHandle ah = FakeProvider.fakeAh(pd, new AtomicInteger());
        AddressHandle closing = FakeProvider.fakeAh(pd, new AtomicInteger());
        DcAddress closedAddress = dcAddress(closing);
        closing.close();
        DcAddress foreign = dcAddress(FakeProvider.fakeAh(fp.newPd(), new AtomicInteger()));
        DcAddress to = dcAddress(ah);
        QueuePair dci = fp.createDcInitiator(cq, 16, EnumSet.of(SendOperation.RDMA_WRITE, SendOperation.SEND));
        DirectDcQueue q = DirectDcQueue.over(dci, new Mlx5QueuePairView(arena.allocate(64 * 64, 64), 64, 64,
                arena.allocate(8, 8), arena.allocate(512, 64), 256, dci.qpNum()), dcq, false, false);
        MisuseSweep s = sweep().with(DcAddress.class, to, closedAddress, foreign);
        s.sweep("DirectDcQueue", () -> q, Set.of(), () -> {
            q.clear();
            reset();
        });
        assertThat(s.misfits()).isEmpty();
        assertThat(s.calls()).as("calls made").isGreaterThan(50);
        dci.close();
    }

    private static DcAddress dcAddress(AddressHandle ah) {
        return new DcAddress(ah, DirectDcQueue.trackingId(ah), new byte[48], 0x00ABCDEF, 0x1122334455667788L);
    }
}
