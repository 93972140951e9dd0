package dev.panverbs.tools.pingpong;

import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * {@code rc_pingpong}: ping-pong over a reliable-connected QP, wire-compatible with rdma-core's
 * {@code ibv_rc_pingpong} (same TCP exchange, options, defaults and output), so either side may be the C tool.
 *
 * <p>Without a host argument it is the server: it waits on TCP port 18515 for a client, exchanges LID, QPN,
 * PSN and GID with it, and the two then bounce a {@code -s}-byte message {@code -n} times with SEND/RECV.
 * {@code -N} posts with the {@code ibv_wr_*} API ({@code ibv_wr_start}/{@code ibv_wr_send}/{@code ibv_wr_complete}
 * through {@code QueuePair.startSend()}). rdma-core's {@code -o -O -P -t -j} (ODP, implicit ODP, prefetch,
 * timestamps, device memory) are recognised and refused by name.
 */
@Command(name = "rc_pingpong", sortOptions = false, exitCodeOnInvalidInput = 1, exitCodeOnExecutionException = 1,
        usageHelpAutoWidth = true,
        description = "Ping-pong over an RC QP; interoperates with rdma-core's ibv_rc_pingpong.")
public final class RcPingPong extends PingPongCommand {
    /** {@code ibv_rc_pingpong}'s default message size. */
    public static final int DEFAULT_SIZE = 4096;

    @Mixin
    PingPongOptions options;

    @Option(order = 4, names = {"-s", "--size"}, paramLabel = "<size>", converter = CInteger.class,
            description = "size of message to exchange (default 4096)")
    long size = DEFAULT_SIZE;

    @Option(order = 5, names = {"-m", "--mtu"}, paramLabel = "<size>", converter = CInteger.class,
            description = "path MTU (default 1024)")
    long mtu = 1024;

    @Option(names = {"-o", "--odp"}, hidden = true)
    boolean odp;
    @Option(names = {"-O", "--iodp"}, hidden = true)
    boolean iodp;
    @Option(names = {"-P", "--prefetch"}, hidden = true)
    boolean prefetch;
    @Option(names = {"-t", "--ts"}, hidden = true)
    boolean ts;
    @Option(names = {"-j", "--dm"}, hidden = true)
    boolean dm;
    @Option(order = 13, names = {"-N", "--new_send"}, description = "use new post send WR API")
    boolean newSend;

    /** The command with the real RDMA runner. */
    public RcPingPong() {
        this(PingPongRun::rc);
    }

    RcPingPong(Runner runner) {
        super(runner);
    }

    @Override
    int run(PrintWriter out, PrintWriter err) throws Exception {
        String tool = spec.name();
        if (odp) {
            return PingPongCommand.unsupported(tool, "-o/--odp", "on-demand paging", err);
        }
        if (iodp) {
            return PingPongCommand.unsupported(tool, "-O/--iodp", "implicit on-demand paging", err);
        }
        if (prefetch) {
            return PingPongCommand.unsupported(tool, "-P/--prefetch", "prefetching an ODP MR", err);
        }
        if (ts) {
            return PingPongCommand.unsupported(tool, "-t/--ts", "completion timestamps", err);
        }
        if (dm) {
            return PingPongCommand.unsupported(tool, "-j/--dm", "device memory", err);
        }
        if (Integer.bitCount((int) mtu) != 1 || mtu < 256 || mtu > 4096 || mtu != (int) mtu) {
            throw new ParameterException(spec.commandLine(), "-m/--mtu must be 256, 512, 1024, 2048 or 4096, got "
                    + mtu);
        }
        return runner.run(options.settings(size, (int) mtu).withNewSend(newSend), out, err);
    }

    /** {@code ibv_rc_pingpong}'s usage lines after {@code -i} (rdma-core 44). */
    @Override
    String cUsageRest() {
        return """
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
                """;
    }

    /** Parses {@code args} and runs; returns the exit status. */
    static int execute(Runner runner, String[] args, PrintWriter out, PrintWriter err) {
        return PingPongCommand.execute(new RcPingPong(runner), args, out, err);
    }

    /** Entry point of {@code tools/bin/rc_pingpong}. */
    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        System.exit(execute(PingPongRun::rc, args, out, err));
    }
}
