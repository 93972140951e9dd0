package dev.panverbs.tools.pingpong;

import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ud_pingpong}: ping-pong over unreliable-datagram QPs, wire-compatible with rdma-core's
 * {@code ibv_ud_pingpong} (same TCP exchange, options, defaults and output, Q_Key {@code 0x11111111}).
 *
 * <p>The default size is 1024 bytes: rdma-core 44's usage text and man page say 2048, but its code (and the
 * Debian binary) use 1024, and both sides must agree because each receive buffer holds exactly size + 40 bytes
 * (the GRH). A message cannot exceed the port's active MTU.
 */
@Command(name = "ud_pingpong", sortOptions = false, exitCodeOnInvalidInput = 1, exitCodeOnExecutionException = 1,
        usageHelpAutoWidth = true,
        description = "Ping-pong over UD QPs; interoperates with rdma-core's ibv_ud_pingpong.")
public final class UdPingPong extends PingPongCommand {
    /** {@code ibv_ud_pingpong}'s default message size in rdma-core 44 (not the 2048 its usage text claims). */
    public static final int DEFAULT_SIZE = 1024;

    @Mixin
    PingPongOptions options;

    @Option(order = 4, names = {"-s", "--size"}, paramLabel = "<size>", converter = CInteger.class,
            description = "size of message to exchange (default 1024)")
    long size = DEFAULT_SIZE;

    /** The command with the real RDMA runner. */
    public UdPingPong() {
        this(PingPongRun::ud);
    }

    UdPingPong(Runner runner) {
        super(runner);
    }

    @Override
    int run(PrintWriter out, PrintWriter err) throws Exception {
        return runner.run(options.settings(size, 0), out, err);
    }

    /** {@code ibv_ud_pingpong}'s usage lines after {@code -i} (rdma-core 44). */
    @Override
    String cUsageRest() {
        return """
                  -s, --size=<size>      size of message to exchange (default 2048)
                  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)
                  -n, --iters=<iters>    number of exchanges (default 1000)
                  -l, --sl=<SL>          send messages with service level <SL> (default 0)
                  -e, --events           sleep on CQ events (default poll)
                  -g, --gid-idx=<gid index> local port gid index
                  -c, --chk              validate received buffer
                """;
    }

    /** Parses {@code args} and runs; returns the exit status. */
    static int execute(Runner runner, String[] args, PrintWriter out, PrintWriter err) {
        return PingPongCommand.execute(new UdPingPong(runner), args, out, err);
    }

    /** Entry point of {@code tools/bin/ud_pingpong}. */
    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        System.exit(execute(PingPongRun::ud, args, out, err));
    }
}
