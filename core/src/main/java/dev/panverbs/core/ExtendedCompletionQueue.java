package dev.panverbs.core;

import static dev.panverbs.bindings.verbs.verbs_h.*;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.verbs.ibv_cq_ex;
import dev.panverbs.bindings.verbs.ibv_cq_init_attr_ex;
import dev.panverbs.core.internal.Errors;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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
 * other readers NULL; reading one throws {@link IllegalStateException} naming the field). Completion timestamps are
 * refused at creation, naming the capability, when the device reports no completion clock. Every function pointer
 * is read once at creation; polling and reading allocate nothing.
 *
 * <p>It is also a {@link CompletionQueue}: {@link #poll(WorkCompletions)} works on it too.
 *
 * <p>Thread safety: between {@link #startPoll()} and {@link #endPoll()} the provider may hold the CQ lock; the
 * three calls and the reads between them must happen on one thread. One poller at a time.
 */
public final class ExtendedCompletionQueue extends CompletionQueue {
    private static final long STATUS = ibv_cq_ex.status$offset();
    private static final long WR_ID = ibv_cq_ex.wr_id$offset();
    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
    private static final int ENOENT = Errno.ENOENT;

    private final MemorySegment cqEx;
    private final MemorySegment pollAttr;
    private final long wcFlags;
    private final MemorySegment startPoll, nextPoll, endPoll, readOpcode, readVendorErr, readByteLen, readImmData,
            readQpNum, readSrcQp, readWcFlags, readSlid, readSl, readDlidPathBits, readCompletionTs,
            readCompletionWallclockNs;

    private ExtendedCompletionQueue(Context context, CompletionChannel channel, MemorySegment cq, long wcFlags) {
        super(context, channel, cq, "ExtendedCompletionQueue");
        this.cqEx = cq.reinterpret(ibv_cq_ex.sizeof());
        this.wcFlags = wcFlags;
        this.pollAttr = Arena.ofAuto().allocate(8); // struct ibv_poll_cq_attr { comp_mask = 0 }
        this.startPoll = slot(ibv_cq_ex.start_poll$offset());
        this.nextPoll = slot(ibv_cq_ex.next_poll$offset());
        this.endPoll = slot(ibv_cq_ex.end_poll$offset());
        this.readOpcode = slot(ibv_cq_ex.read_opcode$offset());
        this.readVendorErr = slot(ibv_cq_ex.read_vendor_err$offset());
        this.readByteLen = slot(ibv_cq_ex.read_byte_len$offset());
        this.readImmData = slot(ibv_cq_ex.read_imm_data$offset());
        this.readQpNum = slot(ibv_cq_ex.read_qp_num$offset());
        this.readSrcQp = slot(ibv_cq_ex.read_src_qp$offset());
        this.readWcFlags = slot(ibv_cq_ex.read_wc_flags$offset());
        this.readSlid = slot(ibv_cq_ex.read_slid$offset());
        this.readSl = slot(ibv_cq_ex.read_sl$offset());
        this.readDlidPathBits = slot(ibv_cq_ex.read_dlid_path_bits$offset());
        this.readCompletionTs = slot(ibv_cq_ex.read_completion_ts$offset());
        this.readCompletionWallclockNs = slot(ibv_cq_ex.read_completion_wallclock_ns$offset());
        if (startPoll.address() == 0 || nextPoll.address() == 0 || endPoll.address() == 0) {
            throw new IllegalStateException("the provider left ibv_cq_ex.start_poll/next_poll/end_poll NULL");
        }
    }

    private MemorySegment slot(long offset) {
        return DataPathCalls.slot(cqEx, offset);
    }

    static ExtendedCompletionQueue create(Context context, CompletionChannel channel, int cqe, int compVector,
                                          long wcFlags, boolean singleThreaded) {
        String call = Errors.call("ibv_create_cq_ex", "cqe", cqe, "wcFlags", "0x" + Long.toHexString(wcFlags));
        long timestamps = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP() | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK();
        if ((wcFlags & timestamps) != 0) {
            ExtendedOps.DeviceCaps caps = ExtendedOps.deviceCaps(context);
            if ((wcFlags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP()) != 0 && caps.completionTimestampMask() == 0) {
                throw new UnsupportedVerbException(call, context.device().name()
                        + " reports completion_timestamp_mask = 0", "completion timestamps (COMPLETION_TIMESTAMP)");
            }
            if ((wcFlags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK()) != 0 && caps.hcaCoreClock() == 0) {
                throw new UnsupportedVerbException(call, context.device().name() + " reports hca_core_clock = 0",
                        "wall-clock completion timestamps (COMPLETION_TIMESTAMP_WALLCLOCK)");
            }
        }
        // the QP number lets polling find which QP's outstanding work requests a completion retires
        long flags = wcFlags | IBV_WC_EX_WITH_QP_NUM();
        MemorySegment ctx = context.resource.handle("ibv_create_cq_ex");
        MemorySegment fn = ExtendedOps.op(ctx, ExtendedOps.CREATE_CQ_EX);
        if (fn.address() == 0) {
            throw new UnsupportedVerbException(call, "libibverbs or the provider has no create_cq_ex op",
                    "extended completion queues");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_cq_init_attr_ex.layout());
            ibv_cq_init_attr_ex.cqe(attr, cqe);
            ibv_cq_init_attr_ex.channel(attr, channel == null ? MemorySegment.NULL
                    : channel.resource.handle("ibv_create_cq_ex"));
            ibv_cq_init_attr_ex.comp_vector(attr, compVector);
            ibv_cq_init_attr_ex.wc_flags(attr, flags);
            if (singleThreaded) {
                ibv_cq_init_attr_ex.comp_mask(attr, IBV_CQ_INIT_ATTR_MASK_FLAGS());
                ibv_cq_init_attr_ex.flags(attr, IBV_CREATE_CQ_ATTR_SINGLE_THREADED());
            }
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment cq;
            try {
                cq = (MemorySegment) ExtendedOps.P_PP.invokeExact(fn, errno, ctx, attr);
            } catch (Throwable t) {
                throw rethrow(t);
            }
            if (cq.address() == 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
            return new ExtendedCompletionQueue(context, channel, cq, wcFlags);
        }
    }

    /**
     * Starts a poll pass ({@code ibv_start_poll(3)}): {@code true} when a completion is current (read it, then
     * {@link #nextPoll()}, and finally {@link #endPoll()}), {@code false} when the CQ is empty (then do not call
     * {@code endPoll}).
     *
     * <p>Errors: any errno other than {@code ENOENT} → {@link VerbsException} (no {@code endPoll} needed).
     */
    public boolean startPoll() {
        resource.checkOpen("ibv_start_poll");
        int rc;
        try {
            rc = (int) DataPathCalls.I_PP.invokeExact(startPoll, cqEx, pollAttr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        return current(rc, "ibv_start_poll");
    }

    /** Advances to the next completion ({@code ibv_next_poll(3)}); {@code false} when none is left. */
    public boolean nextPoll() {
        int rc;
        try {
            rc = (int) DataPathCalls.I_P.invokeExact(nextPoll, cqEx);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        return current(rc, "ibv_next_poll");
    }

    /** Ends the poll pass ({@code ibv_end_poll(3)}): releases the consumed entries and the CQ lock. */
    public void endPoll() {
        try {
            DataPathCalls.V_P.invokeExact(endPoll, cqEx);
        } catch (Throwable t) {
            throw rethrow(t);
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
        throw Errors.failure(Errors.call(verb, "cq", this), rc);
    }

    private void retireCurrent() {
        QueuePair single = queuePairs.single();
        int status = statusValue();
        long wrId = wrId();
        if (single != null) {
            single.retire(this, wrId, status, single.sharesCq() && status == 0 ? opcodeValue() : 0);
        } else if (queuePairs.size() > 0) {
            QueuePair qp = queuePairs.get(readQpNum());
            if (qp != null) {
                qp.retire(this, wrId, status, qp.sharesCq() && status == 0 ? opcodeValue() : 0);
            }
        }
    }

    /** The current completion's {@code wr_id} (a field of {@code ibv_cq_ex}, no call). */
    public long wrId() {
        return cqEx.get(ValueLayout.JAVA_LONG, WR_ID);
    }

    /** The current completion's status (a field of {@code ibv_cq_ex}, no call). */
    public WorkCompletionStatus status() {
        return WorkCompletionStatus.of(statusValue());
    }

    /** The current completion's raw C status. */
    public int statusValue() {
        return cqEx.get(ValueLayout.JAVA_INT, STATUS);
    }

    /** {@code ibv_wc_read_opcode}: valid on success. */
    public WorkCompletionOpcode readOpcode() {
        return WorkCompletionOpcode.of(opcodeValue());
    }

    private int opcodeValue() {
        return readInt(readOpcode);
    }

    /** {@code ibv_wc_read_vendor_err}. */
    public int readVendorErr() {
        return readInt(readVendorErr);
    }

    /** {@code ibv_wc_read_byte_len}; needs {@link CompletionField#BYTE_LEN}. */
    public int readByteLen() {
        return readInt(require(readByteLen, CompletionField.BYTE_LEN));
    }

    /** {@code ibv_wc_read_imm_data} in host order; needs {@link CompletionField#IMM}. */
    public int readImmData() {
        int networkOrder = readInt(require(readImmData, CompletionField.IMM)); // __be32 in a native int
        return LITTLE_ENDIAN ? Integer.reverseBytes(networkOrder) : networkOrder;
    }

    /** {@code ibv_wc_read_invalidated_rkey}; needs {@link CompletionField#IMM}. */
    public int readInvalidatedRkey() {
        return readInt(require(readImmData, CompletionField.IMM));
    }

    /** {@code ibv_wc_read_qp_num} (always available: panverbs requests it). */
    public int readQpNum() {
        return readInt(readQpNum);
    }

    /** {@code ibv_wc_read_src_qp}; needs {@link CompletionField#SRC_QP}. */
    public int readSrcQp() {
        return readInt(require(readSrcQp, CompletionField.SRC_QP));
    }

    /** {@code ibv_wc_read_wc_flags}. */
    public int readWcFlags() {
        return readInt(readWcFlags);
    }

    /** {@code ibv_wc_read_slid}; needs {@link CompletionField#SLID}. */
    public int readSlid() {
        return readInt(require(readSlid, CompletionField.SLID));
    }

    /** {@code ibv_wc_read_sl}; needs {@link CompletionField#SL}. */
    public int readSl() {
        MemorySegment fn = require(readSl, CompletionField.SL);
        try {
            return Byte.toUnsignedInt((byte) DataPathCalls.B_P.invokeExact(fn, cqEx));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_wc_read_dlid_path_bits}; needs {@link CompletionField#DLID_PATH_BITS}. */
    public int readDlidPathBits() {
        MemorySegment fn = require(readDlidPathBits, CompletionField.DLID_PATH_BITS);
        try {
            return Byte.toUnsignedInt((byte) DataPathCalls.B_P.invokeExact(fn, cqEx));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code ibv_wc_read_completion_ts}: raw HCA clock ticks; needs {@link CompletionField#COMPLETION_TIMESTAMP}. */
    public long readCompletionTs() {
        return readLong(require(readCompletionTs, CompletionField.COMPLETION_TIMESTAMP));
    }

    /** {@code ibv_wc_read_completion_wallclock_ns}; needs {@link CompletionField#COMPLETION_TIMESTAMP_WALLCLOCK}. */
    public long readCompletionWallclockNs() {
        return readLong(require(readCompletionWallclockNs, CompletionField.COMPLETION_TIMESTAMP_WALLCLOCK));
    }

    private int readInt(MemorySegment fn) {
        try {
            return (int) DataPathCalls.I_P.invokeExact(fn, cqEx);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private long readLong(MemorySegment fn) {
        try {
            return (long) DataPathCalls.J_P.invokeExact(fn, cqEx);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private MemorySegment require(MemorySegment fn, CompletionField field) {
        if (fn.address() == 0) {
            throw notRequested(field);
        }
        return fn;
    }

    private IllegalStateException notRequested(CompletionField field) {
        return new IllegalStateException("ibv_wc_read_" + field.name().toLowerCase() + ": " + this
                + " was not created with " + field + " in wcFlags (requested: "
                + java.util.Arrays.stream(CompletionField.values()).filter(f -> (wcFlags & f.bit()) != 0).toList()
                + ")");
    }
}
