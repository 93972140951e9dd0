package dev.panverbs.core.mlx5;

import static dev.panverbs.core.mlx5.DirectSendChecks.VERB;
import static dev.panverbs.core.mlx5.DirectSendChecks.aligned;
import static dev.panverbs.core.mlx5.DirectSendChecks.checkFlags;
import static dev.panverbs.core.mlx5.DirectSendChecks.inBounds;
import static dev.panverbs.core.mlx5.WqeWriter.WR_ATOMIC_CMP_AND_SWP;
import static dev.panverbs.core.mlx5.WqeWriter.WR_ATOMIC_FETCH_AND_ADD;
import static dev.panverbs.core.mlx5.WqeWriter.WR_RDMA_READ;
import static dev.panverbs.core.mlx5.WqeWriter.WR_RDMA_WRITE;
import static dev.panverbs.core.mlx5.WqeWriter.WR_RDMA_WRITE_WITH_IMM;
import static dev.panverbs.core.mlx5.WqeWriter.WR_SEND;
import static dev.panverbs.core.mlx5.WqeWriter.WR_SEND_WITH_IMM;
import static dev.panverbs.core.mlx5.WqeWriter.WR_SEND_WITH_INV;

import dev.panverbs.core.LocalKey;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.internal.DirectPath;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.Handshake;
import java.lang.foreign.MemorySegment;

/**
 * Direct WQE posting to the send queue of an RC QP created by the core on an mlx5 device: Java writes each work
 * queue entry into the ConnectX send ring itself, updates the doorbell record and rings the doorbell (BlueFlame copy
 * or 8-byte doorbell), with no downcall: the bytes and rules of libmlx5's {@code mlx5_post_send} (rdma-core 44),
 * verified against that code on fake memory. Builds like {@link dev.panverbs.core.SendRequests}: an opcode method
 * starts a WR, {@link #sge} and {@link #inline} add its data, {@link #post()} rings the pending WRs. Each WR is
 * written into the ring beyond the producer index while it is built, as libmlx5's {@code ibv_wr_*} builders do
 * (the NIC reads nothing there before the doorbell), so the post only records, re-checks and rings; the QP's
 * producer guard is held from a chain's first WR to its {@link #post()} or {@link #clear()}, as the core holds it
 * across an {@code ibv_wr_start} batch.
 *
 * <p>DMA safety is the core's: every WR is recorded in the QP's send-queue tracker with the keys its SGEs name
 * before the doorbell, the keys are re-checked after that record is published, and only the completion polled
 * through {@link DirectCompletionQueue} retires it, so {@code MemoryRegion.close()} refuses a region a posted WQE
 * still references. While a chain is open a concurrent {@code ibv_post_send} through the core is refused, and a
 * {@code close()} on another thread waits for the post; do not mix the core's post paths with this one on the same QP at all (libmlx5 does
 * not know the WQEs written here). BlueFlame copies into a register shared by several direct queues are serialised;
 * libmlx5's own lock for a shared register ({@code bf->need_lock}) is private, so a QP sharing its register with
 * QPs posted through libmlx5 at the same time is not protected against their BlueFlame copies. QPs created with
 * {@code sq_sig_all} are refused (requester scatter-to-CQE, see the constructor). Single producer; allocation-free
 * per WR.
 */
