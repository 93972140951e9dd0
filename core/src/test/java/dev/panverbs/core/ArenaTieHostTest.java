package dev.panverbs.core;

import static dev.panverbs.testing.Threads.onAnotherThread;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The tie of a region to a confined arena, used from a thread that does not own the arena: the JDK refuses to attach
 * the arena's cleanup there ({@link WrongThreadException}); panverbs attaches it before the verb, so the refusal names
 * the verb, says what to do, and nothing is registered or re-registered (over the fake provider: the refusal comes
 * before any provider call).
 */
class ArenaTieHostTest {
    private static FakeProvider fake;

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
    }

    /** What {@code action} throws when run on another thread than this one. */
    @Test
    void regMrTiedToAConfinedArenaOfAnotherThreadIsRefusedByNameBeforeTheVerb() {
        ProtectionDomain pd = fake.protectionDomain();
        int children = pd.resource.children().size();
        try (Arena confined = Arena.ofConfined()) {
            MemorySegment seg = confined.allocate(4096, 4096);
            Throwable e = onAnotherThread(() -> pd.regMr(confined, seg, EnumSet.of(Access.LOCAL_WRITE)));
            assertThat(e).isInstanceOf(WrongThreadException.class).hasMessageContaining("ibv_reg_mr")
                    .hasMessageContaining("owner thread").hasMessageContaining("Arena.ofShared()")
                    .hasMessageContaining("Nothing was registered")
                    .hasCauseInstanceOf(WrongThreadException.class);
            assertThat(pd.resource.children()).as("no region").hasSize(children);
        }
    }

    @Test
    void reregOntoMemoryOfAConfinedArenaOfAnotherThreadIsRefusedAndTheRegionStaysAsItWas() {
        MemoryRegion mr = fake.buffer(0x76);
        int lkey = mr.lkey();
        try (Arena confined = Arena.ofConfined()) {
            MemorySegment seg = confined.allocate(4096, 4096);
            Throwable e = onAnotherThread(() -> mr.rereg().translation(confined, seg).apply());
            assertThat(e).isInstanceOf(WrongThreadException.class).hasMessageContaining("ibv_rereg_mr")
                    .hasMessageContaining("owner thread");
        }
        assertThat(mr.isOpen()).isTrue();
        assertThat(mr.lkey()).isEqualTo(lkey);
        assertThat(mr.buffer().byteSize()).isEqualTo(4096);
        mr.close();
    }

    @Test
    void reregTranslationRefusesASegmentOfAnotherArena() {
        MemoryRegion mr = fake.buffer(0x77);
        try (Arena a = Arena.ofConfined(); Arena b = Arena.ofConfined()) {
            MemorySegment seg = b.allocate(64);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> mr.rereg().translation(a, seg))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ibv_rereg_mr");
        }
        mr.close();
    }

    /**
     * Another thread's {@code ibv_dereg_mr} of a tied region outlasts the tie's old 10 s bound (a large pinned MR):
     * the arena's close waits for it, however long, and never deregisters the same {@code ibv_mr} a second time (a
     * double free, or EINVAL and the memory freed while still registered).
     */
    @Test
    void theTieWaitsForAnotherThreadsDeregistrationHoweverLongAndNeverRunsItTwice() throws Exception {
        Arena arena = Arena.ofShared();
        AtomicInteger calls = new AtomicInteger();
        CountDownLatch inDereg = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        MemoryRegion mr = fake.register(fake.protectionDomain(), arena.allocate(4096, 64), 0x79,
                EnumSet.of(Access.LOCAL_WRITE), h -> {
                    if (calls.incrementAndGet() > 1) {
                        throw new AssertionError("a second ibv_dereg_mr of " + h);
                    }
                    inDereg.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
        mr.tieTo(arena);
        Thread closer = new Thread(mr::close);
        closer.start();
        inDereg.await();
        AtomicReference<Throwable> tieFailure = new AtomicReference<>();
        Thread tie = new Thread(() -> {
            try {
                arena.close();
            } catch (Throwable t) {
                tieFailure.set(t);
            }
        });
        tie.start();
        tie.join(11_000); // past the 10 s the tie used to give up after
        boolean waited = tie.isAlive();
        release.countDown();
        tie.join();
        closer.join();
        assertThat(waited).as("the arena's close still waits for the other thread's ibv_dereg_mr").isTrue();
        assertThat(tieFailure.get()).isNull();
        assertThat(calls).hasValue(1);
        assertThat(mr.isOpen()).isFalse();
    }
}
