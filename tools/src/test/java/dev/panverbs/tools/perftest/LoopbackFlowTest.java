package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whole runs of the six programs, server and client in one JVM (--loopback) over real TCP, on the simulated
 * device: the key exchange order of both sides must agree message for message, and each side must print
 * perftest's blocks in perftest's order.
 */
@Timeout(60)
class LoopbackFlowTest {
    /** A result row: a space, the size, then numbers only (perftest's columns are separated by spaces and tabs). */
    // "-nan": perftest's t_stdev when a sample deviates by more than 46341 ticks (its int square overflows), which
    // a stall on a loaded machine causes; the clone prints what C prints (Statistics)
    static final Pattern ROW = Pattern.compile("(?m)^ \\d+(?:[ \\t]+(?:-?[\\d.]+|-nan))+[ \\t]*$");

    record Result(int rc, String out, String err) { }

    static Result run(PerftestTest test, String... args) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        List<String> a = new ArrayList<>(List.of(args));
        a.add("--loopback");
        a.add("--timeout=10");
        a.add("--jit_warmup=0"); // the simulated engine needs no JIT warm-up; WarmupTest covers it
        int rc;
        try (PrintStream out = new PrintStream(o, true, StandardCharsets.UTF_8);
             PrintStream err = new PrintStream(e, true, StandardCharsets.UTF_8)) {
            rc = PerftestMain.run(test, test.programName(), a, out, err, () -> new SimulatedEngine("sim0"));
        }
        return new Result(rc, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
    }

    /** The rows with {@code fields} numbers (5 for BW, 9 for latency), split into their fields. */
    static List<String[]> rows(int fields, String out) {
        List<String[]> rows = new ArrayList<>();
        Matcher m = ROW.matcher(out);
        while (m.find()) {
            String[] g = m.group().trim().split("[ \\t]+");
            if (g.length == fields) {
                rows.add(g);
            }
        }
        return rows;
    }

    @ParameterizedTest
    @CsvSource({"WRITE_BW", "READ_BW", "SEND_BW"})
    void bwClientPrintsHeaderAddressesAndOneRow(PerftestTest test) {
        Result r = run(test, "-d", "sim0", "-n", "200", "-s", "4096");
        assertThat(r.rc()).as(r.err() + r.out()).isZero();
        String rl = PerftestOutput.RESULT_LINE;
        // like perftest on an unknown vendor (rxe), READ starts with the RESULT_LINE of its inline warning
        String start = (test.verb() == PerftestTest.Verb.READ ? rl : "") + rl;
        assertThat(r.out()).startsWith(start + "                    " + test.verb().title() + " BW Test\n")
                .contains("\t\tDevice         : sim0\n", " TX depth        : 128\n", " Link type       : Ethernet\n",
                        " GID index       : 1\n", " local address: LID 0000 QPN 0x", " remote address: LID 0000 QPN 0x",
                        " GID: 00:00:00:00:00:00:00:00:00:00:255:255:127:00:00:01\n")
                .endsWith(rl);
        List<String[]> rows = rows(5, r.out());
        assertThat(rows).hasSize(1);
        assertThat(rows.get(0)[0]).isEqualTo("4096");
        assertThat(rows.get(0)[1]).isEqualTo("200");
        assertThat(Double.parseDouble(rows.get(0)[3])).isPositive();
        // like perftest on an unknown vendor (rxe), READ reports that it disables inline
        assertThat(r.err()).isEqualTo(test.verb() == PerftestTest.Verb.READ
                ? "Device not recognized to implement inline feature. Disabling it\n" : "");
        assertThat(Double.parseDouble(rows.get(0)[2])).as("peak").isPositive();
    }

    @Test
    void allSizesAndTwoQps() {
        Result r = run(PerftestTest.WRITE_BW, "-a", "-n", "5", "-q", "2");
        assertThat(r.rc()).as(r.err()).isZero();
        List<String[]> rows = rows(5, r.out());
        assertThat(rows).hasSize(23);
        for (int i = 0; i < 23; i++) {
            assertThat(rows.get(i)[0]).isEqualTo(Long.toString(2L << i));
            assertThat(rows.get(i)[1]).isEqualTo("10"); // iterations x QPs
        }
        assertThat(r.out()).contains(" Number of qps   : 2\t\tTransport type : IB\n");
        assertThat(r.out().split(" local address").length - 1).isEqualTo(2);
    }

    @Test
    void sendBwUdUpToTheMtu() {
        Result r = run(PerftestTest.SEND_BW, "-c", "UD", "-a", "-n", "20");
        assertThat(r.rc()).as(r.err()).isZero();
        assertThat(r.err()).contains(" Max msg size in UD is MTU 1024\n Changing to this MTU\n");
        assertThat(rows(5, r.out())).hasSize(10); // 2 .. 1024
        assertThat(r.out()).contains(" Connection type : UD");
    }

    @Test
    void durationMode() {
        Result r = run(PerftestTest.WRITE_BW, "-D", "2", "-s", "1024");
        assertThat(r.rc()).as(r.err()).isZero();
        List<String[]> rows = rows(5, r.out());
        assertThat(rows).hasSize(1);
        assertThat(rows.get(0)[2]).isEqualTo("0.00"); // no peak in -D mode
        assertThat(Long.parseLong(rows.get(0)[1])).isPositive();
    }

    @ParameterizedTest
    @CsvSource({"WRITE_LAT", "READ_LAT", "SEND_LAT"})
    void latencyRow(PerftestTest test) {
        Result r = run(test, "-n", "100");
        assertThat(r.rc()).as(r.err()).isZero();
        assertThat(r.out()).contains(test.verb().title() + " Latency Test\n")
                .contains(PerftestOutput.RESULT_FMT_LAT + "\n");
        List<String[]> rows = rows(9, r.out());
        assertThat(rows).hasSize(1);
        assertThat(rows.get(0)[0]).isEqualTo("2");
        assertThat(rows.get(0)[1]).isEqualTo("100");
    }

