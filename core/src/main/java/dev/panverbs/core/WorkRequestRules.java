package dev.panverbs.core;

import dev.panverbs.core.internal.Resource;
import java.lang.foreign.MemorySegment;

/**
 * What one queue pair may post, decided once at creation: the opcodes its type and the device allow, its inline and
 * SGE limits, its protection domain. The checks run on the post path and allocate nothing; their exceptions are
 * built in separate cold methods.
 */
final class WorkRequestRules {
    private final String qpName;
    private final QueuePairType type;
    /** Bit {@code 1 << ibv_wr_opcode} for each opcode this QP accepts. */
    private final int allowedOpcodes;
    private final boolean atomicsSupported;
    private final int maxInlineData;
    /** The QP's protection domain (identity-compared with the region's). */
    private final Object pd;
    /** The QP's lifecycle, so a chain of a closed QP fails naming it (null in layout tests). */
    private final Resource qp;
    /** Every send WR must name its destination: UD ({@code wr.ud}) and XRC initiators ({@code qp_type.xrc}). */
    final boolean addressedSends;
    /**
     * The {@link OdpCapabilities.Operation} bits this queue's transport may run on ODP memory (all until
     * {@link #odp} is told the device's capabilities), and the receive operation of its receives (RECV for a QP,
     * SRQ_RECV for a shared receive queue).
     */
    private int odpOps = ~0;
    private OdpCapabilities.Operation odpReceive = OdpCapabilities.Operation.RECV;
    private String odpDevice = "the device";

    WorkRequestRules(String qpName, QueuePairType type, boolean atomicsSupported, int maxInlineData, Object pd) {
        this(qpName, type, atomicsSupported, maxInlineData, pd, null);
    }

    WorkRequestRules(String qpName, QueuePairType type, boolean atomicsSupported, int maxInlineData, Object pd,
                     Resource qp) {
        this.qp = qp;
        this.addressedSends = type == QueuePairType.UD || type == QueuePairType.XRC_SEND;
        this.qpName = qpName;
        this.type = type;
        this.atomicsSupported = atomicsSupported;
        this.maxInlineData = maxInlineData;
        this.pd = pd;
        int ops = 0;
        for (WorkRequestOpcode op : WorkRequestOpcode.values()) {
            if (typeAllows(type, op) && (!op.isAtomic() || atomicsSupported)) {
                ops |= 1 << op.value();
            }
        }
        this.allowedOpcodes = ops;
    }

    /** Which opcodes each transport supports (IB spec 9.4 / 11.4.1.1; ibv_post_send(3) table). */
    static boolean typeAllows(QueuePairType type, WorkRequestOpcode op) {
        return switch (type) {
            // a DCI builds RC's WQEs (libmlx5's MLX5_SUPPORTED_SEND_OPS_FLAGS_DCI = _RC), addressed per WR
            case RC, XRC_SEND, DC_INITIATOR -> op != WorkRequestOpcode.TSO && op != WorkRequestOpcode.ATOMIC_WRITE;
            case UC -> op == WorkRequestOpcode.SEND || op == WorkRequestOpcode.SEND_WITH_IMM
                    || op == WorkRequestOpcode.SEND_WITH_INV || op == WorkRequestOpcode.RDMA_WRITE
                    || op == WorkRequestOpcode.RDMA_WRITE_WITH_IMM || op == WorkRequestOpcode.LOCAL_INV
                    || op == WorkRequestOpcode.BIND_MW;
            case UD -> op == WorkRequestOpcode.SEND || op == WorkRequestOpcode.SEND_WITH_IMM;
            case RAW_PACKET -> op == WorkRequestOpcode.SEND || op == WorkRequestOpcode.TSO;
            case XRC_RECV, DC_TARGET -> false;
        };
    }

    QueuePairType type() {
        return type;
    }

    /**
     * Takes the device's ODP capabilities ({@code odp_caps.per_transport_caps}) for this QP's transport: SGEs over
     * ODP keys are then refused, naming the missing {@code IBV_ODP_SUPPORT_*} bit, for operations it lacks. Once, at
     * creation.
     */
    void odp(OdpCapabilities caps, String device) {
        odpDevice = device;
        odpOps = OdpSupport.mask(caps, type);
    }

    /** As {@link #odp} for a shared receive queue: its receives need SRQ_RECV, of any transport. */
    void odpForSrq(OdpCapabilities caps, String device) {
        odpDevice = device;
        odpReceive = OdpCapabilities.Operation.SRQ_RECV;
        odpOps = OdpSupport.mask(caps, null);
    }

