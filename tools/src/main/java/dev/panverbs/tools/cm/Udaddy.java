package dev.panverbs.tools.cm;

import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code udaddy}: rdma-core's UD address test over rdma_cm (librdmacm examples), wire-compatible with its
 * {@code udaddy}, so either side may be the C tool. The client resolves the server (UDP port space, port 7174) and
 * "connects" (a SIDR request) for each of {@code -c} IDs; ESTABLISHED gives it the server's QP number, qkey and
 * address. It sends {@code -C} messages of {@code -S} bytes as SEND with immediate = its own QP number; the server
 * builds the reply address handle from the first receive's completion and GRH ({@code ibv_create_ah_from_wc}) and
 * sends as many messages back. Same options, defaults (10 messages of 100 bytes, one connection) and output lines.
 * The IPoIB port space ({@code -P ipoib}) and AF_IB addresses ({@code -f gid}) are refused by name.
 *
 * <p>Exit status as udaddy's: 1 for a command line it rejects (its usage text on stdout); after a run, the
 * {@code return status} it printed, as {@code main} returns it (-1 exits 255, an rdma_cm event's status -110 exits
 * 146).
 */
@Command(name = "udaddy", sortOptions = false, exitCodeOnInvalidInput = 1, exitCodeOnExecutionException = 1,
        usageHelpAutoWidth = true,
        customSynopsis = {"udaddy [-s server_address] [-b bind_address] [-f address_format] [-P port_space]",
                "       [-c connections] [-C message_count] [-S message_size] [-t type_of_service] [-p port_space]"},
        description = "UD address resolution and datagrams over rdma_cm; interoperates with rdma-core's udaddy.")
public final class Udaddy extends CmCommand {

    /** rdma-core's {@code RDMA_PS_UDP} and {@code RDMA_PS_IPOIB}, as {@code -p} takes them. */
    static final int PS_UDP = 0x0111;
    static final int PS_IPOIB = 0x0002;
    /** udaddy's fixed port (it has no option for it). */
    static final int PORT = 7174;

    /** udaddy 44's usage text (its {@code default:} case, {@code argv[0]} as "udaddy"). */
    private static final String C_USAGE = """
            usage: udaddy
            \t[-s server_address]
            \t[-b bind_address]
            \t[-f address_format]
            \t    name, ip, ipv6, or gid
            \t[-P port_space]
            \t    udp or ipoib
            \t[-c connections]
            \t[-C message_count]
            \t[-S message_size]
            \t[-t type_of_service]
            \t[-p port_space - 0x111 for UDP (default), 0x2 for IPOIB]
            """;