    @Test
    void latencyAllSizesWithHistogram() {
        Result r = run(PerftestTest.WRITE_LAT, "-a", "-n", "5", "-H");
        assertThat(r.rc()).as(r.err()).isZero();
        assertThat(rows(9, r.out())).hasSize(23);
        assertThat(r.out()).contains("#, usec\n1, ");
    }

    @Test
    void sendLatUd() {
        Result r = run(PerftestTest.SEND_LAT, "-c", "UD", "-n", "50", "-s", "512");
        assertThat(r.rc()).as(r.err()).isZero();
        assertThat(rows(9, r.out())).as(r.out()).hasSize(1);
    }

    @Test
    void outputBandwidthPrintsOnlyTheNumber() {
        Result r = run(PerftestTest.WRITE_BW, "-n", "50", "--output=bandwidth");
        assertThat(r.rc()).as(r.err()).isZero();
        assertThat(r.out()).matches("\\d+\\.\\d{6}\n");
    }

    @Test
    void jsonFileWritten(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path f = dir.resolve("out.json");
        Result r = run(PerftestTest.READ_BW, "-n", "20", "--out_json", "--out_json_file=" + f);
        assertThat(r.rc()).as(r.err()).isZero();
        assertThat(java.nio.file.Files.readString(f)).startsWith("{\ntest_info: {\ntest: RDMA_Read_BW_Test,\n")
                .contains("Outstand_reads: 128,\n", "n_iterations: 20,\n").endsWith("},\n}\n");
    }

    @Test
    void postListAndOldPostSend() {
        Result r = run(PerftestTest.WRITE_BW, "-n", "100", "-l", "4", "--use_old_post_send", "-s", "64");
        assertThat(r.rc()).as(r.err()).isZero();
        assertThat(r.out()).contains("Post List requested - CQ moderation will be the size of the post list\n",
                " Post List       : 4\n", " ibv_wr* API     : OFF\n", "RDMA_Write Post List BW Test");
        assertThat(rows(5, r.out())).hasSize(1);
    }

    @Test
    void bwLimitFailsTheRun() {
        Result r = run(PerftestTest.WRITE_BW, "-n", "50", "-w", "1e12");
        assertThat(r.rc()).isEqualTo(1);
        assertThat(r.err()).contains("Error: BW result is below bw limit");
    }

    @ParameterizedTest
    @CsvSource({"WRITE_BW", "READ_BW"})
    void bidirectionalSumsBothSides(PerftestTest test) {
        Result r = run(test, "-b", "-n", "200", "-s", "4096", "--report-both");
        assertThat(r.rc()).as(r.err()).isZero();
        assertThat(r.out()).contains(test.verb().title() + " Bidirectional BW Test\n", " TX depth        : 128\n",
                "\n Local results: \n", "\n Remote results: \n");
        List<String[]> rows = rows(5, r.out());
        assertThat(rows).hasSize(3); // the sum, then local and remote
        double sum = Double.parseDouble(rows.get(0)[3]);
        double local = Double.parseDouble(rows.get(1)[3]);
        double remote = Double.parseDouble(rows.get(2)[3]);
        assertThat(sum).isCloseTo(local + remote, org.assertj.core.data.Offset.offset(0.011));
    }

    @Test
    void bidirectionalAllSizes() {
        Result r = run(PerftestTest.WRITE_BW, "-b", "-a", "-n", "5");
        assertThat(r.rc()).as(r.err()).isZero();
        assertThat(rows(5, r.out())).hasSize(23);
    }

    @ParameterizedTest
    @CsvSource({"READ_BW", "SEND_BW", "SEND_LAT", "READ_LAT"})
    void eventsMode(PerftestTest test) {
        Result r = run(test, "-e", "-n", "50");
        assertThat(r.rc()).as(r.err()).isZero();
        assertThat(r.out()).contains(" Test with events. Using sim0_comp0\n");
        assertThat(rows(test.isBw() ? 5 : 9, r.out())).hasSize(1);
    }

    @Test
    void memoryRegionPerQp() {
        Result r = run(PerftestTest.WRITE_BW, "-q", "3", "--mr_per_qp", "-n", "20");
        assertThat(r.rc()).as(r.err()).isZero();
        assertThat(rows(5, r.out()).get(0)[1]).isEqualTo("60");
        assertThat(r.out().split("RKey 0x").length - 1).isEqualTo(6); // three local, three remote
    }

    @ParameterizedTest
    @CsvSource({"WRITE_BW", "SEND_BW", "WRITE_LAT", "SEND_LAT"})
    void unreliableConnected(PerftestTest test) {
        Result r = run(test, "-c", "UC", "-n", "50");
        assertThat(r.rc()).as(r.err()).isZero();
        assertThat(r.out()).contains(" Connection type : UC\t\t");
    }

    @ParameterizedTest
    @CsvSource({"WRITE_LAT", "READ_LAT", "SEND_LAT"})
    void latencyDurationMode(PerftestTest test) {
        Result r = run(test, "-D", "1");
        assertThat(r.rc()).as(r.err()).isZero();
        assertThat(r.out()).contains(PerftestOutput.RESULT_FMT_LAT_DUR + "\n");
        List<String[]> rows = rows(4, r.out());
        assertThat(rows).hasSize(1);
        assertThat(Long.parseLong(rows.get(0)[1])).isPositive();
    }
}
