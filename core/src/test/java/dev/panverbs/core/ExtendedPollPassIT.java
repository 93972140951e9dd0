package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The man page's poll loop ({@code ibv_start_poll}; {@code do ... while (ibv_next_poll() == 0)};
 * {@code ibv_end_poll}) over many passes never repeats, invents or loses a completion, and never overruns the CQ.
 * rxe before rdma-core 55 advances the consumer index once more in {@code ibv_end_poll} after {@code ibv_next_poll}
 * answered ENOENT (upstream fix b78b414e0), which replays stale entries and then makes the kernel see the CQ full
 * ({@code IBV_EVENT_CQ_ERR}).
 */
class ExtendedPollPassIT {
    private static final int PORT = 1;
    private CoreResources res;

    @BeforeEach
    void open() {
        res = new CoreResources();
    }

    @AfterEach
    void close() {
        res.close();
    }

    @Test
    void manPagePollLoopSeesEachCompletionExactlyOnce() {
        Context ctx = res.context;
        ProtectionDomain pd = res.pd;
        ExtendedCompletionQueue cq = ctx.createCq(16).buildEx();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(4).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        int gid = ctx.queryGid(PORT, 1).isZero() ? 0 : 1;
        AddressVector path = AddressVector.builder(PORT).grh(ctx.queryGid(PORT, gid).toBytes(), gid, 64).build();
        for (QueuePair q : new QueuePair[] {a, b}) {
            q.toInit(PORT, EnumSet.of(Access.REMOTE_WRITE));
        }
        a.toRtr(path, Mtu.MTU_1024, b.qpNum(), 0);
        b.toRtr(path, Mtu.MTU_1024, a.qpNum(), 0);
        a.toRts(0);
        b.toRts(0);
        MemoryRegion mr = pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        List<Long> seen = new ArrayList<>();
        int total = 40; // more than twice the CQ: a consumer index off by one shows up in the first passes
        long next = 0;
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (seen.size() < total && System.nanoTime() < deadline) {
            SendRequests wrs = a.sendRequests();
            while (next < total && wrs.pending() < 2 && wrs.count() < wrs.capacity()) {
                wrs.rdmaWrite(next++, SendFlag.SIGNALED_BIT, mr.rkey(), mr.address() + 1024).sge(mr, 0, 8);
            }
            wrs.post();
            if (cq.startPoll()) {
                do {
                    assertThat(cq.status()).as("wr %d", cq.wrId()).isEqualTo(WorkCompletionStatus.SUCCESS);
                    seen.add(cq.wrId());
                } while (cq.nextPoll());
                cq.endPoll();
            }
        }
        List<Long> expected = new ArrayList<>();
        for (long i = 0; i < total; i++) {
            expected.add(i);
        }
        assertThat(seen).as("each completion once, in order").isEqualTo(expected);
        long quiet = System.nanoTime() + Duration.ofMillis(500).toNanos();
        while (System.nanoTime() < quiet) {
            assertThat(cq.startPoll()).as("no completion after the last one").isFalse();
        }
        Optional<AsyncEvent> event = ctx.getAsyncEvent(Duration.ZERO);
        assertThat(event).as("no CQ overrun").isEmpty();
    }
}
