package dev.panverbs.core;

import static dev.panverbs.bindings.verbs.verbs_h.*;

import dev.panverbs.bindings.ibverbs.CqExOps;
import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.VerbsContextInline;
import dev.panverbs.bindings.verbs.ibv_device_attr_ex;
import dev.panverbs.bindings.verbs.ibv_cq_init_attr_ex;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.RdmaCoreVersion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

/**
 * An extended completion queue ({@code struct ibv_cq_ex}, {@code ibv_create_cq_ex(3)}), polled in place with
 * lazy field reads ({@code ibv_start_poll}/{@code ibv_next_poll}/{@code ibv_end_poll}, {@code ibv_wc_read_*}):
 *
 * <pre>{@code
 * if (cq.startPoll()) {
 *     do {
 *         if (cq.status() != WorkCompletionStatus.SUCCESS) ...;
 *         handle(cq.wrId(), cq.readByteLen(), cq.readCompletionTs());
 *     } while (cq.nextPoll());
 *     cq.endPoll();
 * }
 * }</pre>
 *
 * <p>Only the fields requested with {@link CompletionQueue.Builder#wcFlags} can be read (the provider leaves the
 * other readers NULL; reading one throws {@link UnsupportedVerbException} naming the field). Completion timestamps are
 * refused at creation, naming the capability, when the device reports no completion clock. Every function pointer
 * is read once at creation; polling and reading allocate nothing.
 *
 * <p>It is also a {@link CompletionQueue}: {@link #poll(WorkCompletions)} works on it too.
 *
 * <p>Thread safety: between {@link #startPoll()} and {@link #endPoll()} the provider may hold the CQ lock; the
 * three calls and the reads between them must happen on one thread. Enforced: {@code nextPoll} and the readers
 * throw {@link IllegalStateException} without an open pass, {@code endPoll} without an open pass on the calling
 * thread, and {@code startPoll}/{@code poll} while one is open (rather than spin forever on the provider's lock); not
 * checked, to keep reads free of a thread lookup: a reader or {@code nextPoll} on another thread during a pass. One
 * poller at a time. {@link #close()} from another thread waits (up to 5 s) for an open pass to end; closing on the
 * thread that holds the pass abandons it.
 */
public final class ExtendedCompletionQueue extends CompletionQueue {
    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
    private static final int ENOENT = Errno.ENOENT;

    /** The polling slots of the {@code ibv_cq_ex}, read once. */
    private final CqExOps ops;
    /**
     * {@code struct ibv_poll_cq_attr { comp_mask = 0 }} (mlx5 demands 0), read-only for providers: one for all CQs,
     * in the global arena, so {@code ibv_start_poll} acquires no arena.
     */
    private static final MemorySegment POLL_ATTR = Arena.global().allocate(8, 8);
    /** Its address, passed as a {@code long}: global memory is never freed, so no scope check or acquire per pass. */
    private static final long POLL_ATTR_ADDRESS = POLL_ATTR.address();
    private final long wcFlags;
    /**
     * rxe before rdma-core 55 ends the pass inside {@code ibv_next_poll} when it returns ENOENT (stores the consumer
     * index past the last completion and releases the CQ lock); the {@code ibv_end_poll} that ibv_create_cq_ex(3)
     * prescribes next would advance the index once more, past the producer, and the CQ would then deliver stale
     * entries (rdma-core commits b78b414 "rxe: fix completion queue consumer index overrun", 5e7aa41 "rxe: Fix
     * double unlock in cq_ex polling"). With this quirk, {@link #endPoll()} skips the provider call after such a pass.
     */
    private final boolean nextPollEndsPass;
    /** {@link #nextPoll()} returned false in the open pass. */
    private boolean exhausted;
    /**
     * The current completion's caller {@code wr_id} and status, read once per start/next poll (where the retirement
     * reads {@code wr_id} anyway): the readers are then two Java field loads, small enough for C2 to inline into a
     * poll loop whose caller also posts, instead of a native read each behind a real call.
     */
    private long currentWrId;
    private int currentStatus;

