package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.core.internal.Handshake;
import java.lang.foreign.Arena;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The close/post handshake under a real race: a {@code close()} on one thread against a post on another, started
 * together (both spin on one counter) many times over, with the close's start steered to where it lands inside the
 * post. Each round asserts the invariant: the post is refused, or the close is, or both; never
 * a close that succeeded while a work request the provider accepted names the key. Run twice by the build: with the
 * asymmetric handshake ({@code membarrier(2)}: compiler barrier on the post side), and with
 * {@code -Ddev.panverbs.membarrier=false} (surefire execution {@code symmetric-handshake}: a full fence on each side).
 */
class CloseRaceHostTest {
    private static final EnumSet<Access> BINDABLE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
            Access.MW_BIND);
    private static final AtomicInteger KEYS = new AtomicInteger(0x4000);

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

    /** One round's two sides; each returns whether its operation happened (false: refused). */
    private interface Round {
        boolean post();

        boolean close();

        /** After both: retire what was posted, close what is still open. */
        void cleanup();
    }

    @Test
    void theModeIsTheOneThisRunAskedFor() {
        boolean forcedOff = "false".equalsIgnoreCase(System.getProperty("dev.panverbs.membarrier"));
        assertThat(Handshake.ASYMMETRIC).as("membarrier works on this Linux x86-64 host and guest")
                .isEqualTo(!forcedOff);
    }

    @Test
    void deregisteringARegionRacesAClassicSend() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(cq, 16, 0, EnumSet.of(SendOperation.RDMA_WRITE));
        race("MR vs ibv_post_send", r -> new RegionRound(cq, qp, fake.register(memory.allocate(4096, 64),
                KEYS.incrementAndGet())) {
            @Override
            void postWith(MemoryRegion mr) {
                qp.sendRequests().rdmaWrite(r, SendFlag.SIGNALED_BIT, 0x99, 0x1000).sge(mr, 0, 64).post();
            }
        });
    }

    @Test
    void deregisteringARegionRacesAReceive() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(cq, 16, 0, EnumSet.of(SendOperation.RDMA_WRITE));
        race("MR vs ibv_post_recv", r -> new RegionRound(cq, qp, fake.register(memory.allocate(4096, 64),
                KEYS.incrementAndGet())) {
            @Override
            void postWith(MemoryRegion mr) {
                qp.receiveRequests().recv(r).sge(mr, 0, 64).post();
            }

            @Override
            void retire() {
                fake.flushReceives(qp);
                super.retire();
            }
        });
    }

    @Test
    void deregisteringARegionRacesABatch() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(cq, 16, 0, EnumSet.of(SendOperation.RDMA_WRITE));
        race("MR vs ibv_wr_complete", r -> new RegionRound(cq, qp, fake.register(memory.allocate(4096, 64),
                KEYS.incrementAndGet())) {
            @Override
            void postWith(MemoryRegion mr) {
                try (PostBatch b = qp.startSend()) {
                    b.rdmaWrite(r, SendFlag.SIGNALED_BIT, 0x99, 0x1000).setSge(mr, 0, 64);
                    b.submit();
                }
            }
        });
    }

    @Test
    void deregisteringARegionRacesAWindowBind() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(cq, 16, 0, EnumSet.noneOf(SendOperation.class));
        race("MR vs BIND_MW", r -> {
            MemoryWindow mw = fake.allocMw(MemoryWindowType.TYPE_2, 0x100 * (r & 0xFFFF));
            return new RegionRound(cq, qp, fake.register(fake.protectionDomain(), memory.allocate(4096, 64),
                    KEYS.incrementAndGet(), BINDABLE)) {
                @Override
                void postWith(MemoryRegion mr) {
                    qp.sendRequests().bindMw(r, SendFlag.SIGNALED_BIT, mw, MemoryWindow.nextRkey(mw.rkey()), mr, 0,
                            4096, EnumSet.of(Access.REMOTE_WRITE)).post();
                }

                @Override
                void retire() {
                    super.retire();
                    mw.close(); // unbinds: the region may close
                }
            };
        });
    }

    @Test
    void deallocatingAWindowRacesAType1Bind() {
        raceWindow("MW vs ibv_bind_mw", MemoryWindowType.TYPE_1, SteeredRace.TYPE_1_BIND);
    }

    @Test
    void deallocatingAWindowRacesABatchBind() {
        raceWindow("MW vs ibv_wr_bind_mw", MemoryWindowType.TYPE_2, SteeredRace.BATCH_BIND);
    }

    @Test
    void deallocatingAWindowRacesAChainBind() {
        raceWindow("MW vs IBV_WR_BIND_MW", MemoryWindowType.TYPE_2, SteeredRace.CHAIN_BIND);
    }

    @Test
    void deallocatingAWindowRacesABatchLocalInvalidation() {
        raceWindow("MW vs ibv_wr_local_inv", MemoryWindowType.TYPE_2, (qp, mw, mr, r) -> {
            try (PostBatch b = qp.startSend()) {
                b.localInv(r, SendFlag.SIGNALED_BIT, mw);
                b.submit();
            }
        });
    }

    @Test
    void deallocatingAWindowRacesAChainLocalInvalidation() {
        raceWindow("MW vs IBV_WR_LOCAL_INV", MemoryWindowType.TYPE_2, (qp, mw, mr, r) -> qp.sendRequests().localInv(r, SendFlag.SIGNALED_BIT,
                mw).post());
    }

    /** Races a fresh window's close against {@code op} naming it; accepted: its WR is in the tracker. */
    private static void raceWindow(String what, MemoryWindowType type, SteeredRace.WindowOp op) {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(cq, 16, 0, EnumSet.of(SendOperation.BIND_MW, SendOperation.LOCAL_INV));
        MemoryRegion mr = fake.register(fake.protectionDomain(), memory.allocate(4096, 64), KEYS.incrementAndGet(),
                BINDABLE);
        race(what, r -> {
            MemoryWindow mw = fake.allocMw(type, 0x100 * (r & 0xFFFF));
            return new Round() {
                @Override
                public boolean post() {
                    try {
                        op.post(qp, mw, mr, r);
                    } catch (IllegalStateException refused) { // closed at staging, at the post, or at the re-check
                    }
                    // accepted by the provider, whatever the call answered after: the WR stays in the tracker
                    return qp.sendQueue.tracker.outstanding() > 0;
                }

                @Override
                public boolean close() {
                    try {
                        mw.close();
                        return true;
                    } catch (IllegalStateException refused) { // named by the WR being built, posted or outstanding
                        return false;
                    }
                }

                @Override
                public void cleanup() {
                    qp.sendRequests().clear();
                    DataPathHostTest.drain(cq);
                    mw.close(); // the WR retired: never refused
                    assertThat(mw.isClosed()).isTrue();
                    assertThat(qp.sendQueue.tracker.outstanding()).isZero();
                }
            };
        });
        mr.close();
    }

    @Test
    void destroyingAnAddressHandleRacesAUdSend() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair ud = fake.createUdQp(cq, 16, EnumSet.of(SendOperation.SEND));
        MemoryRegion mr = fake.register(memory.allocate(4096, 64), KEYS.incrementAndGet());
        race("AH vs UD ibv_post_send", r -> {
            AddressHandle ah = AddressHandle.wrap(fake.protectionDomain(), memory.allocate(64),
                    AddressVector.builder(1).build(), h -> { });
            return new Round() {
                @Override
                public boolean post() {
                    try {
                        ud.sendRequests().send(r, SendFlag.SIGNALED_BIT).ud(ah, 7, 0x11).sge(mr, 0, 64).post();
                        return true;
                    } catch (IllegalStateException refused) {
                        return false;
                    }
                }

                @Override
                public boolean close() {
                    try {
                        ah.close();
                        return true;
                    } catch (IllegalStateException refused) {
                        return false;
                    }
                }

                @Override
                public void cleanup() {
                    ud.sendRequests().clear();
                    DataPathHostTest.drain(cq);
                    ah.close();
                    assertThat(ud.sendQueue.tracker.outstanding()).isZero();
                }
            };
        });
        mr.close();
    }

    /** A round over one fresh region: the post names it, the close deregisters it. */
    private abstract static class RegionRound implements Round {
        final CompletionQueue cq;
        final QueuePair qp;
        final MemoryRegion mr;

        RegionRound(CompletionQueue cq, QueuePair qp, MemoryRegion mr) {
            this.cq = cq;
            this.qp = qp;
            this.mr = mr;
        }

        abstract void postWith(MemoryRegion mr);

        void retire() {
            DataPathHostTest.drain(cq);
        }

        @Override
        public boolean post() {
            try {
                postWith(mr);
                return true;
            } catch (IllegalStateException refused) { // closed at build, or stale at the post's re-check
                return false;
            }
        }

        @Override
        public boolean close() {
            try {
                mr.close();
                return true;
            } catch (IllegalStateException refused) { // still referenced by the post (or bound by its bind)
                return false;
            }
        }

        @Override
        public void cleanup() {
            qp.sendRequests().clear();
            qp.receiveRequests().clear();
            retire();
            mr.close(); // nothing references it any more: never refused
            assertThat(mr.isOpen()).isFalse();
            assertThat(qp.sendQueue.tracker.outstanding() + qp.receiveQueue.tracker.outstanding()).isZero();
        }
    }

    /**
     * Runs {@code setup}'s rounds ({@link SteeredRace}, steered one spin at a time) and asserts each: never a close
     * that succeeded while a work request the provider accepted names what it closed.
     */
    private static void race(String what, IntFunction<Round> setup) {
        SteeredRace.run(what, SteeredRace.Steering.ADDITIVE, r -> {
            Round round = setup.apply(r);
            return new SteeredRace.Round() {
                @Override
                public boolean post() {
                    return round.post();
                }

                @Override
                public boolean close() {
                    return round.close();
                }

                @Override
                public void check(int n, boolean posted, boolean closed) {
                    assertThat(posted && closed).as("%s, round %d: the close succeeded while the post's work "
                            + "request, accepted by the provider, names what it closed", what, n).isFalse();
                    round.cleanup();
                }
            };
        });
    }
}
