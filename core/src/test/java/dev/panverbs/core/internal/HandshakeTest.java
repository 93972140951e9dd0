package dev.panverbs.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.panverbs.bindings.libc.Membarrier;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntUnaryOperator;
import org.junit.jupiter.api.Test;

/** The choice between the asymmetric ({@code membarrier(2)}) and the symmetric (full fences) close/post handshake. */
class HandshakeTest {
    private static final int BOTH = Membarrier.CMD_PRIVATE_EXPEDITED | Membarrier.CMD_REGISTER_PRIVATE_EXPEDITED;

    /** A fake syscall answering {@code query} to the query and {@code register} to the registration; logs commands. */
    private static IntUnaryOperator syscall(int query, int register, List<Integer> log) {
        return cmd -> {
            log.add(cmd);
            return cmd == Membarrier.CMD_QUERY ? query : cmd == Membarrier.CMD_REGISTER_PRIVATE_EXPEDITED ? register
                    : -22;
        };
    }

    @Test
    void asymmetricOnlyWhenTheKernelSupportsAndRegistersThePrivateExpeditedCommand() {
        List<Integer> log = new ArrayList<>();
        assertThat(Handshake.decide(null, syscall(0x3ff, 0, log))).isTrue();
        assertThat(log).containsExactly(Membarrier.CMD_QUERY, Membarrier.CMD_REGISTER_PRIVATE_EXPEDITED);
        assertThat(Handshake.decide("auto", syscall(BOTH, 0, new ArrayList<>()))).isTrue();

        log.clear();
        assertThat(Handshake.decide(null, syscall(-38, 0, log))).as("ENOSYS: no such syscall (old kernel, "
                + "seccomp, another OS or architecture)").isFalse();
        assertThat(log).as("no registration attempted").containsExactly(Membarrier.CMD_QUERY);
        assertThat(Handshake.decide(null, syscall(-1, 0, new ArrayList<>()))).as("EPERM").isFalse();
        assertThat(Handshake.decide(null, syscall(0x1 | Membarrier.CMD_REGISTER_PRIVATE_EXPEDITED, 0,
                new ArrayList<>()))).as("no private expedited command (before Linux 4.14)").isFalse();
        assertThat(Handshake.decide(null, syscall(Membarrier.CMD_PRIVATE_EXPEDITED, 0, new ArrayList<>())))
                .as("no registration command").isFalse();
        assertThat(Handshake.decide(null, syscall(BOTH, -22, new ArrayList<>()))).as("registration: EINVAL")
                .isFalse();
        assertThat(Handshake.decide(null, syscall(BOTH, -1, new ArrayList<>()))).as("registration: EPERM")
                .isFalse();
    }

    @Test
    void theSystemPropertyForcesTheSymmetricHandshakeWithoutAnySyscall() {
        List<Integer> log = new ArrayList<>();
        assertThat(Handshake.decide("false", syscall(BOTH, 0, log))).isFalse();
        assertThat(Handshake.decide("FALSE", syscall(BOTH, 0, log))).isFalse();
        assertThat(log).isEmpty();
    }

    @Test
    void theSyscallIsBoundOnLinuxX8664AndAarch64Only() {
        assertThat(Membarrier.syscallNumber("Linux", "amd64")).isEqualTo(324);
        assertThat(Membarrier.syscallNumber("Linux", "aarch64")).isEqualTo(283);
        assertThat(Membarrier.syscallNumber("Linux", "riscv64")).isEqualTo(-1);
        assertThat(Membarrier.syscallNumber("Mac OS X", "aarch64")).isEqualTo(-1);
        assertThat(Membarrier.syscallNumber("Windows 11", "amd64")).isEqualTo(-1);
    }

    @Test
    void thisHostsKernelAnswersAndTheDecisionFollowsIt() {
        int mask = Membarrier.call(Membarrier.CMD_QUERY);
        boolean supported = mask >= 0 && (mask & BOTH) == BOTH;
        boolean forcedOff = "false".equalsIgnoreCase(System.getProperty("dev.panverbs.membarrier"));
        assertThat(Handshake.ASYMMETRIC).isEqualTo(supported && !forcedOff);
        if (Handshake.ASYMMETRIC) { // registered at class init: the expedited barrier itself now succeeds
            assertThat(Membarrier.call(Membarrier.CMD_PRIVATE_EXPEDITED)).isZero();
        }
        assertThatCode(Handshake::closerSide).doesNotThrowAnyException();
        assertThatCode(Handshake::postSide).doesNotThrowAnyException();
        boolean[] undone = {false};
        Handshake.closerSide(() -> undone[0] = true);
        assertThat(undone[0]).as("the closer's mark is undone only when the barrier fails").isFalse();
        assertThat(Membarrier.call(-1)).as("an unknown command: -EINVAL").isEqualTo(-22);
    }
}
