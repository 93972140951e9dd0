package dev.panverbs.tools.perftest;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Entry point of the six perftest clones: parse as perftest does, then run one side, or with --loopback both
 * sides in this process (server in a thread, client in the caller) on one device.
 */
public final class PerftestMain {
    private PerftestMain() { }

    /**
     * Runs {@code test} with {@code args} (without the program name) on the panverbs core and returns the exit
     * status.
     *
     * @param argv0 the program name as invoked, for getopt-style messages
     */
    public static int run(PerftestTest test, String argv0, List<String> args, PrintStream out, PrintStream err) {
        return run(test, argv0, args, out, err, CoreEngine::new);
    }

    /**
     * Parses only: prints nothing and returns 0 for a valid command line, else prints perftest's messages and
     * returns the status the tool would exit with.
     */
    public static int check(PerftestTest test, String argv0, List<String> args, PrintStream out, PrintStream err) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        PerftestParser.Outcome outcome = PerftestParser.parse(test, argv0, args,
                new PrintStream(o, true, StandardCharsets.UTF_8), new PrintStream(e, true, StandardCharsets.UTF_8));
        if (outcome.proceed()) {
            return 0;
        }
        out.print(o.toString(StandardCharsets.UTF_8));
        out.flush();
        err.print(e.toString(StandardCharsets.UTF_8));
        err.flush();
        return outcome.exitCode();
    }

    /** As {@link #run(PerftestTest, String, List, PrintStream, PrintStream)} on another engine (tests). */
    static int run(PerftestTest test, String argv0, List<String> args, PrintStream out, PrintStream err,
                          Supplier<? extends VerbsEngine> engine) {
        PerftestParser.Outcome o = PerftestParser.parse(test, argv0, args, out, err);
        if (!o.proceed()) {
            return o.exitCode();
        }
        PerftestParameters p = o.params();
        if (!p.loopback) {
            return new PerftestSession(p, engine.get(), out, err, null).run();
        }
        return loopback(test, argv0, args, p, out, err, engine);
    }

    /**
     * --loopback: a server in a second thread and the client here, over TCP on 127.0.0.1, both on the same
     * device. The client's output is the tool's output; the server's is printed (on stderr) only when it fails.
     */
    private static int loopback(PerftestTest test, String argv0, List<String> args, PerftestParameters parsed,
                                PrintStream out, PrintStream err, Supplier<? extends VerbsEngine> engineSupplier) {
        if (parsed.servername != null) {
            err.println(" --loopback runs both sides here: give no server name");
            return 1;
        }
        List<String> serverArgs = new ArrayList<>(args);
        if (parsed.port == PerftestParameters.DEF_PORT) {
            serverArgs.add("--port=0"); // any free port; the client learns it below
        }
        ByteArrayOutputStream serverOut = new ByteArrayOutputStream();
        PrintStream so = new PrintStream(serverOut, true, StandardCharsets.UTF_8);
        PerftestParser.Outcome server = PerftestParser.parse(test, argv0, serverArgs, so, so);
        List<String> clientArgs = new ArrayList<>(args);
        clientArgs.add("127.0.0.1");
        PerftestParser.Outcome clientOutcome = PerftestParser.parse(test, argv0, clientArgs,
                new PrintStream(new ByteArrayOutputStream()), new PrintStream(new ByteArrayOutputStream()));
        if (!server.proceed() || !clientOutcome.proceed()) {
            err.print(serverOut.toString(StandardCharsets.UTF_8));
            return server.proceed() ? clientOutcome.exitCode() : server.exitCode();
        }
        PerftestParameters serverParams = server.params();
        PerftestParameters clientParams = clientOutcome.params();
        VerbsEngine engine = engineSupplier.get();
        Warmup.run(clientParams, engine, err); // before the measured pair, whose server would wait in accept
        serverParams.jitWarmup = 0;
        clientParams.jitWarmup = 0;
        return LoopbackPair.run(serverParams, clientParams, engine, out, err);
    }
}
