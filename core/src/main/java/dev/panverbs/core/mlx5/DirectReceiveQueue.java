package dev.panverbs.core.mlx5;

import dev.panverbs.core.LocalKey;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.internal.DirectPath;
import dev.panverbs.core.internal.Handshake;

/**
 * Direct receive posting to the receive queue of a QP created by the core on an mlx5 device: Java writes each
 * receive WQE (its data segments and, when it has fewer than the queue's maximum, a terminator) into the receive ring
 * and updates the doorbell record's receive counter, with no downcall: libmlx5's {@code mlx5_post_recv} (rdma-core
 * 44), verified against that code on fake memory. Its completions are read by the {@link DirectCompletionQueue} of
 * the QP's receive CQ, which reports the {@code wr_id} given here. Builds like
 * {@link dev.panverbs.core.ReceiveRequests}: {@link #recv} starts a WR, {@link #sge} adds its buffers, {@link #post()}
 * writes them and updates the record.
 *
 * <p>DMA safety is the core's: every receive is recorded in the QP's receive-queue tracker with its keys before the
 * doorbell record is written, and only its polled completion retires it, so {@code MemoryRegion.close()} refuses a
 * region a posted receive may still be written into. Completions retire in order, one per receive; one that names no
 * outstanding receive (a misbehaving device, or receives posted outside this path) is refused, not retired. Do not
 * post receives to this QP through the core as well.
 * Single producer: the thread that starts a WR owns the pending WRs until a {@link #post()} takes them all or
 * {@link #clear()} drops them; {@code recv}, {@code sge}, {@code post} and {@code clear} on another thread meanwhile
 * are refused ({@link IllegalStateException}, nothing changed), so the keys tracked at post are those of the WQEs
 * written. Allocation-free per WR (the owner check is one compare).
 */
public final class DirectReceiveQueue {
    private static final String VERB = "mlx5 direct receive post";

    private final QueuePair qp;
    private final DirectPath path = DirectPath.get();
    private final DirectPath.SendSide side;
    final RecvWriter writer;
    /** The provider wr_id (tracker position and route token) of the receive WQE at each index. */
    private final long[] rqWrid;
    private final int capacity;
    private final int maxSge;
    private int count;
    private final long[] wrIds;
    private final int[] nsge;
    private final long[] addr;
    private final int[] len;
    private final int[] lkey;
    private final long[] keyIds;
    private final Object[] snapshots;
    /**
     * The thread whose WRs are pending (null: none): taken by CAS when the first is started, released (ordered after
     * the arrays) when none is left, read plainly per call: another thread sees either its owner or null, never itself.
     */
    @SuppressWarnings("unused") // through OWNER
    private Thread owner;
    private static final java.lang.invoke.VarHandle OWNER;

