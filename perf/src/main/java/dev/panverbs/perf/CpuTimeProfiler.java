package dev.panverbs.perf;

import java.lang.management.ManagementFactory;
import java.util.Collection;
import java.util.List;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * JMH profiler ({@code -prof dev.panverbs.perf.CpuTimeProfiler}) reporting the CPU time the benchmark JVM consumed
 * per operation ({@code cpu.time.norm}, ns/op) and the share of a CPU it got ({@code cpu.share}: CPU time over wall
 * time and threads). On a shared machine, wall-clock ns/op includes the time the thread waited for a core; CPU time
 * per op does not, so it is the steadier number when {@code cpu.share} is well below 1. It counts the whole process
 * (JIT and GC threads too), which after warm-up adds little.
 */
public final class CpuTimeProfiler implements InternalProfiler {
    private final com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private long cpuStart;
    private long wallStart;

    @Override
    public String getDescription() {
        return "process CPU time per operation (robust to waiting for a core)";
    }

    @Override
    public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
        wallStart = System.nanoTime();
        cpuStart = os.getProcessCpuTime();
    }

    @Override
    public Collection<? extends Result> afterIteration(BenchmarkParams benchmarkParams,
                                                       IterationParams iterationParams, IterationResult result) {
        long cpu = os.getProcessCpuTime() - cpuStart;
        long wall = System.nanoTime() - wallStart;
        long ops = result.getMetadata().getAllOps();
        int threads = benchmarkParams.getThreads();
        double perOp = ops == 0 ? Double.NaN : (double) cpu / ops;
        double share = wall == 0 ? Double.NaN : (double) cpu / wall / threads;
        return List.of(new ScalarResult("cpu.time.norm", perOp, "ns/op", AggregationPolicy.AVG),
                new ScalarResult("cpu.share", share, "cpus", AggregationPolicy.AVG));
    }
}
