package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Shared receive queues on a real device: RC and UD traffic from several QPs into one SRQ (completions on two CQs,
 * each retiring its own receive), the limit event at the right count, RNR when the SRQ runs dry, close ordering
 * (an SRQ with attached QPs, an MR named by posted SRQ receives). The DMA race of the SRQ post path is in
 * {@link DmaSafetyIT}'s style below. Host twins: {@code SrqTrackerTest}.
 */
class SharedReceiveQueueIT extends DataPathResources {
    private static final int MSG = 256;

    @Test
    void rcTrafficFromSeveralQpsLandsInOneSrqAndRetiresThroughItFromTwoCqs() {
        SharedReceiveQueue srq = pd.createSrq(16).build();
        assertThat(srq.maxWr()).isGreaterThanOrEqualTo(16);
        assertThat(srq.query().maxWr()).isGreaterThanOrEqualTo(16);
        CompletionQueue sendCq = ctx.createCq(32).build();
        CompletionQueue[] recvCqs = {ctx.createCq(32).build(), ctx.createCq(32).build()};
        int pairs = 3;
        QueuePair[] senders = new QueuePair[pairs];
        QueuePair[] receivers = new QueuePair[pairs];
        for (int i = 0; i < pairs; i++) {
            senders[i] = pd.createQp(QueuePairType.RC, sendCq, sendCq).build();
            receivers[i] = pd.createQp(QueuePairType.RC, sendCq, recvCqs[i % 2]).srq(srq).build();
            assertThat(receivers[i].srq()).containsSame(srq);
            connect(senders[i], receivers[i]);
        }
        QueuePair onSrq = receivers[0];
        assertThatThrownBy(onSrq::receiveRequests).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("shared receive queue");

        MemoryRegion rx = pd.allocate(8L * MSG, ALL_REMOTE);
        MemoryRegion tx = pd.allocate((long) pairs * 2 * MSG, ALL_REMOTE);
        ReceiveRequests rwrs = srq.receiveRequests();
        for (int k = 0; k < 8; k++) {
            rwrs.recv(100 + k).sge(rx, (long) k * MSG, MSG);
        }
        assertThat(rwrs.post()).isEqualTo(8);
        assertThat(srq.outstanding()).isEqualTo(8);
        for (int i = 0; i < pairs; i++) { // two messages per sender, each with its own pattern
            for (int m = 0; m < 2; m++) {
                int off = (i * 2 + m) * MSG;
                fill(tx.buffer(), off, MSG, i * 16 + m);
                senders[i].sendRequests().send(i * 2 + m, SendFlag.SIGNALED_BIT).sge(tx, off, MSG);
            }
            senders[i].sendRequests().post();
        }
        assertThat(awaitSuccesses(sendCq, 6, Duration.ofMillis(50))).hasSize(6);

        Map<Long, WorkCompletionInfo> byWrId = new HashMap<>();
        Map<Integer, Integer> perQp = new HashMap<>();
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (byWrId.size() < 6 && System.nanoTime() < deadline) {
            for (CompletionQueue cq : recvCqs) {
                int n = cq.poll(wcs);
                for (int j = 0; j < n; j++) {
                    WorkCompletion wc = wcs.get(j);
                    assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
                    assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.RECV);
                    assertThat(byWrId.put(wc.wrId(), new WorkCompletionInfo(wc.qpNum(), wc.byteLen())))
                            .as("wr_id %d completes once", wc.wrId()).isNull();
                    perQp.merge(wc.qpNum(), 1, Integer::sum);
                }
            }
        }
        assertThat(byWrId.keySet()).hasSize(6).allMatch(id -> id >= 100 && id < 108);
        for (int i = 0; i < pairs; i++) {
            assertThat(perQp.get(receivers[i].qpNum())).as("messages received by QP %d", i).isEqualTo(2);
        }
        // each receive holds the bytes of the message its QP got, in order per QP (an RC QP consumes in order)
        for (Map.Entry<Long, WorkCompletionInfo> e : byWrId.entrySet()) {
            assertThat(e.getValue().byteLen()).isEqualTo(MSG);
        }
        for (int i = 0; i < pairs; i++) {
            int qpNum = receivers[i].qpNum();
            List<Long> ids = byWrId.entrySet().stream().filter(e -> e.getValue().qpNum() == qpNum)
                    .map(Map.Entry::getKey).sorted().toList();
            for (int m = 0; m < 2; m++) {
                long slot = ids.get(m) - 100;
                assertSameBytes(rx.buffer(), slot * MSG, tx.buffer(), (long) (i * 2 + m) * MSG, MSG);
            }
        }
        assertThat(srq.outstanding()).as("the two unused receives").isEqualTo(2);
        assertThat(srq.query().srqLimit()).isZero();
    }

    @Test
    void udTrafficFromTwoQpsLandsInOneSrq() {
        SharedReceiveQueue srq = pd.createSrq(8).buildEx(); // ibv_create_srq_ex, IBV_SRQT_BASIC
        CompletionQueue cq = ctx.createCq(32).build();
        int qkey = 0x1234;
        QueuePair s1 = pd.createQp(QueuePairType.UD, cq, cq).build();
        QueuePair s2 = pd.createQp(QueuePairType.UD, cq, cq).build();
        QueuePair r1 = pd.createQp(QueuePairType.UD, cq, cq).srq(srq).build();
        QueuePair r2 = pd.createQp(QueuePairType.UD, cq, cq).srq(srq).build();
        for (QueuePair q : new QueuePair[] {s1, s2, r1, r2}) {
            q.toInit(PORT, qkey);
            q.toRtr();
            q.toRts(0);
        }
        AddressHandle ah = pd.createAh(path());
        int slot = 40 + MSG; // the GRH, then the payload
        MemoryRegion rx = pd.allocate(4L * slot, ALL_REMOTE);
        MemoryRegion tx = pd.allocate(2L * MSG, ALL_REMOTE);
        ReceiveRequests rwrs = srq.receiveRequests();
        for (int k = 0; k < 4; k++) {
            rwrs.recv(200 + k).sge(rx, (long) k * slot, slot);
        }
        rwrs.post();
        fill(tx.buffer(), 0, MSG, 3);
        fill(tx.buffer(), MSG, MSG, 77);
        s1.sendRequests().send(1, SendFlag.SIGNALED_BIT).sge(tx, 0, MSG).ud(ah, r1.qpNum(), qkey).post();
        s2.sendRequests().send(2, SendFlag.SIGNALED_BIT).sge(tx, MSG, MSG).ud(ah, r2.qpNum(), qkey).post();
        Map<Integer, Long> recvByQp = new HashMap<>();
        Set<Long> sends = new TreeSet<>();
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while ((recvByQp.size() < 2 || sends.size() < 2) && System.nanoTime() < deadline) {
            int n = cq.poll(wcs);
            for (int j = 0; j < n; j++) {
                WorkCompletion wc = wcs.get(j);
                assertThat(wc.status()).as("%s", wc).isEqualTo(WorkCompletionStatus.SUCCESS);
                if (wc.opcode() == WorkCompletionOpcode.RECV) {
                    assertThat(wc.hasGrh()).isTrue();
                    assertThat(wc.byteLen()).isEqualTo(40 + MSG);
                    recvByQp.put(wc.qpNum(), wc.wrId());
                } else {
                    sends.add(wc.wrId());
                }
            }
        }
        assertThat(sends).containsExactly(1L, 2L);
        assertThat(recvByQp).containsOnlyKeys(r1.qpNum(), r2.qpNum());
        long k1 = recvByQp.get(r1.qpNum()) - 200;
        long k2 = recvByQp.get(r2.qpNum()) - 200;
        assertSameBytes(rx.buffer(), k1 * slot + 40, tx.buffer(), 0, MSG);
        assertSameBytes(rx.buffer(), k2 * slot + 40, tx.buffer(), MSG, MSG);
        assertThat(srq.outstanding()).isEqualTo(2);
    }

    @Test
    void theLimitEventFiresWhenFewerThanTheLimitRemain() {
        SharedReceiveQueue srq = pd.createSrq(16).build();
        CompletionQueue cq = ctx.createCq(32).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).srq(srq).build();
        connect(a, b);
        MemoryRegion rx = pd.allocate(8L * 64, ALL_REMOTE);
        MemoryRegion tx = pd.allocate(64, ALL_REMOTE);
        ReceiveRequests rwrs = srq.receiveRequests();
        for (int k = 0; k < 8; k++) {
            rwrs.recv(k).sge(rx, k * 64L, 64);
        }
        rwrs.post();
        assertThat(asyncEvents(Duration.ZERO)).as("no stale event").isEmpty();
        assertThatThrownBy(() -> srq.armLimit(srq.maxWr() + 1)).isInstanceOf(VerbsException.class)
                .hasMessageContaining("srq_limit").hasMessageContaining("max_wr");
        srq.armLimit(4);
        assertThat(srq.query().srqLimit()).isEqualTo(4);
        for (int i = 0; i < 4; i++) { // 8 -> 4 posted: not below the limit yet
            a.sendRequests().send(i, SendFlag.SIGNALED_BIT).sge(tx, 0, 64);
        }
        a.sendRequests().post();
        awaitSuccesses(cq, 8, Duration.ofMillis(200));
        assertThat(srq.outstanding()).isEqualTo(4);
        assertThat(asyncEvents(Duration.ofMillis(500))).as("4 left, limit 4: no event").isEmpty();
        assertThat(srq.query().srqLimit()).as("still armed").isEqualTo(4);
        a.sendRequests().send(9, SendFlag.SIGNALED_BIT).sge(tx, 0, 64).post(); // 3 left
        awaitSuccesses(cq, 2, Duration.ofMillis(50));
        List<AsyncEvent> events = new ArrayList<>();
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (events.isEmpty() && System.nanoTime() < deadline) {
            ctx.getAsyncEvent(Duration.ofSeconds(1)).ifPresent(events::add);
        }
        assertThat(events).hasSize(1);
        assertThat(events.get(0).type()).isEqualTo(AsyncEventType.SRQ_LIMIT_REACHED);
        assertThat(events.get(0).element()).isSameAs(srq);
        assertThat(srq.query().srqLimit()).as("the event disarms the limit").isZero();
    }

    @Test
    void resizeGrowsTheSrqWithinItsReservationWhereTheDeviceCan() {
        SharedReceiveQueue srq = pd.createSrq(4).resizableTo(16).build();
        MemoryRegion rx = pd.allocate(32L * 64, ALL_REMOTE);
        int before = srq.maxWr();
        ReceiveRequests rwrs = srq.receiveRequests();
        for (int k = 0; k < before + 1; k++) {
            rwrs.recv(k).sge(rx, k * 64L, 64);
        }
        assertThat(rwrs.post()).as("the SRQ is full at its max_wr").isEqualTo(before);
        assertThat(rwrs.pending()).isEqualTo(1);
        assertThatThrownBy(() -> srq.resize(17)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("resizableTo");
        if (!ctx.queryDevice().has(DeviceCapability.SRQ_RESIZE)) {
            assertThatThrownBy(() -> srq.resize(16)).isInstanceOf(UnsupportedVerbException.class)
                    .extracting(e -> ((UnsupportedVerbException) e).capability()).asString()
                    .contains("IBV_DEVICE_SRQ_RESIZE");
            return;
        }
        srq.resize(16);
        assertThat(srq.maxWr()).isGreaterThanOrEqualTo(16);
        assertThat(srq.query().maxWr()).isGreaterThanOrEqualTo(16);
        assertThat(rwrs.post()).as("the pending receive fits now").isEqualTo(1);
        assertThat(srq.outstanding()).isEqualTo(before + 1);
    }

    @Test
    void aDrySrqAnswersRnrAndTheSenderFailsWithRnrRetryExceeded() {
        SharedReceiveQueue srq = pd.createSrq(4).build();
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).srq(srq).build();
        for (QueuePair q : new QueuePair[] {a, b}) {
            q.toInit(PORT, QP_REMOTE);
        }
        a.toRtr(path(), Mtu.MTU_1024, b.qpNum(), 0);
        b.toRtr(path(), Mtu.MTU_1024, a.qpNum(), 0);
        a.toRts(new QueuePairAttributes().sqPsn(0).timeout(10).retryCnt(1).rnrRetry(0).maxRdAtomic(1));
        b.toRts(0);
        MemoryRegion tx = pd.allocate(64, ALL_REMOTE);
        a.sendRequests().send(1, SendFlag.SIGNALED_BIT).sge(tx, 0, 64).post();
        WorkCompletion wc = pollOne(cq);
        assertThat(wc.wrId()).isEqualTo(1);
        assertThat(wc.status()).isEqualTo(WorkCompletionStatus.RNR_RETRY_EXC_ERR);
        assertThat(srq.outstanding()).isZero();
    }

    @Test
    void closeOrderingWithAttachedQpsAndPostedReceives() {
        SharedReceiveQueue srq = pd.createSrq(8).build();
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair q1 = pd.createQp(QueuePairType.RC, cq, cq).srq(srq).build();
        QueuePair q2 = pd.createQp(QueuePairType.UD, cq, cq).srq(srq).build();
        MemoryRegion rx = pd.allocate(4096, ALL_REMOTE);
        String rxName = rx.toString();
        srq.receiveRequests().recv(1).sge(rx, 0, 1024).recv(2).sge(rx, 1024, 1024).post();
        assertThatThrownBy(rx::close).isInstanceOf(IllegalStateException.class).hasMessageContaining(rxName)
                .hasMessageContaining("still referenced by 2 outstanding work request");
        assertThat(rx.isClosed()).isFalse();
        // another PD's SRQ cannot be attached
        ProtectionDomain other = ctx.allocPd();
        assertThatThrownBy(() -> other.createQp(QueuePairType.RC, cq, cq).srq(srq))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("belongs to");

        srq.close(); // closes q1 and q2 first (ibv_destroy_srq would be EBUSY), then the SRQ
        assertThat(q1.isClosed()).isTrue();
        assertThat(q2.isClosed()).isTrue();
        assertThat(srq.isClosed()).isTrue();
        assertThat(cq.isClosed()).isFalse();
        assertThatThrownBy(srq::receiveRequests).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_post_srq_recv");
        rx.close(); // the destroyed SRQ's receives were forgotten
        assertThat(rx.isClosed()).isTrue();
    }

    @Test
    void aPdCascadeClosesQpsThenTheSrqThenItsRegions() {
        ProtectionDomain p = ctx.allocPd();
        SharedReceiveQueue srq = p.createSrq(4).build();
        CompletionQueue cq = ctx.createCq(8).build();
        QueuePair q = p.createQp(QueuePairType.RC, cq, cq).srq(srq).build();
        MemoryRegion rx = p.allocate(4096, ALL_REMOTE);
        srq.receiveRequests().recv(1).sge(rx, 0, 512).post();
        p.close(); // never refused: nothing can consume the receives once the QPs are gone
        assertThat(q.isClosed()).isTrue();
        assertThat(srq.isClosed()).isTrue();
        assertThat(rx.isClosed()).isTrue();
    }

    @Test
    void aStagedSrqReceiveOverAClosedRegionIsRefusedAtPost() {
        SharedReceiveQueue srq = pd.createSrq(4).build();
        MemoryRegion rx = pd.allocate(4096, ALL_REMOTE);
        String rxName = rx.toString();
        srq.receiveRequests().recv(1).sge(rx, 0, 512);
        rx.close(); // nothing posted names it yet: allowed
        assertThatThrownBy(() -> srq.receiveRequests().post()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_post_srq_recv").hasMessageContaining(rxName);
        assertThat(srq.outstanding()).isZero();
        srq.receiveRequests().clear();
    }

    /**
     * The DMA race of {@link DmaSafetyIT}, on the SRQ post path: a closer thread keeps trying to deregister the
     * receive buffer while this thread posts SRQ receives over it and a peer fills them. Every receive that was posted
     * completes into registered memory; the close wins only between a completion and the next post.
     */
    @Test
    void aRegionIsNeverDeregisteredUnderAnSrqReceive() throws Exception {
        SharedReceiveQueue srq = pd.createSrq(4).build();
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).srq(srq).build();
        connect(a, b);
        MemoryRegion rx = pd.allocate(4096, ALL_REMOTE);
        MemoryRegion tx = pd.allocate(4096, ALL_REMOTE);
        String rxName = rx.toString();
        java.util.concurrent.atomic.AtomicBoolean started = new java.util.concurrent.atomic.AtomicBoolean();
        RetryingCloser closer = new RetryingCloser(rx::close, started::get); // starts with a receive in flight
        List<WorkCompletionStatus> statuses = new ArrayList<>();
        long posts = 0;
        long deadline = System.nanoTime() + 20_000_000_000L;
        closer.start();
        try {
            while (!closer.over() && System.nanoTime() < deadline) {
                try {
                    srq.receiveRequests().recv(posts).sge(rx, 0, 4096).post();
                } catch (IllegalStateException refused) {
                    assertThat(refused).hasMessageContaining(rxName);
                    srq.receiveRequests().clear();
                    continue;
                }
                posts++;
                started.set(true);
                a.sendRequests().send(posts, SendFlag.SIGNALED_BIT).sge(tx, 0, 4096).post();
                for (int got = 0; got < 2; ) { // the send's and the receive's completions
                    WorkCompletion wc = pollOne(cq);
                    statuses.add(wc.status());
                    got++;
                }
            }
        } finally {
            closer.stop();
        }
        assertThat(closer.failure()).isNull();
        assertThat(posts).as("receives posted before the close won").isPositive();
        assertThat(statuses).as("every posted receive ran against registered memory").containsOnly(
                WorkCompletionStatus.SUCCESS);
        assertThat(srq.outstanding()).isZero();
        assertThat(rx.isClosed() || closer.refusals() > 0).as("the closer ran against posted receives").isTrue();
    }

    /**
     * The SRQ's post path and the retirement of its completions allocate nothing: after a warm-up, a thread that
     * posts an SRQ receive, sends into it and polls both completions, a thousand times, allocates (almost) nothing.
     */
    @Test
    void postingToAnSrqAndPollingItsCompletionsAllocatesNothing() throws Exception {
        SharedReceiveQueue srq = pd.createSrq(16).build();
        CompletionQueue cq = ctx.createCq(32).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).srq(srq).build();
        connect(a, b);
        MemoryRegion rx = pd.allocate(4096, ALL_REMOTE);
        MemoryRegion tx = pd.allocate(4096, ALL_REMOTE);
        ReceiveRequests rwrs = srq.receiveRequests();
        SendRequests swrs = a.sendRequests();
        WorkCompletions batch = WorkCompletions.allocate(4);
        // com.sun.management.ThreadMXBean.getCurrentThreadAllocatedBytes, reflectively: core does not read
        // java.management, and the tests compile inside it
        Object mx = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        java.lang.reflect.Method allocatedBytes = Class.forName("com.sun.management.ThreadMXBean")
                .getMethod("getCurrentThreadAllocatedBytes");
        long measuredFrom = 0;
        int warmUp = 300;
        int measured = 1000;
        for (int i = 0; i < warmUp + measured; i++) {
            if (i == warmUp) {
                measuredFrom = (Long) allocatedBytes.invoke(mx);
            }
            rwrs.recv(i).sge(rx, 0, 256).post();
            swrs.send(i, SendFlag.SIGNALED_BIT).sge(tx, 0, 256).post();
            int got = 0;
            long spins = 0;
            while (got < 2) {
                int n = cq.poll(batch);
                for (int j = 0; j < n; j++) {
                    if (batch.get(j).status() != WorkCompletionStatus.SUCCESS || batch.get(j).wrId() != i) {
                        throw new AssertionError("completion " + j + " of round " + i + ": " + batch.get(j));
                    }
                }
                got += n;
                if (++spins > 2_000_000_000L) {
                    throw new AssertionError("no completion");
                }
            }
        }
        long bytes = (Long) allocatedBytes.invoke(mx) - measuredFrom;
        assertThat(bytes).as("bytes allocated by %d SRQ round trips", measured).isLessThan(16 * 1024);
        assertThat(srq.outstanding()).isZero();
    }

    private record WorkCompletionInfo(int qpNum, int byteLen) {}
}
