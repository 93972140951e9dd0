package dev.panverbs.tools.perftest;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
        PerftestParameters client = clientOutcome.params();
        VerbsEngine engine = engineSupplier.get();
        CompletableFuture<Integer> port = new CompletableFuture<>();
        CompletableFuture<Integer> serverRc = new CompletableFuture<>();
        Thread t = Thread.ofPlatform().name("perftest-loopback-server").daemon().start(() -> {
            int rc = 1;
            try {
                rc = new PerftestSession(server.params(), engine, so, so, port::complete).run();
            } finally {
                port.complete(-1); // no-op when bound; unblocks the client when the server failed first
                serverRc.complete(rc);
            }
        });
        int bound;
        try {
            bound = port.get(client.timeoutSeconds, TimeUnit.SECONDS);
        } catch (Exception e) {
            bound = -1;
        }
        if (bound < 0) {
            err.print(serverOut.toString(StandardCharsets.UTF_8));
            err.println(" --loopback: the server side did not start");
            return 1;
        }
        client.port = bound;
        int rc = new PerftestSession(client, engine, out, err, null).run();
        int src;
        try {
            src = serverRc.get(client.timeoutSeconds * 10L, TimeUnit.SECONDS);
        } catch (Exception e) {
            t.interrupt();
            src = 1;
        }
        if (src != 0) {
            err.println(" --loopback: the server side failed; its output:");
            err.print(serverOut.toString(StandardCharsets.UTF_8));
        }
        return rc != 0 ? rc : src;
    }
}
