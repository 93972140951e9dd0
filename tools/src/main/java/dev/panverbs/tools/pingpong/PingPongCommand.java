package dev.panverbs.tools.pingpong;

import java.io.IOException;
import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * What {@link RcPingPong} and {@link UdPingPong} share: running picocli with the C tools' exit codes (usage
 * errors and failures exit 1, like the C tools; {@code --help} exits 0) and turning failures into one line on
 * stderr prefixed with the tool's name.
 */
final class PingPongCommand {
    /** Runs one validated ping-pong; returns the exit status. */
    @FunctionalInterface
    interface Runner {
        int run(PingPongOptions.Settings settings, PrintWriter out, PrintWriter err) throws Exception;
    }

    private PingPongCommand() {}

    static CommandLine commandLine(Object command, PrintWriter out, PrintWriter err) {
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