    /** An SGE over the ODP key {@code key} in a WR doing {@code op}: refused when the transport lacks it. Cold. */
    void checkOdp(KeySnapshot key, OdpCapabilities.Operation op) {
        if ((odpOps & op.value()) == 0) {
            throw OdpSupport.refused(qpName, type, odpReceive, key.owner, op, odpDevice);
        }
    }

    /**
     * A receive SGE: the key grants {@link Access#LOCAL_WRITE} ({@link #checkLocalWrite}) and, when it is an ODP key,
     * the transport may receive into ODP memory. One mask test of the access bits for a plain key.
     */
    void checkReceiveSge(KeySnapshot key, int length) {
        if ((key.accessMask & RECEIVE_CHECKED) != LOCAL_WRITE_BIT) {
            checkLocalWrite(key, length, "a receive");
            if (key.odp) {
                checkOdp(key, odpReceive);
            }
        }
    }

    private static final int LOCAL_WRITE_BIT = Access.LOCAL_WRITE.value();
    private static final int RECEIVE_CHECKED = LOCAL_WRITE_BIT | Access.ON_DEMAND.value();

    int maxInlineData() {
        return maxInlineData;
    }

    /**
     * Refuses a new WR once the QP is closed (a plain read: the chain's memory outlives the QP, so this is only the
     * early error; the post re-reads the state after its fence).
     */
    void checkOwnerOpen(String verb) {
        Resource r = qp;
        if (r != null && r.isClosedRelaxed()) {
            throw r.closedException(verb);
        }
    }

    /**
     * {@code e}, from writing a chain's extras (inline data, a UD address), renamed when the QP is closed: it turns a
     * bare "Already closed" (of the data's or the address handle's own scope) into the QP's name and the verb. Cold.
     */
    RuntimeException ifClosed(IllegalStateException e, String verb) {
        Resource r = qp;
        if (r == null || !r.isClosed()) {
            return e;
        }
        IllegalStateException named = r.closedException(verb);
        named.initCause(e);
        return named;
    }

    /** {@code op} is allowed on this QP; {@code value} is its C value (a constant at every call: the shift folds). */
    void checkOpcode(WorkRequestOpcode op, int value) {
        if ((allowedOpcodes & (1 << value)) == 0) {
            throw opcodeRefused(op);
        }
    }

    /** An SGE over {@code key}: usable (open, memory allocated), in this QP's PD, inside the key's range. */
    void checkSge(KeySnapshot key, long offset, int length) {
        if (!key.open || !key.memoryAlive()) {
            throw unusable("ibv_post_send/ibv_post_recv (SGE)", key, -1);
        }
        if (key.pd != pd) {
            throw foreignRegion(key.owner);
        }
        if (!inBounds(offset, length, key.length)) {
            throw outOfBounds(key.owner, offset, length, key.length);
        }
    }

    /**
     * {@link #checkSge} of a key that the previous SGE of this chain staged (the same snapshot, so open and in this
     * PD then): only its memory and the range are checked again.
     */
    void checkSameKeySge(KeySnapshot key, long offset, int length) {
        if (!key.memoryAlive()) {
            throw unusable("ibv_post_send/ibv_post_recv (SGE)", key, -1);
        }
        if (!inBounds(offset, length, key.length)) {
            throw outOfBounds(key.owner, offset, length, key.length);
        }
    }

    /** {@link #checkSameKeySge}'s refusal: the key's memory was freed (its arena closed). */
    IllegalStateException unusableSge(KeySnapshot key) {
        return unusable("ibv_post_send/ibv_post_recv (SGE)", key, -1);
    }

    /** {@link #checkSge} without the range: a key staged without an SGE (a window bind's region). */
    void checkSgeKey(KeySnapshot key) {
        if (!key.open || !key.memoryAlive()) {
            throw unusable("ibv_post_send/ibv_post_recv (SGE)", key, -1);
        }
        if (key.pd != pd) {
            throw foreignRegion(key.owner);
        }
    }

    /** Only the range of an SGE over this chain's current key ({@link WorkRequests#isChainKey}). */
    void checkSgeRange(KeySnapshot key, long offset, int length) {
        if (!inBounds(offset, length, key.length)) {
            throw outOfBounds(key.owner, offset, length, key.length);
        }
    }

    /**
     * The region grants {@link Access#LOCAL_WRITE}, which the NIC needs to write into it: receive buffers, RDMA READ
     * and atomic result buffers. Without it the WR fails as LOC_PROT_ERR (READ) or LOC_QP_OP_ERR (receive, on rxe)
     * and the QP goes to ERR, so it is refused here. A zero-length SGE writes nothing and passes.
     */
    void checkLocalWrite(KeySnapshot key, int length, String use) {
        if (length != 0 && !key.localWrite()) {
            throw noLocalWrite(key.owner, use);
        }
    }