    ExtendedCompletionQueue(Context context, CompletionChannel channel, MemorySegment cq, long wcFlags,
                            boolean nextPollEndsPass) {
        super(context, channel, cq, "ExtendedCompletionQueue");
        this.ops = CqExOps.of(cq);
        this.wcFlags = wcFlags;
        this.nextPollEndsPass = nextPollEndsPass;
    }

    /** Whether the provider has the next_poll quirk described at {@link #nextPollEndsPass}. */
    static boolean nextPollEndsPass(int vendorId, int rdmaCoreMajor) {
        return vendorId == RXE_VENDOR_ID && rdmaCoreMajor >= 0 && rdmaCoreMajor < 55;
    }

    /** Soft-RoCE's {@code vendor_id} (RXE_VENDOR_ID in the kernel driver). */
    static final int RXE_VENDOR_ID = 0xFFFFFF;

    static ExtendedCompletionQueue create(Context context, CompletionChannel channel, int cqe, int compVector,
                                          long wcFlags, boolean singleThreaded) {
        String call = Errors.call("ibv_create_cq_ex", "cqe", cqe, "wcFlags", "0x" + Long.toHexString(wcFlags));
        MemorySegment ctx = context.resource.handle("ibv_create_cq_ex");
        long timestamps = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP() | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK();
        try (Arena arena = Arena.ofConfined()) {
            if ((wcFlags & timestamps) != 0) {
                MemorySegment dev = arena.allocate(ibv_device_attr_ex.layout());
                int rc = VerbsContextInline.ibv_query_device_ex(ctx, MemorySegment.NULL, dev);
                if (rc != 0) {
                    throw Errors.failure(Errors.call("ibv_query_device_ex", "context", context.device().name()), rc);
                }
                if ((wcFlags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP()) != 0
                        && ibv_device_attr_ex.completion_timestamp_mask(dev) == 0) {
                    throw new UnsupportedVerbException(call, context.device().name()
                            + " reports completion_timestamp_mask = 0", "completion timestamps (COMPLETION_TIMESTAMP)");
                }
                if ((wcFlags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK()) != 0
                        && ibv_device_attr_ex.hca_core_clock(dev) == 0) {
                    throw new UnsupportedVerbException(call, context.device().name() + " reports hca_core_clock = 0",
                            "wall-clock completion timestamps (COMPLETION_TIMESTAMP_WALLCLOCK)");
                }
            }
            MemorySegment attr = arena.allocate(ibv_cq_init_attr_ex.layout());
            ibv_cq_init_attr_ex.cqe(attr, cqe);
            ibv_cq_init_attr_ex.channel(attr, channel == null ? MemorySegment.NULL
                    : channel.resource.handle("ibv_create_cq_ex"));
            ibv_cq_init_attr_ex.comp_vector(attr, compVector);
            ibv_cq_init_attr_ex.wc_flags(attr, wcFlags | IBV_WC_EX_WITH_QP_NUM());
            if (singleThreaded) {
                ibv_cq_init_attr_ex.comp_mask(attr, IBV_CQ_INIT_ATTR_MASK_FLAGS());
                ibv_cq_init_attr_ex.flags(attr, IBV_CREATE_CQ_ATTR_SINGLE_THREADED());
            }
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment cq = VerbsContextInline.ibv_create_cq_ex(errno, ctx, attr);
            if (cq.address() == 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
            return new ExtendedCompletionQueue(context, channel, cq, wcFlags,
                    nextPollEndsPass(context.attributes().vendorId(), RdmaCoreVersion.major()));
        }
    }

    /**
     * Starts a poll pass ({@code ibv_start_poll(3)}): {@code true} when a completion is current (read it, then
     * {@link #nextPoll()}, and finally {@link #endPoll()}), {@code false} when the CQ is empty (then do not call
     * {@code endPoll}).
     *
     * <p>Errors: any errno other than {@code ENOENT} → {@link VerbsException} (no {@code endPoll} needed; after a
     * failing {@link #nextPoll()} it is). A pass opened twice, or {@code nextPoll}/{@code endPoll} outside a pass,
     * → {@link IllegalStateException} (in C: a deadlock or a double unlock).
     */
    public boolean startPoll() {
        CallGuard guard = pollGuard;
        if (!guard.enter(Thread.currentThread())) {
            throw pollRefused(guard, "ibv_start_poll");
        }
        boolean found;
        try {
            resource.checkOpen("ibv_start_poll");
            exhausted = false;
            found = current(ops.ibv_start_poll(POLL_ATTR_ADDRESS), "ibv_start_poll");
        } catch (RuntimeException | Error e) {
            guard.exit();
            throw e;
        }
        if (found) {
            guard.open = true;
        } else { // no pass: the provider released the CQ lock
            guard.exit();
        }
        return found;
    }

    /**
     * Advances to the next completion ({@code ibv_next_poll(3)}); {@code false} when none is left, and from then on
     * until {@link #endPoll()} without calling the provider again.
     *
     * @throws IllegalStateException without an open pass on this thread (the provider would advance a CQ it does not
     *                               hold, skipping or repeating completions)
     */
    public boolean nextPoll() {
        inPass("ibv_next_poll");
        if (exhausted) {
            return false;
        }
        boolean found = current(ops.ibv_next_poll(), "ibv_next_poll");
        exhausted = !found;
        return found;
    }

    /**
     * Ends the poll pass ({@code ibv_end_poll(3)}): releases the consumed entries and the CQ lock. Required after
     * every {@link #startPoll()} that returned true, whether or not {@link #nextPoll()} reached the end.
     *
     * @throws IllegalStateException without an open pass on this thread (a second {@code ibv_end_poll} would release
     *                               a lock it does not hold and consume an entry twice)
     */
    public void endPoll() {
        CallGuard guard = pollGuard;
        if (!guard.heldBy(Thread.currentThread())) {
            throw noPass("ibv_end_poll");
        }
        guard.open = false;
        try {
            if (!(exhausted && nextPollEndsPass)) { // else the provider's next_poll already ended the pass
                ops.ibv_end_poll();
            }
        } finally {
            pollGuard.exit();
        }
    }

    /**
     * Hot path: a pass is open (a plain read; {@link #endPoll()}, which runs once per pass, checks the thread). An open
     * pass also keeps the CQ from being destroyed under these calls.
     */
    private void inPass(String verb) {
        if (!pollGuard.open) {
            throw noPass(verb);
        }
    }

    private boolean current(int rc, String verb) {
        if (rc == 0) {
            retireCurrent();
            return true;
        }
        if (rc == ENOENT) {
            return false;
        }
        throw pollFailed(verb, rc);
    }

    /** Cold: a failed start_poll leaves nothing to end; after a failed next_poll the pass stays open (endPoll). */
    private VerbsException pollFailed(String verb, int rc) {
        exhausted = true;
        return Errors.failure(Errors.call(verb, "cq", this), rc);
    }

    /** Retires what the current completion covers and keeps its caller's {@code wr_id} and status. */
    private void retireCurrent() {
        currentWrId = CompletionRoutes.retire(routes.table(), ops.wr_id());
        currentStatus = ops.status();
    }

    /** The current completion's {@code wr_id} (the caller's, from {@code ibv_cq_ex.wr_id}; no call). */
    public long wrId() {
        if (!pollGuard.open) {
            throw noPass("ibv_cq_ex.wr_id");
        }
        return currentWrId;
    }

    /** The current completion's status ({@code ibv_cq_ex.status}, no call). */
    public WorkCompletionStatus status() {
        return WorkCompletionStatus.of(statusValue());
    }

    /** The current completion's raw C status. */
    public int statusValue() {
        if (!pollGuard.open) {
            throw noPass("ibv_cq_ex.status");
        }
        return currentStatus;
    }

    /** {@code ibv_wc_read_opcode}: valid on success. */
    public WorkCompletionOpcode readOpcode() {
        inPass("ibv_wc_read_opcode");
        return WorkCompletionOpcode.of(ops.ibv_wc_read_opcode());
    }

    /** {@code ibv_wc_read_vendor_err}. */
    public int readVendorErr() {
        inPass("ibv_wc_read_vendor_err");
        return ops.ibv_wc_read_vendor_err();
    }

    /** {@code ibv_wc_read_byte_len}; needs {@link CompletionField#BYTE_LEN}. */
    public int readByteLen() {
        require(CompletionField.BYTE_LEN);
        return ops.ibv_wc_read_byte_len();
    }

    /** {@code ibv_wc_read_imm_data} in host order (C returns {@code __be32}); needs {@link CompletionField#IMM}. */
    public int readImmData() {
        require(CompletionField.IMM);
        int networkOrder = ops.ibv_wc_read_imm_data();
        return LITTLE_ENDIAN ? Integer.reverseBytes(networkOrder) : networkOrder;
    }

    /** {@code ibv_wc_read_invalidated_rkey}; needs {@link CompletionField#IMM}. */
    public int readInvalidatedRkey() {
        require(CompletionField.IMM);
        return ops.ibv_wc_read_invalidated_rkey();
    }

    /** {@code ibv_wc_read_qp_num} (always available: panverbs requests it). */
    public int readQpNum() {
        inPass("ibv_wc_read_qp_num");
        return ops.ibv_wc_read_qp_num();
    }

    /** {@code ibv_wc_read_src_qp}; needs {@link CompletionField#SRC_QP}. */
    public int readSrcQp() {
        require(CompletionField.SRC_QP);
        return ops.ibv_wc_read_src_qp();
    }

    /** {@code ibv_wc_read_wc_flags}. */
    public int readWcFlags() {
        inPass("ibv_wc_read_wc_flags");
        return ops.ibv_wc_read_wc_flags();
    }

    /** {@code ibv_wc_read_slid}; needs {@link CompletionField#SLID}. */
    public int readSlid() {
        require(CompletionField.SLID);
        return ops.ibv_wc_read_slid();
    }

    /** {@code ibv_wc_read_sl}; needs {@link CompletionField#SL}. */
    public int readSl() {
        require(CompletionField.SL);
        return ops.ibv_wc_read_sl();
    }

    /** {@code ibv_wc_read_dlid_path_bits}; needs {@link CompletionField#DLID_PATH_BITS}. */
    public int readDlidPathBits() {
        require(CompletionField.DLID_PATH_BITS);
        return ops.ibv_wc_read_dlid_path_bits();
    }

    /** {@code ibv_wc_read_completion_ts}: raw HCA clock ticks; needs {@link CompletionField#COMPLETION_TIMESTAMP}. */
    public long readCompletionTs() {
        require(CompletionField.COMPLETION_TIMESTAMP);
        return ops.ibv_wc_read_completion_ts();
    }

    /** {@code ibv_wc_read_completion_wallclock_ns}; needs {@link CompletionField#COMPLETION_TIMESTAMP_WALLCLOCK}. */
    public long readCompletionWallclockNs() {
        require(CompletionField.COMPLETION_TIMESTAMP_WALLCLOCK);
        return ops.ibv_wc_read_completion_wallclock_ns();
    }

    private void require(CompletionField field) {
        if ((wcFlags & field.bit()) == 0) {
            throw notRequested(field);
        }
        if (!pollGuard.open) {
            throw noPass("ibv_wc_read_" + field.name().toLowerCase(java.util.Locale.ROOT));
        }
    }

    private IllegalStateException noPass(String verb) {
        if (resource.isClosed()) {
            return resource.closedException(verb);
        }
        Thread holder = pollGuard.holder();
        return new IllegalStateException(verb + ": no poll pass is open on " + this + " in this thread"
                + (holder != null ? " (thread \"" + holder.getName() + "\" has one)" : "")
                + "; call it only between startPoll() returning true and endPoll()");
    }

    private UnsupportedVerbException notRequested(CompletionField field) {
        return new UnsupportedVerbException("ibv_wc_read_" + field.name().toLowerCase(), this
                + " was not created with " + field + " in wcFlags (requested: "
                + java.util.Arrays.stream(CompletionField.values()).filter(f -> (wcFlags & f.bit()) != 0).toList()
                + ")", "completion field " + field);
    }
}
