package dev.panverbs.tools.perftest;

/**
 * The test cannot go on. The message holds the lines to print on stderr (perftest's wording first, then what to
 * check); the tool exits with {@link #exitStatus()} (1 unless perftest's {@code main} returns another status for this
 * failure) and prints a stack trace only with --debug.
 */
final class RunFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** What perftest 6.06's send_bw, send_lat, read_lat (and read_bw with -a) return when a run_iter fails. */
    static final int RUN_ITER_FAILED = 17;

    private final int exitStatus;

    RunFailure(String message) {
        this(message, null, 1);
    }

    RunFailure(String message, Throwable cause) {
        this(message, cause, 1);
    }

    RunFailure(String message, Throwable cause, int exitStatus) {
        super(message, cause);
        this.exitStatus = exitStatus;
    }

    /** The process's exit status. */
    int exitStatus() {
        return exitStatus;
    }
}