public final class DirectSendQueue {
    final QueuePair qp;
    /** A constant: C2 binds its calls without a receiver check (see {@link DirectPath}). */
    private static final DirectPath PATH = DirectPath.get();
    final DirectPath.SendSide side;
    /** {@code side.guard()}: the per-WR guard check loads it from here, not through {@link #side}. */
    private final DirectPath.Guard guard;
    final WqeWriter writer;
    /**
     * By the index {@code i} at which a WR's WQE starts: its provider wr_id (tracker position and route token, what
     * the completion retires). The caller's wr_id (what the completion reports) is read at poll from the WR's
     * tracker slot, written per WR anyway (see {@code CqePoller.Target#wrIds}): one store and range check less per WR.
     */
    final long[] sq;
    final int capacity;
    private final int maxSge;
    private final int maxInline;
    /** {@code side.encode(p) == token | (p & positionMask)}: hoisted (the route token is set at QP creation). */
    final long token;
    final long positionMask;
    // the chain being built: its WQEs are in the ring from writer.curPost of chainStart on, not yet rung
    int count;
    long chainTail;
    int chainStart;
    /** How many WRs the queue had room for when last read (re-read when the chain reaches it). */
    int room;
    /**
     * A one-call WR whose index is below this needs none of {@link #next()}'s chain work (one compare instead of
     * three): the room last read while a chain is open and no builder WR is open, else 0, so a chain's first WR, the
     * WR after a builder WR and a WR at the room all take {@link #next()}. The guard is still checked per WR.
     */
    int fast;
    /**
     * {@code wordBase + i} is WR {@code i}'s provider wr_id, {@code token | ((chainTail + i) & positionMask)}, for
     * every {@code i} below {@link #wordLimit} (where the position bits wrap: set by {@link #next()}, which caps
     * {@link #fast} there), so a one-call WR below {@link #fast} adds one field instead of masking and ORing two.
     */
    long wordBase;
    long wordLimit;
    /** The positions from {@link #chainTail} reserved in the tracker for this chain's records. */
    int reserved;
    // the current WR (the last started)
    private int curOp;
    private int curPieces;
    private boolean curInline;
    private int curInlineBytes;
    /** The current WR was started by the builder form and is not ended yet (more SGEs or inline data may follow). */
    private boolean curOpen;
    /**
     * The tracker's slot records (see {@link DirectPath.SendSide#slots()}): each WR's record (the caller's wr_id, the
     * SGE count, the tracking ids of the keys its SGEs name) is written in place at its position, reserved from
     * {@link #chainTail} on when the chain opens, so {@link #post()} only publishes: no staging copy, no copy loop.
     */
    final long[] rec;
    final int recMask;
    final int stride;
    /** The distinct key snapshots of the chain (consecutive SGEs of one key are one entry), re-checked at post. */
    private final Object[] keys;
    private int nkeys;
    Object lastKey;
    /**
     * The key of the chain's last one-call WR and its snapshot's fields (valid while {@link #fast} is not 0): a later
     * one-call WR naming the same key checks only its range against them. A key closed or re-registered in between
     * is refused at {@link #post()}, which re-checks every staged snapshot after its fence.
     */
    private LocalKey kKey;
    long kAddress;
    private long kLength;
    long kLkeyBe;
    long kTracking;
    private boolean kWrite;

    DirectSendQueue(QueuePair qp, Mlx5QueuePairView view, DirectCompletionQueue cq, boolean bfUsable, boolean preferBf,
                    boolean shutUpBf) {
        this(qp, view, cq, bfUsable, preferBf, shutUpBf, QueuePairType.RC);
    }

    /** {@code type}: RC, or DC_INITIATOR for {@link DirectDcQueue}, which starts every WR with {@link #startDc}. */
    DirectSendQueue(QueuePair qp, Mlx5QueuePairView view, DirectCompletionQueue cq, boolean bfUsable, boolean preferBf,
                    boolean shutUpBf, QueuePairType type) {
        DirectSendChecks.checkQueue(qp, view, cq, type);
        this.qp = qp;
        this.side = PATH.sendSide(qp);
        this.guard = side.guard();
        this.capacity = Math.max(qp.capabilities().maxSendWr(), 1);
        this.maxSge = Math.max(qp.capabilities().maxSendSge(), 1);
        this.maxInline = qp.capabilities().maxInlineData();
        DirectSendChecks.checkSide(qp, side, maxSge);
        int curPost = view.doorbellRecord().get(WqeWriter.BE32, 4) & 0xFFFF; // where libmlx5 left the producer
        this.writer = new WqeWriter(view.sqBuffer(), view.sqWqeCount(), view.doorbellRecord(),
                view.blueFlameRegister(), view.blueFlameSize(), bfUsable, preferBf, shutUpBf, view.qpNum(),
                0, capacity, maxSge, maxInline, curPost,
                DirectSendChecks.bfLock(view.blueFlameRegister().address()));
        this.sq = new long[view.sqWqeCount()];
        this.token = side.encode(0);
        this.positionMask = side.encode(-1L) ^ token;
        this.rec = side.slots();
        this.recMask = side.slotMask();
        this.stride = side.slotStride();
        this.keys = new Object[capacity * maxSge];
        // a slot no WR was written at holds a wr_id naming no position (not 0: that names position 0, which may be
        // outstanding): a CQE naming it is refused (once per poll, where it retires) instead of retiring position 0
        long never = side.encode(-1L);
        java.util.Arrays.fill(sq, never);
        DirectSendChecks.routeCompletions(qp, view, cq, side, sq, never);
    }

