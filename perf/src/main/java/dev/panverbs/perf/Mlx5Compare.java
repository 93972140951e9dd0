package dev.panverbs.perf;

import static dev.panverbs.perf.CompareRuns.cpu;
import static dev.panverbs.perf.CompareRuns.err;
import static dev.panverbs.perf.CompareRuns.secondary;

import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.results.RunResult;

/**
 * {@code perf/run --compare-mlx5}: one JMH run of {@link Mlx5DirectBenchmark} (Java Direct WQE and direct CQE poll,
 * libmlx5's {@code ibv_post_send} and {@code ibv_wr_*} with {@code mlx5_poll_cq}, the hand-written C writer, the
 * device model alone) and the table of {@code perf/README.md}, in Markdown, with issue 10's goals. Scores are CPU
 * ns/op ({@link CpuTimeProfiler}). Per WR = the slope between the ops of 16 and of 64 WRs, (row64 - row16) / 48: the
 * op's fixed costs (the downcall, doorbell, fences, the poll of its one CQE) cancel, so no separately measured
 * whole-op baseline is subtracted. That slope contains the device model's work per WR (the same WQEs for every
 * path); the model's own slope, (model64 - model16) / 48, is shown and subtracted for the goals (a difference of
 * two slopes, not of two whole ops). Per completion = the marginal cost of 15 more completions,
 * ((row16Poll16 - model16Poll16) - (row16 - model16)) / 15 (the fixed cost of a poll call cancels). Extra arguments
 * are JMH's ({@code -wi}, {@code -i}, {@code -w}, {@code -r}, {@code -f}).
 *
 * <p>A second table takes the same slopes with the light device ({@code *Light16}/{@code *Light64}: the model parses
 * each WQE and writes its CQE but moves no data), where each path's posting work is most of the slope instead of a
 * small difference of two slopes that contain ~12.6 ns of model work each; the goals are read there too.
 */
public final class Mlx5Compare {
    private static final String[] PATHS = {"javaDirect", "mlx5PostSend", "mlx5Wr", "cDirect"};
    private static final String[] LABELS = {"Java `DirectSendQueue` / `DirectCompletionQueue`",
        "libmlx5 `ibv_post_send` + `mlx5_poll_cq`", "libmlx5 `ibv_wr_*` + `mlx5_poll_cq`",
        "hand-written C writer + CQE reader"};

    /** The long chain minus the short one: the WRs the per-WR slope divides by. */
    private static final int SPAN = Mlx5DirectBenchmark.LONG - Mlx5DirectBenchmark.N;

    private Mlx5Compare() {}

    public static void main(String[] args) throws Exception {
        Map<String, RunResult> byName = CompareRuns.run(args, "Mlx5DirectBenchmark\\.", 1);
        System.out.println();
        System.out.println(table(byName));
    }

