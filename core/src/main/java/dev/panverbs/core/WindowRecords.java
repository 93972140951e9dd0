package dev.panverbs.core;

import java.util.Set;

/**
 * What a staged memory-window operation will do to its {@link MemoryWindow} once the provider has accepted it: a bind
 * ({@code IBV_WR_BIND_MW}: the new rkey, region, range and rights) or a local invalidation ({@code IBV_WR_LOCAL_INV}).
 * Parallel arrays sized once to the chain's or batch's capacity, shared by {@link ChainWindowOps} (classic chain) and
 * {@link WindowOps} ({@code ibv_wr_*} batch); nothing is allocated per operation.
 */
final class WindowRecords {
    private final MemoryWindow[] windows;
    /** The region bound, or null for an invalidation. */
    private final MemoryRegion[] regions;
    private final int[] rkeys;
    private final long[] addresses;
    private final long[] lengths;
    private final Object[] rights;
    private final long[] wrIds;

    WindowRecords(int capacity) {
        windows = new MemoryWindow[capacity];
        regions = new MemoryRegion[capacity];
        rkeys = new int[capacity];
        addresses = new long[capacity];
        lengths = new long[capacity];
        rights = new Object[capacity];
        wrIds = new long[capacity];
    }

    void bind(int i, long wrId, MemoryWindow mw, int rkey, MemoryRegion mr, long address, long length,
              Set<Access> access) {
        windows[i] = mw;
        regions[i] = mr;
        rkeys[i] = rkey;
        addresses[i] = address;
        lengths[i] = length;
        rights[i] = access;
        wrIds[i] = wrId;
    }

    void invalidate(int i, MemoryWindow mw, int rkey) {
        windows[i] = mw;
        regions[i] = null;
        rights[i] = null;
        rkeys[i] = rkey;
    }

    MemoryWindow window(int i) {
        return windows[i];
    }

    boolean isBind(int i) {
        return regions[i] != null;
    }

    int rkey(int i) {
        return rkeys[i];
    }

    /** The provider accepted operation {@code i}: its window now holds what it posted. */
    @SuppressWarnings("unchecked")
    void apply(int i, QueuePair qp) {
        MemoryWindow mw = windows[i];
        if (regions[i] == null) {
            mw.invalidatedLocally();
        } else {
            mw.posted(qp, wrIds[i], rkeys[i], regions[i], addresses[i], lengths[i], (Set<Access>) rights[i]);
        }
    }

    void move(int from, int to) {
        windows[to] = windows[from];
        regions[to] = regions[from];
        rkeys[to] = rkeys[from];
        addresses[to] = addresses[from];
        lengths[to] = lengths[from];
        rights[to] = rights[from];
        wrIds[to] = wrIds[from];
        forget(from);
    }

    /** Drops the references of operation {@code i}, so a forgotten window or region is not kept reachable. */
    void forget(int i) {
        windows[i] = null;
        regions[i] = null;
        rights[i] = null;
    }
}
