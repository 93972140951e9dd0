package dev.panverbs.tools.perftest;

import dev.panverbs.tools.perftest.PerftestParameters.Output;
import dev.panverbs.tools.perftest.PerftestTest.Kind;
import dev.panverbs.tools.perftest.PerftestTest.Verb;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static dev.panverbs.tools.perftest.CFormat.fixed;
import static dev.panverbs.tools.perftest.CFormat.lf;
import static dev.panverbs.tools.perftest.CFormat.lu;

/**
 * The --out_json file exactly as perftest 6.06 writes it (keys unquoted, trailing commas: it is not valid JSON,
 * and tools that read perftest's file expect that). Like perftest, every report rewrites the file, so after -a it
 * holds the last size only.
 */
final class JsonReport {
    private JsonReport() { }

    static String testInfo(PerftestParameters p, boolean pcieRoCompliant) {
        StringBuilder s = new StringBuilder("test_info: {\n");
        s.append("test: ").append(p.verb().title()).append('_');
        if (p.test.kind() == Kind.BW) {
            if (p.duplex) {
                s.append("Bidirectional_");
            }
            if (p.postList > 1) {
                s.append("Post_List_");
            }
            s.append("BW_");
        } else {
            s.append("Latency_");
        }
        s.append("Test,\n");
        if (p.useEvent) {
            s.append("Test with events: Using_").append(p.ibDevName).append("_comp").append(p.eqNum).append(",\n");
        }
        s.append("Dual_port: OFF,\nDevice: \"").append(p.ibDevName).append("\",\n");
        s.append("Number_of_qps: ").append(p.numQps).append(",\nTransport_type: ").append(p.transport).append(",\n");
        s.append("Connection_type: ").append(p.connection.name()).append(",\nUsing_SRQ: ")
                .append(p.useSrq ? "ON" : "OFF").append(",\n");
        s.append("PCIe_relax_order: ").append(p.disablePcieRelaxed ? "OFF" : "ON").append(",\n");
        if (!pcieRoCompliant && !p.disablePcieRelaxed) {
            s.append("WARNING1: \"CPU is not PCIe relaxed ordering compliant\",\n");
            s.append("WARNING2: \"You should disable PCIe RO with --disable_pcie_relaxed for both server and "
                    + "client\",\n");
        }
        s.append("ibv_wr_API: ").append(p.useOldPostSend ? "OFF" : "ON").append(",\n");
        if (p.isClient() || p.duplex) {
            s.append("TX_depth : ").append(p.txDepth).append(",\n");
        }
        if (p.postList > 1) {
            s.append("Post_List: ").append(p.postList).append(",\n");
        }
        if (p.verb() == Verb.SEND && (p.isServer() || p.duplex)) {
            s.append("RX_depth: ").append(p.rxDepth).append(",\n");
        }
        if (p.test.kind() == Kind.BW) {
            s.append("CQ_Moderation: ").append(p.cqMod).append(",\n");
        }
        s.append("Mtu: ").append(p.mtuBytes()).append(",\n");
        s.append("Link_type: ").append(p.linkType.label).append(",\n");
        if (p.usesGid()) {
            s.append("GID_index: ").append(p.gidIndex).append(",\n");
        }
        if (p.verb() != Verb.READ) {
            s.append("Max_inline_data: ").append(p.inlineSize).append(",\n");
        } else {
            s.append("Outstand_reads: ").append(p.outReads).append(",\n");
        }
        s.append("rdma_cm_QPs: ").append(p.rdmaCm ? "ON" : "OFF").append(",\n");
        s.append("Data_ex_method: ").append(p.commRdmaCm ? "rdma_cm" : "Ethernet").append(",\n");
        if (p.rdmaCm && p.tos != PerftestParameters.DEF_TOS) {
            s.append("TOS: ").append(p.tos).append(",\n");
        }
        s.append("},\n");
        return s.toString();
    }

    static String bw(PerftestParameters p, boolean pcieRoCompliant, BwReport r, double cpuUtil) {
        StringBuilder s = new StringBuilder("{\n").append(testInfo(p, pcieRoCompliant)).append("results: {\n");
        if (p.output == Output.BANDWIDTH) {
            s.append("bw_avg: ").append(lf(r.bwAvg())).append(",\n");
        } else if (p.output == Output.MESSAGE_RATE) {
            s.append("msgRate_avg: ").append(lf(r.msgRate())).append(",\n");
        } else {
            int prec = (r.bwAvg() < 0.1 && p.reportGbits) ? 6 : 2;
            s.append("MsgSize: ").append(lu(r.size())).append(",\nn_iterations: ").append(lu(r.iters()))
                    .append(",\nBW_peak: ").append(fixed(r.bwPeak(), prec)).append(",\nBW_average: ")
                    .append(fixed(r.bwAvg(), prec)).append(",\nMsgRate: ").append(fixed(r.msgRate(), 6))
                    .append(",\n");
        }
        cpu(s, p, cpuUtil);
        return s.append("},\n}\n").toString();
    }

    static String lat(PerftestParameters p, boolean pcieRoCompliant, LatencyStats st, double cpuUtil) {
        StringBuilder s = new StringBuilder("{\n").append(testInfo(p, pcieRoCompliant)).append("results: {\n");
        if (p.output == Output.LATENCY) {
            s.append("avg_lat: ").append(lf(st.average())).append(",\n");
        } else {
            s.append("MsgSize: ").append(lu(p.size)).append(",\nn_iterations: ").append(lu(st.iters()))
                    .append(",\nt_min: ").append(fixed(st.min(), 2)).append(",\nt_max: ").append(fixed(st.max(), 2))
                    .append(",\nt_typical: ").append(fixed(st.typical(), 2)).append(",\nt_avg: ")
                    .append(fixed(st.average(), 2)).append(",\nt_stdev: ").append(fixed(st.stdev(), 2))
                    .append(",\npercentile_99: ").append(fixed(st.p99(), 2)).append(",\npercentile_99.9: ")
                    .append(fixed(st.p999(), 2)).append(",\n");
            cpu(s, p, cpuUtil);
        }
        return s.append("},\n}\n").toString();
    }

    static String latDuration(PerftestParameters p, boolean pcieRoCompliant, long iters, double latency, double tps,
                              double cpuUtil) {
        StringBuilder s = new StringBuilder("{\n").append(testInfo(p, pcieRoCompliant)).append("results: {\n");
        if (p.output == Output.LATENCY) {
            s.append("t_avg: ").append(lf(latency)).append('\n');
        } else {
            s.append("MsgSize: ").append(lu(p.size)).append(",\nn_iterations: ").append(lu(iters))
                    .append(",\nt_avg: ").append(fixed(latency, 2)).append(",\ntps_average: ").append(fixed(tps, 2))
                    .append(",\n");
            cpu(s, p, cpuUtil);
        }
        return s.append("},\n}\n").toString();
    }

    private static void cpu(StringBuilder s, PerftestParameters p, double cpuUtil) {
        if (p.cpuUtilEnabled) {
            s.append("CPU_util: ").append(fixed(cpuUtil, 2)).append(",\n");
        }
    }

    /** Writes (truncates) the file; like perftest, a file that cannot be opened is reported and skipped. */
    static void write(PerftestParameters p, String content, PrintStream err) {
        try {
            Files.writeString(Path.of(p.outJsonFile), content, StandardCharsets.US_ASCII);
        } catch (IOException | RuntimeException e) {
            err.println("failed to open " + p.outJsonFile);
        }
    }
}