    /**
     * The direct send path of {@code qp} (an RC QP in a state that can post, with no outstanding send WRs) whose
     * completions are read through {@code sendCq} (the direct view of {@code qp.sendCq()}). Refuses a non-mlx5
     * device ("rxe0 is not an mlx5 device").
     */
    public static DirectSendQueue open(QueuePair qp, DirectCompletionQueue sendCq) {
        Mlx5QueuePairView view = Mlx5.queuePairView(qp);
        return new DirectSendQueue(qp, view, sendCq, view.blueFlameSize() != 0, Mlx5.preferBf(), Mlx5.shutUpBf());
    }

    /** Over a view the caller built (fake memory in tests). */
    static DirectSendQueue over(QueuePair qp, Mlx5QueuePairView view, DirectCompletionQueue sendCq,
                                boolean preferBf, boolean shutUpBf) {
        return new DirectSendQueue(qp, view, sendCq, view.blueFlameSize() != 0, preferBf, shutUpBf);
    }

    /** The queue pair this path posts to (its state, capabilities and close; {@code ibv_qp}). */
    public QueuePair queuePair() {
        return qp;
    }

    /** Drops the WRs started and not yet posted, and releases the QP's producer guard the chain held. */
    public void clear() {
        if (count == 0) {
            return;
        }
        if (!side.heldByMe()) {
            throw DirectSendChain.lost(this); // another thread's chain stays; one whose guard a close took is dropped
        }
        drop();
        side.exit();
    }

    /** WRs started and not yet posted. */
    public int pending() {
        return count;
    }

    /**
     * How many more WRs can be started now: {@code max_send_wr} minus the WRs outstanding (posted, not yet
     * completed through the direct CQ) and pending. Starting one more throws.
     */
    public int room() {
        return side.room() - count;
    }

    // ---- opcodes: each starts a WR (sendFlags: SendFlag.*_BIT) ----

    /** {@code IBV_WR_RDMA_WRITE} to {@code remoteAddr} in the peer's region {@code rkey}. */
    public DirectSendQueue rdmaWrite(long wrId, int sendFlags, int rkey, long remoteAddr) {
        return start(WR_RDMA_WRITE, wrId, sendFlags, 0, remoteAddr, rkey, 0, 0);
    }

    /** {@code IBV_WR_RDMA_WRITE_WITH_IMM}; {@code immData} in host order. */
    public DirectSendQueue rdmaWriteWithImm(long wrId, int sendFlags, int rkey, long remoteAddr, int immData) {
        return start(WR_RDMA_WRITE_WITH_IMM, wrId, sendFlags, immData, remoteAddr, rkey, 0, 0);
    }

    /** {@code IBV_WR_SEND}. */
    public DirectSendQueue send(long wrId, int sendFlags) {
        return start(WR_SEND, wrId, sendFlags, 0, 0, 0, 0, 0);
    }

    /** {@code IBV_WR_SEND_WITH_IMM}; {@code immData} in host order. */
    public DirectSendQueue sendWithImm(long wrId, int sendFlags, int immData) {
        return start(WR_SEND_WITH_IMM, wrId, sendFlags, immData, 0, 0, 0, 0);
    }

    /** {@code IBV_WR_SEND_WITH_INV}: send and invalidate {@code invalidateRkey} at the receiver. */
    public DirectSendQueue sendWithInv(long wrId, int sendFlags, int invalidateRkey) {
        return start(WR_SEND_WITH_INV, wrId, sendFlags, invalidateRkey, 0, 0, 0, 0);
    }

