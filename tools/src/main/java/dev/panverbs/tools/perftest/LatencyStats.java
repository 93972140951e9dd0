package dev.panverbs.tools.perftest;

/**
 * One latency row, in microseconds: the fields of perftest's {@code REPORT_FMT_LAT}.
 *
 * @param iters   the -n value printed in the row
 * @param min     the smallest interval
 * @param max     perftest's t_max: the largest interval after the two largest are dropped
 * @param typical the median
 * @param p99     the 99th percentile, {@code delta[ceil(cnt * 0.99)]}
 * @param p999    the 99.9th percentile
 */
record LatencyStats(long iters, double min, double max, double typical, double average, double stdev, double p99,
                    double p999) {
}
