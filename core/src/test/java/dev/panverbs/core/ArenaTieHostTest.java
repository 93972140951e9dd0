package dev.panverbs.core;

import static dev.panverbs.testing.Threads.onAnotherThread;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
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
}
