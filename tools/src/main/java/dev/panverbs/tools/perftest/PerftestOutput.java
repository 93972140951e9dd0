package dev.panverbs.tools.perftest;

import dev.panverbs.tools.perftest.PerftestParameters.Output;
import dev.panverbs.tools.perftest.PerftestTest.Kind;
import dev.panverbs.tools.perftest.PerftestTest.Verb;

import static dev.panverbs.tools.perftest.CFormat.fixedLeft;
import static dev.panverbs.tools.perftest.CFormat.hexAlt;
import static dev.panverbs.tools.perftest.CFormat.lu;
import static dev.panverbs.tools.perftest.CFormat.luLeft;

/**
 * perftest 6.06's printed output, byte for byte: the header ({@code ctx_print_test_info}), the address lines
 * ({@code ctx_print_pingpong_data}), the result headers and rows ({@code print_full_bw_report},
 * {@code print_report_lat}, {@code print_report_lat_duration}), with the same widths, tabs and C number formats.
 * Pure text: nothing here touches a device or a socket.
 */
final class PerftestOutput {
    private PerftestOutput() { }

    static final String RESULT_LINE = PerftestParser.RESULT_LINE;

    static final String WAITING_BANNER = "\n************************************\n"
            + "* Waiting for client to connect... *\n"
            + "************************************\n";

    static final String RESULT_FMT =
            " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]";
    static final String RESULT_FMT_G =
            " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]";
    static final String RESULT_FMT_LAT = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
            + "t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ";
    static final String RESULT_FMT_LAT_DUR = " #bytes        #iterations       t_avg[usec]    tps average";
    static final String RESULT_EXT_CPU_UTIL = "    CPU_Util[%]\n";

    /** The block printed before the key exchange. {@code pcieRoCompliant} is false on the Intel root ports
     *  that perftest warns about. */
    static String header(PerftestParameters p, boolean pcieRoCompliant) {
        if (p.output != Output.FULL) {
            return "";
        }
        StringBuilder s = new StringBuilder(RESULT_LINE);
        s.append("                    ").append(p.verb().title()).append(' ');
        if (p.test.kind() == Kind.BW) {
            if (p.duplex) {
                s.append("Bidirectional ");
            }
            if (p.postList > 1) {
                s.append("Post List ");
            }
            s.append("BW ");
        } else {
            s.append("Latency ");
        }
        s.append("Test\n");
        if (p.useEvent) {
            s.append(" Test with events. Using ").append(p.ibDevName).append("_comp").append(p.eqNum).append('\n');
        }
        s.append(" Dual-port       : OFF\t\tDevice         : ").append(p.ibDevName).append('\n');
        s.append(" Number of qps   : ").append(p.numQps).append("\t\tTransport type : ").append(p.transport)
                .append('\n');
        s.append(" Connection type : ").append(p.connection.name()).append("\t\tUsing SRQ      : ")
                .append(p.useSrq ? "ON" : "OFF").append('\n');
        s.append(" PCIe relax order: ").append(p.disablePcieRelaxed ? "OFF" : "ON").append('\n');
        if (!pcieRoCompliant && !p.disablePcieRelaxed) {
            s.append(" WARNING: CPU is not PCIe relaxed ordering compliant.\n");
            s.append(" WARNING: You should disable PCIe RO with `--disable_pcie_relaxed` for both server and "
                    + "client.\n");
        }
        s.append(" ibv_wr* API     : ").append(p.useOldPostSend ? "OFF" : "ON").append('\n');
        if (p.isClient() || p.duplex) {
            s.append(" TX depth        : ").append(p.txDepth).append('\n');
        }
        if (p.postList > 1) {
            s.append(" Post List       : ").append(p.postList).append('\n');
        }
        if (p.verb() == Verb.SEND && (p.isServer() || p.duplex)) {
            s.append(" RX depth        : ").append(p.rxDepth).append('\n');
        }
        if (p.test.kind() == Kind.BW) {
            s.append(" CQ Moderation   : ").append(p.cqMod).append('\n');
        }
        s.append(" Mtu             : ").append(p.mtuBytes()).append("[B]\n");
        s.append(" Link type       : ").append(p.linkType.label).append('\n');
        if (p.usesGid()) {
            s.append(" GID index       : ").append(p.gidIndex).append('\n');
        }
        if (p.verb() != Verb.READ) {
            s.append(" Max inline data : ").append(p.inlineSize).append("[B]\n");
        } else {
            s.append(" Outstand reads  : ").append(p.outReads).append('\n');
        }
        s.append(" rdma_cm QPs\t : ").append(p.rdmaCm ? "ON" : "OFF").append('\n');
        s.append(" Data ex. method : ").append(p.commRdmaCm ? "rdma_cm" : "Ethernet");
        if (p.rdmaCm && p.tos != PerftestParameters.DEF_TOS) {
            s.append(" \tTOS    : ").append(p.tos);
        }
        if (p.rdmaCm && p.isServer()) {
            s.append('\n').append(RESULT_LINE).append(" Waiting for client rdma_cm QP to connect\n")
                    .append(" Please run the same command with the IB/RoCE interface IP");
        }
        s.append('\n');
        s.append(RESULT_LINE);
        return s.toString();
    }

