package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * panverbs against the C perftest 6.06 on a real device (rxe0 in the Soft-RoCE guest), both ways: C server with
 * panverbs client, panverbs server with C client. Both sides must finish with status 0 and print a result; the
 * two outputs are parsed by the same parser and must have the same header fields in the same order, the same
 * column header and rows of the same printf shape; for unidirectional RDMA tests the server prints the client's
 * report, which checks the report exchange byte for byte in both directions.
 *
 * <p>Iterations stay small: under TCG the JVM runs ~20x slower than native. The JIT warm-up (on by default) runs in
 * the plain cases of all six programs, both directions ({@link Case#warmsUp()}): there the C peer waits in the
 * exchange while panverbs warms up. The other cases turn it off ({@code --jit_warmup=0}) to keep the bed's time.
 *
 */
class PerftestInteropIT {
    static String device;

    @BeforeAll
    static void device() {
        device = ItSupport.device();
    }

    /** One cell of the matrix: test, its options (besides -d/-p/host), and who is the server. */
    record Case(PerftestTest test, List<String> options, boolean javaServer) {
        @Override
        public String toString() {
            return test.programName() + " " + String.join(" ", options) + (javaServer ? " | panverbs server, C client"
                    : " | C server, panverbs client");
        }

        /** The plain cases keep the default JIT warm-up: {@code -s 4096 -n 200} (BW) and {@code -s 2 -n 200}. */
        boolean warmsUp() {
            return options.equals(List.of("-s", test.isBw() ? "4096" : "2", "-n", "200"));
        }
    }

    static Stream<Case> matrix() {
        List<Case> cases = new ArrayList<>();
        for (boolean javaServer : new boolean[] {false, true}) {
            for (PerftestTest t : List.of(PerftestTest.WRITE_BW, PerftestTest.READ_BW, PerftestTest.SEND_BW)) {
                for (String size : List.of("2", "4096", "65536")) {
                    cases.add(new Case(t, List.of("-s", size, "-n", "200"), javaServer));
                }
                cases.add(new Case(t, List.of("-s", "4096", "-n", "100", "-q", "2"), javaServer));
                cases.add(new Case(t, List.of("-s", "4096", "-D", "2"), javaServer));
            }
            cases.add(new Case(PerftestTest.SEND_BW, List.of("-c", "UD", "-s", "1024", "-n", "200"), javaServer));
            cases.add(new Case(PerftestTest.WRITE_BW, List.of("-a", "-n", "5"), javaServer));
            cases.add(new Case(PerftestTest.WRITE_BW, List.of("-s", "65536", "-n", "100", "--report_gbits"),
                    javaServer));
            for (PerftestTest t : List.of(PerftestTest.WRITE_LAT, PerftestTest.READ_LAT, PerftestTest.SEND_LAT)) {
                cases.add(new Case(t, List.of("-s", "2", "-n", "200"), javaServer));
            }
            cases.add(new Case(PerftestTest.SEND_LAT, List.of("-c", "UD", "-s", "64", "-n", "200"), javaServer));
            cases.add(new Case(PerftestTest.WRITE_BW, List.of("-b", "-s", "4096", "-n", "100"), javaServer));
            cases.add(new Case(PerftestTest.READ_BW, List.of("-b", "-s", "4096", "-n", "100"), javaServer));
            cases.add(new Case(PerftestTest.WRITE_BW, List.of("-c", "UC", "-s", "4096", "-n", "200"), javaServer));
            cases.add(new Case(PerftestTest.SEND_BW, List.of("-c", "UC", "-s", "1024", "-n", "200"), javaServer));
            cases.add(new Case(PerftestTest.READ_BW, List.of("-e", "-s", "4096", "-n", "100"), javaServer));
            cases.add(new Case(PerftestTest.SEND_BW, List.of("-e", "-s", "4096", "-n", "100"), javaServer));
            cases.add(new Case(PerftestTest.WRITE_BW, List.of("-l", "4", "-s", "64", "-n", "200"), javaServer));
            cases.add(new Case(PerftestTest.WRITE_LAT, List.of("-s", "2", "-D", "2"), javaServer));
            cases.add(new Case(PerftestTest.READ_LAT, List.of("-s", "64", "-D", "2"), javaServer));
            cases.add(new Case(PerftestTest.SEND_BW, List.of("-a", "-n", "5"), javaServer));
            cases.add(new Case(PerftestTest.WRITE_BW, List.of("-s", "4096", "-n", "100", "--out_json"), javaServer));
            cases.add(new Case(PerftestTest.WRITE_BW, List.of("--use_old_post_send", "-s", "4096", "-n", "100",
                    "-q", "2"), javaServer));
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("matrix")
    void interoperates(Case c, @TempDir Path dir) throws Exception {
        int port = ItSupport.port();
        // -F: under TCG the C tools' CPU frequency sampling fails ("Correlation coefficient r^2 < 0.9", "Can't
        // produce a report"); -F makes them use /proc/cpuinfo. panverbs accepts -F and needs no frequency.
        List<String> common = ItSupport.concat(c.options(), "-d", device, "-p", Integer.toString(port), "-F");
        List<String> cCommand = new ArrayList<>();
        cCommand.add(ItSupport.cTool(c.test().programName()));
        cCommand.addAll(common);
        boolean json = c.options().contains("--out_json");
        Path serverJson = dir.resolve("server.json");
        Path clientJson = dir.resolve("client.json");
        List<String> javaCommon = c.warmsUp() ? common : ItSupport.concat(common, "--jit_warmup=0");
        List<String> javaArgs = json ? ItSupport.concat(javaCommon, "--out_json_file=" + (c.javaServer() ? serverJson
                : clientJson)) : javaCommon;
        List<String> cArgs = json ? ItSupport.concat(cCommand, "--out_json_file=" + (c.javaServer() ? clientJson
                : serverJson)) : cCommand;
        ItSupport.Side server;
        ItSupport.Side client;
        if (c.javaServer()) {
            CompletableFuture<ItSupport.Side> s = ItSupport.javaSide(c.test(), javaArgs, CoreEngine::new);
            try {
                client = ItSupport.cClient(ItSupport.concat(cArgs, host()), dir, "client", 240);
            } catch (AssertionError e) { // the C client hung: show how far the panverbs server got
                String sv;
                try {
                    sv = s.get(120, TimeUnit.SECONDS).describe("server");
                } catch (java.util.concurrent.TimeoutException t) {
                    sv = "(the panverbs server did not finish either)";
                }
                throw new AssertionError(e.getMessage() + "\n" + sv, e);
            }
            server = s.get(240, TimeUnit.SECONDS);
        } else {
            ItSupport.CProcess s = new ItSupport.CProcess(cArgs, dir, "server");
            s.awaitStart();
            client = ItSupport.javaClient(c.test(), ItSupport.concat(javaArgs, host()), 240);
            try {
                server = s.await(240);
            } catch (AssertionError e) { // the C server hung: show how the panverbs client ended
                throw new AssertionError(e.getMessage() + "\n" + client.describe("client"), e);
            }
        }
        String both = server.describe("server") + "\n" + client.describe("client");
        assertThat(client.rc()).as(both).isZero();
        assertThat(server.rc()).as(both).isZero();

        PerftestTranscript sv = server.transcript();
        PerftestTranscript cl = client.transcript();
        boolean passiveServer = c.test() == PerftestTest.READ_LAT;
        assertThat(cl.rows()).as("client result rows\n" + both).isNotEmpty();
        if (!passiveServer) {
            assertThat(sv.rows()).as("server result rows\n" + both).isNotEmpty();
            assertThat(sv.columns()).as("column headers\n" + both).isEqualTo(cl.columns());
        }
        assertThat(sv.unparsed()).as("server lines of unknown shape\n" + both).allMatch(PerftestInteropIT::knownExtra);
        assertThat(cl.unparsed()).as("client lines of unknown shape\n" + both).allMatch(PerftestInteropIT::knownExtra);
        // same header fields, same order; a client shows TX depth, a SEND server RX depth
        assertThat(withoutRoleFields(sv.headerKeys())).isEqualTo(withoutRoleFields(cl.headerKeys()));
        assertThat(sv.header().get("Mtu")).isEqualTo(cl.header().get("Mtu"));
        assertThat(sv.header().get("GID index")).isEqualTo(cl.header().get("GID index"));
        assertThat(sv.header().get("Number of qps")).isEqualTo(cl.header().get("Number of qps"));
        assertThat(sv.header().get("rdma_cm QPs")).isEqualTo(cl.header().get("rdma_cm QPs"));
        assertThat(sv.header().get("Data ex. method")).isEqualTo(cl.header().get("Data ex. method"));
        // each side prints its own QPs as local and the other's as remote: the same lines, swapped
        List<String> svLocal = lines(sv.addressLines(), "local");
        List<String> clRemote = lines(cl.addressLines(), "remote");
        assertThat(svLocal).as("server local = client remote\n" + both).isEqualTo(clRemote);
        int rowsPerSide = c.options().contains("-a") ? 23 : 1;
        assertThat(cl.rows()).hasSize(rowsPerSide);
        boolean unidirectionalRdma = c.test() == PerftestTest.WRITE_BW || c.test() == PerftestTest.READ_BW;
        if (unidirectionalRdma) {
            // unidirectional: the server prints the client's last report, received over the wire;
            // -b: each side prints its own report plus the peer's, so both print the same sums
            assertThat(sv.rows()).hasSize(1);
            assertThat(sv.rows().get(0)).as("server shows the client's report\n" + both)
                    .isEqualTo(cl.rows().get(cl.rows().size() - 1));
        }
        if (json) {
            // both files list the same keys in the same order, and the server's results are the client's
            List<String> sj = Files.readAllLines(serverJson);
            List<String> cj = Files.readAllLines(clientJson);
            assertThat(keys(sj)).as("JSON keys\n" + sj + "\n" + cj).isEqualTo(keys(cj).stream()
                    .filter(k -> !k.equals("TX_depth ")).toList());
            assertThat(sj.subList(sj.indexOf("results: {"), sj.size()))
                    .isEqualTo(cj.subList(cj.indexOf("results: {"), cj.size()));
        }
        record(c, client);
    }

    /** The address the client connects to: loopback for TCP; rdma_cm needs the device's own IP (PANVERBS_ADDR). */
    String host() {
        return "127.0.0.1";
    }

    private static List<String> keys(List<String> json) {
        return json.stream().filter(l -> l.contains(":")).map(l -> l.substring(0, l.indexOf(':'))).toList();
    }

    private static boolean knownExtra(String line) {
        return line.startsWith("Device not recognized") || line.startsWith(" Max msg size in UD")
                || line.startsWith(" Changing to this MTU") || line.startsWith(" Test with events. Using ")
                || line.equals("Post List requested - CQ moderation will be the size of the post list")
                || line.equals(" Waiting for client rdma_cm QP to connect")
                || line.equals(" Please run the same command with the IB/RoCE interface IP");
    }

    private static List<String> withoutRoleFields(List<String> keys) {
        return keys.stream().filter(k -> !k.equals("TX depth") && !k.equals("RX depth")).toList();
    }

    /** The address lines of one side, "local"/"remote" dropped, GID lines kept in place. */
    private static List<String> lines(List<String> all, String side) {
        List<String> out = new ArrayList<>();
        boolean take = false;
        for (String l : all) {
            if (l.contains(" address: ")) {
                take = l.startsWith(" " + side + " ");
                if (take) {
                    out.add(l.replace(" " + side + " address", " address"));
                }
            } else if (take) {
                out.add(l);
            }
        }
        return out;
    }

    private static void record(Case c, ItSupport.Side client) throws Exception {
        String dir = System.getenv("PANVERBS_RESULTS");
        if (dir == null) {
            return;
        }
        List<String> rows = client.transcript().rows();
        String line = "panverbs interop: " + c + ": " + (rows.isEmpty() ? "(no row)" : rows.get(rows.size() - 1).strip())
                + System.lineSeparator();
        Files.writeString(Path.of(dir, "perftest.txt"), line, java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND);
    }
}
