package dev.panverbs.core;

import java.util.Set;

/**
 * The memory-window binds and local invalidations staged in one QP's classic {@link SendRequests} chain
 * ({@code IBV_WR_BIND_MW}, {@code IBV_WR_LOCAL_INV} of a window through {@code ibv_post_send(3)}), applied to their
 * {@link MemoryWindow}s for exactly the WRs the provider accepted. While a chain holds window operations it posts
 * through this target, which wraps the send queue's own post; once the chain is fully posted it posts straight to the
 * queue again, so chains without windows never pass here. Sized once to the chain's capacity; nothing is allocated
 * per operation.
 */
final class ChainWindowOps extends PostTarget {
    final SendQueue queue;
    /** The chain index of each operation, strictly increasing. */
    private final int[] index;
    private final MemoryWindow[] windows;
    /** The region bound, or null for an invalidation. */
    private final MemoryRegion[] regions;
    private final int[] rkeys;
    private final long[] addresses;
    private final long[] lengths;
    private final Object[] rights;
    /** The window's native handle (a bind) written into the WR: the applied WR must still carry it. */
    private final long[] handles;
    private final long[] wrIds;
    private int n;

    ChainWindowOps(SendQueue queue, int capacity) {
        this.queue = queue;
        index = new int[capacity];
        windows = new MemoryWindow[capacity];
        regions = new MemoryRegion[capacity];
        rkeys = new int[capacity];
        addresses = new long[capacity];
        lengths = new long[capacity];
        rights = new Object[capacity];
        handles = new long[capacity];
        wrIds = new long[capacity];
    }

    void bind(int wr, long wrId, MemoryWindow mw, int rkey, MemoryRegion mr, long address, long length,
              Set<Access> access, long handle) {
        int i = slot(wr);
        windows[i] = mw;
        regions[i] = mr;
        rkeys[i] = rkey;
        addresses[i] = address;
        lengths[i] = length;
        rights[i] = access;
        handles[i] = handle;
        wrIds[i] = wrId;
    }

    void invalidate(int wr, MemoryWindow mw, int rkey) {
        int i = slot(wr);
        windows[i] = mw;
        regions[i] = null;
        rights[i] = null;
        rkeys[i] = rkey;
    }

    /** A slot for WR {@code wr}; operations at or after it belong to a chain that was cleared unposted: dropped. */
    private int slot(int wr) {
        while (n > 0 && index[n - 1] >= wr) {
            forget(--n);
        }
        int i = n++;
        index[i] = wr;
        return i;
    }

    @Override
    int post(WorkRequests<?> wrs) {
        SendRequests chain = (SendRequests) wrs;
        int from = chain.posted;
        int count = chain.count();
        try {
            return queue.post(chain);
        } finally {
            boolean all = chain.count() == 0 && count > 0; // a full post clears the chain
            apply(chain, from, all ? count : chain.posted);
            if (chain.count() == 0) {
                while (n > 0) {
                    forget(--n);
                }
                chain.queue = queue;
            }
        }
    }

    /** The provider accepted WRs {@code [from, end)}: their windows now hold what they posted, in order. */
    @SuppressWarnings("unchecked")
    private void apply(SendRequests chain, int from, int end) {
        int kept = 0;
        for (int i = 0; i < n; i++) {
            int wr = index[i];
            if (wr >= from && wr < end) {
                MemoryWindow mw = windows[i];
                if (regions[i] != null) {
                    if (chain.opcodeValue(wr) == WorkRequestOpcode.BIND_MW.value()
                            && chain.bindMwHandle(wr) == handles[i]) {
                        mw.posted(queue.qp, wrIds[i], rkeys[i], regions[i], addresses[i], lengths[i],
                                (Set<Access>) rights[i]);
                    }
                } else if (chain.opcodeValue(wr) == WorkRequestOpcode.LOCAL_INV.value()
                        && chain.invalidateRkey(wr) == rkeys[i]) {
                    mw.invalidatedLocally();
                }
                forget(i);
            } else if (wr >= end) { // not accepted yet: kept for the retry of the rest
                move(i, kept++);
            } else {
                forget(i);
            }
        }
        n = kept;
    }

    private void move(int from, int to) {
        if (from != to) {
            index[to] = index[from];
            windows[to] = windows[from];
            regions[to] = regions[from];
            rkeys[to] = rkeys[from];
            addresses[to] = addresses[from];
            lengths[to] = lengths[from];
            rights[to] = rights[from];
            handles[to] = handles[from];
            wrIds[to] = wrIds[from];
            forget(from);
        }
    }

    private void forget(int i) {
        windows[i] = null;
        regions[i] = null;
        rights[i] = null;
    }
}
