package dev.panverbs.tools.perftest;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@code --direct_wqe} (panverbs only) in the six programs: parsed, listed in the usage, and refused up front on a
 * device that is not an mlx5 device, naming it, before any connection is made.
 */
class DirectWqeOptionTest {

    @Test
    void everyProgramRefusesDirectWqeOnANonMlx5DeviceByName() {
        for (PerftestTest test : PerftestTest.values()) {
            LoopbackFlowTest.Result r = LoopbackFlowTest.run(test, "--direct_wqe", "-n", "5");
            assertThat(r.rc()).as(test + ": " + r.err()).isEqualTo(1);
            assertThat(r.err()).as(test.programName()).contains("sim0 is not an mlx5 device")
                    .contains("--direct_wqe");
        }
    }

    @Test
    void theOptionIsParsedAndListed() {
        java.io.ByteArrayOutputStream o = new java.io.ByteArrayOutputStream();
        java.io.PrintStream out = new java.io.PrintStream(o, true, java.nio.charset.StandardCharsets.UTF_8);
        PerftestMain.run(PerftestTest.WRITE_BW, "ib_write_bw", java.util.List.of("--help"), out, out,
                () -> new SimulatedEngine("sim0"));
        assertThat(o.toString(java.nio.charset.StandardCharsets.UTF_8)).contains("--direct_wqe");
    }
}
