package dev.panverbs.core.internal;

import java.lang.foreign.MemorySegment;

/**
 * How an adopted handle is destroyed: by the verb family that created it ({@code ibv_destroy_*},
 * {@code rdma_destroy_*}). A type of its own, not nested in {@link NativeHandles}, so that {@code QueuePair}, which
 * keeps one, does not depend on the class that depends on it.
 */
@FunctionalInterface
public interface Destroyer {
    /** Destroys {@code handle}: 0, or the errno value the failed verb reported. */
    int destroy(MemorySegment handle);
}