    /** Whether {@code [offset, offset + length)} lies inside a region of {@code size} bytes (overflow-safe). */
    static boolean inBounds(long offset, int length, long size) {
        return (offset | length) >= 0 && offset <= size - length; // the OR is negative iff either is
    }

    int checkInline(MemorySegment data, int alreadyInline) {
        if (!data.scope().isAlive()) {
            throw new IllegalStateException(INLINE + ": inline data of " + qpName + ": the segment's arena is "
                    + "closed (its memory is freed)");
        }
        long len = data.byteSize();
        if (len > maxInlineData - alreadyInline) {
            throw inlineTooLong(len + alreadyInline);
        }
        return (int) len;
    }

    /** An SGE of a WR flagged INLINE: the running inline total stays within {@code max_inline_data}. */
    int checkInlineSge(int length, int alreadyInline) {
        if (length > maxInlineData - alreadyInline) {
            throw new IllegalArgumentException(INLINE + ": SGEs of a work request flagged INLINE are copied as "
                    + "inline data: "
                    + ((long) length + alreadyInline) + " bytes exceed " + qpName + "'s max_inline_data of "
                    + maxInlineData + "; drop SendFlag.INLINE_BIT to send them from the memory region");
        }
        return alreadyInline + length;
    }

    void checkUd(AddressHandle ah) {
        if (type != QueuePairType.UD) {
            throw new IllegalStateException(UD + ": ud(ah, remoteQpn, remoteQkey) addresses UD work requests; "
                    + qpName + " is " + type);
        }
        if (ah.protectionDomain() != pd) {
            throw new IllegalArgumentException(UD + ": " + ah + " belongs to another protection domain than "
                    + qpName + " (ibv_post_send(3): the AH and the QP must share a PD); create the AH in the QP's PD");
        }
    }

    // ---- cold: message building ----

    /** The verbs a refused SGE (or SGE list) belongs to: the chains' and the batch's. */
    private static final String SGE = "ibv_post_send/ibv_post_recv/ibv_wr_set_sge";
    private static final String INLINE = "ibv_post_send/ibv_wr_set_inline_data";
    private static final String UD = "ibv_post_send/ibv_wr_set_ud_addr";

    private UnsupportedVerbException opcodeRefused(WorkRequestOpcode op) {
        String why = op.isAtomic() && !atomicsSupported && typeAllows(type, op)
                ? "the device reports atomic_cap = IBV_ATOMIC_NONE (no atomic operations)"
                : "a " + type + " QP does not support " + op + " (" + supported() + ")";
        return new UnsupportedVerbException("ibv_post_send(" + qpName + ", opcode=" + op + ")", why,
                op.isAtomic() ? "atomic operations (" + op + ")" : op + " on " + type + " queue pairs");
    }

    private String supported() {
        StringBuilder sb = new StringBuilder("it supports ");
        String sep = "";
        for (WorkRequestOpcode o : WorkRequestOpcode.values()) {
            if ((allowedOpcodes & (1 << o.value())) != 0) {
                sb.append(sep).append(o);
                sep = ", ";
            }
        }
        return sb.toString();
    }

    /**
     * The refusal of a key that cannot be used: closed (or being closed), re-registered since the SGE was staged
     * ({@code wrIndex} >= 0: found by the post's re-check), or over memory whose arena was closed.
     */
    IllegalStateException unusable(String verb, KeySnapshot staged, int wrIndex) {
        LocalKey key = staged.owner;
        String where = wrIndex >= 0 ? verb + ": work request " + wrIndex + " of " + qpName + " names " + key
                : verb + ": " + key;
        KeySnapshot now = DataPathAccess.snapshot(key);
        if (!key.isOpen()) {
            return new IllegalStateException(where + ", which is closed (" + (key instanceof MemoryRegion
                    ? "deregistered" : "destroyed") + ")" + (wrIndex >= 0
                    ? " since the SGE was added; a staged work request counts as a use: post or clear() it before "
                    + "closing " + (key instanceof MemoryRegion ? "the region" : "the mkey") : "")
                    + ". Nothing was posted");
        }
        if (!staged.memoryAlive()) {
            return new IllegalStateException(where + ", whose memory's arena was closed while it was still "
                    + "registered: the NIC would read or write memory the JVM may already have reused. Nothing was "
                    + "posted. Close the region before its arena, or register it with "
                    + "regMrBuilder(segment, access).deregisterWith(arena) (or regMr(arena, segment, access)) so that "
                    + "closing the arena deregisters it first");
        }
        if (!now.open) {
            return new IllegalStateException(where + ", which another thread is closing or re-registering right "
                    + "now. Nothing was posted");
        }
        if (!(key instanceof MemoryRegion)) { // an mlx5 indirect mkey: a UMR changed it
            return new IllegalStateException(where + ", which a UMR reconfigured or invalidated since the SGE was "
                    + "added: its length or rights may have changed. Nothing was posted; clear() the chain and add "
                    + "the SGE again");
        }
        return new IllegalStateException(where + ", which was re-registered (ibv_rereg_mr) since the SGE was added: "
                + "its keys or range may have changed. Nothing was posted; clear() the chain and add the SGE again");
    }

