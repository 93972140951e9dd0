package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Result arithmetic against perftest 6.06's formulas evaluated in C on the same timestamps (a C program applying
 * {@code print_report_bw}'s and {@code print_report_lat}'s arithmetic, at 1000 MHz so one cycle is one
 * nanosecond); the expected values are its {@code %.17g} output, so the comparison is exact.
 */
class StatisticsTest {

    static long[] posted10() {
        long[] tp = new long[10];
        for (int i = 0; i < 10; i++) {
            tp[i] = 1000000 + i * 1537L + (i * i * 13) % 97;
        }
        return tp;
    }

    static long[] completed10() {
        long[] tc = new long[10];
        tc[4] = 1000000 + 9800;
        tc[9] = 1000000 + 17311;
        return tc;
    }

    @Test
    void peakAverageAndRateWithCqModeration() {
        BwReport r = Statistics.bw(4096, 10, 1, 1, 5, false, false, false, posted10(), completed10());
        assertThat(r.bwPeak()).isEqualTo(2256.643558636626);
        assertThat(r.bwAvg()).isEqualTo(2256.5131996996129);
        assertThat(r.msgRate()).isEqualTo(0.57766737912310095);
        assertThat(r.iters()).isEqualTo(10);
    }

    @Test
    void gigabits() {
        BwReport r = Statistics.bw(4096, 10, 1, 1, 5, false, false, true, posted10(), completed10());
        assertThat(r.bwPeak()).isEqualTo(18.930098209127671);
        assertThat(r.bwAvg()).isEqualTo(18.92900467910577);
    }

    @Test
    void twoQpsCountIterationsTimesQps() {
        BwReport r = Statistics.bw(65536, 5, 2, 1, 5, false, false, false, posted10(), completed10());
        assertThat(r.bwPeak()).isEqualTo(36106.296938186017);
        assertThat(r.bwAvg()).isEqualTo(36104.211195193806);
        assertThat(r.iters()).isEqualTo(10);
    }

    @Test
    void noPeakUsesTheFirstAndLastStamp() {
        long[] tp = new long[1];
        long[] tc = new long[1];
        tp[0] = 5000;
        tc[0] = 5000 + 123456789;
        BwReport r = Statistics.bw(65536, 200, 1, 1, 1, true, false, false, tp, tc);
        assertThat(r.bwPeak()).isZero();
        assertThat(r.bwAvg()).isEqualTo(101.250000921375);
        assertThat(r.msgRate()).isEqualTo(0.0016200000147420001);
    }

    @Test
    void postList() {
        long[] tp = new long[12];
        long[] tc = new long[12];
        for (int i = 0; i < 12; i++) {
            tp[i] = 777 + i * 1000L + (i % 3) * 211;
        }
        tc[3] = 9000;
        tc[7] = 13001;
        tc[11] = 19055;
        BwReport r = Statistics.bw(64, 12, 1, 4, 4, false, false, false, tp, tc);
        assertThat(r.bwPeak()).isEqualTo(40.075611457649373);
        assertThat(r.bwAvg()).isEqualTo(40.071226337673707);
        assertThat(r.msgRate()).isEqualTo(0.65652697231644597);
    }

    static long[] latencyStamps(int n, java.util.function.IntToLongFunction step) {
        long[] t = new long[n];
        long acc = 0;
        for (int i = 0; i < n; i++) {
            t[i] = acc;
            acc += step.applyAsLong(i);
        }
        return t;
    }

    static void assertLat(LatencyStats s, double... v) {
        assertThat(new double[] {s.min(), s.max(), s.typical(), s.average(), s.stdev(), s.p99(), s.p999()})
                .containsExactly(v);
    }

    @Test
    void latencyDropsTheTwoLargestAndHalvesRoundTrips() {
        long[] lt = latencyStamps(25, i -> 3000 + (i * 7919L) % 1700 + (i == 7 ? 90000 : 0));
        assertLat(Statistics.latency(lt, 25, false, false, false, null),
                1.5, 2.3285, 1.9410000000000001, 1.9285000000000003, 0, 2.3285, 2.3285);
        assertLat(Statistics.latency(lt, 25, true, false, false, null),
                3, 4.657, 3.8820000000000001, 3.8570000000000007, 0, 4.657, 4.657);
        assertLat(Statistics.latency(lt, 5, false, false, false, null),
                1.5, 2.0594999999999999, 1.6345000000000001, 1.6345000000000001, 0, 2.0594999999999999,
                2.0594999999999999);
        assertLat(Statistics.latency(lt, 6, false, false, false, null),
                1.5, 2.0594999999999999, 1.7689999999999999, 1.7690000000000001, 0, 2.0594999999999999,
                2.0594999999999999);
    }

    @Test
    void latencyStandardDeviationTruncatesLikePerftest() {
        long[] l2 = latencyStamps(40, i -> 2000 + (i * 104729L) % 38000);
        assertLat(Statistics.latency(l2, 40, false, false, false, null),
                1, 19.028500000000001, 9.7575000000000003, 9.8805270270270267, 4.8379133317377034,
                19.028500000000001, 19.028500000000001);
        assertLat(Statistics.latency(l2, 40, true, false, false, null),
                2, 38.057000000000002, 19.515000000000001, 19.761054054054053, 10.155547013092654,
                38.057000000000002, 38.057000000000002);
    }

    @Test
    void histogramListings() {
        long[] t = latencyStamps(6, i -> 1000L * (6 - i));
        StringBuilder b = new StringBuilder();
        Statistics.latency(t, 6, false, true, true, b);
        // -U: the 5 intervals as measured; -H: sorted, the two largest dropped; %g in microseconds
        assertThat(b.toString()).isEqualTo("#, usec\n1, 3\n2, 2.5\n3, 2\n4, 1.5\n5, 1\n#, usec\n1, 1\n2, 1.5\n3, 2\n");
    }

    @Test
    void aDeviationAbove46msMakesTheStandardDeviationMinusNanAsOnX86() {
        // ping-pongs of ~10 us with one 130 ms stall, as TCG produces; the C tool printed "-nan" for such a run
        long[] t = latencyStamps(50, i -> i == 20 ? 260_000_000L : i == 30 ? 250_000_000L : i == 40 ? 200_000_000L
                : 20_000);
        LatencyStats s = Statistics.latency(t, 50, false, false, false, null);
        assertThat(Double.isNaN(s.stdev())).isTrue();
        assertThat(CFormat.fixedLeft(s.stdev(), 7, 2)).isEqualTo("-nan   ");
        assertThat(Statistics.cvttsd2si(3e9)).isEqualTo(Integer.MIN_VALUE);
        assertThat(Statistics.cvttsd2si(-7.9)).isEqualTo(-7);
    }
}
