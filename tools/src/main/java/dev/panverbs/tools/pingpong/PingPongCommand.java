package dev.panverbs.tools.pingpong;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * What {@link RcPingPong} and {@link UdPingPong} share: running picocli with the C tools' exit codes (usage
 * errors and failures exit 1, like the C tools; {@code --help} exits 0) and their usage text on stdout, turning failures into one line on
 * stderr prefixed with the tool's name, the runner the validated settings go to, and the writers a caller (a test)
 * passes in instead of stdout and stderr.
 */
abstract class PingPongCommand implements Callable<Integer> {
    /** Runs one validated ping-pong; returns the exit status. */
    @FunctionalInterface
    interface Runner {
        int run(PingPongOptions.Settings settings, PrintWriter out, PrintWriter err) throws Exception;
    }

    @Spec
    CommandSpec spec;

    final Runner runner;
    private PrintWriter out;
    private PrintWriter err;

    PingPongCommand(Runner runner) {
        this.runner = runner;
    }

    /** Runs the parsed command: validates its options and hands the settings to the runner; the exit status. */
    abstract int run(PrintWriter out, PrintWriter err) throws Exception;

    /**
     * The C tool's {@code usage(argv[0])} text for {@code name}, which it prints to stdout before it exits 1: the
     * lines both tools share, then {@link #cUsageRest()}.
     */
    final String cUsage(String name) {
        return """
                Usage:
                  %1$s            start a server and wait for connection
                  %1$s <host>     connect to server at <host>

                Options:
                  -p, --port=<port>      listen on/connect to port <port> (default 18515)
                  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)
                  -i, --ib-port=<port>   use port <port> of IB device (default 1)
                """.formatted(name) + cUsageRest();
    }

    /** The C tool's usage lines after {@code -i} (rdma-core 44). */
    abstract String cUsageRest();

    @Override
    public final Integer call() throws Exception {
        // as a picocli subcommand (no execute() call) the streams come from the command line
        return run(out != null ? out : spec.commandLine().getOut(), err != null ? err : spec.commandLine().getErr());
    }

    /** Parses {@code args} into {@code command} and runs it; returns the exit status. */
    static int execute(PingPongCommand command, String[] args, PrintWriter out, PrintWriter err) {
        command.out = out;
        command.err = err;
        CommandLine cl = commandLine(command, out, err);
        // a rejected command line: the reason on stderr (one line, as getopt's), the C tool's usage on stdout, 1
        cl.setParameterExceptionHandler((e, rejected) -> {
            err.println(cl.getCommandName() + ": " + e.getMessage());
            err.flush();
            out.print(command.cUsage(cl.getCommandName()));
            out.flush();
            return 1;
        });
        int status = cl.execute(args);
        out.flush();
        err.flush();
        return status;
    }

    private static CommandLine commandLine(Object command, PrintWriter out, PrintWriter err) {
        CommandLine cl = new CommandLine(command);
        cl.setOut(out);
        cl.setErr(err);
        cl.setExecutionExceptionHandler((e, line, parseResult) -> {
            String tool = line.getCommandName();
            if (e instanceof IOException || e instanceof RuntimeException) {
                err.println(tool + ": " + e.getMessage());
            } else {
                err.println(tool + ": " + e);
            }
            err.flush();
            return 1;
        });
        return cl;
    }

    /** Refuses an rdma-core option this clone does not implement, naming it; returns the exit status 1. */
    static int unsupported(String tool, String option, String what, PrintWriter err) {
        err.println(tool + ": option " + option + " (" + what + ") of ibv_" + tool
                + " is not supported by this panverbs clone");
        err.flush();
        return 1;
    }
}