    /**
     * One address line and, when a GID is used, its GID line (bytes in decimal, {@code %02d}).
     *
     * @param local   true for "local address", false for "remote address"
     * @param dlid    the --dlid value shown instead of the peer's LID on the remote line, or 0
     */
    static String address(PerftestParameters p, KeyMessage k, boolean local, int dlid) {
        if (p.output != Output.FULL) {
            return "";
        }
        int lid = (!local && dlid != 0) ? dlid : k.lid();
        StringBuilder s = new StringBuilder();
        s.append(' ').append(local ? "local" : "remote").append(" address: LID ").append(hexAlt(lid, 4))
                .append(" QPN ").append(hexAlt(k.qpn(), 6)).append(" PSN ").append(hexAlt(k.psn(), 6));
        // perftest prints these lines with the exchange's parameters, whose verb is SEND over rdma_cm (-R/-z)
        Verb verb = p.commRdmaCm ? Verb.SEND : p.verb();
        if (verb == Verb.READ) {
            s.append(" OUT ").append(hexAlt(k.outReads(), 4));
        }
        if (verb != Verb.SEND) {
            s.append(" RKey ").append(hexAlt(Integer.toUnsignedLong(k.rkey()), 8))
                    .append(" VAddr ").append(hexAlt(k.vaddr(), 16));
        }
        s.append('\n');
        if (p.usesGid()) {
            byte[] gid = k.gid();
            s.append(" GID: ");
            for (int i = 0; i < 16; i++) {
                s.append(i == 0 ? "" : ":").append(CFormat.zeroPad(gid == null ? 0 : gid[i] & 0xff, 2));
            }
            s.append('\n');
        }
        return s.toString();
    }

    /** RESULT_LINE and the column header of a BW test. */
    static String bwResultsHeader(PerftestParameters p) {
        if (p.output != Output.FULL) {
            return "";
        }
        return RESULT_LINE + (p.reportGbits ? RESULT_FMT_G : RESULT_FMT)
                + (p.cpuUtilEnabled ? RESULT_EXT_CPU_UTIL : "\n");
    }

    /**
     * One BW result row ({@code print_full_bw_report}); {@code --output} prints just the number. With
     * --report_gbits and an average under 0.1 Gb/s perftest switches to six decimals and drops the padding of
     * the iterations column.
     */
    static String bwRow(PerftestParameters p, BwReport r, double cpuUtil) {
        if (p.output == Output.BANDWIDTH) {
            return CFormat.lf(r.bwAvg()) + "\n";
        }
        if (p.output == Output.MESSAGE_RATE) {
            return CFormat.lf(r.msgRate()) + "\n";
        }
        boolean accuracy = r.bwAvg() < 0.1 && p.reportGbits;
        StringBuilder s = new StringBuilder();
        if (accuracy) {
            s.append(' ').append(luLeft(r.size(), 7)).append("    ").append(lu(r.iters())).append("           ")
                    .append(fixedLeft(r.bwPeak(), 7, 6)).append("            ").append(fixedLeft(r.bwAvg(), 7, 6))
                    .append("            ").append(fixedLeft(r.msgRate(), 7, 6));
        } else {
            s.append(' ').append(luLeft(r.size(), 7)).append("    ").append(luLeft(r.iters(), 10))
                    .append("       ").append(fixedLeft(r.bwPeak(), 7, 2)).append("            ")
                    .append(fixedLeft(r.bwAvg(), 7, 2)).append("\t\t   ").append(fixedLeft(r.msgRate(), 7, 6));
        }
        s.append(cpuExt(p, cpuUtil));
        return s.toString();
    }

    private static String cpuExt(PerftestParameters p, double cpuUtil) {
        return p.cpuUtilEnabled ? "\t    " + fixedLeft(cpuUtil, 3, 2) + "\n" : "\n";
    }

    /** RESULT_LINE and the column header of a latency test (iterations or -D). */
    static String latResultsHeader(PerftestParameters p) {
        if (p.output != Output.FULL) {
            return "";
        }
        return RESULT_LINE + (p.testType == PerftestParameters.TestType.ITERATIONS ? RESULT_FMT_LAT
                : RESULT_FMT_LAT_DUR) + (p.cpuUtilEnabled ? RESULT_EXT_CPU_UTIL : "\n");
    }

    /** One latency row ({@code print_report_lat}); {@code --output=latency} prints the average only. */
    static String latRow(PerftestParameters p, LatencyStats st, double cpuUtil) {
        if (p.output == Output.LATENCY) {
            return CFormat.lf(st.average()) + "\n";
        }
        return " " + luLeft(p.size, 7) + " " + lu(st.iters()) + "          " + fixedLeft(st.min(), 7, 2)
                + "        " + fixedLeft(st.max(), 7, 2) + "      " + fixedLeft(st.typical(), 7, 2) + "  \t       "
                + fixedLeft(st.average(), 7, 2) + "     \t" + fixedLeft(st.stdev(), 7, 2) + "\t\t"
                + fixedLeft(st.p99(), 7, 2) + " \t\t" + fixedLeft(st.p999(), 7, 2) + cpuExt(p, cpuUtil);
    }

    /** One -D latency row ({@code print_report_lat_duration}). */
    static String latDurationRow(PerftestParameters p, long iters, double latency, double tps, double cpuUtil) {
        if (p.output == Output.LATENCY) {
            return CFormat.lf(latency) + "\n";
        }
        return " " + luLeft(p.size, 7) + "       " + lu(iters) + "            " + fixedLeft(latency, 7, 2)
                + "        " + fixedLeft(tps, 7, 2) + cpuExt(p, cpuUtil);
    }
}
