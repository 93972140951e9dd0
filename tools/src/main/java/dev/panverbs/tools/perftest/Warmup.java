package dev.panverbs.tools.perftest;

import dev.panverbs.tools.perftest.PerftestParameters.Machine;
import dev.panverbs.tools.perftest.PerftestParameters.TestMethod;
import dev.panverbs.tools.perftest.PerftestParameters.TestType;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The JIT warm-up (panverbs only; {@code --jit_warmup=N}, 0 turns it off): before the timed section, this
 * process runs the program's own post and poll loops on a private loopback pair (its own contexts, QPs, CQs,
 * buffers and TCP port; see {@link LoopbackPair}), then waits for the compiler queue to drain. perftest's default
 * runs (1000 latency or 5000 bandwidth iterations) end before HotSpot's C2 has compiled anything — within
 * milliseconds on hardware, within seconds under emulation — so without it they would time the interpreter.
 *
 * <p>The peer never sees it: a server warms up after it listens and before it accepts (a client that connects
 * meanwhile waits in the exchange, before its own timed section), a client before it connects. The pair runs
 * the same code paths as the real run: a copy of the real parameters (transport, verb, QP count, depths, inline
 * size, moderation, post list, {@code ibv_wr_*} or old post), with only the iteration count, the message size
 * (at most 4 KiB, above any inline limit, so the same branches are taken) and the addresses changed. An
 * automatic warm-up runs a short probe, then chunks until C2 has compiled the runners' round methods and a fresh
 * pair deoptimized none of panverbs' C2 code ({@link JitLevels.Snapshot#stableSince}), bounded in time (45 s or 3/4 of --timeout, see {@link #budgetNanos}), so a peer waiting
 * in the exchange never times out; an explicit {@code --jit_warmup=N} runs N iterations. -R/-z runs (an rdma_cm
 * exchange, whose peer would wait against CM and RNR timers) are not warmed up. Duration
 * runs (-D) are not warmed up: perftest's own margin (--margin) serves them.
 */
final class Warmup {
    /**
     * Iterations when --jit_warmup is not given: enough for C2 to compile post, poll and the run loops. They are
     * run as a probe and then in chunks until the round methods are at tier 4, within {@link #budgetNanos}.
     */
    static final int AUTO_ITERATIONS = 20_000;
    /**
     * The first round of an automatic warm-up, which times the machine. Small: it is not bounded by the time budget,
     * and on a loaded emulated machine 1000 iterations took 66 s, longer than the peer's 60 s patience in the exchange.
     */
    static final int PROBE_ITERATIONS = 200;
    /** At most this long for an automatic warm-up (or 3/4 of --timeout, the peer's patience). */
    static final long MAX_BUDGET_NANOS = 45_000_000_000L;
    /** Largest message of the warm-up: the copies are not what is being compiled. */
    static final long MAX_SIZE = 4096;
    /** How long to wait at most for queued compilations after the pair ends. */
    private static final long SETTLE_LIMIT_NANOS = 10_000_000_000L;
    /** The shortest quiet spell of the compiler that counts as drained. */
    private static final long MIN_QUIET_NANOS = 200_000_000L;

    /** The run shapes this JVM has warmed up already (tools embedded in one process, the ITs). */
    private static final Set<String> WARMED = ConcurrentHashMap.newKeySet();

    private Warmup() { }

    /**
     * An automatic warm-up's time budget: at most {@link #MAX_BUDGET_NANOS}, and at most 3/4 of --timeout, the
     * peer's patience: a panverbs server that accepted waits up to the client's warm-up for its first message (the
     * server's own warm-up ran before it accepted; C perftest waits in blocking reads without a limit).
     */
    static long budgetNanos(PerftestParameters p) {
        return Math.min(MAX_BUDGET_NANOS, p.timeoutSeconds * 1_000_000_000L * 3 / 4);
    }

    /** Whether {@code p} asks for a warm-up: iteration runs, unless --jit_warmup=0. */
    static boolean wanted(PerftestParameters p) {
        return p.jitWarmup != 0 && p.testType == TestType.ITERATIONS;
    }