    /** {@code IBV_WR_RDMA_READ} from {@code remoteAddr} in the peer's region {@code rkey} into the SGEs. */
    public DirectSendQueue rdmaRead(long wrId, int sendFlags, int rkey, long remoteAddr) {
        return start(WR_RDMA_READ, wrId, sendFlags, 0, remoteAddr, rkey, 0, 0);
    }

    /** {@code IBV_WR_ATOMIC_CMP_AND_SWP}; the original 8 bytes land in the (single, 8-byte) SGE. */
    public DirectSendQueue atomicCmpSwp(long wrId, int sendFlags, int rkey, long remoteAddr, long compare,
                                        long swapValue) {
        return start(WR_ATOMIC_CMP_AND_SWP, wrId, sendFlags, 0, aligned(remoteAddr), rkey, swapValue, compare);
    }

    /** {@code IBV_WR_ATOMIC_FETCH_AND_ADD}; the original 8 bytes land in the (single, 8-byte) SGE. */
    public DirectSendQueue atomicFetchAdd(long wrId, int sendFlags, int rkey, long remoteAddr, long add) {
        return start(WR_ATOMIC_FETCH_AND_ADD, wrId, sendFlags, 0, aligned(remoteAddr), rkey, 0, add);
    }

    // ---- one call per WR of one SGE (the common shape): op(...).sge(key, offset, length) with one guard check ----

    /**
     * {@code rdmaWrite(wrId, sendFlags, rkey, remoteAddr).sge(key, offset, length)} in one call, the same WQE bytes:
     * the SGE is checked before the WR starts (a refused SGE leaves nothing started), the guard once, and the WQE is
     * written whole in one pass, so the WR is complete ({@link #sge} and {@link #inline} refuse to extend it; use the
     * builder form for more SGEs).
     */
    public DirectSendQueue rdmaWrite(long wrId, int sendFlags, int rkey, long remoteAddr, LocalKey key, long offset,
                                     int length) {
        return startWithSge(WR_RDMA_WRITE, wrId, sendFlags, remoteAddr, rkey, key, offset, length);
    }

    /** {@code send(wrId, sendFlags).sge(key, offset, length)} in one call (see the one-call {@link #rdmaWrite}). */
    public DirectSendQueue send(long wrId, int sendFlags, LocalKey key, long offset, int length) {
        return startWithSge(WR_SEND, wrId, sendFlags, 0, 0, key, offset, length);
    }

    /**
     * {@code rdmaRead(wrId, sendFlags, rkey, remoteAddr).sge(key, offset, length)} in one call (see the one-call
     * {@link #rdmaWrite}); {@code key} needs LOCAL_WRITE.
     */
    public DirectSendQueue rdmaRead(long wrId, int sendFlags, int rkey, long remoteAddr, LocalKey key, long offset,
                                    int length) {
        return startWithSge(WR_RDMA_READ, wrId, sendFlags, remoteAddr, rkey, key, offset, length);
    }

    /** The one-call form: the SGE is checked first, then the whole WQE is written in one pass and is complete. */
    private DirectSendQueue startWithSge(int op, long wrId, int sendFlags, long ra, int rk, LocalKey key, long offset,
                                         int length) {
        checkFlags(sendFlags);
        int i = count;
        // the common case: a chain is open with room, no builder WR, and the last one-call WR named this key, whose
        // snapshot was validated in full then (post() re-checks it after its fence): only the range (and LOCAL_WRITE
        // for a READ) per WR. Anything else takes the full path, one call, before any per-WR value is computed
        if (key != kKey || i >= fast || !inBounds(offset, length, kLength)
                || (op == WR_RDMA_READ && !kWrite)) {
            i = startSlow(op, key, offset, length);
        } else {
            held();
        }
        int idx = writer.writeOneBe(op, sendFlags, ra, rk, kAddress + offset, length, kLkeyBe);
        long[] q = sq;
        long word = wordBase + i; // i < fast <= wordLimit
        q[idx & (q.length - 1)] = word; // the length is a power of two
        long[] r = rec;
        int b = ((int) word & recMask) * stride; // the position's low bits: recMask < 2^31 < 2^48
        r[b] = wrId;
        r[b + 1] = 1;
        r[b + 2] = kTracking;
        count = i + 1; // next() ended an open builder WR (a chain's first WR finds none open)
        return this;
    }