    @Option(names = "-s", paramLabel = "server_address", description = "the server to connect to (client side)")
    String server;
    @Option(names = "-b", paramLabel = "bind_address", description = "the local address to bind to")
    String bind;
    @Option(names = "-f", paramLabel = "address_format", description = "name, ip, ipv6, or gid")
    String format;
    @Option(names = "-P", paramLabel = "port_space", description = "udp or ipoib")
    String portSpaceName;
    @Option(names = "-c", paramLabel = "connections", description = "connections (default 1)")
    int connections = 1;
    @Option(names = "-C", paramLabel = "message_count", description = "messages each way (default 10)")
    int count = 10;
    @Option(names = "-S", paramLabel = "message_size", description = "bytes per message (default 100)")
    int size = 100;
    @Option(names = "-t", paramLabel = "type_of_service", description = "IP type of service of the client's IDs")
    String tos;
    @Option(names = "-p", paramLabel = "port_space", description = "0x111 for UDP (default), 0x2 for IPOIB")
    String portSpaceNumber;
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "show this help")
    boolean help;

    /** The settings of one validated run; {@code server} null on the server side. */
    record Settings(InetSocketAddress server, InetSocketAddress bind, int connections, int count, int size,
                    Integer tos) {
        boolean client() {
            return server != null;
        }
    }

    @Override
    int usageStatus() {
        return 1;
    }

    @Override
    int failureStatus() {
        return 1; // udaddy exit(1)s when it cannot even start (no event channel, no memory)
    }

    @Override
    void printCUsage(PrintWriter out) {
        out.print(C_USAGE);
        out.flush();
    }

    @Override
    int run(PrintWriter out, PrintWriter err) throws Exception {
        Settings s = settings(err);
        if (s == null) {
            return 1;
        }
        return new UdaddyRun(s, out, err).run();
    }

    /** Checks the options as udaddy's getopt loop does; {@code null} (and a message on {@code err}) if refused. */
    Settings settings(PrintWriter err) throws UnknownHostException {
        if (portSpaceName != null) {
            String p = portSpaceName.toLowerCase(Locale.ROOT);
            if (p.startsWith("ipoib")) {
                return refuse(err, "-P ipoib (the IPoIB port space)");
            } else if (!p.startsWith("udp")) {
                err.println("Warning: unknown port space format");
            }
        }
        if (portSpaceNumber != null) {
            long ps = parseC("-p", portSpaceNumber);
            if (ps == PS_IPOIB) {
                return refuse(err, "-p 0x2 (the IPoIB port space)");
            }
            if (ps != PS_UDP) {
                err.printf("udaddy: port space %s is neither UDP (%#x) nor IPoIB (%#x)%n", portSpaceNumber, PS_UDP,
                        PS_IPOIB);
                return null;
            }
        }
        if (format != null) {
            String f = format.toLowerCase(Locale.ROOT);
            if (f.startsWith("gid")) {
                return refuse(err, "-f gid (AF_IB addresses)");
            } else if (!f.startsWith("ip") && !f.startsWith("name")) {
                err.println("Warning: unknown address format");
            }
        }
        if (connections < 1 || count < 0 || size < 0) {
            err.printf("udaddy: connections (-c %d) must be at least 1, message count (-C %d) and size (-S %d) not "
                    + "negative%n", connections, count, size);
            return null;
        }
        Integer t = null;
        if (tos != null) {
            t = (int) (parseC("-t", tos) & 0xFF); // (uint8_t) strtoul(optarg, NULL, 0)
        }
        InetSocketAddress dst = server == null ? null : new InetSocketAddress(InetAddress.getByName(server), PORT);
        InetSocketAddress src;
        if (bind != null) {
            src = new InetSocketAddress(InetAddress.getByName(bind), dst == null ? PORT : 0);
        } else {
            src = dst == null ? new InetSocketAddress(InetAddress.getByName("0.0.0.0"), PORT) : null;
        }
        return new Settings(dst, src, connections, size == 0 ? 0 : count, size, t);
    }

    private static Settings refuse(PrintWriter err, String what) {
        err.println("udaddy: " + what + " of rdma-core's udaddy is not supported by this panverbs clone (UDP port "
                + "space over IP addresses only)");
        return null;
    }

    /** {@link #parseC(String)} of {@code option}'s value; a malformed number is refused naming the option. */
    static long parseC(String option, String s) {
        try {
            return parseC(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " " + s + ": not a number (decimal, 0x hex or 0 octal)", e);
        }
    }

    /** {@code strtol(s, NULL, 0)}: decimal, 0x hex or 0 octal; a malformed number is refused. */
    static long parseC(String s) {
        String t = s.trim();
        boolean negative = t.startsWith("-");
        if (negative || t.startsWith("+")) {
            t = t.substring(1);
        }
        long v;
        if (t.startsWith("0x") || t.startsWith("0X")) {
            v = Long.parseLong(t.substring(2), 16);
        } else if (t.length() > 1 && t.startsWith("0")) {
            v = Long.parseLong(t.substring(1), 8);
        } else {
            v = Long.parseLong(t);
        }
        return negative ? -v : v;
    }

    /** Parses {@code args} and runs; returns the exit status. */
    static int execute(String[] args, PrintWriter out, PrintWriter err) {
        return CmCommand.execute(new Udaddy(), args, out, err);
    }

    /** Entry point of {@code tools/bin/udaddy}. */
    public static void main(String[] args) {
        CmCommand.main(new Udaddy(), args);
    }
}