    /**
     * Runs the warm-up pair for the run described by {@code p} (the parameters as parsed, before the session
     * completed them). A failure is not the run's failure: it is reported under --debug only.
     */
    static void run(PerftestParameters p, VerbsEngine engine, PrintStream err) {
        if (!wanted(p)) {
            return;
        }
        PerftestParameters server = pairSide(p, false);
        PerftestParameters client = pairSide(p, true);
        String shape = shape(client);
        if (!WARMED.add(shape)) {
            if (p.debug) {
                err.println(" JIT warm-up: this process ran one for the same kind of run already");
            }
            return;
        }
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        PrintStream sink = new PrintStream(log, true, StandardCharsets.UTF_8);
        long start = System.nanoTime();
        int target = client.iters;
        int done = 0;
        int rc = 0;
        JitLevels.Snapshot levels = null;
        long settleLimit = SETTLE_LIMIT_NANOS;
        if (p.jitWarmup > 0) {
            rc = runPair(server, client, engine, sink, target);
            done = target;
        } else {
            // automatic: a probe, then what fits in the time budget (a loaded or emulated machine is slow, and the
            // peer may be waiting in the exchange with its own timeout)
            long budget = budgetNanos(p);
            int probe = Math.min(target, Math.max(PROBE_ITERATIONS, 2 * Math.max(Math.max(p.txDepth, p.rxDepth),
                    p.cqMod)));
            rc = runPair(server, client, engine, sink, probe);
            done = probe;
            // then chunks, each as long as all before it, until C2 has compiled every round method (or the
            // budget or AUTO_ITERATIONS runs out): a fixed-length run left them at tier 3 on a slow machine
            boolean c2 = JitLevels.c2Available();
            JitLevels.Snapshot before = null;
            while (rc == 0 && done < target && c2) { // C1 only: nothing to wait for
                levels = JitLevels.snapshot();
                if (levels != null && levels.stableSince(before)) {
                    break;
                }
                long used = System.nanoTime() - start;
                long fit = (budget - used) / Math.max(1, used / done);
                // each chunk sets up a new pair (seconds under emulation): at least as long as all before it, but
                // once C2 has compiled the round methods, one short pair that shows its code survives fresh resources
                int more = (int) Math.min(Math.min(target - done, fit),
                        levels != null && levels.allAtC2() ? probe : Math.max(done, fit / 2));
                if (more < probe / 2) {
                    break;
                }
                before = levels;
                rc = runPair(server, client, engine, sink, more);
                done += more;
            }
            // the wait for the compiler counts against the budget too (a peer is waiting), but gets a moment
            settleLimit = Math.min(SETTLE_LIMIT_NANOS,
                    Math.max(2 * MIN_QUIET_NANOS, budget - (System.nanoTime() - start)));
        }
        long ran = System.nanoTime() - start;
        long settled = settle(settleLimit);
        if (p.debug) {
            levels = JitLevels.snapshot();
            err.printf(" JIT warm-up: %d iterations of %d B in %d ms, compiler settled after %d ms; round methods"
                    + " at tier %s%s%n", done, client.size, ran / 1_000_000, settled / 1_000_000,
                    levels == null ? "(unknown)" : levels.rounds(),
                    rc == 0 ? "" : "; it failed (the run goes on):\n" + log.toString(StandardCharsets.UTF_8));
            err.flush();
        }
    }

    private static int runPair(PerftestParameters server, PerftestParameters client, VerbsEngine engine,
                               PrintStream sink, int iters) {
        PerftestParameters s = server.copy();
        PerftestParameters c = client.copy();
        s.iters = iters;
        c.iters = iters;
        try {
            return LoopbackPair.run(s, c, engine, sink, sink);
        } catch (RuntimeException e) {
            sink.println(" " + e);
            return 1;
        }
    }

