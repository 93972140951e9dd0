package dev.panverbs.tools.perftest;

import static dev.panverbs.tools.perftest.PerftestOutputTest.RL;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.tools.perftest.RdmaCmOptionTest.Parsed;
import java.lang.reflect.Proxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code -c XRC}, {@code -c DC} and the DC-stream options on the host: parsed as perftest 6.06 parses them, its
 * {@code force_dependecies} refusals with its words and streams (each recorded from the C tool, built with
 * {@code HAVE_DCS}, in the rxe guest), the refusal before any connection on a device that has the transport, and a
 * whole run on the simulated device (neither transport) failing where perftest's {@code ctx_init} fails, with its
 * lines. The same runs against the C tools on rxe are {@link XrcDcRefusalIT}'s.
 */
@Timeout(60)
class XrcDcConnectionTest {

    private static Parsed parse(PerftestTest test, String... args) {
        return RdmaCmOptionTest.parse(test, args);
    }

    @Test
    void xrcAndDcAreConnectionTypesOfEveryProgramAndTheLastDashCWins() {
        for (PerftestTest t : PerftestTest.values()) {
            for (XrcDcConnection.Kind k : XrcDcConnection.Kind.values()) {
                Parsed p = parse(t, "-c", k.name(), "h");
                assertThat(p.outcome().proceed()).as(t + " " + k + p.err()).isTrue();
                assertThat(p.outcome().params().xrcDc).isEqualTo(k);
            }
        }
        PerftestParameters udThenDc = parse(PerftestTest.SEND_BW, "-c", "UD", "-c", "DC").outcome().params();
        assertThat(udThenDc.xrcDc).isEqualTo(XrcDcConnection.Kind.DC);
        assertThat(udThenDc.connection).as("UD is forgotten").isEqualTo(PerftestParameters.Connection.RC);
        assertThat(parse(PerftestTest.SEND_BW, "-c", "DC", "-c", "RC").outcome().params().xrcDc).isNull();
    }

    @Test
    void perftestsRefusalsWithItsWordsAndStreams() {
        String[][] cases = { // args, C's stdout, C's stderr (ib_send_bw/ib_write_bw 6.06 on rxe, exit 1)
            {"-c XRC -R", RL, " XRC does not support RDMA_CM\n"},
            {"-c DC -R", RL, " DC does not support RDMA_CM\n"},
            {"-c DC --use_old_post_send", RL, " DC does not support old post send flow\n"},
            {"--log_dci_streams=2", RL, " log_dci_streams supported only on DC\n"},
            {"-c DC --log_active_dci_streams=1", RL, " log_dci_streams must be greater than 0\n"},
        };
        for (PerftestTest t : new PerftestTest[] {PerftestTest.SEND_BW, PerftestTest.WRITE_BW}) {
            for (String[] c : cases) {
                Parsed p = parse(t, c[0].split(" "));
                assertThat(p.outcome().proceed()).as(c[0]).isFalse();
                assertThat(p.outcome().exitCode()).isEqualTo(1);
                assertThat(p.out()).as(c[0]).isEqualTo(c[1]);
                assertThat(p.err()).as(c[0]).isEqualTo(c[2]);
            }
        }
        Parsed streams = parse(PerftestTest.WRITE_BW, "-c", "DC", "--log_dci_streams=2");
        assertThat(streams.outcome().proceed()).as(streams.err()).isTrue();
        assertThat(streams.outcome().params().logActiveDciStreams).as("defaults to log_dci_streams").isEqualTo(2);
        Parsed notInt = parse(PerftestTest.WRITE_BW, "-c", "DC", "--log_dci_streams=x");
        assertThat(notInt.err()).isEqualTo(" log_dci_streams argument x should be uint16_t\n"
                + " Parser function exited with Error\n");
    }

    @Test
    void aDeviceWithTheTransportIsRefusedBeforeAnyConnectionAndOneWithoutIsLeftToCtxInit() {
        PerftestParameters xrc = parse(PerftestTest.SEND_BW, "-c", "XRC").outcome().params();
        PerftestParameters dc = parse(PerftestTest.SEND_BW, "-c", "DC").outcome().params();
        VerbsEngine.Device mlx5 = device("mlx5_0", true);
        VerbsEngine.Device rxe = device("rxe0", false);
        assertThatThrownBy(() -> XrcDcConnection.refuseIfCapable(xrc, mlx5)).isInstanceOf(RunFailure.class)
                .hasMessageContaining("-c XRC is not supported by panverbs' perftest yet")
                .hasMessageContaining("mlx5_0 reports IBV_DEVICE_XRC");
        assertThatThrownBy(() -> XrcDcConnection.refuseIfCapable(dc, mlx5)).isInstanceOf(RunFailure.class)
                .hasMessageContaining("-c DC is not supported").hasMessageContaining("DcInitiator");
        XrcDcConnection.refuseIfCapable(xrc, rxe);
        XrcDcConnection.refuseIfCapable(dc, rxe);
        assertThatThrownBy(() -> XrcDcConnection.failAsCtxInit(dc, rxe)).isInstanceOf(RunFailure.class)
                .hasMessageStartingWith("Unable to create QP.\nFailed to create QP.\n Couldn't create IB resources\n"
                        + " (mlx5dv_create_qp: rxe0 is not an mlx5 device");
    }

    @Test
    void aWholeRunWithoutTheTransportFailsWhereCtxInitFailsWithItsLines() {
        LoopbackFlowTest.Result r = LoopbackFlowTest.run(PerftestTest.SEND_BW, "-d", "sim0", "-c", "XRC");
        assertThat(r.rc()).as(r.err()).isEqualTo(1);
        assertThat(r.err()).contains("Error opening XRC domain\nCouldn't create XRC resources\n"
                + " Couldn't create IB resources\n (ibv_open_xrcd: sim0 does not report IBV_DEVICE_XRC");
        assertThat(r.out()).as("it fails before the header, as perftest").doesNotContain("Send BW Test");
    }

    private static VerbsEngine.Device device(String name, boolean capable) {
        return (VerbsEngine.Device) Proxy.newProxyInstance(XrcDcConnectionTest.class.getClassLoader(),
                new Class<?>[] {VerbsEngine.Device.class}, (proxy, m, a) -> switch (m.getName()) {
                    case "name" -> name;
                    case "supportsXrc", "isMlx5" -> capable;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }
}
