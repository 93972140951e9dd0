package dev.panverbs.core;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicReference;

/** The tie of a {@link MemoryRegion} to the arena of its memory: the arena's close deregisters the MR first. */
final class ArenaTie {
    private ArenaTie() {
    }

    /**
     * Attaches to {@code arena} the cleanup that deregisters whatever {@code ref} holds when the arena closes (before it
     * frees the memory): the {@code MemorySegment.reinterpret(arena, cleanup)} pattern. Called before the verb, so a
     * confined arena of another thread (the JDK's {@link WrongThreadException}) refuses with nothing registered.
     */
    static void tieTo(String verb, Arena arena, MemorySegment segment, AtomicReference<MemoryRegion> ref) {
        try {
            MemorySegment.ofAddress(segment.address()).reinterpret(arena, ignored -> {
                MemoryRegion r = ref.getAndSet(null);
                if (r != null) {
                    // not close(): its in-flight refusal cannot stop the arena from freeing the memory (it
                    // would only abort the arena's cleanup, leaking it with the MR still registered).
                    // Deregistering first makes the NIC fail the outstanding WRs instead of writing there.
                    // A window bound here would keep the memory reachable from the network (and the kernel
                    // refuses the deregistration while one is bound): deallocated first.
                    java.util.List<AutoCloseable> order = new java.util.ArrayList<>();
                    for (MemoryWindow w : r.windows) {
                        order.add(w::forceClose); // not close(): an outstanding bind must not keep the memory reachable
                    }
                    for (dev.panverbs.core.internal.RegionHolder h : r.holders) {
                        order.add(h::forceRelease); // an mkey whose layout names it: destroyed, whatever names it
                    }
                    order.add(r.resource);
                    dev.panverbs.core.internal.CloseHelper.closeAll(order);
                }
            });
        } catch (WrongThreadException e) {
            throw new WrongThreadException(verb + ": the arena that deregisters the region when it closes is confined "
                    + "to another thread (Arena.ofConfined), and only its owner thread may attach that cleanup; "
                    + "register from the arena's owner thread, or allocate the memory from a shared arena "
                    + "(Arena.ofShared()). Nothing was registered", e);
        }
    }
}
