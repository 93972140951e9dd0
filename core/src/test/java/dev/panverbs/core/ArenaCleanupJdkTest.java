package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What {@link ArenaTie} relies on in the JDK it runs on: an arena's cleanup actions run newest first, and one that
 * throws does not stop the older ones (among them the free of the arena's memory): {@code Arena.close()} runs them all,
 * then rethrows the failure. So a tie's action cannot keep the memory by failing; it must deregister before it returns.
 * The Java 22 API leaves this unspecified: this test fails on a JDK that behaves otherwise.
 */
class ArenaCleanupJdkTest {

    @Test
    void aFailingCleanupActionDoesNotStopTheOlderOnesAndCloseRethrowsIt() {
        Arena arena = Arena.ofShared();
        MemorySegment memory = arena.allocate(4096, 64); // its free is the oldest action
        List<String> ran = new ArrayList<>();
        MemorySegment.ofAddress(memory.address()).reinterpret(arena, s -> ran.add("older"));
        IllegalStateException failure = new IllegalStateException("the tie's deregistration failed");
        MemorySegment.ofAddress(memory.address()).reinterpret(arena, s -> {
            ran.add("failing");
            throw failure;
        });
        MemorySegment.ofAddress(memory.address()).reinterpret(arena, s -> ran.add("newer"));

        assertThatThrownBy(arena::close).isSameAs(failure);
        assertThat(ran).containsExactly("newer", "failing", "older");
        assertThat(memory.scope().isAlive()).isFalse();
    }
}
