package dev.panverbs.tools.perftest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.core.Context;
import dev.panverbs.core.Device;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code --odp} on the test device with the real engine, as perftest's {@code check_odp_support}: on rxe (no
 * {@code IBV_ODP_SUPPORT}) the programs refuse with perftest's sentence and nothing is registered; on a device with
 * ODP for RC (the hardware lane) they run in loopback over on-demand-paging buffers and report their rows.
 */
class OdpOptionIT {

    private static LoopbackFlowTest.Result run(PerftestTest test, String... args) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        List<String> a = new ArrayList<>(List.of(args));
        a.addAll(List.of("-d", ItSupport.device(), "--loopback", "--timeout=60", "--odp"));
        int rc;
        try (PrintStream out = new PrintStream(o, true, StandardCharsets.UTF_8);
             PrintStream err = new PrintStream(e, true, StandardCharsets.UTF_8)) {
            rc = PerftestMain.run(test, test.programName(), a, out, err, CoreEngine::new);
        }
        return new LoopbackFlowTest.Result(rc, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
    }

    @Test
    void odpRunsWhereTheDeviceHasItAndIsRefusedByCapabilityElsewhere() {
        boolean odp;
        try (Context ctx = Device.open(ItSupport.device())) {
            odp = ctx.queryDevice().odp().supported() && !ctx.queryDevice().odp().rc().isEmpty();
        }
        for (PerftestTest test : List.of(PerftestTest.WRITE_BW, PerftestTest.SEND_BW)) {
            LoopbackFlowTest.Result r = run(test, "-n", "100");
            if (odp) {
                assertThat(r.rc()).as(test + "\n" + r.out() + r.err()).isZero();
                assertThat(LoopbackFlowTest.rows(5, r.out())).as(test.programName()).isNotEmpty();
            } else {
                assertThat(r.rc()).as(test + ": " + r.err()).isEqualTo(1);
                assertThat(r.err()).contains(" The device does not support On-Demand Paging.")
                        .contains("Failed to create MR").contains("IBV_ODP_SUPPORT");
            }
        }
        LoopbackFlowTest.Result uc = run(PerftestTest.WRITE_BW, "-c", "UC", "-n", "100");
        assertThat(uc.rc()).isEqualTo(1);
        assertThat(uc.err()).containsAnyOf(" ODP is not available on UC transport.",
                " The device does not support On-Demand Paging.");
    }
}
