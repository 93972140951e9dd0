package dev.panverbs.core.cm;

import dev.panverbs.core.VerbsException;
import java.time.Duration;

/**
 * No event for the ID arrived within the caller's timeout: a peer that never answers, or a step whose own timeout
 * (the CM's retries) is longer than the caller's. The ID is left as it was; close it to abandon the attempt (the
 * CM stops retrying when the ID is destroyed). Java-only: {@code rdma_get_cm_event(3)} itself blocks without a
 * bound.
 */
public final class CmTimeoutException extends VerbsException {
    private static final long serialVersionUID = 1L;

    private final CmEventType expected;

    CmTimeoutException(String call, CmEventType expected, Duration timeout) {
        super(call, "no " + (expected == null ? "rdma_cm" : expected.toString()) + " event within "
                + dev.panverbs.core.internal.Units.clampedMillis(timeout) + " ms");
        this.expected = expected;
    }

    /** The event that was awaited; {@code null} when any event was ({@link EventChannel#await(Duration)}). */
    public CmEventType expected() {
        return expected;
    }
}