    static String table(Map<String, RunResult> r) {
        double m16 = cpu(r.get("model16"));
        double m64 = cpu(r.get("model64"));
        double m16p16 = cpu(r.get("model16Poll16"));
        double mSlope = (m64 - m16) / SPAN;
        double mErr = Math.hypot(err(r.get("model64")), err(r.get("model16"))) / SPAN;
        StringBuilder sb = new StringBuilder();
        sb.append("commit ").append(System.getProperty("panverbs.commit", "(unknown)")).append(", ")
                .append(System.getProperty("java.vm.name")).append(' ').append(System.getProperty("java.version"))
                .append(", CPU ns/op (CpuTimeProfiler), one JMH run; op = 16 or 64 RDMA WRITEs (64 B, 1 SGE) + the "
                        + "device model + poll; per WR = slope between 16 and 64 WRs per op (± from the rows' "
                        + "99.9 % errors)\n\n");
        sb.append("| path | 16 WRs, 1 CQE: ns/op | 64 WRs, 1 CQE: ns/op | ns per WR (slope, incl. model) "
                + "| ns per WR (slope - model's slope) | 16 WRs, 16 CQEs: ns/op | ns per completion (marginal) "
                + "| B/op | cpu.share |\n");
        sb.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        double[] slope = new double[PATHS.length];
        double[] perWr = new double[PATHS.length];
        double[] perCqe = new double[PATHS.length];
        for (int i = 0; i < PATHS.length; i++) {
            RunResult a = r.get(PATHS[i] + "16");
            RunResult l = r.get(PATHS[i] + "64");
            RunResult c = r.get(PATHS[i] + "16Poll16");
            slope[i] = (cpu(l) - cpu(a)) / SPAN;
            double e = Math.hypot(err(l), err(a)) / SPAN;
            perWr[i] = slope[i] - mSlope;
            perCqe[i] = ((cpu(c) - m16p16) - (cpu(a) - m16)) / 15;
            sb.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f | %.2f ± %.2f | %.2f ± %.2f | %.1f | %.2f "
                    + "| %.3f / %.3f / %.3f | %.2f / %.2f / %.2f |%n", LABELS[i], cpu(a), cpu(l), slope[i], e,
                    perWr[i], Math.hypot(e, mErr), cpu(c), perCqe[i], alloc(a), alloc(l), alloc(c), share(a),
                    share(l), share(c)));
        }
        sb.append(String.format(Locale.ROOT, "| device model alone | %.1f | %.1f | %.2f ± %.2f | | %.1f | | "
                + "| %.2f / %.2f / %.2f |%n", m16, m64, mSlope, mErr, m16p16, share(r.get("model16")),
                share(r.get("model64")), share(r.get("model16Poll16"))));
        double[] light = new double[PATHS.length];
        double lm = (cpu(r.get("modelLight64")) - cpu(r.get("modelLight16"))) / SPAN;
        double lmErr = Math.hypot(err(r.get("modelLight64")), err(r.get("modelLight16"))) / SPAN;
        sb.append("\nThe light device (the model consumes each WQE and writes its CQE, moves no data):\n\n");
        sb.append("| path | 16 WRs: ns/op | 64 WRs: ns/op | ns per WR (slope) | ns per WR (slope - light model's) "
                + "|\n|---|---:|---:|---:|---:|\n");
        for (int i = 0; i < PATHS.length; i++) {
            RunResult a = r.get(PATHS[i] + "Light16");
            RunResult l = r.get(PATHS[i] + "Light64");
            double s = (cpu(l) - cpu(a)) / SPAN;
            double e = Math.hypot(err(l), err(a)) / SPAN;
            light[i] = s - lm;
            sb.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f | %.2f ± %.2f | %.2f ± %.2f |%n", LABELS[i],
                    cpu(a), cpu(l), s, e, light[i], Math.hypot(e, lmErr)));
        }
        RunResult b16 = r.get("javaBurstLight16");
        RunResult b64 = r.get("javaBurstLight64");
        double burst = (cpu(b64) - cpu(b16)) / SPAN - lm;
        if (b16 != null && b64 != null) { // an extra row: the same WRs as one rdmaWriteBurst (no goal of its own)
            double e = Math.hypot(err(b64), err(b16)) / SPAN;
            sb.append(String.format(Locale.ROOT, "| Java `DirectSendQueue.rdmaWriteBurst` (one call for the op's WRs) "
                    + "| %.1f | %.1f | %.2f ± %.2f | %.2f ± %.2f |%n", cpu(b16), cpu(b64), burst + lm, e, burst,
                    Math.hypot(e, lmErr)));
        }
        sb.append(String.format(Locale.ROOT, "| light model alone | %.1f | %.1f | %.2f ± %.2f | |%n",
                cpu(r.get("modelLight16")), cpu(r.get("modelLight64")), lm, lmErr));
        sb.append("\n| goal (issue 10) | ratio | met |\n|---|---:|:---:|\n");
        goal(sb, "Java / libmlx5 `ibv_post_send`, per WR, light device, ≤ 0.80x", light[0] / light[1], 0.8);
        goal(sb, "Java / hand-written C writer, per WR, light device, ≤ 1.20x", light[0] / light[3], 1.2);
        if (b16 != null && b64 != null) {
            sb.append(String.format(Locale.ROOT, "| Java burst / hand-written C writer, per WR, light device (no goal: "
                    + "the per-WR API's row above is the goal's) | %.2fx | |%n", burst / light[3]));
        }
        goal(sb, "Java / libmlx5 `ibv_post_send`, per WR, full model, ≤ 0.80x", perWr[0] / perWr[1], 0.8);
        goal(sb, "Java / hand-written C writer, per WR, full model, ≤ 1.20x", perWr[0] / perWr[3], 1.2);
        goal(sb, "Java direct CQE poll / `mlx5_poll_cq`, per completion, ≤ 0.80x", perCqe[0] / perCqe[1], 0.8);
        sb.append(String.format(Locale.ROOT, "| Java / libmlx5 `ibv_wr_*`, per WR (no goal) | %.2fx | |%n",
                perWr[0] / perWr[2]));
        sb.append(String.format(Locale.ROOT, "| Java / libmlx5 `ibv_post_send`, per WR incl. the model's work "
                + "(no goal) | %.2fx | |%n", slope[0] / slope[1]));
        sb.append(String.format(Locale.ROOT, "| Java / hand-written C writer, per WR incl. the model's work "
                + "(no goal) | %.2fx | |%n", slope[0] / slope[3]));
        sb.append(String.format(Locale.ROOT, "| Java / libmlx5 `ibv_post_send`, whole op of 16 / of 64 incl. "
                + "model (no goal) | %.2fx / %.2fx | |%n", cpu(r.get("javaDirect16")) / cpu(r.get("mlx5PostSend16")),
                cpu(r.get("javaDirect64")) / cpu(r.get("mlx5PostSend64"))));
        double alloc = Math.max(Math.max(alloc(r.get("javaDirect16")), alloc(r.get("javaDirect64"))),
                alloc(r.get("javaDirect16Poll16")));
        sb.append(String.format(Locale.ROOT, "| Java B/op, 0 | %.3f | %s |%n", alloc,
                Double.isNaN(alloc) ? "?" : alloc < 0.5 ? "yes" : "no"));
        return sb.toString();
    }

    private static void goal(StringBuilder sb, String what, double ratio, double goal) {
        // a negative ratio means a row cost less than the model it subtracts: noise (a loaded machine), no verdict
        sb.append(String.format(Locale.ROOT, "| %s | %.2fx | %s |%n", what, ratio,
                Double.isNaN(ratio) || ratio < 0 ? "? (noise: rerun idle)" : ratio <= goal ? "yes" : "no"));
    }

    private static double alloc(RunResult r) {
        return secondary(r, "gc.alloc.rate.norm");
    }

    private static double share(RunResult r) {
        return secondary(r, "cpu.share");
    }
}
