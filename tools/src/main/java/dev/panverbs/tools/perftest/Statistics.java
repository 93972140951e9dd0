package dev.panverbs.tools.perftest;

import java.util.Arrays;

/**
 * perftest's result arithmetic ({@code print_report_bw}, {@code print_report_lat},
 * {@code print_report_lat_duration}) with perftest's integer truncations kept, so that equal timestamps give
 * equal numbers.
 *
 * <p>Time base: perftest counts TSC cycles and divides by the CPU frequency it measured; panverbs stamps with
 * {@link System#nanoTime()}, which is a clock of exactly 10^9 ticks per second, so "cycles per second" is 1e9 and
 * "cycles per microsecond" is 1000, and no frequency measurement or warning is involved.
 */
final class Statistics {
    private Statistics() { }

    /** Ticks per second of {@link System#nanoTime()} (perftest's {@code cpu_mhz * 1e6}). */
    static final long TICKS_PER_SECOND = 1_000_000_000L;
    /** Ticks per microsecond (perftest's {@code cpu_mhz}). */
    static final double TICKS_PER_USEC = 1000.0;

    /** MB/sec in perftest means MiB/s: 2^20. --report_gbits uses 10^9 bits = 125000000 bytes. */
    static long formatFactor(boolean reportGbits) {
        return reportGbits ? 125_000_000L : 0x100000L;
    }

    /**
     * The BW row for one run.
     *
     * @param size       message size
     * @param iters      iterations per QP (-n), or in -D mode the messages completed during the sample window
     * @param duration   true in -D mode (then {@code iters} is already the total over all QPs)
     * @param tposted    post time of each message (index = global post count), or [sample start] with noPeak
     * @param tcompleted completion time per completed message index, or [end] with noPeak
     */
    static BwReport bw(long size, long iters, int numQps, int postList, int cqMod, boolean noPeak,
                       boolean duration, boolean reportGbits, long[] tposted, long[] tcompleted) {
        long n = duration ? iters : iters * numQps;
        // cycles_t is unsigned: the start value is usually 0 - tposted[0] (tcompleted[0] is only stamped when the
        // first WR is signaled), i.e. "infinity", so every comparison and division here is unsigned
        long optDelta = tcompleted[0] - tposted[0];
        if (!noPeak) {
            // best (lowest) time per message over every window that starts at a post and ends at a signaled
            // completion, integer division as perftest does on u64 cycles
            for (long i = 0; i < n; i += postList) {
                for (long j = roundUp(i + 1, cqMod) - 1; j < n; j += cqMod) {
                    long t = Long.divideUnsigned(tcompleted[(int) j] - tposted[(int) i], j - i + 1);
                    if (Long.compareUnsigned(t, optDelta) < 0) {
                        optDelta = t;
                    }
                }
                if (n % cqMod != 0) { // the last WR is signaled too
                    long j = n - 1;
                    long t = Long.divideUnsigned(tcompleted[(int) j] - tposted[(int) i], j - i + 1);
                    if (Long.compareUnsigned(t, optDelta) < 0) {
                        optDelta = t;
                    }
                }
            }
        }
        long factor = formatFactor(reportGbits);
        int last = noPeak ? 0 : (int) (n - 1);
        double sumOfTestCycles = (double) (tcompleted[last] - tposted[0]);
        double cps = TICKS_PER_SECOND;
        double bwAvg = ((double) size * n * cps) / (sumOfTestCycles * factor);
        double msgRate = ((double) n * cps) / (sumOfTestCycles * 1_000_000);
        long peakUp = noPeak ? 0 : size * TICKS_PER_SECOND; // u64 products in perftest
        long peakDown = optDelta * factor;
        double bwPeak = unsignedToDouble(peakUp) / unsignedToDouble(peakDown);
        return new BwReport(size, n, bwPeak, bwAvg, msgRate);
    }

    private static double unsignedToDouble(long v) {
        return v >= 0 ? (double) v : ((double) (v >>> 1)) * 2.0 + (v & 1);
    }

    private static long roundUp(long value, long alignment) {
        return value % alignment == 0 ? value : alignment * (value / alignment + 1);
    }

