package dev.panverbs.tools.perftest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.core.Context;
import dev.panverbs.core.Device;
import dev.panverbs.core.mlx5.Mlx5;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code --direct_wqe} on the test device with the real engine: on rxe every program refuses it naming the device
 * ("rxe0 is not an mlx5 device"); on a ConnectX (the hardware lane) every program runs in loopback through Direct
 * WQE posting and direct send-CQ polling and reports its result rows.
 */
class DirectWqeIT {

    private static LoopbackFlowTest.Result run(PerftestTest test, String... args) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        List<String> a = new ArrayList<>(List.of(args));
        a.addAll(List.of("-d", ItSupport.device(), "--loopback", "--timeout=60", "--direct_wqe"));
        int rc;
        try (PrintStream out = new PrintStream(o, true, StandardCharsets.UTF_8);
             PrintStream err = new PrintStream(e, true, StandardCharsets.UTF_8)) {
            rc = PerftestMain.run(test, test.programName(), a, out, err, CoreEngine::new);
        }
        return new LoopbackFlowTest.Result(rc, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
    }

    private static boolean mlx5() {
        try (Context ctx = Device.open(ItSupport.device())) {
            return Mlx5.isSupported(ctx);
        }
    }

    @Test
    void theSixProgramsRefuseOrRunDirectWqe() {
        boolean mlx5 = mlx5();
        for (PerftestTest test : PerftestTest.values()) {
            LoopbackFlowTest.Result r = run(test, "-n", "200");
            if (mlx5) {
                assertThat(r.rc()).as(test + "\n" + r.out() + r.err()).isZero();
                assertThat(LoopbackFlowTest.rows(test.kind() == PerftestTest.Kind.BW ? 5 : 9, r.out()))
                        .as(test.programName()).isNotEmpty();
            } else {
                assertThat(r.rc()).as(test + ": " + r.err()).isEqualTo(1);
                assertThat(r.err()).contains(ItSupport.device() + " is not an mlx5 device").contains("--direct_wqe");
            }
        }
    }
}
