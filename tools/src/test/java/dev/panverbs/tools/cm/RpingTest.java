package dev.panverbs.tools.cm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * rping's command line (getopt's checks and messages, refusals by name) and its ping text, compared with what
 * rdma-core's rping 44 printed in the bed ({@code rping -c -v -S 64}: the lines below are its output).
 */
class RpingTest {

    private static String[] run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = Rping.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new String[] {Integer.toString(status), out.toString(), err.toString()};
    }

    @Test
    void theTextIsByteForByteRdmaCores() {
        byte[] buf = new byte[64];
        RpingText.fill(buf, 0, 65);
        assertThat(RpingText.cString(buf))
                .isEqualTo("rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqr");
        assertThat(buf[63]).isZero();
        RpingText.fill(buf, 2, RpingText.next(RpingText.next(65)));
        assertThat(RpingText.cString(buf))
                .isEqualTo("rdma-ping-2: CDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrst");
        // the filler wraps from 'z' (122) to 'A' (65), and so does the start of each ping
        byte[] big = new byte[200];
        RpingText.fill(big, 7, 120);
        String s = RpingText.cString(big);
        assertThat(s).startsWith("rdma-ping-7: xyzABC").hasSize(199);
        assertThat(RpingText.next(122)).isEqualTo(65);
        assertThat(new String(big, 0, 13, StandardCharsets.US_ASCII)).isEqualTo("rdma-ping-7: ");
    }

    @Test
    void sizesOutsideRpingsRangeAreRefusedWithItsMessage() {
        String[] r = run("-c", "-a", "127.0.0.1", "-S", "22");
        assertThat(r[0]).as("rping's EINVAL").isEqualTo("22");
        assertThat(r[2]).contains("Invalid size 22 (valid range is 23 to 65536)");
        assertThat(run("-c", "-a", "127.0.0.1", "-S", "65536")[2]).contains("Invalid size 65536");
        // 23 is rping's own minimum: it holds "rdma-ping-2147483647: " and the NUL
        assertThat(run("-c", "-a", "127.0.0.1", "-S", "23", "-C", "1")[2]).doesNotContain("Invalid size");
        assertThat(run("-c", "-a", "127.0.0.1", "-C", "-1")[2]).contains("Invalid count -1");
    }

    @Test
    void aRoleIsRequiredAndTheClientNeedsAnAddress() {
        String[] neither = run("-a", "127.0.0.1");
        assertThat(neither[0]).isEqualTo("22");
        assertThat(neither[1]).isEqualTo(C_USAGE);
        assertThat(neither[2]).isEmpty();
        assertThat(run("-c")[1]).isEqualTo(C_USAGE);
    }

    /** What rdma-core 44's rping prints to stdout for a command line it rejects (recorded from the C tool). */
    static final String C_USAGE = """
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

    @Test
    void rejectedCommandLinesExitWithRpingsEinvalAndItsUsageOnStdout() {
        for (String[] args : new String[][] {{"-x"}, {"-s", "-a"}, {"-c", "-S"}, {"-s", "-t", "5"}}) {
            String[] r = run(args);
            assertThat(r[0]).as(String.join(" ", args)).isEqualTo("22");
            assertThat(r[1]).as(String.join(" ", args)).isEqualTo(C_USAGE);
            assertThat(r[2]).as("one line naming what was wrong").hasLineCount(1).doesNotContain("\tat ");
        }
    }

    @Test
    void tosIsRefusedByNameAndQAndPAreSettings() throws Exception {
        assertThat(run("-s", "-t", "16")[2]).contains("-t (TOS)").contains("not an option of rdma-core 44's rping");
        Rping r = new Rping();
        new picocli.CommandLine(r).parseArgs("-s", "-P", "-q");
        Rping.Settings s = r.settings(new PrintWriter(new StringWriter()));
        assertThat(s.persistent()).isTrue();
        assertThat(s.selfCreateQp()).isTrue();
        Rping c = new Rping();
        new picocli.CommandLine(c).parseArgs("-c", "-P", "-a", "10.0.0.1");
        assertThat(c.settings(new PrintWriter(new StringWriter())).persistent()).as("-P is a server mode").isFalse();
    }

    @Test
    void peerTimeoutDefaultsTo60AndMustBePositive() throws Exception {
        Rping r = new Rping();
        new picocli.CommandLine(r).parseArgs("-s");
        assertThat(r.settings(new PrintWriter(new StringWriter())).peerTimeout()).hasSeconds(60);
        Rping five = new Rping();
        new picocli.CommandLine(five).parseArgs("-s", "--peer-timeout", "5");
        assertThat(five.settings(new PrintWriter(new StringWriter())).peerTimeout()).hasSeconds(5);
        assertThat(run("-s", "--peer-timeout", "0")[2]).contains("Invalid peer timeout 0");
    }

    @Test
    void clusteredFlagsParseAsGetoptDoes() throws Exception {
        Rping r = new Rping();
        new picocli.CommandLine(r).parseArgs("-cvVd", "-a", "10.0.0.1", "-p", "9999", "-C", "3", "-S", "100");
        Rping.Settings s = r.settings(new PrintWriter(new StringWriter()));
        assertThat(s.server()).isFalse();
        assertThat(s.verbose()).isTrue();
        assertThat(s.validate()).isTrue();
        assertThat(s.debug()).isTrue();
        assertThat(s.address().getPort()).isEqualTo(9999);
        assertThat(s.count()).isEqualTo(3);
        assertThat(s.size()).isEqualTo(100);
    }

    @Test
    void anUnresolvableAddressIsRpingsGetaddrinfoLineAndStatus() {
        // rdma-core's rping -c -a no.such.host.invalid, recorded in the bed (no name server): stdout, exit 253
        assertThat(Rping.gaiReason(new java.net.UnknownHostException(
                "no.such.host.invalid: Temporary failure in name resolution")))
                .isEqualTo("Temporary failure in name resolution");
        String[] r = run("-c", "-a", "no.such.host.invalid", "-C", "1");
        // EAI_NONAME where a name server answers, EAI_AGAIN where there is none (the bed)
        String why = r[0].equals(Integer.toString(Rping.EAI_AGAIN)) ? "Temporary failure in name resolution"
                : "Name or service not known";
        assertThat(r[0]).isIn(Integer.toString(Rping.EAI_NONAME), Integer.toString(Rping.EAI_AGAIN));
        assertThat(r[1]).isEqualTo("getaddrinfo failed (" + why + ") - invalid hostname or IP address\n");
        assertThat(r[2]).isEmpty();
    }
}
