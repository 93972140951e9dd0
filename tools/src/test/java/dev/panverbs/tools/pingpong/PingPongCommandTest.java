package dev.panverbs.tools.pingpong;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Option parsing of rc_pingpong and ud_pingpong against the C tools' options, defaults and exit codes. */
class PingPongCommandTest {
    private final AtomicReference<PingPongOptions.Settings> seen = new AtomicReference<>();
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int rc(String... args) {
        return RcPingPong.execute((s, o, e) -> {
            seen.set(s);
            return 0;
        }, args, new PrintWriter(out), new PrintWriter(err));
    }

    private int ud(String... args) {
        return UdPingPong.execute((s, o, e) -> {
            seen.set(s);
            return 0;
        }, args, new PrintWriter(out), new PrintWriter(err));
    }

    @Test
    void rcDefaultsAreTheCTools() {
        assertThat(rc()).isZero();
        assertThat(seen.get()).isEqualTo(new PingPongOptions.Settings(null, 18515, null, 1, 4096, 1024, 500, 1000, 0,
                false, -1, false, false));
        assertThat(seen.get().isClient()).isFalse();
    }

    @Test
    void udDefaultSizeIsTheOneOfTheCode() {
        assertThat(ud("server-host")).isZero();
        assertThat(seen.get().size()).isEqualTo(1024);
        assertThat(seen.get().serverName()).isEqualTo("server-host");
    }

    @Test
    void rcShortOptions() {
        assertThat(rc("-p", "18516", "-d", "rxe0", "-i", "1", "-s", "64", "-m", "2048", "-r", "16", "-n", "100",
                "-l", "3", "-e", "-g", "1", "-c", "10.77.0.1")).isZero();
        assertThat(seen.get()).isEqualTo(new PingPongOptions.Settings("10.77.0.1", 18516, "rxe0", 1, 64, 2048, 16,
                100, 3, true, 1, true, false));
    }

    @Test
    void rcLongOptionsAndHostBeforeOptionsLikeGetoptPermutation() {
        assertThat(rc("10.77.0.1", "--port=0x4854", "--ib-dev", "rxe0", "--ib-port=1", "--size=0x100", "--mtu=512",
                "--rx-depth=8", "--iters=010", "--sl=1", "--events", "--gid-idx=0", "--chk")).isZero();
        assertThat(seen.get()).isEqualTo(new PingPongOptions.Settings("10.77.0.1", 0x4854, "rxe0", 1, 256, 512, 8,
                8, 1, true, 0, true, false));
    }

    @Test
    void clusteredFlagsAndAttachedValues() {
        assertThat(ud("-ec", "-n5", "-g0")).isZero();
        assertThat(seen.get().events()).isTrue();
        assertThat(seen.get().chk()).isTrue();
        assertThat(seen.get().iters()).isEqualTo(5);
        assertThat(seen.get().gidIndex()).isZero();
    }

    @Test
    void peerTimeoutIsHiddenDefaultsTo60AndRefusesZero() {
        assertThat(rc()).isZero();
        assertThat(seen.get().peerTimeoutSeconds()).isEqualTo(60);
        assertThat(ud("--peer-timeout", "5")).isZero();
        assertThat(seen.get().peerTimeoutSeconds()).isEqualTo(5);
        assertThat(seen.get().withNewSend(true).peerTimeoutSeconds()).isEqualTo(5);
        assertThat(rc("--peer-timeout", "0")).isEqualTo(1);
        assertThat(err.toString()).contains("--peer-timeout must be 1..86400 s, got 0");
        assertThat(rc("--help")).isZero();
        assertThat(out.toString()).doesNotContain("peer-timeout");
    }

    @Test
    void negativeGidIndexMeansNone() {
        assertThat(rc("-g", "-5")).isZero();
        assertThat(seen.get().gidIndex()).isEqualTo(-1);
    }

    @Test
    void rcRefusesUnsupportedRdmaCoreOptionsByName() {
        assertThat(rc("-o")).isEqualTo(1);
        assertThat(err.toString()).contains("rc_pingpong: option -o/--odp (on-demand paging) of ibv_rc_pingpong is"
                + " not supported");
        assertThat(rc("--prefetch")).isEqualTo(1);
        assertThat(err.toString()).contains("-P/--prefetch");
        assertThat(rc("-t")).isEqualTo(1);
        assertThat(err.toString()).contains("-t/--ts (completion timestamps)");
        assertThat(seen.get()).isNull();
    }

    @Test
    void rcNewSendSelectsTheWrApi() {
        assertThat(rc("-N")).isZero();
        assertThat(seen.get().newSend()).isTrue();
        assertThat(rc("--new_send", "host")).isZero();
        assertThat(seen.get().newSend()).isTrue();
        assertThat(ud("-N")).as("ibv_ud_pingpong has no -N").isEqualTo(1);
    }

    @Test
    void udHasNoMtuOption() {
        assertThat(ud("-m", "1024")).isEqualTo(1);
        assertThat(err.toString()).contains("Unknown option").contains("-m");
        assertThat(out.toString()).startsWith("Usage:\n  ud_pingpong            start a server");
    }