    /** The post's re-check found {@code key}, staged in WR {@code wrIndex}, no longer usable as staged. */
    IllegalStateException staleKey(String verb, KeySnapshot key, int wrIndex) {
        return unusable(verb, key, wrIndex);
    }

    private IllegalArgumentException foreignRegion(LocalKey region) {
        return new IllegalArgumentException(SGE + ": SGE names " + region + ", registered in another protection "
                + "domain than " + qpName + "'s: its lkey would fail with LOC_PROT_ERR; register the memory in the "
                + "QP's PD");
    }

    private IllegalArgumentException noLocalWrite(LocalKey region, String use) {
        return new IllegalArgumentException(SGE + ": SGE of " + use + " on " + qpName + " names " + region
                + ", registered with " + (region instanceof MemoryRegion mr ? mr.access() : "rights")
                + " without LOCAL_WRITE: the NIC must write into it, so the WR would "
                + "complete with LOC_PROT_ERR and move the QP to ERR; register it with Access.LOCAL_WRITE");
    }

    private IndexOutOfBoundsException outOfBounds(LocalKey region, long offset, int length, long size) {
        return new IndexOutOfBoundsException(SGE + ": SGE [offset " + offset + ", length " + length + "] lies "
                + "outside " + region + " (" + size + " bytes): the NIC would fail it with LOC_PROT_ERR or "
                + "LOC_LEN_ERR");
    }

    private IllegalArgumentException inlineTooLong(long len) {
        return new IllegalArgumentException(INLINE + ": inline data of " + len + " bytes exceeds " + qpName
                + "'s max_inline_data of " + maxInlineData + " (ask for more with QueuePairBuilder.maxInlineData, "
                + "or send from a memory region)");
    }

    IllegalStateException chainFull(int capacity) {
        return new IllegalStateException("ibv_post_send/ibv_post_recv: the work-request chain of " + qpName
                + " is full (" + capacity + " WRs): post it before adding more");
    }

    IllegalStateException noCurrentWr() {
        return new IllegalStateException("ibv_post_send/ibv_post_recv: no work request to add to: start one first"
                + " (send, rdmaWrite, recv, ...)");
    }

    IllegalArgumentException tooManySges(int maxSge) {
        return new IllegalArgumentException(SGE + ": a work request of " + qpName + " takes at most " + maxSge
                + " SGEs (max_send_sge/max_recv_sge granted at creation)");
    }

    IllegalArgumentException unalignedAtomic(long remoteAddr) {
        return new IllegalArgumentException("ibv_post_send/ibv_wr_atomic_*: atomic remote address 0x"
                + Long.toHexString(remoteAddr)
                + " is not 8-byte aligned (IB atomics operate on aligned 64-bit words)");
    }

    IllegalStateException udUnaddressed(int index) {
        return new IllegalStateException("ibv_post_send: work request " + index + " of " + qpName
                + " has no destination: "
                + (type == QueuePairType.XRC_SEND
                ? "an XRC send names the remote XRC SRQ: xrcSrqn(remoteSrqn) (qp_type.xrc.remote_srqn)"
                : "a UD send needs ud(ah, remoteQpn, remoteQkey)"));
    }

    IllegalStateException ahClosed(int index, AddressHandle ah) {
        return new IllegalStateException("ibv_post_send: work request " + index + " of " + qpName + " names " + ah
                + ", closed since ud(ah, ...) (the provider would read the destroyed ibv_ah); address it again or"
                + " clear() the chain. Nothing was posted");
    }

    /** {@code xrcSrqn} on a QP that is not an XRC initiator. Cold. */
    IllegalStateException notXrc(String verb) {
        return new IllegalStateException(verb + ": " + qpName + " is a " + type + " QP; only XRC initiators "
                + "(XRC_SEND) address a remote SRQ number");
    }
}
