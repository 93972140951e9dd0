package dev.panverbs.tools.pingpong;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * The options rdma-core's {@code ibv_rc_pingpong} and {@code ibv_ud_pingpong} share, with their short and long
 * names and defaults. Integers accept C's {@code strtol} base-0 forms ({@code 0x1f}, {@code 017}). Ranges the C
 * tools check (port, IB port, MTU) are checked the same way; the ones C leaves to chance (a negative size, an SL
 * above 15) are refused here with the option named.
 */
public final class PingPongOptions {
    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(order = 1, names = {"-p", "--port"}, paramLabel = "<port>", converter = CInteger.class,
            description = "listen on/connect to port <port> (default 18515)")
    long port = PingPongExchange.DEFAULT_PORT;

    @Option(order = 2, names = {"-d", "--ib-dev"}, paramLabel = "<dev>",
            description = "use IB device <dev> (default first device found)")
    String ibDev;

    @Option(order = 3, names = {"-i", "--ib-port"}, paramLabel = "<port>", converter = CInteger.class,
            description = "use port <port> of IB device (default 1)")
    long ibPort = 1;

    @Option(order = 6, names = {"-r", "--rx-depth"}, paramLabel = "<dep>", converter = CInteger.class,
            description = "number of receives to post at a time (default 500)")
    long rxDepth = 500;

    @Option(order = 7, names = {"-n", "--iters"}, paramLabel = "<iters>", converter = CInteger.class,
            description = "number of exchanges (default 1000)")
    long iters = 1000;

    @Option(order = 8, names = {"-l", "--sl"}, paramLabel = "<sl>", converter = CInteger.class,
            description = "service level value (default 0)")
    long sl = 0;

    @Option(order = 9, names = {"-e", "--events"}, description = "sleep on CQ events (default poll)")
    boolean events;

    @Option(order = 10, names = {"-g", "--gid-idx"}, paramLabel = "<gid index>", converter = CInteger.class,
            description = "local port gid index (default none; RoCE ports, such as rxe, need one)")
    long gidIdx = -1;

    @Option(order = 11, names = {"-c", "--chk"}, description = "validate received buffer")
    boolean chk;

    @Option(order = 13, names = "--peer-timeout", paramLabel = "<seconds>", converter = CInteger.class, hidden = true,
            description = "give up when no completion arrives for this long (the C tools wait forever)")
    long peerTimeout = Settings.DEFAULT_PEER_TIMEOUT;

    @Option(order = 12, names = {"-h", "--help"}, usageHelp = true, description = "print this help and exit")
    boolean help;

    @Parameters(arity = "0..1", paramLabel = "<host>",
            description = "connect to the server at <host>; without it, start a server and wait for a connection")
    String serverName;

    /** Validates ranges, with the tool's own {@code -s} value and path MTU (0 for UD). */
    Settings settings(long sz, int mtu) {
        check(port >= 0 && port <= 65535, "-p/--port must be 0..65535, got " + port);
        check(ibPort >= 1 && ibPort <= 255, "-i/--ib-port must be 1..255, got " + ibPort);
        check(sz >= 1 && sz <= Integer.MAX_VALUE, "-s/--size must be 1.." + Integer.MAX_VALUE + ", got " + sz);
        check(rxDepth >= 1 && rxDepth <= 1 << 20, "-r/--rx-depth must be 1..1048576, got " + rxDepth);
        check(iters >= 1 && iters <= Integer.MAX_VALUE, "-n/--iters must be 1.." + Integer.MAX_VALUE + ", got " + iters);
        check(sl >= 0 && sl <= 15, "-l/--sl must be 0..15, got " + sl);
        check(peerTimeout >= 1 && peerTimeout <= 86_400, "--peer-timeout must be 1..86400 s, got " + peerTimeout);
        check(gidIdx <= Integer.MAX_VALUE && gidIdx >= Integer.MIN_VALUE, "-g/--gid-idx out of range: " + gidIdx);
        return new Settings(serverName, (int) port, ibDev, (int) ibPort, (int) sz, mtu, (int) rxDepth, (int) iters,
                (int) sl, events, gidIdx < 0 ? -1 : (int) gidIdx, chk, false, (int) peerTimeout);
    }

    private void check(boolean ok, String message) {
        if (!ok) {
            throw new ParameterException(spec.commandLine(), message);
        }
    }

    /**
     * Validated settings of one run.
     *
     * @param serverName the server to connect to, or {@code null} to be the server
     * @param gidIndex   the local GID index, or -1 for none
     * @param newSend    post with the {@code ibv_wr_*} API (rc_pingpong {@code -N})
     * @param peerTimeoutSeconds how long the run waits for a completion before it gives up on the peer
     */
    public record Settings(String serverName, int port, String ibDev, int ibPort, int size, int mtu, int rxDepth,
                           int iters, int sl, boolean events, int gidIndex, boolean chk, boolean newSend,
                           int peerTimeoutSeconds) {
        /** Default of {@code --peer-timeout}: far above any exchange's time, far below forever. */
        public static final int DEFAULT_PEER_TIMEOUT = 60;

        /** Settings with the default peer timeout. */
        public Settings(String serverName, int port, String ibDev, int ibPort, int size, int mtu, int rxDepth,
                        int iters, int sl, boolean events, int gidIndex, boolean chk, boolean newSend) {
            this(serverName, port, ibDev, ibPort, size, mtu, rxDepth, iters, sl, events, gidIndex, chk, newSend,
                    DEFAULT_PEER_TIMEOUT);
        }

        /** Whether this side is the client (a host was given). */
        public boolean isClient() {
            return serverName != null;
        }

        /** A copy with {@link #newSend} set. */
        public Settings withNewSend(boolean n) {
            return new Settings(serverName, port, ibDev, ibPort, size, mtu, rxDepth, iters, sl, events, gidIndex, chk,
                    n, peerTimeoutSeconds);
        }
    }
}
