package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/** Checks made before ibv_reg_mr is called: no device needed. */
class AccessValidationTest {

    @Test
    void regMrBadFlagsRemoteWriteWithoutLocalWrite() {
        assertThatThrownBy(() -> Access.validate("ibv_reg_mr", EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("ibv_reg_mr(access=[REMOTE_WRITE, REMOTE_READ]): [REMOTE_WRITE] requires LOCAL_WRITE "
                        + "(ibv_reg_mr(3); the kernel would fail with EINVAL): add Access.LOCAL_WRITE");
    }

    @Test
    void regMrBadFlagsRemoteAtomicWithoutLocalWrite() {
        assertThatThrownBy(() -> Access.validate("ibv_rereg_mr", EnumSet.of(Access.REMOTE_ATOMIC, Access.REMOTE_WRITE)))
                .hasMessageContaining("[REMOTE_WRITE, REMOTE_ATOMIC] requires LOCAL_WRITE")
                .hasMessageContaining("EINVAL");
    }

    @Test
    void validFlagsGiveTheMask() {
        assertThat(Access.validate("ibv_reg_mr", EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                Access.REMOTE_ATOMIC))).isEqualTo(1 | 2 | 8);
        assertThat(Access.validate("ibv_reg_mr", EnumSet.noneOf(Access.class))).isZero();
        assertThat(Access.validate("ibv_reg_mr", EnumSet.of(Access.REMOTE_READ))).isEqualTo(4);
    }

    @Test
    void regMrHeapSegmentIsRejected() {
        MemorySegment heap = MemorySegment.ofArray(new byte[4096]);
        assertThatThrownBy(() -> RegistrationChecks.checkRegistrable("ibv_reg_mr", heap, EnumSet.of(Access.LOCAL_WRITE)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a heap segment cannot be registered (the garbage collector moves it")
                .hasMessageContaining("MemorySegment.ofBuffer");
        MemorySegment heapBuffer = MemorySegment.ofBuffer(ByteBuffer.allocate(64));
        assertThatThrownBy(() -> RegistrationChecks.checkRegistrable("ibv_reg_mr", heapBuffer, EnumSet.noneOf(Access.class)))
                .hasMessageContaining("heap segment");
    }

    @Test
    void regMrClosedArenaEmptyAndReadOnlyAreRejected() {
        MemorySegment freed;
        try (Arena arena = Arena.ofConfined()) {
            freed = arena.allocate(64);
        }
        MemorySegment f = freed;
        assertThatThrownBy(() -> RegistrationChecks.checkRegistrable("ibv_reg_mr", f, EnumSet.noneOf(Access.class)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("already closed");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment empty = arena.allocate(0);
            assertThatThrownBy(() -> RegistrationChecks.checkRegistrable("ibv_reg_mr", empty, EnumSet.noneOf(Access.class)))
                    .hasMessageContaining("cannot register an empty segment");
            MemorySegment ro = arena.allocate(64).asReadOnly();
            assertThatThrownBy(() -> RegistrationChecks.checkRegistrable("ibv_reg_mr", ro, EnumSet.of(Access.LOCAL_WRITE)))
                    .hasMessageContaining("the segment is read-only");
            assertThat(RegistrationChecks.checkRegistrable("ibv_reg_mr", ro, EnumSet.of(Access.REMOTE_READ))).isEqualTo(4);
            MemorySegment direct = MemorySegment.ofBuffer(ByteBuffer.allocateDirect(64));
            assertThat(RegistrationChecks.checkRegistrable("ibv_reg_mr", direct, EnumSet.of(Access.LOCAL_WRITE))).isEqualTo(1);
        }
    }
}
