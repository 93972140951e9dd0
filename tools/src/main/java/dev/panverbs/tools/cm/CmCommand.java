package dev.panverbs.tools.cm;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * What {@link Rping} and {@link Udaddy} share: picocli run with the C tools' exit codes and usage text (each tool
 * says which: {@link #usageStatus()}, {@link #failureStatus()}, {@link #printCUsage(PrintWriter)}; {@code --help}
 * exits 0), a failure as one line on stderr prefixed with the tool's name, and the writers a caller (a test) passes
 * in instead of stdout and stderr.
 */
abstract class CmCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    private PrintWriter out;
    private PrintWriter err;

    /** Runs the parsed command: validates its options and runs the tool; returns the exit status. */
    abstract int run(PrintWriter out, PrintWriter err) throws Exception;

    /** The C tool's exit status for a command line it rejects (an unknown option, a missing argument). */
    abstract int usageStatus();

    /** The C tool's exit status when the run fails (what its {@code main} returns for {@code -1}). */
    abstract int failureStatus();

    /** The C tool's usage text, which it prints to stdout on a command line it rejects. */
    abstract void printCUsage(PrintWriter out);

    @Override
    public final Integer call() throws Exception {
        return run(out != null ? out : spec.commandLine().getOut(), err != null ? err : spec.commandLine().getErr());
    }

    /** Parses {@code args} into {@code command} and runs it; returns the exit status. */
    static int execute(CmCommand command, String[] args, PrintWriter out, PrintWriter err) {
        command.out = out;
        command.err = err;
        CommandLine cl = new CommandLine(command);
        cl.setOut(out);
        cl.setErr(err);
        cl.setExecutionExceptionHandler((e, line, parseResult) -> {
            // a user's bad host name or number is one line naming it, never an exception class
            String why = e instanceof java.net.UnknownHostException u ? "cannot resolve " + u.getMessage()
                    : e instanceof RuntimeException && e.getMessage() != null ? e.getMessage() : e.toString();
            err.println(line.getCommandName() + ": " + why);
            err.flush();
            return command.failureStatus();
        });
        // getopt's rejections: the reason on stderr (one line, as glibc's getopt), the C tool's usage on stdout
        cl.setParameterExceptionHandler((e, args1) -> {
            err.println(cl.getCommandName() + ": " + e.getMessage());
            err.flush();
            command.printCUsage(out);
            out.flush();
            return command.usageStatus();
        });
        int status = cl.execute(args);
        out.flush();
        err.flush();
        return status;
    }

    /** The entry point of a {@code tools/bin} script: runs on stdout and stderr and exits with the status. */
    static void main(CmCommand command, String[] args) {
        System.exit(execute(command, args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }
}
