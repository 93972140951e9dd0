package dev.panverbs.core;

import dev.panverbs.bindings.ibverbs.LibIbverbs;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.Units;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToIntFunction;

/**
 * A {@link MemoryRegion}'s registration: what deregistration must undo besides the verb: the owned arena (freed
 * only after a successful {@code ibv_dereg_mr}: if deregistration fails the NIC may still write, so the memory is
 * leaked rather than freed) and the caller-arena tie. Runs from {@link MemoryRegion#close()}, a parent's cascade and the
 * arena tie ({@link ArenaTie}) alike. Java-only.
 */
final class RegionRegistration {
    volatile Arena owned;
    /**
     * What the tied arena's cleanup deregisters (null inside: nothing); replaced when a rereg moves the MR to
     * memory of another arena, so that the old arena's close no longer reaches it.
     */
    volatile AtomicReference<MemoryRegion> tie = new AtomicReference<>();
    MemoryRegion region;
    /** {@code ibv_dereg_mr}, or another library's destroy verb for a wrapped MR. */
    ToIntFunction<MemorySegment> dereg = LibIbverbs::ibv_dereg_mr;

    RegionRegistration(Arena owned) {
        this.owned = owned;
    }

    /** A handle whose {@code ibv_dereg_mr} failed: the tie stays, the arena's close retries it. */
    volatile MemorySegment failed;

    void deregister(MemorySegment mr) {
        MemoryRegion r = region;
        if (r != null) { // posts from now on refuse the key (a cascade or the arena tie, not close())
            r.snapshot = r.snapshot.closed();
        }
        boolean done = false;
        try {
            int rc = dereg.applyAsInt(mr);
            if (rc != 0) {
                throw Errors.failure(Errors.call("ibv_dereg_mr", "mr", Units.hex(mr.address())), rc,
                        "the registered memory is not freed (the NIC may still use it)");
            }
            done = true;
        } finally {
            if (!done) { // only once the call returned: a tie retrying it meanwhile would deregister it twice
                failed = mr;
            }
        }
        failed = null;
        tie.set(null); // deregistered: the caller's arena no longer needs to reach this MR
        Arena a = owned;
        owned = null;
        if (a != null) {
            a.close();
        }
    }

    /** The tied arena is closing: a deregistration that failed earlier is retried, the memory is freed next. */
    void retryFailed() {
        MemorySegment mr = failed;
        if (mr != null) {
            int rc = dereg.applyAsInt(mr);
            if (rc != 0) {
                throw Errors.failure(Errors.call("ibv_dereg_mr", "mr", Units.hex(mr.address())), rc,
                        "retried as its arena closed; the JDK frees the memory now whatever this says");
            }
            failed = null;
        }
    }
}
