package dev.panverbs.perf;

import static dev.panverbs.perf.CompareRuns.cpu;
import static dev.panverbs.perf.CompareRuns.secondary;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.results.RunResult;

/**
 * {@code perf/run --compare}: one JMH run of every hot-path benchmark in its three forms -- C through the provider
 * slots ({@code c*}), raw FFM through the same slots with no library ({@code raw*}) and panverbs -- and the ratios
 * table that {@code perf/README.md} shows, printed in Markdown. The score is CPU time per operation
 * ({@link CpuTimeProfiler}), steadier than wall time on a shared machine; allocation per op comes from
 * {@code -prof gc}. Extra arguments are JMH's ({@code -wi}, {@code -i}, {@code -w}, {@code -r}, {@code -f}).
 */
public final class Compare {
    /** panverbs benchmark, raw FFM twin, C twin, and the goal for panverbs / C. */
    private record Row(String panverbs, String raw, String c, double goal) {}

    private static final List<Row> ROWS = List.of(
            new Row("classicPostSend1", "rawPostSend1", "cPostSend1", 1.4),
            new Row("classicPostSend16", "rawPostSend16", "cPostSend16", 1.3),
            new Row("classicPostSend16Poll16", "rawPostSend16Poll16", "cPostSend16Poll16", 1.25),
            new Row("extendedPostBatch1", "rawPostBatch1", "cPostBatch1", 2.5),
            new Row("extendedPoll16", "rawExtendedPoll16", "cExtendedPoll16", 1.6));

    private Compare() {}

    public static void main(String[] args) throws Exception {
        List<String> names = new ArrayList<>();
        for (Row r : ROWS) {
            names.add(r.panverbs());
            names.add(r.raw());
            names.add(r.c());
        }
        Map<String, RunResult> byName = CompareRuns.run(args,
                "DataPathBenchmark\\.(" + String.join("|", names) + ")$", 2);
        System.out.println();
        System.out.println(table(byName));
    }

    /** The Markdown table: CPU ns/op of the three forms, the ratios, the goal, B/op and the CPU share. */
    static String table(Map<String, RunResult> results) {
        StringBuilder sb = new StringBuilder();
        sb.append("commit ").append(System.getProperty("panverbs.commit", "(unknown)"))
                .append(", ").append(System.getProperty("java.vm.name")).append(' ')
                .append(System.getProperty("java.version")).append(", CPU ns/op (")
                .append("CpuTimeProfiler), one JMH run\n\n");
        sb.append("| benchmark | C | raw FFM | panverbs | raw / C | panverbs / C | panverbs / raw | goal (/ C) "
                + "| met | B/op | cpu.share |\n");
        sb.append("|---|---:|---:|---:|---:|---:|---:|---:|:---:|---:|---:|\n");
        for (Row row : ROWS) {
            double c = cpu(results.get(row.c()));
            double raw = cpu(results.get(row.raw()));
            double pv = cpu(results.get(row.panverbs()));
            double ratio = pv / c;
            sb.append(String.format(Locale.ROOT, "| `%s` | %.1f | %.1f | %.1f | %.2fx | %.2fx | %.2fx | ≤ %.2fx | %s "
                            + "| %.3f | %.2f |%n", row.panverbs(), c, raw, pv, raw / c, ratio, pv / raw, row.goal(),
                    Double.isNaN(ratio) ? "?" : ratio <= row.goal() ? "yes" : "no",
                    secondary(results.get(row.panverbs()), "gc.alloc.rate.norm"),
                    secondary(results.get(row.panverbs()), "cpu.share")));
        }
        return sb.toString();
    }
}
