package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.core.internal.Handshake;
import java.lang.foreign.Arena;
import java.util.EnumSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The closes of a memory window that no refusal stops (the arena tie of its region, its PD's cascade) racing, on
 * another thread, a window operation that pins it: a batch's {@code ibv_wr_bind_mw}, a chain's {@code ibv_post_send}
 * of a bind, a type 1 {@code ibv_bind_mw}. Such a close always deallocates the window, but never while a provider
 * call may read the {@code ibv_mw}, and nothing writes it after: the fake provider keeps each deallocated window,
 * marked dead, and counts every read of one inside a provider call and every one written since
 * ({@link FakeProvider#mwDeadUses}). Rounds started together and steered as in {@link CloseRaceHostTest}; run in both
 * handshake modes (surefire execution {@code symmetric-handshake}).
 */
class WindowForcedCloseRaceHostTest {
    private static final int ROUNDS = Integer.getInteger("panverbs.closeRaceRounds", 1500);
    private static final EnumSet<Access> BINDABLE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
            Access.MW_BIND);
    private static final EnumSet<Access> WRITE = EnumSet.of(Access.REMOTE_WRITE);
    private static final AtomicInteger KEYS = new AtomicInteger(0x9000);

    private static FakeProvider fake;
    private static Arena memory;

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
        memory = Arena.ofShared();
    }

    @AfterAll
    static void freeMemory() {
        memory.close();
    }

    /** Rebinds {@code mw} to {@code target} on {@code qp} (round {@code r}). */
    private interface Rebind {
        void post(QueuePair qp, MemoryWindow mw, MemoryRegion target, int r);
    }

    private static final Rebind BATCH = (qp, mw, target, r) -> {
        try (PostBatch b = qp.startSend()) {
            b.bindMw(r, SendFlag.SIGNALED_BIT, mw, MemoryWindow.nextRkey(mw.rkey()), target, 0, 4096, WRITE);
            Thread.onSpinWait(); // between the build (the provider read the ibv_mw) and the submit
            b.submit();
        }
    };
    private static final Rebind CHAIN = (qp, mw, target, r) -> qp.sendRequests().bindMw(r, SendFlag.SIGNALED_BIT,
            mw, MemoryWindow.nextRkey(mw.rkey()), target, 0, 4096, WRITE).post();
    private static final Rebind TYPE_1 = (qp, mw, target, r) -> mw.bind(qp, r, SendFlag.SIGNALED_BIT, target, 0,
            4096, WRITE);

    @Test
    void theArenaTieRacesABatchBind() {
        race("arena tie vs ibv_wr_bind_mw", MemoryWindowType.TYPE_2, BATCH, true);
    }

    @Test
    void theArenaTieRacesAChainBind() {
        race("arena tie vs IBV_WR_BIND_MW", MemoryWindowType.TYPE_2, CHAIN, true);
    }

    @Test
    void theArenaTieRacesAType1Bind() {
        race("arena tie vs ibv_bind_mw", MemoryWindowType.TYPE_1, TYPE_1, true);
    }

    @Test
    void theCascadeRacesABatchBind() {
        race("cascade vs ibv_wr_bind_mw", MemoryWindowType.TYPE_2, BATCH, false);
    }

    /**
     * Each round: a fresh window bound to a fresh region tied to a fresh arena; another thread rebinds it to a second
     * region with {@code op} while this one closes the arena ({@code arenaTie}) or the window's resource as its PD's
     * cascade does, after a head start steered towards where the two overlap.
     */
    private static void race(String what, MemoryWindowType type, Rebind op, boolean arenaTie) {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(cq, 16, 0, EnumSet.of(SendOperation.BIND_MW, SendOperation.LOCAL_INV));
        MemoryRegion target = fake.register(fake.protectionDomain(), memory.allocate(4096, 64),
                KEYS.incrementAndGet(), BINDABLE);
        int deadBefore = fake.mwDeadUses();
        AtomicInteger go = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        AtomicInteger ready = new AtomicInteger();
        AtomicReference<MemoryWindow> window = new AtomicReference<>();
        boolean[] posted = new boolean[ROUNDS + 1];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread poster = Thread.ofPlatform().name("binder").start(() -> {
            try {
                for (int r = 1; r <= ROUNDS; r++) {
                    ready.set(r);
                    await(go, r);
                    if (go.get() == Integer.MAX_VALUE) {
                        return;
                    }
                    try {
                        op.post(qp, window.get(), target, r);
                        posted[r] = true;
                    } catch (IllegalStateException refused) { // closed before the pin, or the batch aborted
                    }
                    done.set(r);
                }
            } catch (Throwable t) {
                failure.set(t);
                done.set(Integer.MAX_VALUE);
            }
        });
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        int center = 64;
        int[] outcomes = new int[2]; // refused, posted
        try {
            for (int r = 1; r <= ROUNDS && failure.get() == null; r++) {
                Arena arena = Arena.ofShared();
                MemoryRegion tied = fake.register(fake.protectionDomain(), arena.allocate(4096, 64),
                        KEYS.incrementAndGet(), BINDABLE);
                tied.tieTo(arena);
                MemoryWindow mw = fake.allocMw(type, 0x100 * (r & 0xFFFF));
                if (type == MemoryWindowType.TYPE_1) {
                    mw.bind(qp, 0, SendFlag.SIGNALED_BIT, tied, 0, 4096, WRITE);
                } else {
                    CHAIN.post(qp, mw, tied, 0);
                }
                DataPathHostTest.drain(cq);
                assertThat(mw.boundRegion()).contains(tied);
                window.set(mw);
                int delay = Math.max(0, center + rnd.nextInt(-8, 9));
                await(ready, r);
                go.set(r);
                for (int i = 0; i < delay; i++) {
                    Thread.onSpinWait();
                }
                if (arenaTie) {
                    arena.close(); // deallocates the window, then deregisters the region, then frees the memory
                } else {
                    mw.resource.close(); // what its PD's cascade runs
                }
                await(done, r);
                if (failure.get() != null) {
                    break;
                }
                assertThat(mw.isClosed()).as("%s, round %d: the forced close deallocates the window", what, r)
                        .isTrue();
                assertThat(fake.mwDeadUses() - deadBefore).as("%s, round %d: a provider call read the ibv_mw after "
                        + "ibv_dealloc_mw, or the library wrote it", what, r).isZero();
                outcomes[posted[r] ? 1 : 0]++;
                // multiplicative: the close's cost differs by orders of magnitude between the two closers
                center = posted[r] ? center - (center >> 3) : Math.min(1 << 20, center + (center >> 3) + 1);
                qp.sendRequests().clear();
                DataPathHostTest.drain(cq);
                assertThat(qp.sendQueue.tracker.outstanding()).isZero();
                if (arena.scope().isAlive()) {
                    arena.close();
                }
                assertThat(tied.isOpen()).isFalse();
            }
        } finally {
            go.set(Integer.MAX_VALUE);
            try {
                poster.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        assertThat(failure.get()).as("the binder thread").isNull();
        target.close();
        System.out.printf("%s (%s): %d rounds: bind posted %d, refused %d%n", what,
                Handshake.ASYMMETRIC ? "membarrier" : "full fences", ROUNDS, outcomes[1], outcomes[0]);
    }

    private static void await(AtomicInteger counter, int round) {
        for (int spins = 0; counter.get() < round; spins++) {
            if (spins < 1 << 20) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }
}
