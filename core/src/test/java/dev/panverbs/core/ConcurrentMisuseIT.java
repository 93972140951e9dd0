package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Misuse across threads on a real device: closing a context while other threads wait for events, busy-poll, post
 * and hold poll passes and send batches (before the fix, the busy poller died with SIGSEGV inside rxe's
 * {@code poll_cq}); two pollers on one CQ; calls that would spin forever on a provider lock held by the caller's own
 * open pass or batch. What is enforced and what is not is listed in {@link CallGuard} and the thread-safety notes of
 * {@link CompletionQueue}, {@link QueuePair} and {@link PostBatch}.
 */
class ConcurrentMisuseIT {
    private static final Set<Access> ALL = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
    private static final int PORT = 1;

    private Context ctx;

    @BeforeEach
    void open() {
        ctx = Device.open(dev.panverbs.testing.RdmaTestDevice.name());
    }

    @AfterEach
    void close() {
        ctx.close();
    }

    private AddressVector path() {
        int index = ctx.queryGid(PORT, 1).isZero() ? 0 : 1;
        return AddressVector.builder(PORT).grh(ctx.queryGid(PORT, index).toBytes(), index, 64).build();
    }

    private void connect(QueuePair a, QueuePair b) {
        a.toInit(PORT, EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ));
        b.toInit(PORT, EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ));
        a.toRtr(path(), Mtu.MTU_1024, b.qpNum(), 0);
        b.toRtr(path(), Mtu.MTU_1024, a.qpNum(), 0);
        a.toRts(0);
        b.toRts(0);
    }

    /** Runs {@code body} until it throws; records what it threw. */
    private static Thread worker(String name, CountDownLatch started, AtomicReference<Throwable> thrown,
                                 ThrowingRunnable body) {
        Thread t = new Thread(() -> {
            started.countDown();
            try {
                body.run();
                thrown.set(new AssertionError(name + " returned instead of failing"));
            } catch (Throwable e) {
                thrown.set(e);
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void closingTheContextWakesOrFailsEveryWaitingPollingAndPostingThread() throws Exception {
        for (int round = 0; round < 3; round++) {
            if (round > 0) {
                ctx = Device.open(dev.panverbs.testing.RdmaTestDevice.name());
            }
            ProtectionDomain pd = ctx.allocPd();
            CompletionChannel channel = ctx.createCompChannel();
            CompletionQueue armed = ctx.createCq(4).channel(channel).build();
            armed.reqNotify(false);
            CompletionQueue cq = ctx.createCq(512).build();
            ExtendedCompletionQueue xcq = ctx.createCq(512).buildEx();
            QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(64).build();
            QueuePair b = pd.createQp(QueuePairType.RC, xcq, xcq).maxSendWr(64)
                    .sendOps(EnumSet.of(SendOperation.RDMA_WRITE)).build();
            connect(a, b);
            MemoryRegion mr = pd.allocate(4096, ALL);

            String[] names = {"channel-wait", "async-wait", "busy-poll", "busy-post", "poll-pass", "send-batch"};
            List<AtomicReference<Throwable>> thrown = new ArrayList<>();
            for (int i = 0; i < names.length; i++) {
                thrown.add(new AtomicReference<>());
            }
            CountDownLatch started = new CountDownLatch(names.length);
            List<Thread> threads = List.of(
                    worker(names[0], started, thrown.get(0), () -> channel.getCqEvent()),
                    worker(names[1], started, thrown.get(1), () -> {
                        while (true) {
                            ctx.getAsyncEvent(); // the flood may raise some (CQ or QP errors): keep waiting
                        }
                    }),
                    worker(names[2], started, thrown.get(2), () -> {
                        WorkCompletions w = WorkCompletions.allocate(8);
                        while (true) {
                            cq.poll(w);
                        }
                    }),
                    worker(names[3], started, thrown.get(3), () -> {
                        SendRequests wrs = a.sendRequests();
                        while (true) {
                            if (wrs.pending() == 0) {
                                wrs.rdmaWrite(1, SendFlag.SIGNALED_BIT, mr.rkey(), mr.address()).sge(mr, 0, 8);
                            }
                            wrs.post();
                        }
                    }),
                    worker(names[4], started, thrown.get(4), () -> {
                        while (true) {
                            if (xcq.startPoll()) {
                                do {
                                    Thread.onSpinWait();
                                } while (xcq.nextPoll());
                                xcq.endPoll();
                            }
                        }
                    }),
                    worker(names[5], started, thrown.get(5), () -> {
                        while (true) {
                            try (PostBatch batch = b.startSend()) {
                                if (batch.room() > 0) {
                                    batch.rdmaWrite(2, SendFlag.SIGNALED_BIT, mr.rkey(), mr.address())
                                            .setSge(mr, 8, 8);
                                }
                                batch.submit();
                            }
                        }
                    }));
            assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
            Thread.sleep(300);
            long t0 = System.nanoTime();
            ctx.close();
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("close").isLessThan(Duration.ofSeconds(30));
            for (int i = 0; i < threads.size(); i++) {
                threads.get(i).join(TimeUnit.SECONDS.toMillis(30));
                assertThat(threads.get(i).isAlive()).as("%s still running after close", names[i]).isFalse();
                assertThat(thrown.get(i).get()).as("round %d, %s", round, names[i])
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
            }
            assertThat(thrown.get(0).get()).hasMessageContaining("CompletionChannel[")
                    .hasMessageContaining("ibv_get_cq_event");
            assertThat(thrown.get(1).get()).hasMessageContaining("Context[").hasMessageContaining("ibv_get_async_event");
            assertThat(thrown.get(2).get()).hasMessageContaining("CompletionQueue[").hasMessageContaining("ibv_poll_cq");
            assertThat(thrown.get(4).get()).hasMessageContaining("ExtendedCompletionQueue[");
        }
    }

    @Test
    void twoProducersOfOneSendQueueAreCaught() throws Exception {
        ProtectionDomain pd = ctx.allocPd();
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(a, b);
        AtomicReference<Throwable> caught = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(2);
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        List<Thread> producers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            producers.add(worker("producer-" + i, started, new AtomicReference<>(), () -> {
                while (caught.get() == null && System.nanoTime() < deadline) {
                    try {
                        a.sendRequests().post(); // an empty chain: nothing reaches the wire
                    } catch (IllegalStateException e) {
                        caught.compareAndSet(null, e);
                    }
                }
            }));
        }
        for (Thread t : producers) {
            t.join(TimeUnit.SECONDS.toMillis(60));
        }
        assertThat(caught.get()).as("a second producer caught within 30 s").isNotNull()
                .hasMessageContaining("ibv_post_send: " + a + " is being posted to by ")
                .hasMessageMatching("(?s).* by (thread \"producer-\\d\"|another thread) at the same time.*")
                .hasMessageContaining("one producer at a time");
    }

    @Test
    void twoPollersOfOneCqAreCaught() throws Exception {
        CompletionQueue cq = ctx.createCq(16).build();
        AtomicReference<Throwable> caught = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(2);
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        List<Thread> pollers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            pollers.add(worker("poller-" + i, started, new AtomicReference<>(), () -> {
                WorkCompletions w = WorkCompletions.allocate(4);
                while (caught.get() == null && System.nanoTime() < deadline) {
                    try {
                        cq.poll(w);
                    } catch (IllegalStateException e) {
                        caught.compareAndSet(null, e);
                    }
                }
            }));
        }
        for (Thread t : pollers) {
            t.join(TimeUnit.SECONDS.toMillis(60));
        }
        assertThat(caught.get()).as("a second poller caught within 30 s").isNotNull()
                .hasMessageContaining("ibv_poll_cq: " + cq + " is being polled by ")
                .hasMessageMatching("(?s).* by (thread \"poller-\\d\"|another thread) at the same time.*")
                .hasMessageContaining("one poller at a time");
    }

    @Test
    void openPassesAndBatchesRefuseCallsThatWouldSpinForeverAndDelayAClose() throws Exception {
        ProtectionDomain pd = ctx.allocPd();
        MemoryRegion mr = pd.allocate(4096, ALL);

        // poll passes: nothing may advance a pass it does not hold, nor nest one
        ExtendedCompletionQueue xcq = ctx.createCq(64).buildEx();
        QueuePair a = pd.createQp(QueuePairType.RC, xcq, xcq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, xcq, xcq).build();
        connect(a, b);
        assertThatThrownBy(xcq::nextPoll).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_next_poll: no poll pass is open");
        assertThatThrownBy(xcq::endPoll).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_end_poll: no poll pass is open");
        assertThatThrownBy(xcq::wrId).isInstanceOf(IllegalStateException.class).hasMessageContaining("no poll pass");
        a.sendRequests().rdmaWrite(1, SendFlag.SIGNALED_BIT, mr.rkey(), mr.address()).sge(mr, 0, 8);
        a.sendRequests().post();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!xcq.startPoll()) {
            assertThat(System.nanoTime()).as("a completion within 60 s").isLessThan(deadline);
        }
        WorkCompletions wcs = WorkCompletions.allocate(4);
        assertThatThrownBy(() -> xcq.poll(wcs)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_poll_cq: a poll pass is open").hasMessageContaining("spin forever");
        assertThatThrownBy(xcq::startPoll).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_start_poll: a poll pass is open");
        AtomicReference<Throwable> cqCloseFailure = new AtomicReference<>();
        Thread cqCloser = new Thread(() -> {
            try {
                xcq.close();
            } catch (Throwable e) {
                cqCloseFailure.set(e);
            }
        }, "cq-closer");
        cqCloser.start();
        Thread.sleep(500);
        assertThat(cqCloser.isAlive()).as("the close waits for the open pass").isTrue();
        assertThat(xcq.wrId()).as("the pass stays readable while the close waits").isEqualTo(1);
        xcq.endPoll();
        cqCloser.join(TimeUnit.SECONDS.toMillis(30));
        assertThat(cqCloser.isAlive()).isFalse();
        assertThat(cqCloseFailure.get()).isNull();
        assertThat(a.isClosed()).isTrue();
        assertThatThrownBy(xcq::endPoll).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        // closing on the thread that holds the pass abandons it
        ExtendedCompletionQueue own = ctx.createCq(16).buildEx();
        QueuePair ownA = pd.createQp(QueuePairType.RC, own, own).build();
        QueuePair ownB = pd.createQp(QueuePairType.RC, own, own).build();
        connect(ownA, ownB);
        ownA.sendRequests().rdmaWrite(6, SendFlag.SIGNALED_BIT, mr.rkey(), mr.address()).sge(mr, 0, 8);
        ownA.sendRequests().post();
        deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!own.startPoll()) {
            assertThat(System.nanoTime()).as("a completion within 60 s").isLessThan(deadline);
        }
        own.close();
        assertThat(ownA.isClosed()).isTrue();
        assertThatThrownBy(own::wrId).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThatThrownBy(own::endPoll).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");

        // nested batch calls: rxe's ibv_post_send/ibv_wr_start would spin forever on the lock this batch holds
        CompletionQueue cq = ctx.createCq(64).build();
        QueuePair c = pd.createQp(QueuePairType.RC, cq, cq).sendOps(EnumSet.of(SendOperation.RDMA_WRITE)).build();
        QueuePair d = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(c, d);
        PostBatch batch = c.startSend();
        batch.rdmaWrite(2, SendFlag.SIGNALED_BIT, mr.rkey(), mr.address()).setSge(mr, 0, 8);
        c.sendRequests().rdmaWrite(3, 0, mr.rkey(), mr.address()).sge(mr, 0, 8);
        assertThatThrownBy(() -> c.sendRequests().post()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_post_send: a PostBatch is open on " + c).hasMessageContaining("spin forever");
        c.sendRequests().clear();
        assertThatThrownBy(c::startSend).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("a batch is already open");
        AtomicReference<Throwable> elsewhere = new AtomicReference<>();
        Thread other = new Thread(() -> {
            try {
                batch.submit(); // ibv_wr_complete would release a lock this thread does not hold
            } catch (Throwable e) {
                elsewhere.set(e);
            }
        });
        other.start();
        other.join();
        assertThat(elsewhere.get()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("was started by thread \"" + Thread.currentThread().getName() + "\"");

        // a close on another thread waits for the batch, which still posts
        AtomicReference<Throwable> closeFailure = new AtomicReference<>();
        Thread closer = new Thread(() -> {
            try {
                c.close();
            } catch (Throwable e) {
                closeFailure.set(e);
            }
        }, "qp-closer");
        closer.start();
        Thread.sleep(500);
        assertThat(closer.isAlive()).as("the close waits for the open batch").isTrue();
        batch.submit();
        closer.join(TimeUnit.SECONDS.toMillis(30));
        assertThat(closer.isAlive()).isFalse();
        assertThat(closeFailure.get()).isNull();
        assertThatThrownBy(c::startSend).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThatThrownBy(() -> batch.send(5, 0)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }
}
