package dev.panverbs.core;

import java.util.Set;

/**
 * The memory-window binds and invalidations of one open {@link PostBatch}, applied to the {@link MemoryWindow}s only
 * when the batch is submitted (an aborted batch changes no window). Sized once to the batch's capacity, on the first
 * window operation of the QP; nothing is allocated per operation. Each staged window is pinned ({@link
 * MemoryWindow#pin}) by the batch method that stages it: its close refuses until the batch is submitted (the window
 * is named by its WR first) or aborted.
 */
final class WindowOps {
    private final WindowRecords ops;
    private final QueuePair qp;
    /** The tracker position of each operation's WR (the window's close refuses while it is outstanding). */
    private final long[] positions;
    private int n;

    WindowOps(QueuePair qp, int capacity) {
        this.qp = qp;
        ops = new WindowRecords(capacity);
        positions = new long[capacity];
    }

    void bind(long position, long wrId, MemoryWindow mw, int rkey, MemoryRegion mr, long address, long length,
              Set<Access> access) {
        positions[n] = position;
        ops.bind(n++, wrId, mw, rkey, mr, address, length, access);
    }

    void invalidate(long position, MemoryWindow mw) {
        positions[n] = position;
        ops.invalidate(n++, mw, 0);
    }

    /**
     * The first staged window closed since it was staged (its region's arena tie or its PD's cascade deallocated it:
     * the WR names a window that no longer exists), or null: the submit then aborts the batch.
     */
    MemoryWindow firstClosed() {
        for (int i = 0; i < n; i++) {
            if (ops.window(i).isClosed()) {
                return ops.window(i);
            }
        }
        return null;
    }

    /** The batch was submitted: the windows now hold what it posted, in order (named before they are unpinned). */
    void apply() {
        try {
            for (int i = 0; i < n; i++) {
                ops.window(i).namedBy(qp.sendQueue.tracker, positions[i]);
                ops.apply(i, qp);
            }
        } finally {
            clear();
        }
    }

    /** The batch was aborted (or applied): unpin its windows, forget it. */
    void clear() {
        for (int i = 0; i < n; i++) {
            ops.window(i).unpin();
            ops.forget(i);
        }
        n = 0;
    }
}
