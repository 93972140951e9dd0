package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.bindings.verbs.ibv_mw;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A thread stopped inside a provider call that reads a window ({@code ibv_post_send} of a bind: the fake provider calls
 * back into Java there, and the callback blocks) for longer than {@link CallGuard#AWAIT_NANOS}, while another thread
 * closes the window the way no refusal stops: its region's arena tie, its PD's cascade. The close waits for the call
 * however long (it never deallocates the {@code ibv_mw} under it, and never gives up, which would leave the window
 * bound and the region registered while the JDK frees the arena's memory); once the call returns it deallocates the
 * window, then deregisters the region, and only then is the memory freed. Also: a deregistration that failed (as rxe
 * refuses one while a window is bound) is retried by the arena tie before the memory is freed. Runs in its own JVM
 * (surefire execution {@code upcall-tests}).
 */
class StuckWindowReaderUpcallTest {
    private static final EnumSet<Access> BINDABLE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
            Access.MW_BIND);
    private static final AtomicInteger KEYS = new AtomicInteger(0xA000);

    private static FakeProvider fake;

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
    }

    /** One window bound over a region, with a thread about to rebind it and a thread about to force its close. */
    private static final class Scenario {
        final List<String> events = new CopyOnWriteArrayList<>();
        final CompletionQueue cq = fake.createCq(64);
        final QueuePair qp = fake.createRtsQp(cq, 16, 0, EnumSet.of(SendOperation.BIND_MW));
        final Arena arena = Arena.ofShared();
        final MemoryWindow mw;
        final MemorySegment mwHandle;
        final MemoryRegion region;
        final MemoryRegion target = fake.register(fake.protectionDomain(), Arena.global().allocate(4096, 64),
                KEYS.incrementAndGet(), BINDABLE);
        final AtomicReference<Throwable> closeFailure = new AtomicReference<>();
        Thread binder;
        Thread closer;

        Scenario(boolean failFirstDereg) {
            MemorySegment memory = arena.allocate(4096, 64);
            // older than the tie's action: runs after it, just before the JDK frees the memory
            MemorySegment.ofAddress(memory.address()).reinterpret(arena, s -> events.add("free"));
            mw = fake.allocMw(MemoryWindowType.TYPE_2, KEYS.incrementAndGet() << 8);
            mwHandle = mw.resource.rawHandle().reinterpret(ibv_mw.sizeof());
            AtomicInteger deregs = new AtomicInteger();
            region = fake.register(fake.protectionDomain(), memory, KEYS.incrementAndGet(), BINDABLE, h -> {
                events.add(deallocated() ? "dereg" : "dereg under a live window");
                if (failFirstDereg && deregs.incrementAndGet() == 1) {
                    throw new IllegalStateException("ibv_dereg_mr: EINVAL (as rxe while a window is bound)");
                }
            });
            region.tieTo(arena);
            rebind(region, 0);
            DataPathHostTest.drain(cq);
            assertThat(mw.boundRegion()).contains(region);
        }

        void rebind(MemoryRegion to, long wrId) {
            qp.sendRequests().bindMw(wrId, SendFlag.SIGNALED_BIT, mw, MemoryWindow.nextRkey(mw.rkey()), to, 0, 4096,
                    EnumSet.of(Access.REMOTE_WRITE)).post();
        }

        /** Whether the fake provider saw {@code ibv_dealloc_mw} (it marks the window dead and keeps it). */
        boolean deallocated() {
            return ibv_mw.handle(mwHandle) == 0xDEAD;
        }

        void startBinder() {
            binder = Thread.ofPlatform().name("stuck binder").start(() -> {
                try {
                    rebind(target, 1);
                } catch (IllegalStateException refused) { // the window closed while the post ran
                }
            });
        }

        void startCloser(String name, Runnable close) {
            closer = Thread.ofPlatform().name(name).start(() -> {
                try {
                    close.run();
                } catch (Throwable t) {
                    closeFailure.set(t);
                }
            });
        }
    }

    @Test
    void theArenaTieAndTheCascadeWaitForAProviderCallStuckPastTheBoundThenFreeNothingRegistered() throws Exception {
        Scenario tie = new Scenario(false);
        Scenario cascade = new Scenario(false);
        CountDownLatch entered = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        fake.setPostHook(() -> { // inside ibv_post_send of the rebinds: "a thread stopped inside the provider"
            if (Thread.currentThread().getName().equals("stuck binder")) {
                entered.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        try {
            tie.startBinder();
            cascade.startBinder();
            assertThat(entered.await(30, TimeUnit.SECONDS)).as("both binders inside the provider").isTrue();
            tie.startCloser("arena closer", tie.arena::close);
            cascade.startCloser("cascade", cascade.mw.resource::close); // what the PD's cascade runs on a window
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(CallGuard.AWAIT_NANOS) + 1_000);

            for (Scenario s : List.of(tie, cascade)) {
                assertThat(s.closer.isAlive()).as("%s: still waiting for the provider call", s.closer.getName())
                        .isTrue();
                assertThat(s.deallocated()).as("the ibv_mw is not freed under the call").isFalse();
                assertThat(s.events).as("nothing deregistered or freed yet").isEmpty();
            }
        } finally {
            release.countDown();
            for (Scenario s : List.of(tie, cascade)) {
                s.binder.join();
                if (s.closer != null) {
                    s.closer.join();
                }
            }
            fake.clearPostHook();
        }
        assertThat(tie.closeFailure.get()).isNull();
        assertThat(tie.events).containsExactly("dereg", "free");
        assertThat(tie.region.isOpen()).isFalse();
        assertThat(cascade.closeFailure.get()).isNull();
        assertThat(cascade.deallocated()).isTrue();
        cascade.arena.close(); // the region is no longer bound: the tie deregisters it
        assertThat(cascade.events).containsExactly("dereg", "free");
        assertThat(fake.mwDeadUses()).as("no provider call read a deallocated window").isZero();
    }

    /**
     * The PD's cascade deallocating the window is stuck behind a provider call reading it, past the 10 s that
     * {@code Resource.awaitClosed} allows, when the arena of the window's region closes: the tie waits for that
     * dealloc however long, so the region is never deregistered, nor its memory freed, while the window is bound.
     */
    @Test
    void theArenaTieWaitsForACascadeStuckDeallocatingTheSameWindowHoweverLong() throws Exception {
        Scenario s = new Scenario(false);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        fake.setPostHook(() -> {
            if (Thread.currentThread().getName().equals("stuck binder")) {
                entered.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        AtomicReference<Throwable> tieFailure = new AtomicReference<>();
        Thread tie = null;
        boolean waited;
        try {
            s.startBinder();
            assertThat(entered.await(30, TimeUnit.SECONDS)).as("the binder inside the provider").isTrue();
            s.startCloser("cascade", s.mw.resource::close); // what the PD's cascade runs on a window
            while (s.closer.getState() == Thread.State.RUNNABLE || s.closer.getState() == Thread.State.NEW) {
                Thread.onSpinWait(); // until it waits for the binder's call
            }
            tie = Thread.ofPlatform().name("arena closer").start(() -> {
                try {
                    s.arena.close();
                } catch (Throwable t) {
                    tieFailure.set(t);
                }
            });
            tie.join(11_000); // past the 10 s the tie used to give up after
            waited = tie.isAlive();
            assertThat(s.events).as("nothing deregistered or freed under the bound window").isEmpty();
        } finally {
            release.countDown();
            s.binder.join();
            s.closer.join();
            if (tie != null) {
                tie.join();
            }
            fake.clearPostHook();
        }
        assertThat(waited).as("the arena's close still waits for the cascade's dealloc").isTrue();
        assertThat(tieFailure.get()).isNull();
        assertThat(s.closeFailure.get()).isNull();
        assertThat(s.deallocated()).isTrue();
        assertThat(s.events).containsExactly("dereg", "free");
    }

    @Test
    void theArenaTieRetriesADeregistrationThatFailedBeforeItFreesTheMemory() {
        Scenario s = new Scenario(true);
        ProtectionDomain pd = s.region.protectionDomain();
        s.mw.forceClose();
        org.assertj.core.api.Assertions.assertThatThrownBy(s.region.resource::close)
                .hasMessageContaining("EINVAL"); // what a cascade runs: refused by the provider
        assertThat(s.region.isOpen()).isFalse();
        assertThat(s.events).containsExactly("dereg");
        s.arena.close();
        assertThat(s.events).containsExactly("dereg", "dereg", "free");
        assertThat(pd.resource.children()).doesNotContain(s.region.resource);
    }
}
