package dev.panverbs.core;

import dev.panverbs.core.internal.CloseHelper;
import dev.panverbs.core.internal.RegionHolder;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The tie of a {@link MemoryRegion} to the arena of its memory: the arena's close deregisters the MR first.
 *
 * <p>The tie cannot keep the memory: the arena's cleanup actions run newest first, the one that frees the memory
 * last, and a failing action does not stop the others: {@code Arena.close()} runs them all and rethrows the first
 * failure (JDK 25's {@code MemorySessionImpl.ResourceList}; the Java 22 API says nothing either way;
 * {@code ArenaCleanupJdkTest}). So the tie's action returns, or throws, only once the region is deregistered or its
 * deregistration was refused by the kernel (then reported, the memory freed anyway): it waits for what another thread
 * is doing to the region or its windows rather than give up.
 */
final class ArenaTie {
    private ArenaTie() {
    }

    /**
     * The arena is closing: deregisters {@code r} (null: nothing to do) whatever references it. Not close(): its
     * refusal while work requests reference the region would not stop the JDK from freeing the memory; deregistering
     * first makes the NIC fail the outstanding WRs instead of writing there. A window bound here would keep the memory
     * reachable from the network (and rxe refuses the deregistration while one is bound): deallocated first, after
     * any provider call reading it on another thread returned ({@link MemoryWindow#forceClose}).
     */
    private static void deregister(MemoryRegion r) {
        if (r == null) {
            return;
        }
        List<AutoCloseable> order = new ArrayList<>();
        for (MemoryWindow w : r.windows) {
            order.add(w::forceClose); // not close(): an outstanding bind must not keep the memory reachable
        }
        for (RegionHolder h : r.holders) {
            if (h.holds(r)) { // an mkey whose layout may still name it: destroyed, whatever names it
                order.add(h::forceRelease);
            } // else a stale entry (an earlier layout, confirmed replaced): holds() pruned it
        }
        order.add(() -> deregisterNow(r));
        CloseHelper.closeAll(order);
    }

    /**
     * Closes the region's resource; waits for a close on another thread ({@code close()}, a cascade, a rereg) to end
     * its verb; retries a deregistration that failed, now or earlier (a cascade's while a window was still bound):
     * throws only if the region may still be registered.
     */
    private static void deregisterNow(MemoryRegion r) {
        RuntimeException failed = null;
        try {
            r.resource.close();
        } catch (RuntimeException e) {
            failed = e;
        }
        r.resource.awaitClosedUnbounded(); // however long: the JDK frees the memory when this returns
        try {
            r.registration.retryFailed();
        } catch (RuntimeException e) {
            if (failed != null) {
                e.addSuppressed(failed);
            }
            throw e;
        }
    }

    /**
     * Attaches to {@code arena} the cleanup that deregisters whatever {@code ref} holds when the arena closes (before it
     * frees the memory): the {@code MemorySegment.reinterpret(arena, cleanup)} pattern. Called before the verb, so a
     * confined arena of another thread (the JDK's {@link WrongThreadException}) refuses with nothing registered.
     */
    static void tieTo(String verb, Arena arena, MemorySegment segment, AtomicReference<MemoryRegion> ref) {
        try {
            MemorySegment.ofAddress(segment.address()).reinterpret(arena, ignored -> deregister(ref.getAndSet(null)));
        } catch (WrongThreadException e) {
            throw new WrongThreadException(verb + ": the arena that deregisters the region when it closes is confined "
                    + "to another thread (Arena.ofConfined), and only its owner thread may attach that cleanup; "
                    + "register from the arena's owner thread, or allocate the memory from a shared arena "
                    + "(Arena.ofShared()). Nothing was registered", e);
        }
    }
}
