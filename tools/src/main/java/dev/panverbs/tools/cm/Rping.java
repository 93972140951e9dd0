package dev.panverbs.tools.cm;

import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code rping}: rdma-core's RDMA ping over rdma_cm, wire-compatible with its {@code rping} (librdmacm examples), so
 * either side may be the C tool. The client advertises a buffer of ping text (address, rkey, length: 16 bytes,
 * big-endian), the server RDMA READs it, tells the client to go on, the client advertises its second buffer, the
 * server RDMA WRITEs the text back into it and says so; {@code -V} compares the two buffers on the client, {@code -v}
 * prints the data. Same options, defaults (port 7174, 64 bytes, {@code -C} 0 = forever) and output lines.
 * {@code -q}: the QP is the application's ({@code ibv_create_qp}), moved through INIT, RTR and RTS by the tool with
 * the attributes {@code rdma_init_qp_attr} computes, its number carried by connect/accept, the client completing with
 * {@code rdma_establish}. {@code -P}: the server serves each connection on a thread of its own and listens on until
 * killed. {@code -t} (not an option of rping 44) is refused by name.
 */
@Command(name = "rping", sortOptions = false, exitCodeOnInvalidInput = 1, exitCodeOnExecutionException = 1,
        usageHelpAutoWidth = true,
        customSynopsis = {"rping -s [-vVd] [-S size] [-C count] [-a addr] [-p port]",
                "rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port]"},
        description = "RDMA ping over rdma_cm; interoperates with rdma-core's rping.")
public final class Rping extends CmCommand {

    @Option(names = "-c", description = "client side")
    boolean client;
    @Option(names = "-s", description = "server side.  To bind to any address with IPv6 use -a ::0")
    boolean server;
    @Option(names = "-I", paramLabel = "addr", description = "Source address to bind to for client.")
    String source;
    @Option(names = "-v", description = "display ping data to stdout")
    boolean verbose;
    @Option(names = "-V", description = "validate ping data")
    boolean validate;
    @Option(names = "-d", description = "debug printfs")
    boolean debug;
    @Option(names = "-S", paramLabel = "size", description = "ping data size")
    int size = 64;
    @Option(names = "-C", paramLabel = "count", description = "ping count times")
    int count;
    @Option(names = "-a", paramLabel = "addr", description = "address")
    String address;
    @Option(names = "-p", paramLabel = "port", description = "port")
    int port = 7174;
    @Option(names = "-P", description = "persistent server mode allowing multiple connections")
    boolean persistent;
    @Option(names = "-q", description = "use self-created, self-modified QP")
    boolean selfCreateQp;
    @Option(names = "-t", paramLabel = "tos", hidden = true)
    Integer tos;
    @Option(names = "--peer-timeout", paramLabel = "seconds", hidden = true,
            description = "give up when the peer sends nothing for this long once connected (rping waits forever)")
    int peerTimeout = 60;
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "show this help")
    boolean help;

    /** The settings of one validated run. */
    record Settings(boolean server, InetSocketAddress address, InetSocketAddress source, int size, int count,
                    boolean verbose, boolean validate, boolean debug, boolean selfCreateQp, boolean persistent,
                    Duration peerTimeout) {}

    @Override
    int run(PrintWriter out, PrintWriter err) throws Exception {
        Settings s = settings(err);
        if (s == null) {
            return 1;
        }
        return new RpingRun(s, out, err).run();
    }

    /** Checks the options as rping's getopt loop does; {@code null} (and a message on {@code err}) if invalid. */
    Settings settings(PrintWriter err) throws UnknownHostException {
        if (tos != null) {
            err.println("rping: option -t (TOS) is not an option of rdma-core 44's rping (udaddy has it)");
            return null;
        }
        if (size < RpingText.MIN_SIZE || size > RpingText.MAX_SIZE - 1) {
            err.printf("Invalid size %d (valid range is %d to %d)%n", size, RpingText.MIN_SIZE, RpingText.MAX_SIZE);
            return null;
        }
        if (count < 0) {
            err.printf("Invalid count %d%n", count);
            return null;
        }
        if (peerTimeout <= 0) {
            err.printf("Invalid peer timeout %d (seconds, at least 1)%n", peerTimeout);
            return null;
        }
        if (client == server) {
            spec.commandLine().usage(err);
            return null;
        }
        if (port < 0 || port > 65535) {
            err.printf("Invalid port %d%n", port);
            return null;
        }
        InetSocketAddress at;
        if (address == null) {
            if (client) {
                spec.commandLine().usage(err);
                return null;
            }
            at = new InetSocketAddress(InetAddress.getByName("0.0.0.0"), port);
        } else {
            at = new InetSocketAddress(InetAddress.getByName(address), port);
        }
        InetSocketAddress src = source == null ? null : new InetSocketAddress(InetAddress.getByName(source), 0);
        return new Settings(server, at, src, size, count, verbose, validate, debug, selfCreateQp,
                persistent && server, Duration.ofSeconds(peerTimeout));
    }

    /** Parses {@code args} and runs; returns the exit status. */
    static int execute(String[] args, PrintWriter out, PrintWriter err) {
        return CmCommand.execute(new Rping(), args, out, err);
    }

    /** Entry point of {@code tools/bin/rping}. */
    public static void main(String[] args) {
        CmCommand.main(new Rping(), args);
    }
}
