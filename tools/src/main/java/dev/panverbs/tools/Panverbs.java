package dev.panverbs.tools;

import dev.panverbs.tools.perftest.PerftestMain;
import dev.panverbs.tools.perftest.PerftestTest;
import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.util.Arrays;
import java.util.List;

/**
 * The {@code panverbs} command: {@code panverbs devices}, {@code panverbs devinfo} (like {@code ibv_devices} and
 * {@code ibv_devinfo}) and the perftest clones ({@code panverbs ib_write_bw ...}, also installed as
 * {@code tools/bin/ib_write_bw} etc.).
 *
 * <p>The perftest programs bypass picocli's parser on purpose: they parse their command line exactly as
 * perftest's getopt_long does ({@code -n100}, {@code --it 100}, options after the host, glibc's messages), which
 * picocli's conventions would change.
 */
@Command(name = "panverbs", mixinStandardHelpOptions = true, versionProvider = Panverbs.Version.class,
        description = "RDMA tools on panverbs (Java, no JNI).",
        subcommands = {DevicesCommand.class, DevinfoCommand.class},
        footer = {"", "perftest 6.06 clones (same options and output as the C tools):",
                "  ib_write_bw, ib_read_bw, ib_send_bw, ib_write_lat, ib_read_lat, ib_send_lat",
                "  e.g. panverbs ib_write_bw --help, or tools/bin/ib_write_bw --loopback"})
public final class Panverbs implements Runnable {

    /** The program name for messages: the launcher passes how it was invoked. */
    static String argv0(String fallback) {
        String a = System.getProperty("panverbs.argv0");
        return a == null || a.isEmpty() ? fallback : a;
    }

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs one command line and returns the exit status (for tests and {@link #main}). */
    public static int execute(String[] args) {
        if (args.length > 0) {
            PerftestTest test = PerftestTest.byProgramName(args[0]);
            if (test != null) {
                List<String> rest = Arrays.asList(args).subList(1, args.length);
                if ("1".equals(System.getenv("PANVERBS_PARSE_ONLY"))) {
                    // the launcher's check before it boots the test bed: quiet when the line is valid
                    return PerftestMain.check(test, argv0(args[0]), rest, System.out, System.err);
                }
                return PerftestMain.run(test, argv0(args[0]), rest, System.out, System.err);
            }
        }
        return new CommandLine(new Panverbs()).execute(args);
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Panverbs.class.getPackage().getImplementationVersion();
            return new String[] {"panverbs " + (v == null ? "(development build)" : v)
                    + ", perftest compatibility 6.06 (perftest 4.5)"};
        }
    }
}
