package dev.panverbs.tools.perftest;

import dev.panverbs.tools.perftest.GetoptLong.LongOption;
import dev.panverbs.tools.perftest.PerftestParameters.Connection;
import dev.panverbs.tools.perftest.PerftestParameters.LinkType;
import dev.panverbs.tools.perftest.PerftestParameters.Machine;
import dev.panverbs.tools.perftest.PerftestParameters.Output;
import dev.panverbs.tools.perftest.PerftestParameters.TestMethod;
import dev.panverbs.tools.perftest.PerftestParameters.TestType;
import dev.panverbs.tools.perftest.PerftestTest.Kind;
import dev.panverbs.tools.perftest.PerftestTest.Verb;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * perftest 6.06's command line ({@code parser()} and {@code force_dependecies()} in perftest_parameters.c),
 * reproduced option by option: the same option table (so prefixes and ambiguity errors match), the same
 * {@code strtol} checks, ranges, messages, output stream and exit status, in the same order.
 *
 * <p>Options perftest has but panverbs does not implement are recognised, then rejected by name after the C
 * checks have run ({@link UnsupportedOptions}); nothing is ever silently ignored. Three panverbs options that
 * perftest does not have ({@code --loopback}, {@code --timeout=<s>}, {@code --debug}) are taken out of the line
 * before the perftest parse and must be spelled in full, so they cannot change how any perftest option parses.
 */
final class PerftestParser {
    static final String OPTSTRING = "w:y:p:d:i:m:s:n:t:u:S:x:c:q:I:o:M:r:Q:A:l:D:f:B:T:L:E:J:j:K:k:X:W:aFegzRvhbNVCHUOZP";

    static final String RESULT_LINE = "-".repeat(87) + "\n";

