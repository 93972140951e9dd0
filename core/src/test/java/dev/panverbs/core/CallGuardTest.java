package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The close-versus-call handshake of {@link CallGuard}, with plain threads: no device needed. */
class CallGuardTest {

    @Test
    void aSecondCallerIsRefusedUntilTheFirstExits() {
        CallGuard g = new CallGuard();
        Thread me = Thread.currentThread();
        assertThat(g.enter(me)).isTrue();
        assertThat(g.heldBy(me)).isTrue();
        assertThat(g.enter(me)).as("nested call on the same thread").isFalse();
        assertThat(g.holder()).isSameAs(me);
        g.exit();
        assertThat(g.holder()).isNull();
        assertThat(g.heldBy(me)).isFalse();
        assertThat(g.enter(me)).isTrue();
        g.exit();
    }

    @Test
    void closerWaitsForACallOnAnotherThreadToExit() throws Exception {
        CallGuard g = new CallGuard();
        CountDownLatch leave = new CountDownLatch(1);
        Thread caller = inside(g, leave, true, "caller");
        AtomicReference<Thread> result = new AtomicReference<>(caller);
        CountDownLatch closed = new CountDownLatch(1);
        Thread closer = new Thread(() -> {
            result.set(g.awaitIdle());
            closed.countDown();
        }, "closer");
        closer.start();
        assertThat(closed.await(300, TimeUnit.MILLISECONDS)).as("close returned while a call was inside").isFalse();
        leave.countDown();
        assertThat(closed.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(result.get()).as("idle").isNull();
    }

    @Test
    void closerGivesUpOnAStuckCallerAndNamesIt() throws Exception {
        CallGuard g = new CallGuard();
        CountDownLatch leave = new CountDownLatch(1);
        Thread stuck = inside(g, leave, false, "stuck-poller"); // never exits the guard
        long t0 = System.nanoTime();
        Thread holder = g.awaitIdle();
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofSeconds(4));
        assertThat(holder).isSameAs(stuck);
        assertThat(CallGuard.stillInUse("CompletionQueue[0x1 on rxe0]", "ibv_destroy_cq", holder).getMessage())
                .startsWith("ibv_destroy_cq: CompletionQueue[0x1 on rxe0] is still in use by thread \"stuck-poller\"")
                .contains("not destroyed").contains("leaked rather than freed");
        leave.countDown();
        stuck.join();
    }

    /**
     * A thread named {@code name} that enters {@code g} and waits for {@code leave}, then exits the guard if
     * {@code exits}; returned once it is inside.
     */
    private static Thread inside(CallGuard g, CountDownLatch leave, boolean exits, String name)
            throws InterruptedException {
        CountDownLatch inside = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            g.enter(Thread.currentThread());
            inside.countDown();
            try {
                leave.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (exits) {
                g.exit();
            }
        }, name);
        t.start();
        inside.await();
        return t;
    }

    @Test
    void aMarkOfTheClosingThreadOrOfADeadThreadIsCleared() throws Exception {
        CallGuard g = new CallGuard();
        g.enter(Thread.currentThread()); // e.g. this thread's open batch, abandoned by its own close
        assertThat(g.awaitIdle()).isNull();
        assertThat(g.holder()).isNull();
        Thread dies = new Thread(() -> g.enter(Thread.currentThread()));
        dies.start();
        dies.join();
        assertThat(g.holder()).isSameAs(dies);
        assertThat(g.awaitIdle()).as("a dead thread is inside no call").isNull();
    }
}
