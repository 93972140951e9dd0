package dev.panverbs.core;

import dev.panverbs.bindings.ibverbs.QpExOps;
import dev.panverbs.bindings.verbs.ibv_mw_bind_info;
import dev.panverbs.core.internal.HotMemory;

import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * The memory-window binds and invalidations of one open {@link PostBatch}, applied to the {@link MemoryWindow}s only
 * when the batch is submitted (an aborted batch changes no window). Sized once to the batch's capacity, on the first
 * window operation of the QP; nothing is allocated per operation. Each staged window is pinned ({@link
 * MemoryWindow#pin}) by the batch method that stages it: its close refuses until the batch is submitted (the window
 * is named by its WR first) or aborted. Also the work of the batch's window WRs ({@link PostBatch#bindMw}, {@link
 * PostBatch#localInv(long, int, MemoryWindow)}), kept out of {@code PostBatch}: they are not on its hot path.
 */
final class WindowOps {
    private final WindowRecords ops;
    private final QueuePair qp;
    private final QpExOps qpEx;
    /** {@code struct ibv_mw_bind_info} for {@link #bindMw} (the provider copies it into its WQE). */
    private final HotMemory bindInfo;
    /** The tracker position of each operation's WR (the window's close refuses while it is outstanding). */
    private final long[] positions;
    private int n;

    WindowOps(QueuePair qp, QpExOps qpEx, int capacity) {
        this.qp = qp;
        this.qpEx = qpEx;
        ops = new WindowRecords(capacity);
        positions = new long[capacity];
        bindInfo = HotMemory.allocate(ibv_mw_bind_info.layout(), 1);
    }

    /** {@link PostBatch#localInv(long, int, MemoryWindow)} on the open batch {@code b}. */
    void localInv(PostBatch b, long wrId, int sendFlags, MemoryWindow mw) {
        int rkey = mw.pinRkey("ibv_wr_local_inv"); // its close refuses until submit (named first) or abort
        try {
            b.localInv(wrId, sendFlags, rkey);
        } catch (RuntimeException | Error e) {
            mw.unpin();
            throw e;
        }
        invalidate(b.position(), mw); // owns the pin
    }

    /** {@link PostBatch#bindMw} on the open batch {@code b}. */
    void bindMw(PostBatch b, long wrId, int sendFlags, MemoryWindow mw, int rkey, MemoryRegion mr, long offset,
                long length, Set<Access> access) {
        if (!b.isOpen()) {
            throw b.notOpen("ibv_wr_*");
        }
        if (mw.type() != MemoryWindowType.TYPE_2) {
            throw PostBatchRefusals.typeOneWindow(mw);
        }
        int rights = mw.checkBind("ibv_wr_bind_mw(" + mw + ")", qp, mr, offset, length, access);
        KeySnapshot k = DataPathAccess.snapshot(mr);
        mw.pin("ibv_wr_bind_mw", true); // the provider reads the ibv_mw now: its close refuses until submit or abort
        try {
            MemorySegment mwHandle = mw.resource.handle("ibv_wr_bind_mw");
            MemorySegment mrHandle = mr.resource.handle("ibv_wr_bind_mw");
            b.begin(SendOperation.BIND_MW, wrId, sendFlags);
            MemorySegment info = bindInfo.segment;
            ibv_mw_bind_info.mr(info, mrHandle);
            ibv_mw_bind_info.addr(info, k.address + offset);
            ibv_mw_bind_info.length(info, length);
            ibv_mw_bind_info.mw_access_flags(info, rights);
            qpEx.ibv_wr_bind_mw(mwHandle, rkey, info);
            bindInfo.keepAlive();
            b.stage(k, 0); // the bind reads the region: referenced until its completion, re-checked at submit
        } catch (RuntimeException | Error e) {
            mw.unpinRead();
            throw e;
        }
        mw.endRead(); // read: a forced close (arena tie, cascade) may deallocate it from here on (submit then aborts)
        bind(b.position(), wrId, mw, rkey, mr, k.address + offset, length, access); // owns the pin
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