    /** One side of the pair: {@code p} with the warm-up's iterations, size and addresses. */
    static PerftestParameters pairSide(PerftestParameters p, boolean client) {
        PerftestParameters q = p.copy();
        q.iters = p.jitWarmup > 0 ? p.jitWarmup : AUTO_ITERATIONS;
        q.size = Math.min(p.size, MAX_SIZE);
        q.testMethod = TestMethod.REGULAR;
        q.outJson = false;
        q.output = PerftestParameters.Output.FULL;
        q.servername = client ? "127.0.0.1" : null;
        q.machine = client != p.reversed ? Machine.CLIENT : Machine.SERVER;
        q.port = 0;
        q.sourceIp = null;
        q.loopback = true;
        q.waitDestroy = 0;
        q.jitWarmup = 0;
        q.jitRehearsal = true;
        return q;
    }

    /**
     * How long the compiler may take at most to drain before a timed section (see {@link #beforeTimedSection}). 1 s
     * was too short on a loaded host under emulation: default {@code ib_write_bw -s 64} clients hit it with C2 still
     * compiling the JDK code the start-up and the warm-up's bookkeeping made hot, and the compiler threads then took
     * 60-150 % of a vCPU through the whole timed section (perf/README.md, issue 9 rxe, "Where the message-rate gap
     * sat"). The peers wait far longer: a BW server in its end-of-test sync, a latency peer in the pre-run sync.
     */
    static final long BEFORE_TIMED_LIMIT_NANOS = 10_000_000_000L;

    /**
     * Right before a timed section, in a JVM that ran a warm-up: lets the compiler drain the methods the exchange and
     * the header just made hot (the key-message parser, the statistics, JDK string code), at most {@link
     * #BEFORE_TIMED_LIMIT_NANOS}. Compiled on a compiler thread during the timed section, they took a CPU from the
     * spinning post/poll loop: under emulation, default {@code ib_write_lat} runs showed multi-millisecond stalls
     * (99th percentile 4-8 ms, t_typical unaffected) with those compilations, and no GC, safepoint or
     * deoptimization, inside the section. Returns how long it waited (0 when no warm-up ran or there is no C2).
     */
    static long beforeTimedSection(PerftestParameters p) {
        // not wanted(p): a loopback pair runs with --jit_warmup=0 after its process warmed up for it
        if (p.testType != TestType.ITERATIONS || WARMED.isEmpty() || !JitLevels.c2Available()) {
            return 0;
        }
        return settle(BEFORE_TIMED_LIMIT_NANOS);
    }

    /** Forgets the shapes warmed up so far (tests). */
    static void forget() {
        WARMED.clear();
    }

    /** What selects the code paths of a run: the same shape twice in one JVM needs one warm-up. */
    static String shape(PerftestParameters q) {
        return String.join(",", q.test.name(), q.connection.name(), q.machine.name(), Integer.toString(q.numQps),
                Long.toString(q.size), Integer.toString(q.inlineSize), Integer.toString(q.postList),
                Integer.toString(q.cqMod), Integer.toString(q.txDepth), Integer.toString(q.rxDepth),
                Boolean.toString(q.useOldPostSend), Boolean.toString(q.useEvent), Boolean.toString(q.useSrq),
                Boolean.toString(q.duplex), Boolean.toString(q.reversed), Boolean.toString(q.directWqe),
                Boolean.toString(q.useOdp), q.ibDevName == null ? "" : q.ibDevName);
    }

    /**
     * Waits until the JIT's total compilation time stops growing (the queue is drained), at most {@code limitNanos}. The JVM adds a
     * compilation's time when it ends, so a quiet spell shorter than one compilation proves nothing: the spell
     * needed is twice the largest step seen (one C2 compilation takes milliseconds on hardware and seconds under
     * emulation, where a fixed 200 ms let the timed loop start with C2 still busy on its methods), at least 200 ms.
     * An automatic warm-up waits at most what is left of its time budget (at least 400 ms).
     */
    private static long settle(long limitNanos) {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        long start = System.nanoTime();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            return 0;
        }
        long last = jit.getTotalCompilationTime();
        long quietSince = System.nanoTime();
        long needNanos = MIN_QUIET_NANOS;
        while (System.nanoTime() - quietSince < needNanos && System.nanoTime() - start < limitNanos) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            long now = jit.getTotalCompilationTime();
            if (now != last) {
                needNanos = Math.max(needNanos, 2_000_000L * (now - last));
                quietSince = System.nanoTime();
                last = now;
            }
        }
        return System.nanoTime() - start;
    }
}
