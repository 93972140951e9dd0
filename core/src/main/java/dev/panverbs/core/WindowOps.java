package dev.panverbs.core;

import java.util.Set;

/**
 * The memory-window binds and invalidations of one open {@link PostBatch}, applied to the {@link MemoryWindow}s only
 * when the batch is submitted (an aborted batch changes no window). Sized once to the batch's capacity, on the first
 * window operation of the QP; nothing is allocated per operation.
 */
final class WindowOps {
    private final MemoryWindow[] windows;
    /** The region bound, or null for an invalidation. */
    private final MemoryRegion[] regions;
    private final int[] rkeys;
    private final long[] addresses;
    private final long[] lengths;
    private final Object[] rights;
    private final long[] wrIds;
    private final QueuePair qp;
    private int n;

    WindowOps(QueuePair qp, int capacity) {
        this.qp = qp;
        wrIds = new long[capacity];
        windows = new MemoryWindow[capacity];
        regions = new MemoryRegion[capacity];
        rkeys = new int[capacity];
        addresses = new long[capacity];
        lengths = new long[capacity];
        rights = new Object[capacity];
    }

    void bind(long wrId, MemoryWindow mw, int rkey, MemoryRegion mr, long address, long length, Set<Access> access) {
        int i = n++;
        wrIds[i] = wrId;
        windows[i] = mw;
        regions[i] = mr;
        rkeys[i] = rkey;
        addresses[i] = address;
        lengths[i] = length;
        rights[i] = access;
    }

    void invalidate(MemoryWindow mw) {
        int i = n++;
        windows[i] = mw;
        regions[i] = null;
        rights[i] = null;
    }

    /** The batch was submitted: the windows now hold what it posted, in order. */
    @SuppressWarnings("unchecked")
    void apply() {
        for (int i = 0; i < n; i++) {
            MemoryWindow mw = windows[i];
            if (regions[i] == null) {
                mw.invalidatedLocally();
            } else {
                mw.posted(qp, wrIds[i], rkeys[i], regions[i], addresses[i], lengths[i], (Set<Access>) rights[i]);
            }
        }
        clear();
    }

    /** The batch was aborted (or applied): forget it. */
    void clear() {
        for (int i = 0; i < n; i++) {
            windows[i] = null;
            regions[i] = null;
            rights[i] = null;
        }
        n = 0;
    }
}
