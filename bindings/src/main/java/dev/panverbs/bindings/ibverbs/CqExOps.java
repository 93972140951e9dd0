package dev.panverbs.bindings.ibverbs;

import static dev.panverbs.bindings.NativeMemory.nonNull;
import static dev.panverbs.bindings.NativeMemory.pointer;

import dev.panverbs.bindings.AddressDowncalls;
import dev.panverbs.bindings.ProviderDowncalls;
import dev.panverbs.bindings.ProviderSlots;
import dev.panverbs.bindings.verbs.ibv_cq_ex;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The polling functions of one {@code struct ibv_cq_ex}, bound once: {@link #of} reads all 18 function
 * pointers when the CQ is created, and each method calls its slot through a {@code static final} critical
 * virtual downcall handle with {@code invokeExact}. Nothing is looked up or allocated per call; a NULL
 * reader slot costs one compare and throws the exception of {@link ProviderSlots#missing} naming the verb and the
 * missing {@code wc_flags} bit (where C would crash).
 *
 * <p>Semantics are those of the {@link CqExInline} twin of the same name. Not thread-safe: a poll from
 * {@code ibv_start_poll} to {@code ibv_end_poll} may hold the provider's CQ lock and belongs to one thread.
 */
public final class CqExOps {
    /**
     * All of native memory as one segment, held in a constant: C2 folds its class, scope and size, so the per-completion
     * field reads ({@link #status}, {@link #wr_id}) are one {@code mov} each at {@code address + constant offset},
     * instead of a segment's class, scope and bounds checks. The struct is alive while its CQ is, which the callers'
     * poll pass guarantees (as for the slot calls).
     */
    private static final MemorySegment NATIVE = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
    /** User-space addresses are below 2^56 (checked in the constructor): C2 then sees every address in range. */
    private static final long ADDR_BITS = (1L << 56) - 1;

    private final MemorySegment cq;
    private final long address;
    private final MemorySegment startPoll;
    private final MemorySegment nextPoll;
    private final MemorySegment endPoll;
    private final MemorySegment readOpcode;
    private final MemorySegment readVendorErr;
    private final MemorySegment readByteLen;
    private final MemorySegment readImmData;
    private final MemorySegment readQpNum;
    private final MemorySegment readSrcQp;
    private final MemorySegment readWcFlags;
    private final MemorySegment readSlid;
    private final MemorySegment readSl;
    private final MemorySegment readDlidPathBits;
    private final MemorySegment readCompletionTs;
    private final MemorySegment readCompletionWallclockNs;
    private final MemorySegment readCvlan;
    private final MemorySegment readFlowTag;
    private final MemorySegment readTmInfo;
    /** This CQ's slots are those of {@link First} (the same provider as the first bound: normally every CQ's). */
    private final boolean firstSlots;

    /** The first {@code CqExOps} bound in this process: {@link First} makes its slots constants. */
    private static final AtomicReference<CqExOps> FIRST = new AtomicReference<>();

    /**
     * The per-completion slots of the first {@code CqExOps} bound (initialised on first use, after it) as
     * {@code static final} segments: C2 folds the linker's checks on a constant target (its class, its scope's class,
     * NULL), as {@code QpExOps.First} explains. A CQ of another provider keeps calling through its fields.
     */
    private static final class First {
        static final CqExOps OPS = FIRST.get();
        static final MemorySegment START_POLL = OPS.startPoll;
        static final MemorySegment NEXT_POLL = OPS.nextPoll;
        static final MemorySegment END_POLL = OPS.endPoll;
        static final MemorySegment READ_OPCODE = OPS.readOpcode;
        static final MemorySegment READ_BYTE_LEN = OPS.readByteLen;
    }

    private CqExOps(MemorySegment cq) {
        this.cq = cq;
        long c = cq.address();
        if ((c & ~ADDR_BITS) != 0) {
            throw new IllegalArgumentException("ibv_cq_ex at 0x" + Long.toHexString(c) + " is outside the user "
                    + "address space");
        }
        this.address = c;
        startPoll = pointer(c + CqExInline.START_POLL);
        nextPoll = pointer(c + CqExInline.NEXT_POLL);
        endPoll = pointer(c + CqExInline.END_POLL);
        readOpcode = pointer(c + CqExInline.READ_OPCODE);
        readVendorErr = pointer(c + CqExInline.READ_VENDOR_ERR);
        readByteLen = pointer(c + CqExInline.READ_BYTE_LEN);
        readImmData = pointer(c + CqExInline.READ_IMM_DATA);
        readQpNum = pointer(c + CqExInline.READ_QP_NUM);
        readSrcQp = pointer(c + CqExInline.READ_SRC_QP);
        readWcFlags = pointer(c + CqExInline.READ_WC_FLAGS);
        readSlid = pointer(c + CqExInline.READ_SLID);
        readSl = pointer(c + CqExInline.READ_SL);
        readDlidPathBits = pointer(c + CqExInline.READ_DLID_PATH_BITS);
        readCompletionTs = pointer(c + CqExInline.READ_COMPLETION_TS);
        readCompletionWallclockNs = pointer(c + CqExInline.READ_COMPLETION_WALLCLOCK_NS);
        readCvlan = pointer(c + CqExInline.READ_CVLAN);
        readFlowTag = pointer(c + CqExInline.READ_FLOW_TAG);
        readTmInfo = pointer(c + CqExInline.READ_TM_INFO);
        CqExOps first = FIRST.compareAndExchange(null, this);
        firstSlots = first == null || sameSlots(first);
    }

    /** Whether every slot {@link First} holds is at the same address here (a CQ of the same provider). */
    private boolean sameSlots(CqExOps o) {
        return startPoll.equals(o.startPoll) && nextPoll.equals(o.nextPoll) && endPoll.equals(o.endPoll)
                && readOpcode.equals(o.readOpcode) && readByteLen.equals(o.readByteLen);
    }

    /** Whether this CQ calls its slots through {@link First}'s constants (tests). */
    boolean callsConstantSlots() {
        return firstSlots;
    }

    /**
     * Reads the polling slots of {@code cqEx} (an {@code ibv_cq_ex *} from {@code ibv_create_cq_ex}). The slots
     * never change after creation, so the result is valid until the CQ is destroyed.
     */
    public static CqExOps of(MemorySegment cqEx) {
        nonNull(cqEx, "CqExOps.of", "cqEx");
        return new CqExOps(cqEx.reinterpret(ibv_cq_ex.sizeof()));
    }

    /** The {@code ibv_cq_ex *} these ops act on, sized to the struct. */
    public MemorySegment cq() {
        return cq;
    }

    /** {@code cq->status}: the {@code enum ibv_wc_status} of the current completion. */
    public int status() {
        return NATIVE.get(ValueLayout.JAVA_INT_UNALIGNED, (address & ADDR_BITS) + CqExInline.STATUS);
    }

    /** {@code cq->wr_id}: the work request ID of the current completion. */
    public long wr_id() {
        return NATIVE.get(ValueLayout.JAVA_LONG_UNALIGNED, (address & ADDR_BITS) + CqExInline.WR_ID);
    }

    /** Rewrites {@code cq->wr_id} of the current completion (the provider rewrites it at every start/next poll). */
    public void wr_id(long wrId) {
        NATIVE.set(ValueLayout.JAVA_LONG_UNALIGNED, (address & ADDR_BITS) + CqExInline.WR_ID, wrId);
    }

    /** {@link CqExInline#ibv_start_poll} through the slot read at bind time. */
    public int ibv_start_poll(MemorySegment attr) {
        MemorySegment fn = startPoll;
        if (fn.address() == 0L) {
            throw CqExInline.missing("ibv_start_poll", "start_poll", CqExInline.NOT_EXTENDED);
        }
        return AddressDowncalls.i_ap(fn, address, attr);
    }

    /**
     * {@link #ibv_start_poll(MemorySegment)} with {@code attr} given as its address: no segment checks and no scope
     * acquire per call. Only for an {@code attr} that stays allocated for as long as this CQ polls (global-arena memory).
     */
    public int ibv_start_poll(long attrAddress) {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            return i_aa(First.START_POLL, address, attrAddress, "ibv_start_poll", "start_poll",
                    CqExInline.NOT_EXTENDED);
        }
        return i_aa(this.startPoll, address, attrAddress, "ibv_start_poll", "start_poll", CqExInline.NOT_EXTENDED);
    }

    /** {@link CqExInline#ibv_next_poll} through the slot read at bind time. */
    public int ibv_next_poll() {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            return i_a(First.NEXT_POLL, address, "ibv_next_poll", "next_poll", CqExInline.NOT_EXTENDED);
        }
        return i_a(this.nextPoll, address, "ibv_next_poll", "next_poll", CqExInline.NOT_EXTENDED);
    }

    /** {@link CqExInline#ibv_end_poll} through the slot read at bind time. */
    public void ibv_end_poll() {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            v_a(First.END_POLL, address, "ibv_end_poll", "end_poll", CqExInline.NOT_EXTENDED);
        } else {
            v_a(this.endPoll, address, "ibv_end_poll", "end_poll", CqExInline.NOT_EXTENDED);
        }
    }

    /** {@link CqExInline#ibv_wc_read_opcode} through the slot read at bind time. */
    public int ibv_wc_read_opcode() {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            return i_a(First.READ_OPCODE, address, "ibv_wc_read_opcode", "read_opcode", CqExInline.NOT_EXTENDED);
        }
        return i_a(this.readOpcode, address, "ibv_wc_read_opcode", "read_opcode", CqExInline.NOT_EXTENDED);
    }

    /** {@link CqExInline#ibv_wc_read_vendor_err} through the slot read at bind time. */
    public int ibv_wc_read_vendor_err() {
        MemorySegment fn = readVendorErr;
        if (fn.address() == 0L) {
            throw CqExInline.missing("ibv_wc_read_vendor_err", "read_vendor_err", CqExInline.NOT_EXTENDED);
        }
        return AddressDowncalls.i_a(fn, address);
    }

    /** {@link CqExInline#ibv_wc_read_byte_len} through the slot read at bind time. */
    public int ibv_wc_read_byte_len() {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            return i_a(First.READ_BYTE_LEN, address, "ibv_wc_read_byte_len", "read_byte_len", CqExInline.NO_BYTE_LEN);
        }
        return i_a(this.readByteLen, address, "ibv_wc_read_byte_len", "read_byte_len", CqExInline.NO_BYTE_LEN);
    }

    /** {@link CqExInline#ibv_wc_read_imm_data} through the slot read at bind time. */
    public int ibv_wc_read_imm_data() {
        MemorySegment fn = readImmData;
        if (fn.address() == 0L) {
            throw CqExInline.missing("ibv_wc_read_imm_data", "read_imm_data", CqExInline.NO_IMM);
        }
        return AddressDowncalls.i_a(fn, address);
    }

    /** {@link CqExInline#ibv_wc_read_invalidated_rkey} through the slot read at bind time. */
    public int ibv_wc_read_invalidated_rkey() {
        MemorySegment fn = readImmData;
        if (fn.address() == 0L) {
            throw CqExInline.missing("ibv_wc_read_invalidated_rkey", "read_imm_data", CqExInline.NO_IMM);
        }
        return AddressDowncalls.i_a(fn, address);
    }

    /** {@link CqExInline#ibv_wc_read_qp_num} through the slot read at bind time. */
    public int ibv_wc_read_qp_num() {
        MemorySegment fn = readQpNum;
        if (fn.address() == 0L) {
            throw CqExInline.missing("ibv_wc_read_qp_num", "read_qp_num", CqExInline.NO_QP_NUM);
        }
        return AddressDowncalls.i_a(fn, address);
    }

    /** {@link CqExInline#ibv_wc_read_src_qp} through the slot read at bind time. */
    public int ibv_wc_read_src_qp() {
        MemorySegment fn = readSrcQp;
        if (fn.address() == 0L) {
            throw CqExInline.missing("ibv_wc_read_src_qp", "read_src_qp", CqExInline.NO_SRC_QP);
        }
        return AddressDowncalls.i_a(fn, address);
    }

    /** {@link CqExInline#ibv_wc_read_wc_flags} through the slot read at bind time. */
    public int ibv_wc_read_wc_flags() {
        MemorySegment fn = readWcFlags;
        if (fn.address() == 0L) {
            throw CqExInline.missing("ibv_wc_read_wc_flags", "read_wc_flags", CqExInline.NOT_EXTENDED);
        }
        return AddressDowncalls.i_a(fn, address);
    }

    /** {@link CqExInline#ibv_wc_read_slid} through the slot read at bind time. */
    public int ibv_wc_read_slid() {
        MemorySegment fn = readSlid;
        if (fn.address() == 0L) {
            throw CqExInline.missing("ibv_wc_read_slid", "read_slid", CqExInline.NO_SLID);
        }
        return AddressDowncalls.i_a(fn, address);
    }

    /** {@link CqExInline#ibv_wc_read_sl} through the slot read at bind time. */
    public int ibv_wc_read_sl() {
        MemorySegment fn = readSl;
        if (fn.address() == 0L) {
            throw CqExInline.missing("ibv_wc_read_sl", "read_sl", CqExInline.NO_SL);
        }
        return Byte.toUnsignedInt(ProviderDowncalls.b_p(fn, cq));
    }

    /** {@link CqExInline#ibv_wc_read_dlid_path_bits} through the slot read at bind time. */
    public int ibv_wc_read_dlid_path_bits() {
        MemorySegment fn = readDlidPathBits;
        if (fn.address() == 0L) {
            throw CqExInline.missing("ibv_wc_read_dlid_path_bits", "read_dlid_path_bits", CqExInline.NO_DLID_PATH_BITS);
        }
        return Byte.toUnsignedInt(ProviderDowncalls.b_p(fn, cq));
    }

    /** {@link CqExInline#ibv_wc_read_completion_ts} through the slot read at bind time. */
    public long ibv_wc_read_completion_ts() {
        MemorySegment fn = readCompletionTs;
        if (fn.address() == 0L) {
            throw CqExInline.missing("ibv_wc_read_completion_ts", "read_completion_ts", CqExInline.NO_TIMESTAMP);
        }
        return ProviderDowncalls.j_p(fn, cq);
    }

    /** {@link CqExInline#ibv_wc_read_completion_wallclock_ns} through the slot read at bind time. */
    public long ibv_wc_read_completion_wallclock_ns() {
        MemorySegment fn = readCompletionWallclockNs;
        if (fn.address() == 0L) {
            throw CqExInline.missing("ibv_wc_read_completion_wallclock_ns", "read_completion_wallclock_ns",
                    CqExInline.NO_WALLCLOCK);
        }
        return ProviderDowncalls.j_p(fn, cq);
    }

    /** {@link CqExInline#ibv_wc_read_cvlan} through the slot read at bind time. */
    public int ibv_wc_read_cvlan() {
        MemorySegment fn = readCvlan;
        if (fn.address() == 0L) {
            throw CqExInline.missing("ibv_wc_read_cvlan", "read_cvlan", CqExInline.NO_CVLAN);
        }
        return Short.toUnsignedInt(ProviderDowncalls.s_p(fn, cq));
    }

    /** {@link CqExInline#ibv_wc_read_flow_tag} through the slot read at bind time. */
    public int ibv_wc_read_flow_tag() {
        MemorySegment fn = readFlowTag;
        if (fn.address() == 0L) {
            throw CqExInline.missing("ibv_wc_read_flow_tag", "read_flow_tag", CqExInline.NO_FLOW_TAG);
        }
        return AddressDowncalls.i_a(fn, address);
    }

    /** {@link CqExInline#ibv_wc_read_tm_info} through the slot read at bind time. */
    public void ibv_wc_read_tm_info(MemorySegment tmInfo) {
        MemorySegment fn = readTmInfo;
        if (fn.address() == 0L) {
            throw CqExInline.missing("ibv_wc_read_tm_info", "read_tm_info", CqExInline.NO_TM_INFO);
        }
        ProviderDowncalls.v_pp(fn, cq, tmInfo);
    }

    // ---- one slot call: the NULL check naming the verb, then the downcall (inlined per call site, so a constant
    // slot stays constant) ----

    private static int i_a(MemorySegment fn, long a, String verb, String slot, String reason) {
        if (fn.address() == 0L) {
            throw CqExInline.missing(verb, slot, reason);
        }
        return AddressDowncalls.i_a(fn, a);
    }

    private static int i_aa(MemorySegment fn, long a, long a1, String verb, String slot, String reason) {
        if (fn.address() == 0L) {
            throw CqExInline.missing(verb, slot, reason);
        }
        return AddressDowncalls.i_aa(fn, a, a1);
    }

    private static void v_a(MemorySegment fn, long a, String verb, String slot, String reason) {
        if (fn.address() == 0L) {
            throw CqExInline.missing(verb, slot, reason);
        }
        AddressDowncalls.v_a(fn, a);
    }
}
