package dev.panverbs.tools.perftest;

/**
 * The test cannot go on. The message holds the lines to print on stderr (perftest's wording first, then what to
 * check); the tool exits with status 1 and prints a stack trace only with --debug.
 */
final class RunFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RunFailure(String message) {
        super(message);
    }

    RunFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
