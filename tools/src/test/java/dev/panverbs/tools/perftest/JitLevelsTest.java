package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link JitLevels}: the round methods' tiers read from a {@code Compiler.codelist} as JDK 25 prints it. */
class JitLevelsTest {
    private static final String LIST = """
            1437 2 0 dev.panverbs.tools.perftest.LatencyRunner.writeRounds(Ljava/lang/foreign/MemorySegment;JJ[J[J\
            Ldev/panverbs/tools/perftest/DurationTimer;Z)Z [0x00007f5a6c5cbc08, 0x00007f5a6c5cbd00 - 0x00007f5a6c5cbe48]
            1501 3 1 dev.panverbs.tools.perftest.BwRunner.senderRounds(Ldev/panverbs/tools/perftest/BwRunner$Sender;)Z \
            [0x1, 0x2 - 0x3]
            1502 4 0 dev.panverbs.tools.perftest.BwRunner.senderRounds(Ldev/panverbs/tools/perftest/BwRunner$Sender;)Z \
            [0x1, 0x2 - 0x3]
            1438 4 1 dev.panverbs.tools.perftest.LatencyRunner.writeRounds(Ljava/lang/foreign/MemorySegment;JJ[J[J\
            Ldev/panverbs/tools/perftest/DurationTimer;Z)Z [0x1, 0x2 - 0x3]
            1439 4 0 dev.panverbs.tools.perftest.LatencyRunner.awaitByte(Ljava/lang/foreign/MemorySegment;JB)V [0x1]
            3 0 0 jdk.internal.misc.Unsafe.getReferenceVolatile(Ljava/lang/Object;J)Ljava/lang/Object; [0x1, 0x2 - 0x3]
            """;

    @Test
    void aRoundMethodCountsOnlyWithCodeInUse() {
        JitLevels.Snapshot s = JitLevels.parse(LIST);
        // writeRounds' C2 code was made not entrant (state 1): its tier-2 code is what runs
        assertThat(s.rounds()).containsExactly(Map.entry("senderRounds", 4), Map.entry("writeRounds", 2));
        assertThat(s.c2Ids()).containsExactlyInAnyOrder(1502, 1439); // not the JDK's, not the one not entrant
        assertThat(s.allAtC2()).isFalse();
        assertThat(new JitLevels.Snapshot(Map.of("senderRounds", 4), Set.of()).allAtC2()).isTrue();
        assertThat(new JitLevels.Snapshot(Map.of(), Set.of()).allAtC2()).isFalse();
    }

    @Test
    void stableOnlyWhenNoC2CodeWasLostAcrossAFreshPair() {
        JitLevels.Snapshot before = new JitLevels.Snapshot(Map.of("sendRounds", 4), Set.of(10, 11));
        assertThat(new JitLevels.Snapshot(Map.of("sendRounds", 4), Set.of(10, 11, 12)).stableSince(before)).isTrue();
        // 11 deoptimized (an uncommon trap a fresh pair's first post hit): not yet
        assertThat(new JitLevels.Snapshot(Map.of("sendRounds", 4), Set.of(10, 12)).stableSince(before)).isFalse();
        assertThat(new JitLevels.Snapshot(Map.of("sendRounds", 3), Set.of(10, 11)).stableSince(before)).isFalse();
        assertThat(before.stableSince(null)).isFalse();
        assertThat(before.stableSince(new JitLevels.Snapshot(Map.of("sendRounds", 3), Set.of()))).isFalse();
    }

    @Test
    void thisJvmAnswers() {
        // the DiagnosticCommand MBean is reachable with the launcher's (and this module's surefire) --add-opens
        assertThat(JitLevels.snapshot()).isNotNull();
    }
}
