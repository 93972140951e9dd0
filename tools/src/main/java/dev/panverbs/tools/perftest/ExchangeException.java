package dev.panverbs.tools.perftest;

/**
 * The out-of-band TCP exchange with the peer failed: it closed, stalled past the timeout, or sent something
 * perftest never sends. The message names the exchange step and, when it can, the likely cause (other test,
 * other -q/-x/-a/-n on the other side). Expected failures: no stack trace is printed for it unless --debug.
 */
final class ExchangeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ExchangeException(String message) {
        super(message);
    }

    ExchangeException(String message, Throwable cause) {
        super(message, cause);
    }
}
