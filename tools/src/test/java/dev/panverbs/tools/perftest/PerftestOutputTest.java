package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Output formats against lines the real perftest 6.06 printed on Soft-RoCE (rxe0, MTU 1024, GID index 1), copied
 * byte for byte from the fact sheet's traces.
 */
class PerftestOutputTest {
    static final String RL = "-".repeat(87) + "\n";

    static PerftestParameters rxeClient(PerftestTest test, String... args) {
        PerftestParser.Outcome o = PerftestParser.parse(test, test.programName(), List.of(args),
                new PrintStream(new ByteArrayOutputStream()), new PrintStream(new ByteArrayOutputStream()));
        assertThat(o.proceed()).isTrue();
        PerftestParameters p = o.params();
        p.ibDevName = "rxe0";
        p.linkType = PerftestParameters.LinkType.ETHERNET;
        p.currMtu = 3;
        p.gidIndex = 1;
        p.useOldPostSend = true; // perftest 6.06 forces ibv_post_send on rxe
        if (p.inlineSize == PerftestParameters.DEF_INLINE) {
            p.inlineSize = 0;
        }
        return p;
    }

    @Test
    void writeBwClientHeaderOnRxe() {
        PerftestParameters p = rxeClient(PerftestTest.WRITE_BW, "-d", "rxe0", "-n", "200", "10.77.0.1");
        assertThat(PerftestOutput.header(p, true)).isEqualTo(RL
                + "                    RDMA_Write BW Test\n"
                + " Dual-port       : OFF\t\tDevice         : rxe0\n"
                + " Number of qps   : 1\t\tTransport type : IB\n"
                + " Connection type : RC\t\tUsing SRQ      : OFF\n"
                + " PCIe relax order: ON\n"
                + " ibv_wr* API     : OFF\n"
                + " TX depth        : 128\n"
                + " CQ Moderation   : 1\n"
                + " Mtu             : 1024[B]\n"
                + " Link type       : Ethernet\n"
                + " GID index       : 1\n"
                + " Max inline data : 0[B]\n"
                + " rdma_cm QPs\t : OFF\n"
                + " Data ex. method : Ethernet\n"
                + RL);
    }

    @Test
    void serverHeaderHasNoTxDepthAndSendServerShowsRxDepth() {
        PerftestParameters w = rxeClient(PerftestTest.WRITE_BW);
        assertThat(PerftestOutput.header(w, true)).doesNotContain("TX depth").contains(" CQ Moderation   : 1\n");
        PerftestParameters s = rxeClient(PerftestTest.SEND_BW);
        assertThat(PerftestOutput.header(s, true)).contains(" RX depth        : 512\n").doesNotContain("TX depth");
        PerftestParameters r = rxeClient(PerftestTest.READ_BW, "h");
        r.outReads = 0x80;
        assertThat(PerftestOutput.header(r, true)).contains(" Outstand reads  : 128\n")
                .doesNotContain("Max inline");
        PerftestParameters l = rxeClient(PerftestTest.WRITE_LAT, "h");
        assertThat(PerftestOutput.header(l, true)).contains("                    RDMA_Write Latency Test\n")
                .contains(" TX depth        : 1\n").doesNotContain("CQ Moderation");
    }

    @Test
    void addressLinesOnRxe() {
        PerftestParameters p = rxeClient(PerftestTest.WRITE_BW, "h");
        KeyMessage local = new KeyMessage(0, 1, 0x11, 0xff5006, 0x254, 0x0055e79d788000L,
                KeyMessageTest.RXE_GID, 0);
        assertThat(PerftestOutput.address(p, local, true, 0)).isEqualTo(
                " local address: LID 0000 QPN 0x0011 PSN 0xff5006 RKey 0x000254 VAddr 0x0055e79d788000\n"
                        + " GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:77:00:01\n");
        PerftestParameters r = rxeClient(PerftestTest.READ_BW, "h");
        assertThat(PerftestOutput.address(r, local.withOutReads(0x80), false, 0))
                .startsWith(" remote address: LID 0000 QPN 0x0011 PSN 0xff5006 OUT 0x80 RKey 0x000254 VAddr");
        PerftestParameters s = rxeClient(PerftestTest.SEND_BW, "h");
        assertThat(PerftestOutput.address(s, local, true, 0))
                .startsWith(" local address: LID 0000 QPN 0x0011 PSN 0xff5006\n GID: ");
        p.gidIndex = -1;
        KeyMessage ib = new KeyMessage(1, 1, 0x2b0500, 0xea53a, 0x1105, 0x7f5300337000L, null, 0);
        assertThat(PerftestOutput.address(p, ib, false, 7)).isEqualTo(
                " remote address: LID 0x07 QPN 0x2b0500 PSN 0xea53a RKey 0x001105 VAddr 0x007f5300337000\n");
    }

