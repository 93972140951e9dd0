package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.core.internal.Handshake;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link AddressHandle#close()} on one thread racing a UD batch's {@code setUdAddr} + {@code submit} on another, steered
 * to where they overlap ({@link SteeredRace}): the provider's {@code ibv_wr_set_ud_addr}, which copies the AH's address
 * vector that {@code ibv_destroy_ah} frees, must never run on a destroyed AH ({@link AddressCopyGuard}'s handshake, no
 * monitor per WR), and a WR that was posted must keep its AH from being destroyed until it completes. The fake's setter
 * calls back into Java to look (hence an upcall test: its own JVM, slots linked without {@code critical}).
 */
class AddressCopyRaceUpcallTest {
    private static FakeProvider fake;
    /** The destroy count of the AH the current round's setter copies. */
    private static volatile AtomicInteger copying;
    /** Setter calls that found their AH destroyed. */
    private static final AtomicInteger copiedDestroyed = new AtomicInteger();
    private static final AtomicInteger copies = new AtomicInteger();

    @BeforeAll
    static void openFake() {
        fake = new FakeProvider(FakeProvider.compile(Path.of("src/test/c/fake_provider.c"), Path.of("target/fake")));
        fake.setAhHook(() -> { // inside the provider's setter, where libmlx5 reads mlx5_ah.av
            AtomicInteger destroyed = copying;
            for (int i = 0; i < 32; i++) { // widen the copy: a destroy that does not wait lands inside it
                if (destroyed.get() != 0) {
                    copiedDestroyed.incrementAndGet();
                    return;
                }
                Thread.onSpinWait();
            }
            copies.incrementAndGet();
        });
    }

    @AfterAll
    static void closeHook() {
        fake.setAhHook(null);
    }

    /** Runs in both modes (surefire executions {@code upcall-tests} and {@code upcall-tests-symmetric}). */
    @Test
    void theModeIsTheOneThisRunAskedFor() {
        boolean forcedOff = "false".equalsIgnoreCase(System.getProperty("dev.panverbs.membarrier"));
        assertThat(Handshake.ASYMMETRIC).as("membarrier works on this Linux x86-64 host and guest")
                .isEqualTo(!forcedOff);
    }

    @Test
    void aUdSetterNeverCopiesADestroyedAddressHandleAndAPostedWrKeepsItsHandle() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair ud = fake.createUdQp(cq, 16, EnumSet.of(SendOperation.SEND));
        MemoryRegion buf = fake.buffer(0x141);
        int[] outcomes = SteeredRace.run("AH close vs ibv_wr_set_ud_addr", SteeredRace.Steering.MULTIPLICATIVE, r -> {
            AtomicInteger destroyed = new AtomicInteger();
            AddressHandle ah = FakeProvider.fakeAh(fake.protectionDomain(), destroyed);
            copying = destroyed;
            String name = ah.toString();
            String[] refusal = new String[1];
            return new SteeredRace.Round() {
                @Override
                public boolean post() {
                    try (PostBatch b = ud.startSend()) {
                        b.send(r, SendFlag.SIGNALED_BIT).setUdAddr(ah, 7, 0x11).setSge(buf, 0, 8);
                        b.submit();
                        return true;
                    } catch (IllegalStateException e) {
                        refusal[0] = e.getMessage();
                        return false;
                    }
                }

                @Override
                public boolean close() {
                    try {
                        ah.close();
                        return true;
                    } catch (IllegalStateException e) { // a WR names it
                        return false;
                    }
                }

                @Override
                public void check(int round, boolean posted, boolean closed) {
                    assertThat(copiedDestroyed).as("round %d: the provider copied a destroyed AH", round).hasValue(0);
                    assertThat(posted && closed).as("round %d: destroyed under a posted WR", round).isFalse();
                    if (!posted) {
                        assertThat(refusal[0]).as("round %d: the refusal names the AH", round)
                                .contains(name);
                    }
                    assertThat(DataPathHostTest.drain(cq)).hasSize(posted ? 1 : 0);
                    if (!closed) {
                        ah.close(); // its WR retired: the close goes through now
                    }
                    assertThat(destroyed).as("round %d: destroyed once", round).hasValue(1);
                }
            };
        });
        assertThat(outcomes[3]).as("no round posted and closed").isZero();
        assertThat(outcomes[1] + outcomes[0]).as("some rounds posted or were refused").isPositive();
        assertThat(copies).as("setters that ran").hasPositiveValue();
        ud.close();
        buf.close();
    }
}
