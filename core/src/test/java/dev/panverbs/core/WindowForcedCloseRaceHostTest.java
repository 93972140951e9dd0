package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The closes of a memory window that no refusal stops (the arena tie of its region, its PD's cascade) racing, on
 * another thread, a window operation that pins it: a batch's {@code ibv_wr_bind_mw}, a chain's {@code ibv_post_send}
 * of a bind, a type 1 {@code ibv_bind_mw}. Such a close always deallocates the window, but never while a provider
 * call may read the {@code ibv_mw}, and nothing writes it after: the fake provider keeps each deallocated window,
 * marked dead, and counts every read of one inside a provider call and every one written since
 * ({@link FakeProvider#mwDeadUses}). Rounds started together and steered ({@link SteeredRace}); run in both
 * handshake modes (surefire execution {@code symmetric-handshake}).
 */
class WindowForcedCloseRaceHostTest {
    private static final EnumSet<Access> BINDABLE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
            Access.MW_BIND);
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

    @Test
    void theArenaTieRacesABatchBind() {
        race("arena tie vs ibv_wr_bind_mw", MemoryWindowType.TYPE_2, SteeredRace.BATCH_BIND, true);
    }

    @Test
    void theArenaTieRacesAChainBind() {
        race("arena tie vs IBV_WR_BIND_MW", MemoryWindowType.TYPE_2, SteeredRace.CHAIN_BIND, true);
    }

    @Test
    void theArenaTieRacesAType1Bind() {
        race("arena tie vs ibv_bind_mw", MemoryWindowType.TYPE_1, SteeredRace.TYPE_1_BIND, true);
    }

    @Test
    void theCascadeRacesABatchBind() {
        race("cascade vs ibv_wr_bind_mw", MemoryWindowType.TYPE_2, SteeredRace.BATCH_BIND, false);
    }

    /**
     * Each round: a fresh window bound to a fresh region tied to a fresh arena; the other thread rebinds it to a second
     * region with {@code op} while this one closes the arena ({@code arenaTie}) or the window's resource as its PD's
     * cascade does ({@link SteeredRace}, steered by eighths: the two closers' costs differ by orders of magnitude).
     */
    private static void race(String what, MemoryWindowType type, SteeredRace.WindowOp op, boolean arenaTie) {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(cq, 16, 0, EnumSet.of(SendOperation.BIND_MW, SendOperation.LOCAL_INV));
        MemoryRegion target = fake.register(fake.protectionDomain(), memory.allocate(4096, 64),
                KEYS.incrementAndGet(), BINDABLE);
        int deadBefore = fake.mwDeadUses();
        SteeredRace.run(what, SteeredRace.Steering.MULTIPLICATIVE, r -> {
            Arena arena = Arena.ofShared();
            MemoryRegion tied = fake.register(fake.protectionDomain(), arena.allocate(4096, 64),
                    KEYS.incrementAndGet(), BINDABLE);
            tied.tieTo(arena);
            MemoryWindow mw = fake.allocMw(type, 0x100 * (r & 0xFFFF));
            (type == MemoryWindowType.TYPE_1 ? SteeredRace.TYPE_1_BIND : SteeredRace.CHAIN_BIND).post(qp, mw, tied, 0);
            DataPathHostTest.drain(cq);
            assertThat(mw.boundRegion()).contains(tied);
            return new SteeredRace.Round() {
                @Override
                public boolean post() {
                    try {
                        op.post(qp, mw, target, r);
                        return true;
                    } catch (IllegalStateException refused) { // closed before the pin, or the batch aborted
                        return false;
                    }
                }

                @Override
                public boolean close() {
                    if (arenaTie) {
                        arena.close(); // deallocates the window, then deregisters the region, then frees the memory
                    } else {
                        mw.resource.close(); // what its PD's cascade runs
                    }
                    return true;
                }

                @Override
                public void check(int n, boolean posted, boolean closed) {
                    assertThat(mw.isClosed()).as("%s, round %d: the forced close deallocates the window", what, n)
                            .isTrue();
                    assertThat(fake.mwDeadUses() - deadBefore).as("%s, round %d: a provider call read the ibv_mw "
                            + "after ibv_dealloc_mw, or the library wrote it", what, n).isZero();
                    qp.sendRequests().clear();
                    DataPathHostTest.drain(cq);
                    assertThat(qp.sendQueue.tracker.outstanding()).isZero();
                    if (arena.scope().isAlive()) {
                        arena.close();
                    }
                    assertThat(tied.isOpen()).isFalse();
                }
            };
        });
        target.close();
    }
}