    @Test
    void bwRowsFromRxeTraces() {
        PerftestParameters p = rxeClient(PerftestTest.WRITE_BW, "h");
        assertThat(PerftestOutput.bwResultsHeader(p)).isEqualTo(RL
                + " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n");
        assertThat(PerftestOutput.bwRow(p, new BwReport(65536, 200, 90.57, 83.37, 0.001334), 0))
                .isEqualTo(" 65536      200              90.57              83.37  \t\t   0.001334\n");

        PerftestParameters g = rxeClient(PerftestTest.WRITE_BW, "-a", "--report_gbits", "h");
        assertThat(PerftestOutput.bwResultsHeader(g)).contains("BW peak[Gb/sec]    BW average[Gb/sec]");
        assertThat(PerftestOutput.bwRow(g, new BwReport(2, 20, 0.000348, 0.000203, 0.012671), 0))
                .isEqualTo(" 2          20           0.000348            0.000203            0.012671\n");

        PerftestParameters d = rxeClient(PerftestTest.WRITE_BW, "-D", "2", "--cpu_util", "h");
        assertThat(PerftestOutput.bwResultsHeader(d)).endsWith("MsgRate[Mpps]    CPU_Util[%]\n");
        assertThat(PerftestOutput.bwRow(d, new BwReport(65536, 2640, 0, 82.45, 0.001319), 0.5))
                .isEqualTo(" 65536      2640             0.00               82.45  \t\t   0.001319\t    0.50\n");

        PerftestParameters o = rxeClient(PerftestTest.WRITE_BW, "--output=bandwidth", "h");
        assertThat(PerftestOutput.bwRow(o, new BwReport(65536, 200, 90.57, 83.37, 0.001334), 0))
                .isEqualTo("83.370000\n");
        assertThat(PerftestOutput.header(o, true)).isEmpty();
        assertThat(PerftestOutput.bwResultsHeader(o)).isEmpty();
    }

    @Test
    void latencyRows() {
        PerftestParameters p = rxeClient(PerftestTest.WRITE_LAT, "h");
        assertThat(PerftestOutput.latResultsHeader(p)).isEqualTo(RL + " #bytes #iterations    t_min[usec]    "
                + "t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   "
                + "99.9% percentile[usec] \n");
        LatencyStats st = new LatencyStats(1000, 10.5, 52.25, 12.0, 12.3456, 1.0, 20.125, 50.0);
        // glibc printf of REPORT_FMT_LAT with the same values
        assertThat(PerftestOutput.latRow(p, st, 0)).isEqualTo(" 2       1000          10.50          52.25        "
                + "12.00    \t       12.35       \t1.00   \t\t20.12   \t\t50.00  \n");
        PerftestParameters d = rxeClient(PerftestTest.WRITE_LAT, "-D", "3", "h");
        assertThat(PerftestOutput.latResultsHeader(d)).endsWith(" #bytes        #iterations       t_avg[usec]    "
                + "tps average\n");
        assertThat(PerftestOutput.latDurationRow(d, 12345, 6.5, 76923.07, 0))
                .isEqualTo(" 2             12345            6.50           76923.07\n");
    }

    @Test
    void jsonFileLikePerftest() {
        PerftestParameters p = rxeClient(PerftestTest.WRITE_BW, "-d", "rxe0", "-n", "200", "--out_json", "h");
        assertThat(JsonReport.bw(p, true, new BwReport(65536, 200, 90.57, 83.37, 0.001334), 0)).isEqualTo("{\n"
                + "test_info: {\ntest: RDMA_Write_BW_Test,\nDual_port: OFF,\nDevice: \"rxe0\",\n"
                + "Number_of_qps: 1,\nTransport_type: IB,\nConnection_type: RC,\nUsing_SRQ: OFF,\n"
                + "PCIe_relax_order: ON,\nibv_wr_API: OFF,\nTX_depth : 128,\nCQ_Moderation: 1,\nMtu: 1024,\n"
                + "Link_type: Ethernet,\nGID_index: 1,\nMax_inline_data: 0,\nrdma_cm_QPs: OFF,\n"
                + "Data_ex_method: Ethernet,\n},\n"
                + "results: {\nMsgSize: 65536,\nn_iterations: 200,\nBW_peak: 90.57,\nBW_average: 83.37,\n"
                + "MsgRate: 0.001334,\n},\n}\n");
    }

    @Test
    void waitingBanner() {
        assertThat(PerftestOutput.WAITING_BANNER.getBytes(StandardCharsets.US_ASCII)).hasSize(1 + 37 * 3);
    }
}
