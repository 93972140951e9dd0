package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link MisuseSweep} over the core objects on the fake provider, open and closed: QP, MR, MW, CQ, the classic
 * builders and the {@code ibv_wr_*} batch. Every misuse answers with a documented exception that names the verb
 * (no crash, no JDK exception). The live QP's and MR's verbs that would reach libibverbs itself with fake objects
 * (modify, query, prefetch) and the live PD (every call creates through libibverbs) are left to the ITs on rxe.
 */
class MisuseSweepHostTest {
    private static final Set<String> REACHES_LIBIBVERBS =
            Set.of("modify", "toInit", "toRtr", "toRts", "toErr", "toReset", "state", "query", "prefetch");
    private static FakeProvider fake;

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
    }

    private static MisuseSweep sweep() {
        MemoryRegion closed = fake.buffer(0x53);
        closed.close();
        return new MisuseSweep(fake.buffer(0x51), fake.register(fake.newPd(), Arena.ofShared().allocate(4096), 0x52),
                closed);
    }

    @Test
    void openObjectsAnswerEveryMisuseByName() {
        MisuseSweep s = sweep();
        CompletionQueue cq = fake.createCq(4096);
        QueuePair qp = fake.createRtsQp(cq, 256, 64, EnumSet.noneOf(SendOperation.class));
        Set<String> qpSkip = new java.util.HashSet<>(REACHES_LIBIBVERBS);
        qpSkip.add("startSend"); // the batch has its own test
        s.sweep("QueuePair", () -> qp, qpSkip, () -> { });
        s.sweep("MemoryRegion", () -> fake.buffer(0x54), REACHES_LIBIBVERBS, () -> { });
        s.sweep("CompletionQueue", () -> cq, Set.of(), () -> { });
        s.sweep("MemoryWindow", () -> fake.allocMw(MemoryWindowType.TYPE_2, 0x77), Set.of(), () -> { });
        s.sweep("SendRequests", qp::sendRequests, Set.of(), () -> { });
        s.sweep("ReceiveRequests", qp::receiveRequests, Set.of(), () -> { });
        assertThat(s.misfits()).isEmpty();
        assertThat(s.calls()).as("calls made").isGreaterThan(50);
    }

    @Test
    void aBatchAnswersEveryMisuseByNameBeforeAndAfterItsOperation() {
        MisuseSweep s = sweep();
        CompletionQueue cq = fake.createCq(4096);
        QueuePair qp = fake.createRtsQp(cq, 256, 64, EnumSet.allOf(SendOperation.class));
        PostBatch[] open = new PostBatch[1];
        Runnable abort = () -> {
            if (open[0] != null) {
                open[0].close(); // unsubmitted: ibv_wr_abort
                open[0] = null;
            }
        };
        s.sweep("PostBatch", () -> open[0] = qp.startSend(), Set.of(), abort);
        s.sweep("PostBatch(send)", () -> open[0] = qp.startSend().send(1, 0), Set.of(), abort);
        assertThat(s.misfits()).isEmpty();
        assertThat(s.calls()).as("calls made").isGreaterThan(50);
    }

    @Test
    void closedObjectsAnswerEveryCallByName() {
        MisuseSweep s = sweep();
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(cq, 16, 64, EnumSet.allOf(SendOperation.class));
        qp.close();
        MemoryRegion mr = fake.buffer(0x55);
        mr.close();
        MemoryWindow mw = fake.allocMw(MemoryWindowType.TYPE_2, 0x78);
        mw.close();
        ProtectionDomain pd = fake.newClosablePd();
        pd.close();
        s.sweep("closed QueuePair", () -> qp, Set.of(), () -> { });
        s.sweep("closed MemoryRegion", () -> mr, Set.of(), () -> { });
        s.sweep("closed MemoryWindow", () -> mw, Set.of(), () -> { });
        s.sweep("closed ProtectionDomain", () -> pd, Set.of(), () -> { });
        assertThat(s.misfits()).isEmpty();
        assertThat(s.calls()).as("calls made").isGreaterThan(50);
    }

    @Test
    void otherQueueTypesHandlesAndExtendedCompletionQueuesAnswerEveryMisuseByName() {
        ProtectionDomain pd = fake.protectionDomain();
        AddressHandle ah = FakeProvider.fakeAh(pd, new java.util.concurrent.atomic.AtomicInteger());
        AddressHandle closedAh = FakeProvider.fakeAh(pd, new java.util.concurrent.atomic.AtomicInteger());
        closedAh.close();
        AddressHandle foreignAh = FakeProvider.fakeAh(fake.newPd(), new java.util.concurrent.atomic.AtomicInteger());
        MisuseSweep s = sweep().with(AddressHandle.class, ah, closedAh, foreignAh);
        CompletionQueue cq = fake.createCq(4096);
        QueuePair ud = fake.createUdQp(cq, 256, EnumSet.of(SendOperation.SEND));
        QueuePair xrc = fake.createXrcInitiator(cq, 256, EnumSet.of(SendOperation.SEND, SendOperation.RDMA_WRITE));
        QueuePair dc = fake.createDcInitiator(cq, 256, EnumSet.of(SendOperation.SEND, SendOperation.RDMA_WRITE));
        PostBatch[] open = new PostBatch[1];
        Runnable abort = () -> {
            if (open[0] != null) {
                open[0].close();
                open[0] = null;
            }
            WorkCompletions wcs = WorkCompletions.allocate(64);
            while (cq.poll(wcs) > 0) {
                // retire what the calls posted, so every WR's references are released
            }
        };
        for (QueuePair qp : new QueuePair[] {ud, xrc, dc}) {
            String name = qp.type().toString();
            if (qp != dc) { // a DC initiator has no ibv_post_send (refused by name when asked for its builder)
                s.sweep(name + " SendRequests", qp::sendRequests, Set.of(), abort);
            }
            s.sweep(name + " PostBatch(send)", () -> open[0] = qp.startSend().send(1, 0), Set.of(), abort);
        }
        s.sweep("AddressHandle", () -> ah, Set.of(), () -> { });
        s.sweep("closed AddressHandle", () -> closedAh, Set.of(), () -> { });
        s.sweep("ExtendedCompletionQueue", () -> fake.createCqEx(64, EnumSet.allOf(CompletionField.class)), Set.of(),
                () -> { });
        s.sweep("WorkCompletions", () -> WorkCompletions.allocate(4), Set.of(), () -> { });
        assertThat(s.misfits()).isEmpty();
        assertThat(s.calls()).as("calls made").isGreaterThan(50);
    }
}