    /**
     * The one-call WR's full path: checks the SGE (the key's current snapshot, in full unless it is the chain's last
     * one), starts the WR ({@link #next()} or the guard check), stages the snapshot for the post's re-check, and
     * caches it for the WRs that follow with the same key ({@code k*} fields). Returns the WR's index.
     */
    private int startSlow(int op, LocalKey key, long offset, int length) {
        DirectPath p = PATH;
        Object last = lastKey;
        Object snap = p.checkNextSge(qp, last, key, offset, length, op == WR_RDMA_READ, "RDMA READ");
        int i = count;
        if (i < fast) { // a chain is open, with room, and no builder WR open: implies i != 0
            held();
        } else {
            i = next();
        }
        stage(key, snap);
        return i;
    }

    /** Stages {@code key}'s checked snapshot for the post's re-check and caches it ({@code k*} fields). */
    void stage(LocalKey key, Object snap) {
        DirectPath p = PATH;
        if (snap != lastKey) { // consecutive SGEs of one key: one entry to re-check at post
            keys[nkeys++] = snap;
            lastKey = snap;
        }
        kKey = key;
        kAddress = p.address(snap);
        kLength = p.length(snap);
        kLkeyBe = WqeWriter.lkeyWord(p.lkey(snap));
        kTracking = p.trackingId(snap);
        kWrite = p.localWrite(snap);
    }

    // ---- bursts: n one-call WRs of one key in one call; key, span, guard and room checked once per burst ----

    /**
     * {@code n} one-call {@code rdmaWrite}s in one call: WR {@code j} (wr_id {@code wrId + j}) writes {@code length}
     * bytes from {@code offset + j * localStride} of {@code key} to {@code remoteAddr + j * remoteStride}, with
     * {@code sendFlags}, the last WR with {@code lastFlags}. The same WQEs, tracker records (each WR references
     * {@code key}) and completions as the {@code n} calls; the key, the whole span's range, the guard and the room
     * for all {@code n} are checked once, before anything is written: a refused burst adds nothing to the chain.
     */
    public DirectSendQueue rdmaWriteBurst(long wrId, int n, int sendFlags, int lastFlags, int rkey, long remoteAddr,
                                          long remoteStride, LocalKey key, long offset, long localStride, int length) {
        return rdmaWriteBurst(wrId, 1, n, sendFlags, lastFlags, rkey, remoteAddr, remoteStride, key, offset,
                localStride, length);
    }

    /** {@link #rdmaWriteBurst} with wr_ids {@code wrId + j * wrIdStride} (0: one wr_id for all: perftest's). */
    public DirectSendQueue rdmaWriteBurst(long wrId, long wrIdStride, int n, int sendFlags, int lastFlags, int rkey,
            long remoteAddr, long remoteStride, LocalKey key, long offset, long localStride, int length) {
        return DirectSendBurst.write(this, WR_RDMA_WRITE, wrId, wrIdStride, n, sendFlags, lastFlags, remoteAddr,
                remoteStride, rkey, key, offset, localStride, length);
    }

    /** {@code n} one-call {@code send}s in one call (see {@link #rdmaWriteBurst}). */
    public DirectSendQueue sendBurst(long wrId, int n, int sendFlags, int lastFlags, LocalKey key, long offset,
                                     long localStride, int length) {
        return sendBurst(wrId, 1, n, sendFlags, lastFlags, key, offset, localStride, length);
    }

    /** {@link #sendBurst} with wr_ids {@code wrId + j * wrIdStride}. */
    public DirectSendQueue sendBurst(long wrId, long wrIdStride, int n, int sendFlags, int lastFlags, LocalKey key,
                                     long offset, long localStride, int length) {
        return DirectSendBurst.write(this, WR_SEND, wrId, wrIdStride, n, sendFlags, lastFlags, 0, 0, 0, key, offset,
                localStride, length);
    }

    /** {@code n} one-call {@code rdmaRead}s in one call (see {@link #rdmaWriteBurst}); {@code key} needs LOCAL_WRITE. */
    public DirectSendQueue rdmaReadBurst(long wrId, int n, int sendFlags, int lastFlags, int rkey, long remoteAddr,
                                         long remoteStride, LocalKey key, long offset, long localStride, int length) {
        return rdmaReadBurst(wrId, 1, n, sendFlags, lastFlags, rkey, remoteAddr, remoteStride, key, offset,
                localStride, length);
    }

