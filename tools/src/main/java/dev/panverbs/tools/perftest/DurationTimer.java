package dev.panverbs.tools.perftest;

/**
 * The -D state machine perftest drives with SIGALRM ({@code catch_alarm}): START, after {@code margin} seconds
 * SAMPLE (stamp the start, sample /proc/stat), after {@code duration - 2*margin} seconds STOP_SAMPLE (stamp the
 * end, sample again), after another {@code margin} END. Here a daemon thread flips the states; the test loop
 * reads {@link #state()} (a volatile int) on every iteration, which costs about as much as perftest's check of a
 * global variable.
 */
final class DurationTimer {
    static final int START = 0;
    static final int SAMPLE = 1;
    static final int STOP_SAMPLE = 2;
    static final int END = 3;

    private volatile int state = START;
    private volatile long sampleStart;
    private volatile long sampleEnd;
    private volatile long[] cpuStart = new long[2];
    private volatile long[] cpuEnd = new long[2];
    private Thread thread;

    int state() {
        return state;
    }

    /** Start of the sample window ({@code tposted[0]}), in {@link System#nanoTime()} ticks. */
    long sampleStart() {
        return sampleStart;
    }

    /** End of the sample window ({@code tcompleted[0]}). */
    long sampleEnd() {
        return sampleEnd;
    }

    /** --cpu_util over the sample window. */
    double cpuUtil() {
        return Statistics.cpuUtil(cpuStart[0], cpuStart[1], cpuEnd[0], cpuEnd[1]);
    }

    /** Starts the clock now ({@code alarm(margin)}, or the SAMPLE state at once when the margin is 0). */
    void start(int durationSeconds, int marginSeconds) {
        thread = Thread.ofPlatform().daemon().name("perftest-duration").start(() -> {
            try {
                sleepSeconds(marginSeconds);
                cpuStart = Platform.cpuStat();
                sampleStart = System.nanoTime();
                state = SAMPLE;
                sleepSeconds(durationSeconds - 2L * marginSeconds);
                sampleEnd = System.nanoTime();
                cpuEnd = Platform.cpuStat();
                state = STOP_SAMPLE;
                sleepSeconds(marginSeconds);
                state = END;
            } catch (InterruptedException e) {
                state = END;
            }
        });
    }

    /** Ends the test early (error paths), so no loop keeps waiting for END. */
    void cancel() {
        if (thread != null) {
            thread.interrupt();
        }
        state = END;
    }

    private static void sleepSeconds(long s) throws InterruptedException {
        if (s > 0) {
            Thread.sleep(s * 1000);
        }
    }
}
