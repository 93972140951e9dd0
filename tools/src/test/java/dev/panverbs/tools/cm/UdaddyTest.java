package dev.panverbs.tools.cm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/** udaddy's command line: its defaults, {@code strtol(.., 0)} numbers, and the refusals by name. */
class UdaddyTest {

    private static Udaddy.Settings settings(StringWriter err, String... args) throws Exception {
        Udaddy u = new Udaddy();
        new picocli.CommandLine(u).parseArgs(args);
        return u.settings(new PrintWriter(err, true));
    }

    private static String[] run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = Udaddy.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new String[] {Integer.toString(status), out.toString(), err.toString()};
    }

    @Test
    void defaultsAreUdaddys() throws Exception {
        Udaddy.Settings server = settings(new StringWriter());
        assertThat(server.client()).isFalse();
        assertThat(server.bind()).isEqualTo(new InetSocketAddress("0.0.0.0", 7174));
        assertThat(server.connections()).isEqualTo(1);
        assertThat(server.count()).isEqualTo(10);
        assertThat(server.size()).isEqualTo(100);
        assertThat(server.tos()).isNull();
        Udaddy.Settings client = settings(new StringWriter(), "-s", "10.1.2.3", "-t", "0x20", "-b", "10.1.2.4");
        assertThat(client.server()).isEqualTo(new InetSocketAddress("10.1.2.3", 7174));
        assertThat(client.bind()).isEqualTo(new InetSocketAddress("10.1.2.4", 0));
        assertThat(client.tos()).isEqualTo(0x20);
        // a zero message size means no messages at all (create_message)
        assertThat(settings(new StringWriter(), "-S", "0").count()).isZero();
    }

    @Test
    void numbersAreReadAsStrtolBaseZero() {
        assertThat(Udaddy.parseC("0x111")).isEqualTo(0x111);
        assertThat(Udaddy.parseC("0273")).isEqualTo(0273);
        assertThat(Udaddy.parseC("273")).isEqualTo(273);
        assertThat(Udaddy.parseC("0")).isZero();
    }

    @Test
    void badNumbersAndHostsAreOneLineNamingThem() {
        String[] tos = run("-t", "abc");
        assertThat(tos[0]).isEqualTo("1");
        assertThat(tos[2]).isEqualTo("udaddy: -t abc: not a number (decimal, 0x hex or 0 octal)\n");
        assertThat(run("-p", "0x1g")[2]).startsWith("udaddy: -p 0x1g: not a number");
        String[] host = run("-s", "no-such-host.invalid");
        assertThat(host[0]).isEqualTo("1");
        assertThat(host[2]).startsWith("udaddy: cannot resolve no-such-host.invalid").doesNotContain("Exception");
    }

    @Test
    void ipoibAndAfIbAreRefusedByName() {
        String[] ipoib = run("-P", "ipoib");
        assertThat(ipoib[0]).isEqualTo("1");
        assertThat(ipoib[2]).contains("-P ipoib").contains("not supported by this panverbs clone");
        assertThat(run("-p", "0x2")[2]).contains("-p 0x2 (the IPoIB port space)");
        assertThat(run("-p", "0x106")[2]).contains("neither UDP");
        assertThat(run("-f", "gid", "-s", "fe80::1")[2]).contains("-f gid (AF_IB addresses)");
    }

    @Test
    void unknownFormatsWarnAsUdaddyDoes() throws Exception {
        StringWriter err = new StringWriter();
        Udaddy.Settings s = settings(err, "-P", "tcp", "-f", "other", "-p", "0x111");
        assertThat(s).isNotNull();
        assertThat(err.toString()).contains("Warning: unknown port space format")
                .contains("Warning: unknown address format");
    }

    @Test
    void impossibleCountsAreRefused() {
        String[] r = run("-c", "0");
        assertThat(r[0]).isEqualTo("1");
        assertThat(r[2]).contains("connections (-c 0) must be at least 1");
        assertThat(run("-C", "-1")[2]).contains("message count (-C -1)");
    }

    @Test
    void rejectedCommandLinesExitOneWithUdaddysUsageOnStdout() {
        // recorded from rdma-core 44's udaddy -x: exit 1, getopt's line on stderr, this on stdout
        String usage = """
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
        for (String[] args : new String[][] {{"-x"}, {"-c"}, {"-s", "10.0.0.1", "-S"}}) {
            String[] r = run(args);
            assertThat(r[0]).as(String.join(" ", args)).isEqualTo("1");
            assertThat(r[1]).as(String.join(" ", args)).isEqualTo(usage);
            assertThat(r[2]).as("one line naming what was wrong").hasLineCount(1).startsWith("udaddy: ");
        }
    }
}
