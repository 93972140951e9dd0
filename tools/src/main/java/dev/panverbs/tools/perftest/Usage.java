package dev.panverbs.tools.perftest;

import dev.panverbs.tools.perftest.PerftestTest.Kind;
import dev.panverbs.tools.perftest.PerftestTest.Verb;

import java.io.PrintStream;

/**
 * The help screen, in perftest's layout, listing the options panverbs implements for this test with perftest's
 * defaults. Options perftest has and panverbs refuses are listed at the end so a user knows before trying.
 */
final class Usage {
    private Usage() { }

    static void print(PerftestTest test, String argv0, PrintStream out) {
        boolean bw = test.kind() == Kind.BW;
        Verb verb = test.verb();
        StringBuilder s = new StringBuilder();
        s.append("Usage:\n");
        s.append("  ").append(argv0).append("            start a server and wait for connection\n");
        s.append("  ").append(argv0).append(" <host>     connect to server at <host>\n");
        s.append("\nOptions:\n");
        s.append("  -a, --all  Run sizes from 2 till 2^23\n");
        String conn = verb == Verb.SEND ? "RC/UC/UD" : verb == Verb.READ ? "RC" : "RC/UC";
        if (bw) {
            s.append(verb == Verb.SEND ? "" : "  -b, --bidirectional  Measure bidirectional bandwidth (default unidirectional)\n");
        }
        s.append("  -c, --connection=<").append(conn).append(">  Connection type ").append(conn)
                .append(" (default RC)\n");
        if (test == PerftestTest.WRITE_LAT || test == PerftestTest.SEND_LAT || test == PerftestTest.READ_LAT) {
            s.append("  -C, --report-cycles  (not supported: panverbs reports microseconds from System.nanoTime)\n");
        }
        s.append("  -d, --ib-dev=<dev>  Use IB device <dev> (default first device found)\n");
        s.append("  -D, --duration  Run test for a customized period of seconds.\n");
        if (verb != Verb.WRITE) {
            s.append("  -e, --events  Sleep on CQ events (default poll)\n");
            s.append("  -X, --vector=<completion vector>  Set <completion vector> used for events\n");
        }
        s.append("  -f, --margin  measure results within margins. (default=duration/4)\n");
        s.append("  -F, --CPU-freq  Accepted for compatibility; panverbs does not depend on the CPU frequency.\n");
        s.append("  -h, --help  Show this help screen.\n");
        if (!bw) {
            s.append("  -H, --report-histogram  Print out all results (default print summary only)\n");
        }
        s.append("  -i, --ib-port=<port>  Use port <port> of IB device (default 1)\n");
        if (verb != Verb.READ) {
            s.append("  -I, --inline_size=<size>  Max size of message to be sent in inline\n");
        }
        if (bw) {
            s.append("  -l, --post_list=<list size>\n")
                    .append(" Post list of send WQEs of <list size> size (instead of single post)\n");
        }
        s.append("  -L, --hop_limit=<hop_limit>  Only 64 (perftest allows other values for RawEth only)\n");
        s.append("  -m, --mtu=<mtu>  MTU size : 256 - 4096 (default port mtu)\n");
        s.append("  -n, --iters=<iters>  Number of exchanges (at least 5, default ").append(test.defaultIters())
                .append(")\n");
        if (bw) {
            s.append("  -N, --noPeak Cancel peak-bw calculation (default with peak up to iters=20000)\n");
        }
        if (verb == Verb.READ) {
            s.append("  -o, --outs=<num>  num of outstanding read/atom(default max of device)\n");
        }
        s.append("  -p, --port=<port>  Listen on/connect to port <port> (default 18515)\n");
        if (bw) {
            s.append("  -q, --qp=<num of qp's>  Num of qp's(default 1)\n");
            s.append("  -Q, --cq-mod  Generate Cqe only after <--cq-mod> completion\n");
        }
        if (verb == Verb.SEND) {
            s.append("  -r, --rx-depth=<dep>  Rx queue size (default 512).\n");
        }
        s.append("  -R, --rdma_cm  Connect QPs with rdma_cm and run test on those QPs (not with --direct_wqe)\n");
        s.append("  -s, --size=<size>  Size of message to exchange (default ").append(test.defaultSize())
                .append(")\n");
        s.append("  -S, --sl=<sl>  SL (default 0)\n");
        if (bw) {
            s.append("  -t, --tx-depth=<dep>  Size of tx queue (default 128)\n");
        }
        s.append("  -u, --qp-timeout=<timeout>  QP timeout, timeout value is 4 usec * 2 ^(timeout), default 14\n");
        if (!bw) {
            s.append("  -U, --report-unsorted  (implies -H) print out unsorted results (default sorted)\n");
        }
        s.append("  -V, --version  Display version number\n");
        if (bw) {
            s.append("  -w, --limit_bw=<value>  Set verifier limit for bandwidth\n");
        }
        s.append("  -x, --gid-index=<index>  Test uses GID with GID index (Default : IB - no gid . ETH - 0)\n");
        if (bw) {
            s.append("  -y, --limit_msgrate=<value>  Set verifier limit for Msg Rate\n");
        }
        s.append("  -z, --comm_rdma_cm  Communicate with rdma_cm module to exchange data - use regular QPs\n");
        s.append("\n");
        s.append("      --out_json  Save the report in a json file\n");
        s.append("      --out_json_file=<file>  Name of the report json file. (Default: perftest_out.json in the "
                + "working directory) \n");
        s.append("      --cpu_util  Show CPU Utilization in report, valid only in Duration mode \n");
        s.append("      --dlid  Set a Destination LID instead of getting it from the other side.\n");
        s.append("      --force-link=<value>  Force the link(s) to a specific type: IB or Ethernet.\n");
        s.append("      --ipv6  Use IPv6 GID. Default is IPv4\n");
        s.append("      --source_ip  Source IP of the interface used for connection establishment.\n");
        if (bw) {
            s.append("      --mr_per_qp  Create memory region for each qp.\n");
        }
        s.append("      --output=<units> Set verbosity output level: ")
                .append(bw ? "bandwidth , message_rate" : "latency").append(" \n");
        s.append("      --use_old_post_send Use old post send flow (ibv_post_send).\n");
        if (bw && verb != Verb.SEND) {
            s.append("      --perform_warm_up Perform some iterations before start measuring in order to "
                    + "warming-up memory cache\n");
        }
        s.append("      --pkey_index=<pkey index> PKey index to use for QP\n");
        if (bw) {
            s.append("      --report_gbits  Report Max/Average BW of test in Gbit/sec (instead of MiB/sec)\n");
            s.append("        Note: MiB=2^20 byte, while Gb=10^9 bits. Use these formulas for conversion:\n");
            s.append("        Factor=10^9/(2^20*8)=119.2; MiB=Gb_result * factor; Gb=MiB_result / factor\n");
            if (verb != Verb.SEND) {
                s.append("      --report-both  Report RX & TX results separately on Bidirectional BW tests\n");
            }
            s.append("      --reversed  Reverse traffic direction - Server send to client\n");
        } else {
            s.append("      --latency_gap=<delay_time>  delay time between each post send\n");
        }
        s.append("      --tclass=<value>  Set the Traffic Class in GRH (if GRH is in use)\n");
        s.append("      --wait_destroy=<seconds>  Wait <seconds> before destroying allocated resources "
                + "(QP/CQ/PD/MR..)\n");
        if (test != PerftestTest.WRITE_LAT) {
            s.append("      --disable_pcie_relaxed Disable PCIe relaxed ordering\n");
        }
        s.append("\n panverbs options (not in perftest; spell them in full):\n");
        s.append("      --loopback  Run server and client in this process on one device (quick check)\n");
        s.append("      --timeout=<seconds>  Give up when the peer is silent this long (default 60)\n");
        s.append("      --debug  Print stack traces with errors\n");
        s.append("      --jit_warmup=<iterations>  Warm the JIT up on a private loopback pair first (default "
                + Warmup.AUTO_ITERATIONS + "; 0: off)\n");
        s.append("      --direct_wqe  Post sends with mlx5 Direct WQE and poll the send CQ directly (mlx5 devices, "
                + "RC)\n");
        // every option named before the ';' is refused by panverbs for this program (UsageTest parses it)
        s.append("\n Not supported by panverbs (refused by name): ").append(bw ? "-O, " : "")
                .append(verb == Verb.SEND ? "-g, " : "")
                .append("-M, -W, ").append(bw ? "" : "-C, ")
                .append(bw ? (verb == Verb.SEND ? "-b, --report-both, " : "") + "--run_infinitely, " : "")
                .append("-c SRD/RawEth, --use_hugepages, --mmap, --inline_recv, --flow_label, --dont_xchg_versions, "
                        + "rate limiting, mlx5 AES-XTS, raw Ethernet options; -c XRC/DC and --log_dci_streams/"
                        + "--log_active_dci_streams are checked as perftest does, then fail as C perftest does on a "
                        + "device without the transport, or up front on one with it (no XRC/DC test path yet).\n");
        out.print(s);
    }
}
