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
    /** The window's native handle (a bind) written into the WR: the applied WR must still carry it. */
    private final long[] handles;
    private final WindowRecords ops;
    /** The windows {@link #post} pinned for the provider call, unpinned once they are named. */
    private final MemoryWindow[] pinned;
    private int n;

    ChainWindowOps(SendQueue queue, int capacity) {
        this.queue = queue;
        index = new int[capacity];
        handles = new long[capacity];
        ops = new WindowRecords(capacity);
        pinned = new MemoryWindow[capacity];
    }

    void bind(int wr, long wrId, MemoryWindow mw, int rkey, MemoryRegion mr, long address, long length,
              Set<Access> access, long handle) {
        int i = slot(wr);
        ops.bind(i, wrId, mw, rkey, mr, address, length, access);
        handles[i] = handle;
    }

    void invalidate(int wr, MemoryWindow mw, int rkey) {
        ops.invalidate(slot(wr), mw, rkey);
    }

    /** A slot for WR {@code wr}; operations at or after it belong to a chain that was cleared unposted: dropped. */
    private int slot(int wr) {
        while (n > 0 && index[n - 1] >= wr) {
            ops.forget(--n);
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
        int p = pinWindows(chain, from, count);
        try {
            return queue.post(chain);
        } finally {
            try {
                boolean all = chain.count() == 0 && count > 0; // a full post clears the chain
                apply(chain, from, all ? count : chain.posted);
                if (chain.count() == 0) {
                    while (n > 0) {
                        ops.forget(--n);
                    }
                    chain.queue = queue;
                }
            } finally {
                unpin(p); // after apply named the posted ones: their close refuses from here on
            }
        }
    }

    /**
     * Pins the window of each staged operation its WR still carries, for the provider call: a staged bind's WR carries
     * the {@code ibv_mw} pointer (freed by a close: the provider would read freed memory), a local invalidation the
     * window's rkey (after a close, another object's). A window closed since staging is refused by name, nothing
     * posted; a close on another thread from here on refuses until {@link #apply} named the window. Only chains
     * with window operations pass here. Returns how many were pinned.
     */
    private int pinWindows(SendRequests chain, int from, int count) {
        int p = 0;
        for (int i = 0; i < n; i++) {
            int wr = index[i];
            MemoryWindow mw = ops.window(i);
            if (wr >= from && wr < count && carries(chain, i, wr)) {
                if (!mw.tryPin(true)) { // ibv_post_send reads a bind's ibv_mw: a forced close waits for it
                    unpin(p);
                    throw new IllegalStateException("ibv_post_send: work request " + wr + " of " + queue.qp
                            + (ops.isBind(i) ? " binds " : " invalidates ") + mw + ", closed since it was staged (the "
                            + "provider would read the freed ibv_mw, or invalidate a reused key); clear() the chain"
                            + " or stage it again with a live window. Nothing was posted");
                }
                pinned[p++] = mw;
            }
        }
        return p;
    }

    private void unpin(int p) {
        for (int i = 0; i < p; i++) {
            pinned[i].unpinRead();
            pinned[i] = null;
        }
    }

    /** Whether WR {@code wr} still carries operation {@code i} (the application may have overwritten the slot). */
    private boolean carries(SendRequests chain, int i, int wr) {
        return ops.isBind(i)
                ? chain.opcodeValue(wr) == WorkRequestOpcode.BIND_MW.value() && chain.bindMwHandle(wr) == handles[i]
                : chain.opcodeValue(wr) == WorkRequestOpcode.LOCAL_INV.value()
                        && chain.invalidateRkey(wr) == ops.rkey(i);
    }

    /**
     * The provider accepted WRs {@code [from, end)}: their windows now hold what they posted, in order. An operation
     * is applied only if its WR still carries it (the application may have overwritten the slot since).
     */
    private void apply(SendRequests chain, int from, int end) {
        int kept = 0;
        for (int i = 0; i < n; i++) {
            int wr = index[i];
            if (wr >= from && wr < end) {
                if (carries(chain, i, wr)) {
                    ops.window(i).namedBy(queue.tracker, chain.base + wr); // the window's close now refuses
                    ops.apply(i, queue.qp);
                }
                ops.forget(i);
            } else if (wr >= end) { // not accepted yet: kept for the retry of the rest
                if (i != kept) {
                    index[kept] = wr;
                    handles[kept] = handles[i];
                    ops.move(i, kept);
                }
                kept++;
            } else {
                ops.forget(i);
            }
        }
        n = kept;
    }
}