    /**
     * Latency statistics over {@code iters} post timestamps of a ping-pong ({@code print_report_lat}): the
     * {@code iters-1} intervals between consecutive posts are round trips (one for read, halved for write and
     * send), sorted, the two largest dropped. "t_max" is perftest's {@code delta[measure_cnt]}, the largest kept
     * neighbour of the dropped ones, and the standard deviation truncates to int as perftest does.
     *
     * @param histogram receives perftest's -U (before sorting) and -H (after) listings, or null
     */
    static LatencyStats latency(long[] tposted, int iters, boolean read, boolean unsorted, boolean histogram,
                                StringBuilder listing) {
        int measureCnt = iters - 1;
        double quot = TICKS_PER_USEC * (read ? 1 : 2);
        long[] delta = new long[measureCnt];
        for (int i = 0; i < measureCnt; i++) {
            delta[i] = tposted[i + 1] - tposted[i];
        }
        if (unsorted && listing != null) {
            listing.append("#, usec\n");
            for (int i = 0; i < measureCnt; i++) {
                listing.append(i + 1).append(", ").append(CFormat.g(delta[i] / quot)).append('\n');
            }
        }
        Arrays.sort(delta);
        measureCnt -= 2;
        long median = ((measureCnt - 1) % 2 != 0) ? (delta[measureCnt / 2] + delta[measureCnt / 2 - 1]) / 2
                : delta[measureCnt / 2];
        double averageSum = 0;
        for (int i = 0; i < measureCnt; i++) {
            averageSum += delta[i] / quot;
        }
        double average = averageSum / measureCnt;
        double stdevSum = 0;
        for (int i = 0; i < measureCnt; i++) {
            int tempVar = cvttsd2si(average - delta[i] / quot);
            int powVar = cvttsd2si(Math.pow(tempVar, 2));
            stdevSum += powVar;
        }
        if (histogram && listing != null) {
            listing.append("#, usec\n");
            for (int i = 0; i < measureCnt; i++) {
                listing.append(i + 1).append(", ").append(CFormat.g(delta[i] / quot)).append('\n');
            }
        }
        int i99 = (int) Math.ceil(measureCnt * 0.99);
        int i999 = (int) Math.ceil(measureCnt * 0.999);
        double variance = stdevSum / measureCnt;
        double stdev = variance < 0 ? X86_DEFAULT_NAN : Math.sqrt(variance);
        return new LatencyStats(iters, delta[0] / quot, delta[measureCnt] / quot, median / quot, average, stdev,
                delta[i99] / quot, delta[i999] / quot);
    }

    /**
     * C's double-to-int conversion as x86-64 executes it ({@code cvttsd2si}): out of range (and NaN) gives
     * INT_MIN, where Java saturates. perftest squares deviations into an int, so one deviation above ~46 ms
     * (46341^2 > INT_MAX) turns its variance negative and its t_stdev into "-nan"; the clone prints the same.
     */
    static int cvttsd2si(double d) {
        return d >= -2147483648.0 && d < 2147483648.0 ? (int) d : Integer.MIN_VALUE;
    }

    /** The NaN x86-64 produces for sqrt of a negative number: sign bit set, printed "-nan" by glibc. */
    static final double X86_DEFAULT_NAN = Double.longBitsToDouble(0xfff8000000000000L);

    /** -D latency: average one-way (or read round-trip) time and transactions per second. */
    static double[] latencyDuration(long sampleTicks, long iters, boolean read) {
        double mhz = TICKS_PER_USEC;
        int rtt = read ? 1 : 2;
        double latency = ((sampleTicks / mhz) / rtt) / iters;
        double tps = iters / (sampleTicks / (mhz * 1_000_000));
        return new double[] {latency, tps};
    }

    /** {@code calc_cpu_util}: user time share between two /proc/stat samples, in percent. */
    static double cpuUtil(long user0, long idle0, long user1, long idle1) {
        long ustat = user1 - user0;
        long idle = idle1 - idle0;
        return (ustat + idle) != 0 ? ((float) ustat / (ustat + idle)) * 100 : 0;
    }
}