    static {
        try {
            OWNER = java.lang.invoke.MethodHandles.lookup().findVarHandle(DirectReceiveQueue.class, "owner",
                    Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    DirectReceiveQueue(QueuePair qp, Mlx5ReceiveQueueView view, DirectCompletionQueue cq) {
        if (cq.completionQueue() != qp.recvCq()) {
            throw new IllegalArgumentException(cq.completionQueue() + " is not the receive CQ of " + qp);
        }
        this.qp = qp;
        this.side = path.receiveSide(qp);
        if (side.outstanding() != 0) {
            throw new IllegalStateException(qp + " has " + side.outstanding() + " outstanding receive work requests; "
                    + "open the direct path before posting receives through the core, or after they completed");
        }
        this.capacity = Math.max(qp.capabilities().maxRecvWr(), 1);
        int head = view.doorbellRecord().get(WqeWriter.BE32, 0) & 0xFFFF; // where libmlx5 left the receive counter
        this.writer = new RecvWriter(view.rqBuffer(), view.rqWqeCount(), view.rqStride(), view.doorbellRecord(),
                capacity, head);
        this.maxSge = Math.min(Math.max(qp.capabilities().maxRecvSge(), 1), writer.maxGs());
        this.rqWrid = new long[view.rqWqeCount()];
        this.wrIds = new long[capacity];
        this.nsge = new int[capacity];
        int s = capacity * maxSge;
        this.addr = new long[s];
        this.len = new int[s];
        this.lkey = new int[s];
        this.keyIds = new long[s];
        this.snapshots = new Object[s];
        RecvWriter w = writer;
        String pollVerb = "mlx5 direct CQE poll (receive queue of " + qp + ")";
        cq.poller.target(view.qpNum()).receive(rqWrid, head, providerWrId -> {
            // in order, one CQE per WR: a CQE with nothing outstanding would shift every later one onto the
            // next WR and retire a receive the NIC may still write into (the compare replaces retire's)
            long id = side.retireNext(providerWrId, pollVerb);
            w.tail++;
            return id;
        });
    }

    /**
     * The direct receive path of {@code qp} (its own receive queue, no outstanding receives) whose completions are
     * read through {@code recvCq} (the direct view of {@code qp.recvCq()}). Refuses a non-mlx5 device.
     */
    public static DirectReceiveQueue open(QueuePair qp, DirectCompletionQueue recvCq) {
        Mlx5.requireMlx5(qp.protectionDomain().context(), "mlx5dv_init_obj");
        return new DirectReceiveQueue(qp, Mlx5.receiveQueueView(qp), recvCq);
    }

    /** Over a view the caller built (fake memory in tests). */
    static DirectReceiveQueue over(QueuePair qp, Mlx5ReceiveQueueView view, DirectCompletionQueue recvCq) {
        return new DirectReceiveQueue(qp, view, recvCq);
    }

    /** Starts a receive WR ({@code ibv_recv_wr.wr_id}). */
    public DirectReceiveQueue recv(long wrId) {
        if (owner != Thread.currentThread()) {
            claim(); // the first WR pending: count is 0
        }
        if (count == capacity) {
            throw new IllegalStateException(VERB + ": " + capacity + " receive WRs are pending on " + qp
                    + " (max_recv_wr); post() them first");
        }
        wrIds[count] = wrId;
        nsge[count] = 0;
        count++;
        return this;
    }

    /** Adds a buffer {@code [offset, offset + length)} of {@code key} (which needs LOCAL_WRITE) to the current WR. */
    public DirectReceiveQueue sge(LocalKey key, long offset, int length) {
        if (owner != Thread.currentThread()) { // also when none is pending (count is 0 then)
            throw notMine("sge() before recv() on " + qp);
        }
        int i = count - 1;
        if (nsge[i] == maxSge) {
            throw new IllegalArgumentException(VERB + ": WR " + i + " already has " + maxSge + " SGEs (max_recv_sge)");
        }
        Object snap = path.checkSge(qp, key, offset, length, true, "a receive");
        int s = i * maxSge + nsge[i]++;
        addr[s] = path.address(snap) + offset;
        len[s] = length;
        lkey[s] = path.lkey(snap);
        keyIds[s] = path.trackingId(snap);
        snapshots[s] = snap;
        return this;
    }

    /**
     * Writes the pending receive WRs and updates the doorbell record once; returns how many were posted (fewer when
     * the queue has room for fewer: the rest stay pending). Refuses ({@link IllegalStateException}, nothing posted)
     * when a key was closed or re-registered since it was added, or the QP is closed.
     */
    public int post() {
        int n = count;
        if (n == 0) {
            return 0;
        }
        if (owner != Thread.currentThread()) {
            throw notMine(null);
        }
        DirectPath.SendSide s = side;
        if (!s.enter()) {
            throw s.busy(VERB);
        }
        try {
            Handshake.postSide(); // the handshake's post side: a close that found no mark is seen below
            s.checkOpen(VERB);
            s.checkState(VERB);
            if ((writer.dbrecCounter() & 0xFFFF) != (writer.head & 0xFFFF)) {
                throw new IllegalStateException(VERB + ": the doorbell record of " + qp + " no longer holds this "
                        + "queue's receive counter: the QP went through RESET (libmlx5 restarts its counters) or was "
                        + "posted through libmlx5; open a new DirectReceiveQueue");
            }
            int take = Math.min(n, s.room());
            if (take <= 0) {
                return 0;
            }
            long t = s.tail();
            int ms = maxSge;
            s.restage(t + take); // once, before the slots are written (not once per WR)
            for (int k = 0; k < take; k++) {
                s.put(t + k, wrIds[k], keyIds, k * ms, nsge[k]);
            }
            s.publish(t + take);
            Object checked = null; // a snapshot re-read after the fence above: the same one need not be read again
            for (int k = 0; k < take; k++) {
                for (int j = 0; j < nsge[k]; j++) {
                    Object snap = snapshots[k * ms + j];
                    if (snap != checked) {
                        if (path.stale(snap)) {
                            s.rollback(t);
                            throw path.staleKey(qp, snap, VERB);
                        }
                        checked = snap;
                    }
                }
            }
            RecvWriter w = writer;
            for (int k = 0; k < take; k++) {
                int ind = w.write(nsge[k], k * ms, addr, len, lkey);
                rqWrid[ind] = s.encode(t + k);
            }
            w.ring();
            drop(take);
            return take;
        } finally {
            s.exit();
        }
    }

    /** Drops the receive WRs started and not yet posted. */
    public void clear() {
        if (count == 0) {
            return;
        }
        if (owner != Thread.currentThread()) {
            throw notMine(null);
        }
        drop(count);
    }

    /** Cold: makes this thread the owner of the WRs about to be started, or refuses if another thread owns some. */
    private void claim() {
        if (!OWNER.compareAndSet(this, (Thread) null, Thread.currentThread())) {
            throw notMine(null);
        }
    }

    /** Cold: this thread owns no pending WR; {@code none}: the refusal when no thread does. */
    private IllegalStateException notMine(String none) {
        Thread o = (Thread) OWNER.getVolatile(this);
        if (o == null && none != null) {
            return new IllegalStateException(VERB + ": " + none);
        }
        return new IllegalStateException(VERB + ": receive WRs on " + qp + " are being built on another thread ("
                + (o == null ? "just released" : o.getName()) + "), which owns them until its post() or clear(); a "
                + "DirectReceiveQueue has one producer thread: start, post and clear receive WRs on one thread. "
                + "Nothing was changed");
    }

    private void drop(int take) {
        int rest = count - take;
        int ms = maxSge;
        if (rest > 0) {
            System.arraycopy(wrIds, take, wrIds, 0, rest);
            System.arraycopy(nsge, take, nsge, 0, rest);
            System.arraycopy(addr, take * ms, addr, 0, rest * ms);
            System.arraycopy(len, take * ms, len, 0, rest * ms);
            System.arraycopy(lkey, take * ms, lkey, 0, rest * ms);
            System.arraycopy(keyIds, take * ms, keyIds, 0, rest * ms);
            System.arraycopy(snapshots, take * ms, snapshots, 0, rest * ms);
        }
        java.util.Arrays.fill(snapshots, rest * ms, count * ms, null);
        count = rest;
        if (rest == 0) {
            OWNER.setRelease(this, (Thread) null); // after the arrays: the next owner's CAS sees them cleared
        }
    }
}
