package dev.panverbs.core.internal;

import dev.panverbs.core.MemoryRegion;

/**
 * Something that keeps memory regions registered beyond the work requests that name them: an mlx5 indirect mkey
 * whose UMR layout translates into them ({@code dev.panverbs.core.mlx5.IndirectMkey}). A region's {@code close()}
 * and {@code rereg().apply()} refuse while one of its holders {@link #holds} it; its arena tie calls
 * {@link #forceRelease()} first (before {@code ibv_dereg_mr}). Java-only: C leaves this bookkeeping to the
 * application.
 */
public interface RegionHolder {

    /**
     * Whether the device may still reach {@code region} through this holder: its current layout names it, or an
     * earlier layout did and a work request naming the holder may still be in flight. Called by the region's close
     * after its not-open snapshot was published and the closer's barrier ran (the handshake), so a holder added by a
     * racing configuration either is seen here or sees the closing snapshot and aborts.
     */
    boolean holds(MemoryRegion region);

    /**
     * The region's arena is closing (its memory is about to be freed): makes the region unreachable through this
     * holder at once, whatever work requests name it (the NIC then fails them with a protection error).
     */
    void forceRelease();
}
