package dev.panverbs.tools.perftest;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * perftest options that panverbs recognises but does not implement. They are noted while parsing and rejected,
 * by name, once perftest's own argument checks have passed: a user never gets a run that silently differs from
 * what the C tool would have done.
 */
final class UnsupportedOptions {
    private final PerftestTest test;
    private final List<String> noted = new ArrayList<>();

    UnsupportedOptions(PerftestTest test) {
        this.test = test;
    }

    /** Records an unsupported option, spelled as {@code -x/--long} or {@code --long}. */
    void note(String option) {
        noted.add(option);
    }

    List<String> noted() {
        return List.copyOf(noted);
    }

    /** Prints why the first noted option is refused, then perftest's parser-error line, and ends the parse. */
    void rejectIfAny(PerftestParameters p, PrintStream out, PrintStream err) {
        if (noted.isEmpty()) {
            return;
        }
        if (test.kind() == PerftestTest.Kind.LAT) {
            // force_dependecies() refuses these two in latency tests before anything panverbs lacks matters:
            // the C tool's words, streams and order
            if (noted.contains("-O/--dualport")) {
                PerftestParser.exit(out, " Dual-port mode only supports BW tests.");
            }
            if (noted.contains("--run_infinitely")) {
                out.print(PerftestParser.RESULT_LINE);
                PerftestParser.exit(err, " run_infinitely exists only in BW tests for now.");
            }
        }
        err.println(" " + message(noted.get(0)));
        err.println(" Parser function exited with Error");
        throw new PerftestParser.Exit(1);
    }

    /** The sentence for {@code option}; always names the option as the user can type it. */
    String message(String option) {
        String prog = test.programName();
        return switch (option) {
            case "-R with --direct_wqe" -> "--direct_wqe with rdma_cm QPs (-R) is not supported by panverbs";
            case "-b/--bidirectional" -> "bidirectional mode (-b/--bidirectional) of " + prog
                    + " is not supported by panverbs yet (ib_write_bw -b and ib_read_bw -b are)";
            case "--report-both" -> "--report-both of " + prog + " is not supported by panverbs yet";
            case "-O/--dualport" -> "dual-port mode (-O/--dualport) is not supported by panverbs yet";
            case "-g/--mcg", "-M/--MGID" -> "multicast (" + option + ") is not supported by panverbs yet";
            case "-C/--report-cycles" -> "-C/--report-cycles is not supported: panverbs measures time with "
                    + "System.nanoTime(), it has no CPU cycle counts";
            case "-c SRD" -> "connection type SRD (-c) is not supported by panverbs; it supports RC, UC" + (test.verb()
                    == PerftestTest.Verb.SEND ? " and UD" : "") + " (XRC and DC: see -c XRC/-c DC)";
            case "-c RawEth" -> "Raw Ethernet QPs (-c RawEth) are not supported by panverbs";
            case "-w/--limit_bw", "-y/--limit_msgrate" -> option + " is not supported by " + prog
                    + ": it applies to BW tests only (perftest ignores it)";
            case "--dont_xchg_versions" -> "--dont_xchg_versions is not supported (perftest 6.06 cannot run with "
                    + "it either: it then rejects the empty peer version)";
            case "-B/--source_mac", "-E/--dest_mac", "-J/--dest_ip", "-K/--dest_port",
                 "-k/--source_port", "-Y/--ethertype", "-P/--client", "-Z/--server", "-v/--mac_fwd",
                 "-G/--use_rss", "--tcp", "--flows", "--flows_burst", "--reply_every", "--vlan_en", "--vlan_pcp",
                 "--remote_mac", "--local_mac", "--remote_ip", "--local_ip", "--remote_port", "--local_port",
                 "--promiscuous", "--sniffer", "--raw_mcast", "--raw_ipv6" ->
                    option + " is not supported by " + prog + ": it is a raw Ethernet option (perftest "
                            + "ignores it)";
            case "--aes_xts", "--encrypt_on_tx", "--sig_before", "--aes_block_size", "--kek_path",
                 "--credentials_path", "--data_enc_keys_number", "--data_enc_key_app_path" ->
                    option + " (mlx5 AES-XTS encryption) is not supported by panverbs yet";
            default -> option + " is not supported by panverbs yet";
        };
    }
}