    /** The long option table of the Debian build, in its order (which the ambiguity message lists). */
    static final List<LongOption> LONG_OPTIONS = List.of(
            LongOption.of("port", true, 'p'), LongOption.of("ib-dev", true, 'd'),
            LongOption.of("ib-port", true, 'i'), LongOption.of("mtu", true, 'm'),
            LongOption.of("size", true, 's'), LongOption.of("iters", true, 'n'),
            LongOption.of("tx-depth", true, 't'), LongOption.of("qp-timeout", true, 'u'),
            LongOption.of("sl", true, 'S'), LongOption.of("gid-index", true, 'x'),
            LongOption.of("all", false, 'a'), LongOption.of("CPU-freq", false, 'F'),
            LongOption.of("connection", true, 'c'), LongOption.of("qp", true, 'q'),
            LongOption.of("events", false, 'e'), LongOption.of("vector", true, 'X'),
            LongOption.of("inline_size", true, 'I'), LongOption.of("outs", true, 'o'),
            LongOption.of("mcg", false, 'g'), LongOption.of("comm_rdma_cm", false, 'z'),
            LongOption.of("rdma_cm", false, 'R'), LongOption.of("tos", true, 'T'),
            LongOption.of("hop_limit", true, 'L'), LongOption.of("help", false, 'h'),
            LongOption.of("MGID", true, 'M'), LongOption.of("rx-depth", true, 'r'),
            LongOption.of("bidirectional", false, 'b'), LongOption.of("cq-mod", true, 'Q'),
            LongOption.of("noPeak", false, 'N'), LongOption.of("version", false, 'V'),
            LongOption.of("report-cycles", false, 'C'), LongOption.of("report-histogrm", false, 'H'),
            LongOption.of("report-unsorted", false, 'U'), LongOption.of("atomic_type", true, 'A'),
            LongOption.of("dualport", false, 'O'), LongOption.of("post_list", true, 'l'),
            LongOption.of("duration", true, 'D'), LongOption.of("margin", true, 'f'),
            LongOption.of("source_mac", true, 'B'), LongOption.of("dest_mac", true, 'E'),
            LongOption.of("dest_ip", true, 'J'), LongOption.of("source_ip", true, 'j'),
            LongOption.of("dest_port", true, 'K'), LongOption.of("source_port", true, 'k'),
            LongOption.of("ethertype", true, 'Y'), LongOption.of("limit_bw", true, 'w'),
            LongOption.of("limit_msgrate", true, 'y'), LongOption.of("server", false, 'Z'),
            LongOption.of("client", false, 'P'), LongOption.of("mac_fwd", false, 'v'),
            LongOption.of("use_rss", false, 'G'), LongOption.of("report-counters", true, 'W'),
            LongOption.flag("force-link", true), LongOption.flag("remote_mac", true),
            LongOption.flag("local_mac", true), LongOption.flag("remote_ip", true),
            LongOption.flag("local_ip", true), LongOption.flag("remote_port", true),
            LongOption.flag("local_port", true), LongOption.flag("run_infinitely", false),
            LongOption.flag("report_gbits", false), LongOption.flag("use-srq", false),
            LongOption.flag("report-both", false), LongOption.flag("reversed", false),
            LongOption.flag("pkey_index", true), LongOption.flag("inline_recv", true),
            LongOption.flag("tcp", false), LongOption.flag("burst_size", true),
            LongOption.flag("typical_pkt_size", true), LongOption.flag("rate_limit", true),
            LongOption.flag("rate_limit_type", true), LongOption.flag("rate_units", true),
            LongOption.flag("output", true), LongOption.flag("cpu_util", false),
            LongOption.flag("out_json", false), LongOption.flag("out_json_file", true),
            LongOption.flag("latency_gap", true), LongOption.flag("flow_label", true),
            LongOption.flag("retry_count", true), LongOption.flag("dont_xchg_versions", false),
            LongOption.flag("mmap", true), LongOption.flag("mmap-offset", true),
            LongOption.flag("ipv6", false), LongOption.flag("raw_ipv6", false),
            LongOption.flag("report-per-port", false), LongOption.flag("odp", false),
            LongOption.flag("use_hugepages", false), LongOption.flag("use_old_post_send", false),
            LongOption.flag("promiscuous", false), LongOption.flag("sniffer", false),
            LongOption.flag("raw_mcast", false), LongOption.flag("mr_per_qp", false),
            LongOption.flag("dlid", true), LongOption.flag("tclass", true),
            LongOption.flag("wait_destroy", true), LongOption.flag("flows", true),
            LongOption.flag("flows_burst", true), LongOption.flag("reply_every", true),
            LongOption.flag("perform_warm_up", false), LongOption.flag("vlan_en", false),
            LongOption.flag("vlan_pcp", true), LongOption.flag("recv_post_list", true),
            LongOption.flag("aes_xts", false), LongOption.flag("encrypt_on_tx", false),
            LongOption.flag("sig_before", false), LongOption.flag("aes_block_size", true),
            LongOption.flag("kek_path", true), LongOption.flag("credentials_path", true),
            LongOption.flag("data_enc_keys_number", true), LongOption.flag("data_enc_key_app_path", true),
            LongOption.flag("log_dci_streams", true), LongOption.flag("log_active_dci_streams", true),
            LongOption.flag("disable_pcie_relaxed", false),
            // A second "source_ip": the exact-match search always finds -j first, so in perftest 6.06
            // --source_ip sets the raw Ethernet client IP. panverbs gives it its documented meaning instead.
            LongOption.flag("source_ip", true));

    /** Parse result: the parameters to run with, or the exit status when the tool must stop. */
    record Outcome(PerftestParameters params, int exitCode) {
        boolean proceed() {
            return params != null;
        }
    }

    /** Ends the parse: {@code message} already printed by the thrower. */
    static final class Exit extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int code;

