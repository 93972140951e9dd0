package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.Test;

import java.util.Map;

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
        Map<String, Integer> levels = JitLevels.parse(LIST);
        // writeRounds' C2 code was made not entrant (state 1): its tier-2 code is what runs
        assertThat(levels).containsExactly(Map.entry("senderRounds", 4), Map.entry("writeRounds", 2));
        assertThat(JitLevels.allAtC2(levels)).isFalse();
        assertThat(JitLevels.allAtC2(Map.of("senderRounds", 4))).isTrue();
        assertThat(JitLevels.allAtC2(Map.of())).isFalse();
        assertThat(JitLevels.allAtC2(null)).isFalse();
    }

    @Test
    void thisJvmAnswers() {
        // the DiagnosticCommand MBean is there on the JDKs the tools run on: the warm-up depends on it
        assertThat(JitLevels.roundMethods()).isNotNull();
    }
}
