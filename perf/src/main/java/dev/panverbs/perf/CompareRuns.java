package dev.panverbs.perf;

import java.util.LinkedHashMap;
import java.util.Map;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * What {@link Compare} and {@link Mlx5Compare} share: one JMH run of the benchmarks {@code include} matches with
 * {@link CpuTimeProfiler} and {@code -prof gc}, defaults for what the command line leaves out, and the reading of a
 * row's secondary results.
 */
final class CompareRuns {
    private CompareRuns() {}

    /**
     * Runs the benchmarks matching {@code include}: 3 warm-up and 5 measurement iterations of {@code seconds} each, one
     * fork, unless {@code args} (JMH's own options) say otherwise. Returns the results by benchmark method name.
     */
    static Map<String, RunResult> run(String[] args, String include, int seconds) throws Exception {
        CommandLineOptions cli = new CommandLineOptions(args);
        ChainedOptionsBuilder b = new OptionsBuilder().parent(cli)
                .include(include)
                .addProfiler(CpuTimeProfiler.class)
                .addProfiler(GCProfiler.class);
        if (!cli.getWarmupIterations().hasValue()) {
            b.warmupIterations(3).warmupTime(TimeValue.seconds(seconds));
        }
        if (!cli.getMeasurementIterations().hasValue()) {
            b.measurementIterations(5).measurementTime(TimeValue.seconds(seconds));
        }
        if (!cli.getForkCount().hasValue()) {
            b.forks(1);
        }
        Map<String, RunResult> byName = new LinkedHashMap<>();
        for (RunResult r : runAll(b)) {
            String label = r.getParams().getBenchmark();
            byName.put(label.substring(label.lastIndexOf('.') + 1), r);
        }
        return byName;
    }

    private static java.util.Collection<RunResult> runAll(ChainedOptionsBuilder b) throws RunnerException {
        return new Runner(b.build()).run();
    }

    /** A row's CPU ns/op ({@link CpuTimeProfiler}); NaN when the row is missing. */
    static double cpu(RunResult r) {
        return secondary(r, "cpu.time.norm");
    }

    /** A row's secondary result {@code key} ({@code gc.alloc.rate.norm}, {@code cpu.share}, ...); NaN if missing. */
    static double secondary(RunResult r, String key) {
        Result<?> s = r == null ? null : r.getAggregatedResult().getSecondaryResults().get(key);
        return s == null ? Double.NaN : s.getScore();
    }

    /** The 99.9 % error of a row's CPU ns/op (NaN with fewer than two iterations, or when the row is missing). */
    static double err(RunResult r) {
        Result<?> s = r == null ? null : r.getAggregatedResult().getSecondaryResults().get("cpu.time.norm");
        return s == null ? Double.NaN : s.getScoreError();
    }
}