    @Test
    void unknownOptionPrintsUsageAndExits1() {
        assertThat(rc("-x")).isEqualTo(1);
        assertThat(err.toString()).isEqualTo("rc_pingpong: Unknown option: '-x'\n");
        // ibv_rc_pingpong -x, recorded (rdma-core 44): usage(argv[0]) on stdout, exit 1
        assertThat(out.toString()).isEqualTo("""
                Usage:
                  rc_pingpong            start a server and wait for connection
                  rc_pingpong <host>     connect to server at <host>

                Options:
                  -p, --port=<port>      listen on/connect to port <port> (default 18515)
                  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)
                  -i, --ib-port=<port>   use port <port> of IB device (default 1)
                  -s, --size=<size>      size of message to exchange (default 4096)
                  -m, --mtu=<size>       path MTU (default 1024)
                  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)
                  -n, --iters=<iters>    number of exchanges (default 1000)
                  -l, --sl=<sl>          service level value
                  -e, --events           sleep on CQ events (default poll)
                  -g, --gid-idx=<gid index> local port gid index
                  -o, --odp\t\t    use on demand paging
                  -O, --iodp\t\t    use implicit on demand paging
                  -P, --prefetch\t    prefetch an ODP MR
                  -t, --ts\t            get CQE with timestamp
                  -c, --chk\t            validate received buffer
                  -j, --dm\t            use device memory
                  -N, --new_send            use new post send WR API
                """);
    }

    @Test
    void udUsageIsIbvUdPingpongs() {
        assertThat(ud("--mtu=1024")).isEqualTo(1);
        assertThat(err.toString()).hasLineCount(1);
        assertThat(out.toString()).isEqualTo("""
                Usage:
                  ud_pingpong            start a server and wait for connection
                  ud_pingpong <host>     connect to server at <host>

                Options:
                  -p, --port=<port>      listen on/connect to port <port> (default 18515)
                  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)
                  -i, --ib-port=<port>   use port <port> of IB device (default 1)
                  -s, --size=<size>      size of message to exchange (default 2048)
                  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)
                  -n, --iters=<iters>    number of exchanges (default 1000)
                  -l, --sl=<SL>          send messages with service level <SL> (default 0)
                  -e, --events           sleep on CQ events (default poll)
                  -g, --gid-idx=<gid index> local port gid index
                  -c, --chk              validate received buffer
                """);
    }

    @Test
    void badMtuRejected() {
        assertThat(rc("-m", "1000")).isEqualTo(1);
        assertThat(err.toString()).contains("-m/--mtu must be 256, 512, 1024, 2048 or 4096, got 1000");
    }

    @Test
    void rangesTheCToolsCheck() {
        assertThat(rc("-p", "65536")).isEqualTo(1);
        assertThat(err.toString()).contains("-p/--port must be 0..65535, got 65536");
        assertThat(rc("-i", "0")).isEqualTo(1);
        assertThat(err.toString()).contains("-i/--ib-port must be 1..255, got 0");
    }

    @Test
    void rangesTheCToolsLeaveToChance() {
        assertThat(ud("-s", "0")).isEqualTo(1);
        assertThat(err.toString()).contains("-s/--size must be 1..");
        assertThat(ud("-l", "16")).isEqualTo(1);
        assertThat(err.toString()).contains("-l/--sl must be 0..15, got 16");
        assertThat(ud("-n", "0")).isEqualTo(1);
        assertThat(err.toString()).contains("-n/--iters must be 1..");
    }

    @Test
    void garbageNumberRejectedWhereStrtolWouldReadZero() {
        assertThat(rc("-n", "ten")).isEqualTo(1);
        assertThat(err.toString()).contains("'ten' is not an integer");
    }

    @Test
    void twoHostsRejected() {
        assertThat(rc("a", "b")).isEqualTo(1);
        assertThat(out.toString()).startsWith("Usage:\n  rc_pingpong ");
        assertThat(seen.get()).isNull();
    }

    @Test
    void helpExits0() {
        assertThat(ud("--help")).isZero();
        assertThat(out.toString()).contains("Usage: ud_pingpong").contains("--rx-depth").contains("--gid-idx");
        assertThat(seen.get()).isNull();
    }

    @Test
    void worksAsAPicocliSubcommandWithoutExecute() {
        // how a dispatcher such as `panverbs rc_pingpong ...` would run it: picocli's own streams
        picocli.CommandLine cl = new picocli.CommandLine(new RcPingPong());
        cl.setErr(new PrintWriter(err));
        assertThat(cl.execute("-j")).isEqualTo(1);
        assertThat(err.toString()).contains("rc_pingpong: option -j/--dm (device memory)");
    }

    @Test
    void runnerFailureIsOneLineOnStderrAndExit1() {
        int status = RcPingPong.execute((s, o, e) -> {
            throw new PingPongProtocolException("the peer closed the connection after 0 of 52 bytes");
        }, new String[] {"host"}, new PrintWriter(out), new PrintWriter(err));
        assertThat(status).isEqualTo(1);
        assertThat(err.toString()).isEqualTo("rc_pingpong: the peer closed the connection after 0 of 52 bytes"
                + System.lineSeparator());
    }
}