    /** {@link #rdmaReadBurst} with wr_ids {@code wrId + j * wrIdStride}. */
    public DirectSendQueue rdmaReadBurst(long wrId, long wrIdStride, int n, int sendFlags, int lastFlags, int rkey,
            long remoteAddr, long remoteStride, LocalKey key, long offset, long localStride, int length) {
        return DirectSendBurst.write(this, WR_RDMA_READ, wrId, wrIdStride, n, sendFlags, lastFlags, remoteAddr,
                remoteStride, rkey, key, offset, localStride, length);
    }

    /** The builder form: starts a WR that {@link #sge} and {@link #inline} extend until the next WR or the post. */
    private DirectSendQueue start(int op, long wrId, int sendFlags, int immOrInv, long ra, int rk, long sw, long ca) {
        checkFlags(sendFlags);
        int i = next();
        started(op, wrId, i, writer.begin(op, sendFlags, immOrInv, ra, rk, sw, ca));
        return this;
    }

    /** Builder WR {@code i} of opcode {@code op} was begun at WQE {@code idx}: its provider wr_id, record, state. */
    private long started(int op, long wrId, int i, int idx) {
        long position = chainTail + i;
        sq[idx] = token | (position & positionMask); // the caller's wrId: in the slot record below
        long[] r = rec;
        int b = ((int) position & recMask) * stride;
        r[b] = wrId;
        r[b + 1] = 0;
        curOp = op;
        curPieces = 0;
        curInline = false;
        curInlineBytes = 0;
        curOpen = true;
        fast = 0; // the next WR ends this one (next())
        count = i + 1;
        return position;
    }

    /**
     * The builder form of a DC initiator's WR ({@link DirectDcQueue}): {@link #start} with the datagram segment
     * {@code av} after the control segment and DCI stream {@code streamId} in it ({@link DcWqe#beginDc}). Returns the
     * WR's tracker position (its AH is staged there).
     */
    long startDc(int op, long wrId, int sendFlags, int immOrInv, long ra, int rk, long sw, long ca, long[] av,
                 int streamId) {
        checkFlags(sendFlags);
        int i = next();
        return started(op, wrId, i, DcWqe.beginDc(writer, op, sendFlags, immOrInv, ra, rk, sw, ca, av, streamId));
    }

    /**
     * The index of the WR about to start: takes the guard for a chain's first WR, else checks that it is still held
     * and that the queue has room, and ends the previous WR if it was built with the builder form.
     */
    int next() {
        int i = count;
        if (i == 0) {
            DirectSendChain.open(this);
        } else {
            held();
            if (i == room) {
                DirectSendChain.moreRoom(this, i);
            }
            if (curOpen) {
                writer.end(); // the previous WR is complete: its control segment gets its size
                curOpen = false;
            }
        }
        // WR i's provider wr_id minus i, valid up to the position bits' wrap (2^48 WRs: in practice never reached)
        long p = (chainTail + i) & positionMask;
        wordBase = (token | p) - i;
        wordLimit = i + (positionMask + 1 - p);
        // a chain is open (this WR), no builder WR open: a builder start() sets 0 again
        fast = (int) Math.min(room, wordLimit);
        return i;
    }

    /** The guard this chain took is still this thread's (a close on this thread takes it away: ring unmapped). */
    void held() {
        if (!guard.heldByMe()) {
            throw DirectSendChain.lost(this);
        }
    }

    private int current(String what) {
        int i = count - 1;
        if (i < 0) {
            throw DirectSendChecks.noCurrent(qp, what);
        }
        held();
        DirectSendChecks.checkExtensible(i, curOpen, curPieces, maxSge);
        return i;
    }