        Exit(int code) {
            super(null, null, false, false);
            this.code = code;
        }
    }

    private final PerftestTest test;
    private final String argv0;
    private final PrintStream out;
    private final PrintStream err;
    private final PerftestParameters p;
    private final UnsupportedOptions unsupported;
    private long sizeFactor = 1;

    private PerftestParser(PerftestTest test, String argv0, PrintStream out, PrintStream err) {
        this.test = test;
        this.argv0 = argv0;
        this.out = out;
        this.err = err;
        this.p = new PerftestParameters(test);
        this.unsupported = new UnsupportedOptions(test);
    }

    /** Parses {@code args} for {@code test}; messages go to {@code out}/{@code err} exactly as perftest's do. */
    static Outcome parse(PerftestTest test, String argv0, List<String> args, PrintStream out, PrintStream err) {
        PerftestParser parser = new PerftestParser(test, argv0, out, err);
        try {
            parser.run(args);
            return new Outcome(parser.p, 0);
        } catch (Exit e) {
            out.flush();
            err.flush();
            return new Outcome(null, e.code);
        }
    }

    private void run(List<String> rawArgs) {
        List<String> args = takeExtensions(rawArgs);
        GetoptLong.Scan scan = new GetoptLong(argv0, OPTSTRING, LONG_OPTIONS).scan(args);
        for (GetoptLong.Result r : scan.options()) {
            if (r.c() == '?') {
                err.println(r.error());
                err.print(" Invalid Command or flag.\n Please check command line and run again.\n\n");
                Usage.print(test, argv0, out);
                parserError();
            }
            if (r.c() == 0) {
                longFlag(r.longOption().name(), r.optarg());
            } else {
                shortOption((char) r.c(), r.optarg());
            }
        }
        List<String> operands = scan.operands();
        if (operands.size() == 1) {
            p.servername = operands.get(0);
        } else if (operands.size() > 1) {
            failParser(" Invalid Command line. Please check command rerun ");
        }
        p.machine = p.servername != null ? Machine.CLIENT : Machine.SERVER;
        if (p.reversed) {
            p.machine = p.machine == Machine.SERVER ? Machine.CLIENT : Machine.SERVER;
        }
        if (p.rdmaCm) { // what perftest does with -R that panverbs does not (yet)
            if (p.directWqe) {
                unsupported.note("-R with --direct_wqe");
            }
        }
        unsupported.rejectIfAny(p, out, err);
        ForceDependencies.apply(p, out, err);
        XrcDcConnection.forceDependencies(p, out, err);
    }

    /** Removes the panverbs-only options; they must be spelled in full and never shadow a perftest option. */
    private List<String> takeExtensions(List<String> args) {
        List<String> rest = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--")) {
                rest.addAll(args.subList(i, args.size()));
                break;
            }
            if (a.equals("--loopback")) {
                p.loopback = true;
            } else if (a.equals("--direct_wqe")) {
                p.directWqe = true;
            } else if (a.equals("--debug")) {
                p.debug = true;
            } else if (a.startsWith("--jit_warmup=")) {
                String v = a.substring(13);
                Strtol.Result r = Strtol.parse(v);
                if (v.isEmpty() || !r.complete(v) || r.value() < 0 || r.value() > 100000000) {
                    failParser(" JIT warm-up iterations should be between 0 and 100000000 (0: no warm-up)");
                }
                p.jitWarmup = (int) r.value();
            } else if (a.equals("--timeout") || a.startsWith("--timeout=")) {
                String v = a.equals("--timeout") ? (i + 1 < args.size() ? args.get(++i) : "") : a.substring(10);
                Strtol.Result r = Strtol.parse(v);
                if (v.isEmpty() || !r.complete(v) || r.value() < 1 || r.value() > 86400) {
                    failParser(" Timeout should be between 1 and 86400 seconds");
                }
                p.timeoutSeconds = (int) r.value();
            } else {
                rest.add(a);
            }
        }
        return rest;
    }

    private void shortOption(char c, String optarg) {
        switch (c) {
            case 'p' -> p.port = (int) checkValue(optarg, "Port", "int");
            case 'd' -> p.ibDevName = optarg;
            case 'i' -> {
                p.ibPort = (int) checkValue(optarg, "IB Port", "uint8_t") & 0xff;
                if (p.ibPort < 1) {
                    failParser("IB Port can't be less than 1");
                }
            }
            case 'm' -> p.mtu = (int) checkValue(optarg, "MTU", "int");
            case 'n' -> p.iters = inRange(optarg, 5, 100000000, "Iteration num");
            case 't' -> p.txDepth = inRange(optarg, 1, 15000, "Tx depth");
            case 'T' -> p.tos = inRange(optarg, 0, 255, "TOS");
            case 'L' -> p.hopLimit = inRange(optarg, 0, 255, "Hop Limit");
            case 'u' -> p.qpTimeout = (int) checkValue(optarg, "QP Timeout", "uint8_t") & 0xff;
            case 'S' -> {
                p.sl = (int) checkValue(optarg, "Service Level", "uint8_t") & 0xff;
                if (p.sl > 15) {
                    failParser(" Only 15 Service levels");
                }
            }
            case 'x' -> {
                int v = (int) checkValue(optarg, "Gid index", "uint8_t") & 0xff;
                if (v > 64) {
                    failParser(" Gid index should be between 0 and 64");
                }
                p.gidIndex = v;
                p.useGidUser = true;
            }
            case 'c' -> connection(optarg);
            case 'q' -> {
                if (!test.isBw()) {
                    failParser(" Multiple QPs only available on bw tests");
                }
                p.numQps = inRange(optarg, 1, 16384, "num of Qps");
            }
            case 'I' -> {
                p.inlineSize = inRange(optarg, 0, 912, "Max inline");
                if (test.verb() == Verb.READ) {
                    failParser(" Inline feature not available on READ/Atomic verbs");
                }
            }
            case 'o' -> {
                p.outReads = (int) checkValue(optarg, "Outstanding Reads", "int");
                if (test.verb() != Verb.READ) {
                    failParser(" Setting Outstanding reads only available on READ verb");
                }
            }
            case 'M' -> unsupported.note("-M/--MGID");
            case 'r' -> {
                p.rxDepth = inRange(optarg, 1, 16384, " Rx depth");
                if (test.verb() != Verb.SEND && p.rxDepth > PerftestParameters.DEF_RX_RDMA) {
                    failParser(" On RDMA verbs rx depth can be only 1");
                }
            }
            case 'Q' -> {
                p.cqMod = inRange(optarg, 1, 1024, "CQ moderation");
                p.reqCqMod = true;
            }
            case 'A' -> failParser(" You are not running the atomic_lat/bw test!\n"
                    + " To change the atomic action type, you must run one of the atomic tests");
            case 'l' -> p.postList = (int) checkValue(optarg, "Send Post List size", "int");
            case 'D' -> {
                p.duration = (int) checkValue(optarg, "Duration period", "int");
                if (p.duration <= 0) {
                    failParser(" Duration period must be positive");
                }
                p.testType = TestType.DURATION;
            }
            case 'f' -> {
                p.margin = (int) checkValue(optarg, "Margin", "int");
                if (p.margin < 0) {
                    failParser(" Margin must be non-negative");
                }
            }
            case 'O' -> unsupported.note("-O/--dualport");
            case 'a' -> p.testMethod = TestMethod.ALL;
            case 'F' -> p.cpuFreqF = true;
            case 'V' -> {
                out.println("Version: " + PerftestParameters.VERSION);
                throw new Exit(1);
            }
            case 'h' -> {
                Usage.print(test, argv0, out);
                throw new Exit(1);
            }
            case 'z' -> p.commRdmaCm = true;
            case 'R' -> p.rdmaCm = true;
            case 's' -> size(optarg);
            case 'e' -> {
                p.useEvent = true;
                if (test.verb() == Verb.WRITE) {
                    failParser(" Events feature not available on WRITE verb");
                }
            }
            case 'X' -> {
                if (test.verb() == Verb.WRITE) {
                    failParser(" Events feature not available on WRITE verb");
                }
                p.useEqNum = true;
                p.eqNum = inRange(optarg, 0, 2048, "EQN");
            }
            case 'b' -> {
                p.duplex = true;
                if (test.kind() == Kind.LAT) {
                    failParser(" Bidirectional is only available in BW test");
                }
                if (test.verb() == Verb.SEND) {
                    unsupported.note("-b/--bidirectional");
                }
            }
            case 'N' -> {
                p.noPeak = true;
                if (test.kind() == Kind.LAT) {
                    failParser(" NoPeak only valid for BW tests");
                }
            }
            case 'C' -> {
                if (test.kind() != Kind.LAT) {
                    failParser(" Available only on Latency tests");
                }
                unsupported.note("-C/--report-cycles");
            }
            case 'g' -> {
                if (test.verb() != Verb.SEND) {
                    failParser(" MultiCast feature only available on SEND verb");
                }
                unsupported.note("-g/--mcg");
            }
            case 'H' -> {
                if (test.isBw()) {
                    failParser(" Available only on Latency tests");
                }
                p.histogram = true;
            }
            case 'U' -> {
                if (test.isBw()) {
                    failParser(" is Available only on Latency tests");
                }
                p.unsorted = true;
            }
            case 'B' -> unsupported.note("-B/--source_mac");
            case 'E' -> unsupported.note("-E/--dest_mac");
            case 'J' -> unsupported.note("-J/--dest_ip");
            // -j is raw Ethernet's client IP in perftest, and --source_ip resolves to it (first exact match);
            // panverbs gives both the documented --source_ip meaning: the local address of the TCP exchange.
            case 'j' -> p.sourceIp = optarg;
            case 'K' -> {
                checkValue(optarg, "Server Port", "int");
                unsupported.note("-K/--dest_port");
            }
            case 'k' -> {
                checkValue(optarg, "Client Port", "int");
                unsupported.note("-k/--source_port");
            }
            case 'Y' -> unsupported.note("-Y/--ethertype");
            case 'w' -> {
                p.isLimitBw = true;
                p.limitBw = Strtol.parseFloat(optarg);
                if (p.limitBw < 0) {
                    failParser(" Invalid Minimum BW Limit");
                }
                if (!test.isBw()) {
                    unsupported.note("-w/--limit_bw");
                }
            }
            case 'y' -> {
                p.isLimitMsgRate = true;
                p.limitMsgRate = Strtol.parseFloat(optarg);
                if (p.limitMsgRate < 0) {
                    failParser(" Invalid Minimum msgRate Limit");
                }
                if (!test.isBw()) {
                    unsupported.note("-y/--limit_msgrate");
                }
            }
            case 'W' -> unsupported.note("-W/--report-counters");
            case 'P' -> unsupported.note("-P/--client");
            case 'Z' -> unsupported.note("-Z/--server");
            case 'v' -> unsupported.note("-v/--mac_fwd");
            case 'G' -> unsupported.note("-G/--use_rss");
            default -> throw new IllegalStateException("option -" + c + " not in the table");
        }
    }

    private void longFlag(String name, String optarg) {
        switch (name) {
            case "run_infinitely" -> unsupported.note("--run_infinitely");
            case "report_gbits" -> p.reportGbits = true;
            case "use-srq" -> p.useSrq = true;
            case "report-both" -> {
                if (test.verb() == Verb.SEND) {
                    unsupported.note("--report-both");
                }
                p.reportBoth = true;
            }
            case "reversed" -> p.reversed = true;
            case "pkey_index" -> p.pkeyIndex = (int) checkValue(optarg, "Pkey index", "int");
            case "inline_recv" -> {
                checkValue(optarg, "Inline Receive size", "int");
                unsupported.note("--inline_recv");
            }
            case "tcp" -> unsupported.note("--tcp");
            case "burst_size", "typical_pkt_size", "rate_limit", "rate_limit_type", "rate_units" ->
                    unsupported.note("--" + name);
            case "output" -> p.output = switch (optarg) {
                case "bandwidth" -> Output.BANDWIDTH;
                case "message_rate" -> Output.MESSAGE_RATE;
                case "latency" -> Output.LATENCY;
                default -> {
                    failParser(" Invalid verbosity level output flag. Please use bandwidth, latency, message_rate");
                    yield Output.FULL;
                }
            };
            case "cpu_util" -> p.cpuUtil = true;
            case "out_json" -> p.outJson = true;
            case "out_json_file" -> p.outJsonFile = optarg;
            case "latency_gap" -> {
                p.latencyGap = (int) checkValue(optarg, "Latency gap time", "int");
                if (p.latencyGap < 0) {
                    failParser(" Latency gap time must be non-negative");
                }
            }
            case "flow_label" -> {
                checkValue(optarg, "flow label", "int");
                unsupported.note("--flow_label");
            }
            case "retry_count" -> {
                p.retryCount = (int) checkValue(optarg, "Retry Count", "int");
                if (p.retryCount < 0) {
                    failParser(" Retry Count must be non-negative");
                }
            }
            case "dont_xchg_versions" -> unsupported.note("--dont_xchg_versions");
            case "odp" -> p.useOdp = true;
            case "mmap", "mmap-offset", "raw_ipv6", "report-per-port", "use_hugepages", "promiscuous",
                 "sniffer", "raw_mcast", "flows", "flows_burst", "reply_every", "vlan_en", "vlan_pcp",
                 "recv_post_list", "aes_xts", "encrypt_on_tx", "sig_before", "aes_block_size", "kek_path",
                 "credentials_path", "data_enc_keys_number", "data_enc_key_app_path", "remote_mac", "local_mac",
                 "remote_ip", "local_ip", "remote_port", "local_port" -> unsupported.note("--" + name);
            case "log_dci_streams" ->
                    p.logDciStreams = (int) checkValue(optarg, "log_dci_streams", "uint16_t") & 0xffff;
            case "log_active_dci_streams" ->
                    p.logActiveDciStreams = (int) checkValue(optarg, "log_active_dci_streams", "uint16_t") & 0xffff;
            case "ipv6" -> p.ipv6 = true;
            case "use_old_post_send" -> p.useOldPostSend = true;
            case "mr_per_qp" -> p.mrPerQp = true;
            case "dlid" -> p.dlid = (int) checkValue(optarg, "dlid", "uint16_t") & 0xffff;
            case "tclass" -> p.trafficClass = (int) checkValue(optarg, "traffic class", "uint16_t") & 0xffff;
            case "wait_destroy" -> p.waitDestroy = (int) checkValue(optarg, "wait_destroy", "uint32_t");
            case "perform_warm_up" -> p.performWarmUp = true;
            case "disable_pcie_relaxed" -> p.disablePcieRelaxed = true;
            case "force-link" -> {
                if (optarg.regionMatches(true, 0, "IB", 0, 2)) {
                    p.forceLink = LinkType.IB;
                } else if (optarg.regionMatches(true, 0, "Ethernet", 0, 8)) {
                    p.forceLink = LinkType.ETHERNET;
                } else {
                    failParser("Invalid link layer value should be IB or ETHERNET.");
                }
            }
            case "source_ip" -> p.sourceIp = optarg;
            default -> throw new IllegalStateException("option --" + name + " not handled");
        }
    }

    private void connection(String optarg) {
        p.xrcDc = null; // the last -c wins, as in perftest
        switch (optarg) {
            case "RC" -> p.connection = Connection.RC;
            case "UC" -> {
                p.connection = Connection.UC;
                if (test.verb() == Verb.READ) {
                    exit(err, " UC connection not possible in READ/ATOMIC verbs");
                }
            }
            case "UD" -> {
                p.connection = Connection.UD;
                if (test.verb() != Verb.SEND) {
                    exit(err, " UD connection only possible in SEND verb");
                }
            }
            case "XRC", "DC" -> { // connection stays RC-like: nothing of UC/UD applies (perftest's connection_type)
                p.connection = Connection.RC;
                p.xrcDc = XrcDcConnection.Kind.valueOf(optarg);
            }
            case "RawEth", "SRD" -> unsupported.note("-c " + optarg);
            default -> exit(err, " Invalid Connection type. Please choose from {RC,UC,UD,XRC,DC,SRD}");
        }
    }

    private void size(String optarg) {
        // perftest checks the last character for 'K', then the same position for 'M'; size_factor is never
        // reset, so "-s 1K -s 5" means 5 KiB there too.
        String s = optarg;
        if (s.endsWith("K")) {
            s = s.substring(0, s.length() - 1);
            sizeFactor = 1024;
        } else if (s.endsWith("M")) {
            s = s.substring(0, s.length() - 1);
            sizeFactor = 1024 * 1024;
        }
        long v = Strtol.parse(s).value() * sizeFactor; // (uint64_t) arithmetic, compared unsigned below
        p.size = v;
        p.reqSize = true;
        if (v == 0 || Long.compareUnsigned(v, 2147483647L) > 0) {
            failParser(" Message Size should be between 1 and 2147483647");
        }
    }

    /** {@code CHECK_VALUE}: strtol base 0 of the whole argument, or the error naming the C type. */
    private long checkValue(String optarg, String name, String type) {
        Strtol.Result r = Strtol.parse(optarg);
        if (!r.complete(optarg)) {
            failParser(" " + name + " argument " + optarg + " should be " + type);
        }
        return r.value();
    }

    /** {@code CHECK_VALUE_IN_RANGE(arg, int, min, max, name)}. */
    private int inRange(String optarg, int min, int max, String name) {
        int v = (int) checkValue(optarg, name, "int");
        if (v < min || v > max) {
            failParser(" " + name + " should be between " + min + " and " + max);
        }
        return v;
    }

    private void failParser(String message) {
        err.println(message);
        parserError();
    }

    private void parserError() {
        err.println(" Parser function exited with Error");
        throw new Exit(1);
    }

    /** A direct {@code exit(1)} after printing to {@code stream}: no "Parser function exited" line. */
    static void exit(PrintStream stream, String message) {
        stream.println(message);
        throw new Exit(1);
    }
}
