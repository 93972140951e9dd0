package dev.panverbs.bindings.ibverbs;

import static dev.panverbs.bindings.NativeMemory.nonNull;
import static dev.panverbs.bindings.NativeMemory.pointer;

import dev.panverbs.bindings.AddressDowncalls;
import dev.panverbs.bindings.ProviderDowncalls;
import dev.panverbs.bindings.ProviderSlots;
import dev.panverbs.bindings.verbs.ibv_qp_ex;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The {@code ibv_wr_*} builders of one {@code struct ibv_qp_ex}, bound once: {@link #of} reads all 21
 * function pointers when the QP is created, and each method calls its slot through a {@code static final}
 * virtual downcall handle with {@code invokeExact} (critical except the doorbell {@code wr_complete}, see
 * {@link ProviderDowncalls}). Nothing is looked up or allocated per call; a
 * NULL slot costs one compare and throws the exception of {@link ProviderSlots#missing} naming the verb and the
 * missing {@code send_ops_flags} bit (where C would crash).
 *
 * <p>Semantics are those of the {@link QpExInline} twin of the same name. Not thread-safe: a batch from
 * {@code ibv_wr_start} to {@code ibv_wr_complete}/{@code ibv_wr_abort} holds the provider's send-queue lock
 * and belongs to one thread.
 */
public final class QpExOps {
    /**
     * All of native memory as one segment, held in a constant: C2 folds its class, scope and size, so the per-WR
     * field stores ({@link #wr_id}, {@link #wr_flags}) are one {@code mov} each at {@code address + constant offset},
     * instead of a segment's class, scope and bounds checks. The struct is alive while its QP is, which the callers'
     * open batch guarantees (as for the slot calls).
     */
    private static final MemorySegment NATIVE = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
    /** User-space addresses are below 2^56 (checked in the constructor): C2 then sees every address in range. */
    private static final long ADDR_BITS = (1L << 56) - 1;

    private final MemorySegment qp;
    private final long address;
    private final MemorySegment wrAtomicCmpSwp;
    private final MemorySegment wrAtomicFetchAdd;
    private final MemorySegment wrBindMw;
    private final MemorySegment wrLocalInv;
    private final MemorySegment wrRdmaRead;
    private final MemorySegment wrRdmaWrite;
    private final MemorySegment wrRdmaWriteImm;
    private final MemorySegment wrSend;
    private final MemorySegment wrSendImm;
    private final MemorySegment wrSendInv;
    private final MemorySegment wrSendTso;
    private final MemorySegment wrSetUdAddr;
    private final MemorySegment wrSetXrcSrqn;
    private final MemorySegment wrSetInlineData;
    private final MemorySegment wrSetInlineDataList;
    private final MemorySegment wrSetSge;
    private final MemorySegment wrSetSgeList;
    private final MemorySegment wrStart;
    private final MemorySegment wrComplete;
    private final MemorySegment wrAbort;
    private final MemorySegment wrAtomicWrite;
    /** This QP's slots are those of {@link First} (the same provider as the first bound: normally every QP's). */
    private final boolean firstSlots;

    /** The first {@code QpExOps} bound in this process: {@link First} makes its slots constants. */
    private static final AtomicReference<QpExOps> FIRST = new AtomicReference<>();

    /**
     * The per-WR slots of the first {@code QpExOps} bound (initialised on first use, after it) as {@code static final}
     * segments. A call through an instance field's segment pays, per downcall, the linker's checks on the target: its
     * class (the field's type is the interface), its scope's class (the acquire) and NULL; through a constant C2 folds
     * all three (no allocation involved, unlike wrapping an address per call). A QP of another provider (slots not
     * all equal) keeps calling through its fields.
     */
    private static final class First {
        static final QpExOps OPS = FIRST.get();
        static final MemorySegment WR_LOCAL_INV = OPS.wrLocalInv;
        static final MemorySegment WR_RDMA_READ = OPS.wrRdmaRead;
        static final MemorySegment WR_RDMA_WRITE = OPS.wrRdmaWrite;
        static final MemorySegment WR_RDMA_WRITE_IMM = OPS.wrRdmaWriteImm;
        static final MemorySegment WR_SEND = OPS.wrSend;
        static final MemorySegment WR_SEND_IMM = OPS.wrSendImm;
        static final MemorySegment WR_SEND_INV = OPS.wrSendInv;
        static final MemorySegment WR_SET_XRC_SRQN = OPS.wrSetXrcSrqn;
        static final MemorySegment WR_SET_SGE = OPS.wrSetSge;
        static final MemorySegment WR_START = OPS.wrStart;
        static final MemorySegment WR_COMPLETE = OPS.wrComplete;
        static final MemorySegment WR_ABORT = OPS.wrAbort;
    }

    private QpExOps(MemorySegment qp) {
        this.qp = qp;
        long q = qp.address();
        if ((q & ~ADDR_BITS) != 0) {
            throw new IllegalArgumentException("ibv_qp_ex at 0x" + Long.toHexString(q) + " is outside the user "
                    + "address space");
        }
        this.address = q;
        wrAtomicCmpSwp = pointer(q + QpExInline.WR_ATOMIC_CMP_SWP);
        wrAtomicFetchAdd = pointer(q + QpExInline.WR_ATOMIC_FETCH_ADD);
        wrBindMw = pointer(q + QpExInline.WR_BIND_MW);
        wrLocalInv = pointer(q + QpExInline.WR_LOCAL_INV);
        wrRdmaRead = pointer(q + QpExInline.WR_RDMA_READ);
        wrRdmaWrite = pointer(q + QpExInline.WR_RDMA_WRITE);
        wrRdmaWriteImm = pointer(q + QpExInline.WR_RDMA_WRITE_IMM);
        wrSend = pointer(q + QpExInline.WR_SEND);
        wrSendImm = pointer(q + QpExInline.WR_SEND_IMM);
        wrSendInv = pointer(q + QpExInline.WR_SEND_INV);
        wrSendTso = pointer(q + QpExInline.WR_SEND_TSO);
        wrSetUdAddr = pointer(q + QpExInline.WR_SET_UD_ADDR);
        wrSetXrcSrqn = pointer(q + QpExInline.WR_SET_XRC_SRQN);
        wrSetInlineData = pointer(q + QpExInline.WR_SET_INLINE_DATA);
        wrSetInlineDataList = pointer(q + QpExInline.WR_SET_INLINE_DATA_LIST);
        wrSetSge = pointer(q + QpExInline.WR_SET_SGE);
        wrSetSgeList = pointer(q + QpExInline.WR_SET_SGE_LIST);
        wrStart = pointer(q + QpExInline.WR_START);
        wrComplete = pointer(q + QpExInline.WR_COMPLETE);
        wrAbort = pointer(q + QpExInline.WR_ABORT);
        wrAtomicWrite = pointer(q + QpExInline.WR_ATOMIC_WRITE);
        QpExOps first = FIRST.compareAndExchange(null, this);
        firstSlots = first == null || sameSlots(first);
    }

    /** Whether every slot {@link First} holds is at the same address here (a QP of the same provider). */
    private boolean sameSlots(QpExOps o) {
        return wrLocalInv.equals(o.wrLocalInv) && wrRdmaRead.equals(o.wrRdmaRead) && wrRdmaWrite.equals(o.wrRdmaWrite)
                && wrRdmaWriteImm.equals(o.wrRdmaWriteImm) && wrSend.equals(o.wrSend) && wrSendImm.equals(o.wrSendImm)
                && wrSendInv.equals(o.wrSendInv) && wrSetXrcSrqn.equals(o.wrSetXrcSrqn) && wrSetSge.equals(o.wrSetSge)
                && wrStart.equals(o.wrStart) && wrComplete.equals(o.wrComplete) && wrAbort.equals(o.wrAbort);
    }

    /** Whether this QP calls its slots through {@link First}'s constants (tests). */
    boolean callsConstantSlots() {
        return firstSlots;
    }

    /**
     * Reads the builder slots of {@code qpEx} (an {@code ibv_qp_ex *}, e.g. from {@code ibv_qp_to_qp_ex}). The
     * slots never change after creation, so the result is valid until the QP is destroyed.
     */
    public static QpExOps of(MemorySegment qpEx) {
        nonNull(qpEx, "QpExOps.of", "qpEx");
        return new QpExOps(qpEx.reinterpret(ibv_qp_ex.sizeof()));
    }

    /** The {@code ibv_qp_ex *} these ops act on, sized to the struct. */
    public MemorySegment qp() {
        return qp;
    }

    /** Writes {@code qp->wr_id}: the ID of the next WR built, reported back in its completion. */
    public void wr_id(long wrId) {
        NATIVE.set(ValueLayout.JAVA_LONG_UNALIGNED, (address & ADDR_BITS) + QpExInline.WR_ID, wrId);
    }

    /** Writes {@code qp->wr_flags}: {@code enum ibv_send_flags} bits for the next WR built. */
    public void wr_flags(int wrFlags) {
        NATIVE.set(ValueLayout.JAVA_INT_UNALIGNED, (address & ADDR_BITS) + QpExInline.WR_FLAGS, wrFlags);
    }

    /** {@link QpExInline#ibv_wr_atomic_cmp_swp} through the slot read at bind time. */
    public void ibv_wr_atomic_cmp_swp(int rkey, long remoteAddr, long compare, long swap) {
        MemorySegment fn = wrAtomicCmpSwp;
        if (fn.address() == 0L) {
            throw QpExInline.missing("ibv_wr_atomic_cmp_swp", QpExInline.NO_ATOMIC_CMP_SWP);
        }
        ProviderDowncalls.v_pijjj(fn, qp, rkey, remoteAddr, compare, swap);
    }

    /** {@link QpExInline#ibv_wr_atomic_fetch_add} through the slot read at bind time. */
    public void ibv_wr_atomic_fetch_add(int rkey, long remoteAddr, long add) {
        MemorySegment fn = wrAtomicFetchAdd;
        if (fn.address() == 0L) {
            throw QpExInline.missing("ibv_wr_atomic_fetch_add", QpExInline.NO_ATOMIC_FETCH_ADD);
        }
        ProviderDowncalls.v_pijj(fn, qp, rkey, remoteAddr, add);
    }

    /** {@link QpExInline#ibv_wr_bind_mw} through the slot read at bind time. */
    public void ibv_wr_bind_mw(MemorySegment mw, int rkey, MemorySegment bindInfo) {
        MemorySegment fn = wrBindMw;
        if (fn.address() == 0L) {
            throw QpExInline.missing("ibv_wr_bind_mw", QpExInline.NO_BIND_MW);
        }
        ProviderDowncalls.v_ppip(fn, qp, mw, rkey, bindInfo);
    }

    /** {@link QpExInline#ibv_wr_local_inv} through the slot read at bind time. */
    public void ibv_wr_local_inv(int invalidateRkey) {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            v_ai(First.WR_LOCAL_INV, address, invalidateRkey, "ibv_wr_local_inv", QpExInline.NO_LOCAL_INV);
        } else {
            v_ai(this.wrLocalInv, address, invalidateRkey, "ibv_wr_local_inv", QpExInline.NO_LOCAL_INV);
        }
    }

    /** {@link QpExInline#ibv_wr_rdma_read} through the slot read at bind time. */
    public void ibv_wr_rdma_read(int rkey, long remoteAddr) {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            v_aij(First.WR_RDMA_READ, address, rkey, remoteAddr, "ibv_wr_rdma_read", QpExInline.NO_RDMA_READ);
        } else {
            v_aij(this.wrRdmaRead, address, rkey, remoteAddr, "ibv_wr_rdma_read", QpExInline.NO_RDMA_READ);
        }
    }

    /** {@link QpExInline#ibv_wr_rdma_write} through the slot read at bind time. */
    public void ibv_wr_rdma_write(int rkey, long remoteAddr) {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            v_aij(First.WR_RDMA_WRITE, address, rkey, remoteAddr, "ibv_wr_rdma_write", QpExInline.NO_RDMA_WRITE);
        } else {
            v_aij(this.wrRdmaWrite, address, rkey, remoteAddr, "ibv_wr_rdma_write", QpExInline.NO_RDMA_WRITE);
        }
    }

    /** {@link QpExInline#ibv_wr_rdma_write_imm} through the slot read at bind time. */
    public void ibv_wr_rdma_write_imm(int rkey, long remoteAddr, int immData) {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            v_aiji(First.WR_RDMA_WRITE_IMM, address, rkey, remoteAddr, immData, "ibv_wr_rdma_write_imm",
                    QpExInline.NO_RDMA_WRITE_IMM);
        } else {
            v_aiji(this.wrRdmaWriteImm, address, rkey, remoteAddr, immData, "ibv_wr_rdma_write_imm",
                    QpExInline.NO_RDMA_WRITE_IMM);
        }
    }

    /** {@link QpExInline#ibv_wr_send} through the slot read at bind time. */
    public void ibv_wr_send() {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            v_a(First.WR_SEND, address, "ibv_wr_send", QpExInline.NO_SEND);
        } else {
            v_a(this.wrSend, address, "ibv_wr_send", QpExInline.NO_SEND);
        }
    }

    /** {@link QpExInline#ibv_wr_send_imm} through the slot read at bind time. */
    public void ibv_wr_send_imm(int immData) {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            v_ai(First.WR_SEND_IMM, address, immData, "ibv_wr_send_imm", QpExInline.NO_SEND_IMM);
        } else {
            v_ai(this.wrSendImm, address, immData, "ibv_wr_send_imm", QpExInline.NO_SEND_IMM);
        }
    }

    /** {@link QpExInline#ibv_wr_send_inv} through the slot read at bind time. */
    public void ibv_wr_send_inv(int invalidateRkey) {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            v_ai(First.WR_SEND_INV, address, invalidateRkey, "ibv_wr_send_inv", QpExInline.NO_SEND_INV);
        } else {
            v_ai(this.wrSendInv, address, invalidateRkey, "ibv_wr_send_inv", QpExInline.NO_SEND_INV);
        }
    }

    /** {@link QpExInline#ibv_wr_send_tso} through the slot read at bind time. */
    public void ibv_wr_send_tso(MemorySegment hdr, short hdrSz, short mss) {
        MemorySegment fn = wrSendTso;
        if (fn.address() == 0L) {
            throw QpExInline.missing("ibv_wr_send_tso", QpExInline.NO_SEND_TSO);
        }
        ProviderDowncalls.v_ppss(fn, qp, hdr, hdrSz, mss);
    }

    /** {@link QpExInline#ibv_wr_set_ud_addr} through the slot read at bind time. */
    public void ibv_wr_set_ud_addr(MemorySegment ah, int remoteQpn, int remoteQkey) {
        MemorySegment fn = wrSetUdAddr;
        if (fn.address() == 0L) {
            throw QpExInline.missing("ibv_wr_set_ud_addr", QpExInline.UD_ONLY);
        }
        ProviderDowncalls.v_ppii(fn, qp, ah, remoteQpn, remoteQkey);
    }

    /** {@link QpExInline#ibv_wr_set_xrc_srqn} through the slot read at bind time. */
    public void ibv_wr_set_xrc_srqn(int remoteSrqn) {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            v_ai(First.WR_SET_XRC_SRQN, address, remoteSrqn, "ibv_wr_set_xrc_srqn", QpExInline.XRC_ONLY);
        } else {
            v_ai(this.wrSetXrcSrqn, address, remoteSrqn, "ibv_wr_set_xrc_srqn", QpExInline.XRC_ONLY);
        }
    }

    /** {@link QpExInline#ibv_wr_set_inline_data} through the slot read at bind time. */
    public void ibv_wr_set_inline_data(MemorySegment addr, long length) {
        MemorySegment fn = wrSetInlineData;
        if (fn.address() == 0L) {
            throw QpExInline.missing("ibv_wr_set_inline_data", QpExInline.NOT_EXTENDED);
        }
        ProviderDowncalls.v_ppj(fn, qp, addr, length);
    }

    /** {@link QpExInline#ibv_wr_set_inline_data_list} through the slot read at bind time. */
    public void ibv_wr_set_inline_data_list(long numBuf, MemorySegment bufList) {
        MemorySegment fn = wrSetInlineDataList;
        if (fn.address() == 0L) {
            throw QpExInline.missing("ibv_wr_set_inline_data_list", QpExInline.NOT_EXTENDED);
        }
        ProviderDowncalls.v_pjp(fn, qp, numBuf, bufList);
    }

    /** {@link QpExInline#ibv_wr_set_sge} through the slot read at bind time. */
    public void ibv_wr_set_sge(int lkey, long addr, int length) {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            v_aiji(First.WR_SET_SGE, address, lkey, addr, length, "ibv_wr_set_sge", QpExInline.NOT_EXTENDED);
        } else {
            v_aiji(this.wrSetSge, address, lkey, addr, length, "ibv_wr_set_sge", QpExInline.NOT_EXTENDED);
        }
    }

    /** {@link QpExInline#ibv_wr_set_sge_list} through the slot read at bind time. */
    public void ibv_wr_set_sge_list(long numSge, MemorySegment sgList) {
        MemorySegment fn = wrSetSgeList;
        if (fn.address() == 0L) {
            throw QpExInline.missing("ibv_wr_set_sge_list", QpExInline.NOT_EXTENDED);
        }
        ProviderDowncalls.v_pjp(fn, qp, numSge, sgList);
    }

    /** {@link QpExInline#ibv_wr_start} through the slot read at bind time. */
    public void ibv_wr_start() {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            v_a(First.WR_START, address, "ibv_wr_start", QpExInline.NOT_EXTENDED);
        } else {
            v_a(this.wrStart, address, "ibv_wr_start", QpExInline.NOT_EXTENDED);
        }
    }

    /** {@link QpExInline#ibv_wr_complete} through the slot read at bind time. */
    public int ibv_wr_complete() {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            return kick_i_a(First.WR_COMPLETE, address, "ibv_wr_complete", QpExInline.NOT_EXTENDED);
        }
        return kick_i_a(this.wrComplete, address, "ibv_wr_complete", QpExInline.NOT_EXTENDED);
    }

    /** {@link QpExInline#ibv_wr_abort} through the slot read at bind time. */
    public void ibv_wr_abort() {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            v_a(First.WR_ABORT, address, "ibv_wr_abort", QpExInline.NOT_EXTENDED);
        } else {
            v_a(this.wrAbort, address, "ibv_wr_abort", QpExInline.NOT_EXTENDED);
        }
    }

    /** {@link QpExInline#ibv_wr_atomic_write} through the slot read at bind time. */
    public void ibv_wr_atomic_write(int rkey, long remoteAddr, MemorySegment atomicWr) {
        MemorySegment fn = wrAtomicWrite;
        if (fn.address() == 0L) {
            throw QpExInline.missing("ibv_wr_atomic_write", QpExInline.NO_ATOMIC_WRITE);
        }
        ProviderDowncalls.v_pijp(fn, qp, rkey, remoteAddr, atomicWr);
    }

    // ---- one slot call: the NULL check naming the verb, then the downcall (inlined per call site, so a constant
    // slot stays constant) ----

    private static void v_a(MemorySegment fn, long a, String verb, String reason) {
        if (fn.address() == 0L) {
            throw QpExInline.missing(verb, reason);
        }
        AddressDowncalls.v_a(fn, a);
    }

    private static void v_ai(MemorySegment fn, long a, int a1, String verb, String reason) {
        if (fn.address() == 0L) {
            throw QpExInline.missing(verb, reason);
        }
        AddressDowncalls.v_ai(fn, a, a1);
    }

    private static void v_aij(MemorySegment fn, long a, int a1, long a2, String verb, String reason) {
        if (fn.address() == 0L) {
            throw QpExInline.missing(verb, reason);
        }
        AddressDowncalls.v_aij(fn, a, a1, a2);
    }

    private static void v_aiji(MemorySegment fn, long a, int a1, long a2, int a3, String verb, String reason) {
        if (fn.address() == 0L) {
            throw QpExInline.missing(verb, reason);
        }
        AddressDowncalls.v_aiji(fn, a, a1, a2, a3);
    }

    private static int kick_i_a(MemorySegment fn, long a, String verb, String reason) {
        if (fn.address() == 0L) {
            throw QpExInline.missing(verb, reason);
        }
        return AddressDowncalls.kick_i_a(fn, a);
    }
}