    /** Adds an SGE over {@code [offset, offset + length)} of {@code key} to the current WR. */
    public DirectSendQueue sge(LocalKey key, long offset, int length) {
        int i = current("sge()");
        int op = curOp;
        int n = curPieces;
        boolean atomic = DirectSendChecks.checkSgeShape(i, op, curInline, n, length);
        Object snap = PATH.checkNextSge(qp, lastKey, key, offset, length, op == WR_RDMA_READ || atomic,
                atomic ? "an atomic" : "RDMA READ");
        addSge(i, n, snap, offset, length);
        return this;
    }

    /** Records and writes SGE {@code n} of WR {@code i} over the checked key {@code snap}. */
    private void addSge(int i, int n, Object snap, long offset, int length) {
        DirectPath p = PATH;
        if (snap != lastKey) { // consecutive SGEs of one key: one entry to re-check at post
            keys[nkeys++] = snap;
            lastKey = snap;
        }
        long[] r = rec;
        int b = ((int) (chainTail + i) & recMask) * stride;
        r[b + 2 + n] = p.trackingId(snap);
        curPieces = n + 1;
        r[b + 1] = n + 1;
        writer.data(p.address(snap) + offset, length, p.lkey(snap));
    }

    /**
     * Adds {@code data} as inline payload of the current WR (RDMA WRITE and SEND opcodes): copied into the WQE now,
     * so {@code data} may be reused at once; it needs no memory region. The WR's inline bytes may not exceed the
     * QP's {@code max_inline_data}.
     */
    public DirectSendQueue inline(MemorySegment data) {
        int i = current("inline()");
        long total = DirectSendChecks.checkInline(qp, i, curOp, curInline, curPieces, curInlineBytes, data,
                maxInline);
        try {
            writer.inlineData(data, 0, (int) data.byteSize()); // throws (nothing counted) if data's arena is closed
        } catch (WrongThreadException e) {
            throw Errors.wrongThread(VERB, "the inline data of WR " + i + " on " + qp, e);
        }
        curInline = true;
        curInlineBytes = (int) total;
        curPieces++;
        return this;
    }

    /**
     * Rings the pending WRs (already in the ring) with one doorbell and returns how many: all of them (a WR for
     * which the queue had no room was refused when it was started). Records every WR and its keys in the QP's
     * tracker before the doorbell and refuses ({@link IllegalStateException}; the chain is dropped, nothing rung)
     * if a key was closed or re-registered since it was added, or the QP was closed or left RTS. Releases the
     * producer guard the chain held.
     */
    public int post() {
        int n = count;
        if (n == 0) {
            return 0;
        }
        DirectPath.SendSide s = side;
        held();
        WqeWriter w = writer;
        try {
            if (curOpen) {
                w.end();
                curOpen = false;
            }
            // open since open(): a close on another thread waits for this post, one on this thread fails held()
            s.checkState(VERB);
            if ((w.dbrecCounter() & 0xFFFF) != (chainStart & 0xFFFF)) {
                throw DirectSendChecks.staleRecord(qp);
            }
            long t = chainTail;
            // the records are in the tracker's slots already (written in place); a pending classic chain moves to
            // right after them, then the tail publishes them
            s.release(t + n);
            reserved = 0;
            s.publish(t + n); // references visible before the keys are re-read (MemoryRegion.close's handshake)
            for (int j = 0; j < nkeys; j++) {
                Object snap = keys[j];
                if (PATH.stale(snap)) {
                    s.rollback(t);
                    throw PATH.staleKey(qp, snap, VERB);
                }
            }
            w.ring(!Handshake.ASYMMETRIC, n); // a full fence in the publish above ordered the WQE stores
            java.util.Arrays.fill(keys, 0, nkeys, null);
            nkeys = 0;
            lastKey = null;
            kKey = null;
            count = 0;
            fast = 0;
            return n;
        } catch (RuntimeException e) {
            drop();
            throw e;
        } finally {
            s.exit();
        }
    }

    /** Forgets the chain (its WQEs stay beyond the producer index, unrung): no stale key kept reachable. */
    void drop() {
        writer.abort(chainStart);
        if (reserved != 0) {
            reserved = 0;
            side.release(chainTail); // a pending classic chain goes back to the tail
        }
        count = 0;
        fast = 0;
        curOpen = false;
        java.util.Arrays.fill(keys, 0, nkeys, null);
        nkeys = 0;
        lastKey = null;
        kKey = null;
    }
}
