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
 *
 * <p>Exit status as rping's {@code main} returns it: 22 ({@code EINVAL}) for a command line it rejects, with its
 * usage text on stdout; 254 ({@code EAI_NONAME}, 253 for {@code EAI_AGAIN}) for an address {@code getaddrinfo}
 * cannot resolve, after its {@code getaddrinfo failed (...)} line on stdout; the errno when
 * there is no rdma_cm event channel (19, {@code ENODEV}, without a device); 255 ({@code -1}) when the run fails.
 */
@Command(name = "rping", sortOptions = false, exitCodeOnInvalidInput = Rping.EINVAL,
        exitCodeOnExecutionException = Rping.FAILED,
        usageHelpAutoWidth = true,
        customSynopsis = {"rping -s [-vVd] [-S size] [-C count] [-a addr] [-p port]",
                "rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port]"},
        description = "RDMA ping over rdma_cm; interoperates with rdma-core's rping.")
public final class Rping extends CmCommand {
    /** rping's status for a rejected command line ({@code EINVAL}). */
    static final int EINVAL = 22;
    /** rping's status for a failed run ({@code main} returns -1). */
    static final int FAILED = 255;
    /** rping's status for an unresolvable {@code -a}/{@code -I} ({@code EAI_NONAME}, -2). */
    static final int EAI_NONAME = 254;
    /** rping's status when the name server does not answer ({@code EAI_AGAIN}, -3). */
    static final int EAI_AGAIN = 253;
    private static final String EAI_AGAIN_TEXT = "Temporary failure in name resolution";

    /** rping 44's {@code usage()}, byte for byte. */
    private static final String C_USAGE = """
            rping -s [-vVd] [-S size] [-C count] [-a addr] [-p port]
            rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port]
            \t-c\t\tclient side
            \t-I\t\tSource address to bind to for client.
            \t-s\t\tserver side.  To bind to any address with IPv6 use -a ::0
            \t-v\t\tdisplay ping data to stdout
            \t-V\t\tvalidate ping data
            \t-d\t\tdebug printfs
            \t-S size \tping data size
            \t-C count\tping count times
            \t-a addr\t\taddress
            \t-p port\t\tport
            \t-P\t\tpersistent server mode allowing multiple connections
            \t-q\t\tuse self-created, self-modified QP
            """;

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

    /** Why {@link #settings} refused the command line: the exit status. */
    private int refusal = EINVAL;

    @Override
    int usageStatus() {
        return EINVAL;
    }

    @Override
    int failureStatus() {
        return FAILED;
    }

    @Override
    void printCUsage(PrintWriter out) {
        out.print(C_USAGE);
        out.flush();
    }

    @Override
    int run(PrintWriter out, PrintWriter err) throws Exception {
        Settings s = settings(out, err);
        if (s == null) {
            return refusal;
        }
        return new RpingRun(s, out, err).run();
    }

    /** As {@link #settings(PrintWriter, PrintWriter)}, the usage text going to {@code err} too. */
    Settings settings(PrintWriter err) {
        return settings(err, err);
    }

    /**
     * Checks the options as rping's getopt loop does; {@code null} (a message on {@code err}, rping's usage on
     * {@code out}, the exit status in {@link #refusal}) if invalid.
     */
    Settings settings(PrintWriter out, PrintWriter err) {
        if (tos != null) {
            err.println("rping: option -t (TOS) is not an option of rdma-core 44's rping (udaddy has it)");
            printCUsage(out);
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
            printCUsage(out);
            return null;
        }
        if (port < 0 || port > 65535) {
            err.printf("Invalid port %d%n", port);
            return null;
        }
        if (address == null && client) {
            printCUsage(out);
            return null;
        }
        InetSocketAddress at;
        InetSocketAddress src;
        try {
            at = new InetSocketAddress(InetAddress.getByName(address == null ? "0.0.0.0" : address), port);
            src = source == null ? null : new InetSocketAddress(InetAddress.getByName(source), 0);
        } catch (UnknownHostException e) { // rping's get_addr, on stdout; main returns getaddrinfo's code
            String why = gaiReason(e);
            out.println("getaddrinfo failed (" + why + ") - invalid hostname or IP address");
            out.flush();
            refusal = why.equals(EAI_AGAIN_TEXT) ? EAI_AGAIN : EAI_NONAME;
            return null;
        }
        return new Settings(server, at, src, size, count, verbose, validate, debug, selfCreateQp,
                persistent && server, Duration.ofSeconds(peerTimeout));
    }

    /** {@code gai_strerror}'s text, which the JDK puts after "host: " in the exception's message. */
    static String gaiReason(UnknownHostException e) {
        String m = e.getMessage() == null ? "" : e.getMessage();
        int at = m.lastIndexOf(": ");
        return at < 0 ? "Name or service not known" : m.substring(at + 2);
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
