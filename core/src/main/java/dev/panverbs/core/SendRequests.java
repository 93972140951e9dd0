package dev.panverbs.core;

import dev.panverbs.bindings.verbs.ibv_mw_bind_info;
import dev.panverbs.bindings.verbs.ibv_send_wr;

import dev.panverbs.core.internal.HotMemory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import static dev.panverbs.core.MaskedMemory.INT;
import static dev.panverbs.core.MaskedMemory.INT_AT;
import static dev.panverbs.core.MaskedMemory.LONG;
import static dev.panverbs.core.MaskedMemory.LONG_AT;
import static dev.panverbs.core.MaskedMemory.NATIVE;
import static dev.panverbs.core.MaskedMemory.pair;

/**
 * A queue pair's reusable chain of send work requests for the classic {@code ibv_post_send(3)}: a native array of
 * {@code struct ibv_send_wr} and their {@code struct ibv_sge} lists, allocated once per QP
 * ({@link QueuePair#sendRequests()}), filled in place and posted in one call by {@link #post()}.
 *
 * <pre>{@code
 * SendRequests wrs = qp.sendRequests();
 * for (int i = 0; i < 16; i++) {
 *     wrs.rdmaWrite(i, i == 15 ? SendFlag.SIGNALED_BIT : 0, rkey, remoteAddr + i * 4096L)
 *        .sge(mr, i * 4096L, 4096);
 * }
 * int posted = wrs.post();         // one ibv_post_send for the 16-WR chain
 * }</pre>
 *
 * <p>Each operation method starts a new WR, with the names and argument order of the {@code ibv_wr_*} builders of
 * {@link PostBatch} ({@code rdmaWrite(wrId, flags, rkey, remoteAddr)});
 * {@link #sge}, {@link #inline} and {@link #ud} complete the current one. Every WR is checked in Java as it is
 * written: the operation against the QP type and device capabilities, each SGE against its memory region's bounds,
 * its protection domain, whether it is still registered and whether its memory is still allocated. Flags are the precomputed C bits of {@link SendFlag}.
 *
 * <p>Native layout written (x86_64; offsets from the generated {@code ibv_send_wr}):
 * <pre>
 *  0 wr_id | 8 next | 16 sg_list | 24 num_sge | 28 opcode | 32 send_flags | 36 imm_data (be32) / invalidate_rkey
 * 40 wr.rdma.remote_addr | 48 wr.rdma.rkey
 * 40 wr.atomic.remote_addr | 48 compare_add | 56 swap | 64 rkey
 * 40 wr.ud.ah | 48 remote_qpn | 52 remote_qkey
 * </pre>
 *
 * <p>Nothing here allocates. Not thread-safe: one producer per QP send queue (the QP's send side is
 * single-producer unless the caller synchronizes).
 */
public final class SendRequests extends WorkRequests<SendRequests> {
    static final long WR_SIZE = ibv_send_wr.layout().byteSize();

    private static final long OPCODE = ibv_send_wr.opcode$offset();
    private static final long SEND_FLAGS = ibv_send_wr.send_flags$offset();
    private static final long IMM_DATA = ibv_send_wr.imm_data$offset();
    private static final long U = ibv_send_wr.wr$offset();
    private static final long RDMA_ADDR = U + ibv_send_wr.wr.rdma$offset() + ibv_send_wr.wr.rdma.remote_addr$offset();
    private static final long RDMA_RKEY = U + ibv_send_wr.wr.rdma$offset() + ibv_send_wr.wr.rdma.rkey$offset();
    private static final long ATOMIC = U + ibv_send_wr.wr.atomic$offset();
    private static final long ATOMIC_ADDR = ATOMIC + ibv_send_wr.wr.atomic.remote_addr$offset();
    private static final long ATOMIC_COMPARE_ADD = ATOMIC + ibv_send_wr.wr.atomic.compare_add$offset();
    private static final long ATOMIC_SWAP = ATOMIC + ibv_send_wr.wr.atomic.swap$offset();
    private static final long ATOMIC_RKEY = ATOMIC + ibv_send_wr.wr.atomic.rkey$offset();
    private static final long UD = U + ibv_send_wr.wr.ud$offset();
    private static final long UD_AH = UD + ibv_send_wr.wr.ud.ah$offset();
    private static final long UD_QPN = UD + ibv_send_wr.wr.ud.remote_qpn$offset();
    private static final long UD_QKEY = UD + ibv_send_wr.wr.ud.remote_qkey$offset();
    private static final long XRC_SRQN = ibv_send_wr.qp_type$offset() + ibv_send_wr.qp_type.xrc$offset()
            + ibv_send_wr.qp_type.xrc.remote_srqn$offset();
    private static final long BIND_MW = ibv_send_wr.bind_mw$offset();
    private static final long BIND_MW_MW = BIND_MW + ibv_send_wr.bind_mw.mw$offset();
    private static final long BIND_MW_RKEY = BIND_MW + ibv_send_wr.bind_mw.rkey$offset();
    private static final long BIND_INFO = BIND_MW + ibv_send_wr.bind_mw.bind_info$offset();
    private static final long BIND_INFO_MR = BIND_INFO + ibv_mw_bind_info.mr$offset();
    private static final long BIND_INFO_ADDR = BIND_INFO + ibv_mw_bind_info.addr$offset();
    private static final long BIND_INFO_LENGTH = BIND_INFO + ibv_mw_bind_info.length$offset();
    private static final long BIND_INFO_ACCESS = BIND_INFO + ibv_mw_bind_info.mw_access_flags$offset();
    /**
     * The opcodes' C values as constants: C2 folds them (not an enum's instance field), so the opcode check and the
     * {@code (opcode, send_flags)} store of a WR take no load.
     */
    private static final int OP_SEND = WorkRequestOpcode.SEND.value();
    private static final int OP_SEND_WITH_IMM = WorkRequestOpcode.SEND_WITH_IMM.value();
    private static final int OP_SEND_WITH_INV = WorkRequestOpcode.SEND_WITH_INV.value();
    private static final int OP_RDMA_WRITE = WorkRequestOpcode.RDMA_WRITE.value();
    private static final int OP_RDMA_WRITE_WITH_IMM = WorkRequestOpcode.RDMA_WRITE_WITH_IMM.value();
    private static final int OP_RDMA_READ = WorkRequestOpcode.RDMA_READ.value();
    private static final int OP_ATOMIC_CMP_AND_SWP = WorkRequestOpcode.ATOMIC_CMP_AND_SWP.value();
    private static final int OP_ATOMIC_FETCH_AND_ADD = WorkRequestOpcode.ATOMIC_FETCH_AND_ADD.value();
    private static final int OP_LOCAL_INV = WorkRequestOpcode.LOCAL_INV.value();
    private static final int OP_BIND_MW = WorkRequestOpcode.BIND_MW.value();
    private static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /** Whether WR i named its destination ({@link #ud} or {@link #xrcSrqn}); checked for UD and XRC at post. */
    final boolean[] udAddressed;
    /** The AH each UD WR names: its handle is in the WR, so the post refuses one closed since (cold, UD only). */
    final AddressHandle[] udAh;
    /** The inline bytes of WR {@link #inlineWr} so far (any other WR: 0): not reset per WR, one store fewer. */
    private int inlineBytes;
    /** Where {@link #inline} copies its data ({@code null} until first used); kept alive by this chain. */
    private HotMemory inlineMemory;
    /**
     * Extra checks of the current WR's SGEs, 0 for most: {@link #SGE_LOCAL_WRITE} when the NIC writes them (RDMA READ,
     * atomics: they need LOCAL_WRITE); {@link #SGE_INLINE} when the WR was started with {@link SendFlag#INLINE_BIT}
     * (the provider copies them into the WQE as inline data, so they count against {@code max_inline_data}; rxe sums
     * their lengths in 32 bits, and past 4 GiB the sum wraps, passes and the copy runs off the WQE).
     */
    private int sgeChecks;
    private static final int SGE_LOCAL_WRITE = 1;
    private static final int SGE_INLINE = 2;
    /** The current WR carries no SGE (a memory-window bind). */
    private static final int SGE_NONE = 4;
    /** The window binds and invalidations of this chain, applied when posted; made on the first one. */
    private ChainWindowOps windowOps;

    SendRequests(WorkRequestRules rules, int capacity, int maxSge) {
        super("ibv_post_send", rules, capacity, maxSge);
        this.udAddressed = new boolean[capacity];
        this.udAh = new AddressHandle[capacity];
        // each WR's AH is tracked like a key: AddressHandle.close() refuses (a DCI's batch names one per WR too)
        if (rules.type() == QueuePairType.UD || rules.type() == QueuePairType.DC_INITIATOR) {
            tracker.trackAddressHandles();
        }
    }

    @Override
    long structSize() {
        return WR_SIZE;
    }

    /** {@code IBV_WR_SEND}. */
    public SendRequests send(long wrId, int sendFlags) {
        start(WorkRequestOpcode.SEND, OP_SEND, wrId, sendFlags);
        return this;
    }

    /** {@code IBV_WR_SEND_WITH_IMM}; {@code immData} in host order, the receiver's {@link WorkCompletion#immData()}. */
    public SendRequests sendWithImm(long wrId, int sendFlags, int immData) {
        long wa = start(WorkRequestOpcode.SEND_WITH_IMM, OP_SEND_WITH_IMM, wrId, sendFlags);
        NATIVE.set(BE32, wa + IMM_DATA, immData);
        return this;
    }

    /** {@code IBV_WR_SEND_WITH_INV}: send and invalidate {@code invalidateRkey} at the receiver. */
    public SendRequests sendWithInv(long wrId, int sendFlags, int invalidateRkey) {
        long wa = start(WorkRequestOpcode.SEND_WITH_INV, OP_SEND_WITH_INV, wrId, sendFlags);
        NATIVE.set(INT, wa + IMM_DATA, invalidateRkey);
        return this;
    }

    /** {@code IBV_WR_RDMA_WRITE} to {@code remoteAddr} in the peer's region {@code rkey}. */
    public SendRequests rdmaWrite(long wrId, int sendFlags, int rkey, long remoteAddr) {
        long wa = start(WorkRequestOpcode.RDMA_WRITE, OP_RDMA_WRITE, wrId, sendFlags);
        remote(wa, rkey, remoteAddr);
        return this;
    }

    /** {@code IBV_WR_RDMA_WRITE_WITH_IMM}: consumes a receive WR at the peer, which sees {@code immData}. */
    public SendRequests rdmaWriteWithImm(long wrId, int sendFlags, int rkey, long remoteAddr, int immData) {
        long wa = start(WorkRequestOpcode.RDMA_WRITE_WITH_IMM, OP_RDMA_WRITE_WITH_IMM, wrId, sendFlags);
        remote(wa, rkey, remoteAddr);
        NATIVE.set(BE32, wa + IMM_DATA, immData);
        return this;
    }

    /** {@code IBV_WR_RDMA_READ} from {@code remoteAddr} in the peer's region {@code rkey} into the SGEs. */
    public SendRequests rdmaRead(long wrId, int sendFlags, int rkey, long remoteAddr) {
        long wa = start(WorkRequestOpcode.RDMA_READ, OP_RDMA_READ, wrId, sendFlags);
        remote(wa, rkey, remoteAddr);
        return this;
    }

    /**
     * {@code IBV_WR_ATOMIC_CMP_AND_SWP}: if the 8 bytes at {@code remoteAddr} (8-byte aligned) equal {@code compare},
     * replace them by {@code swap}; the original value lands in the (8-byte) SGE.
     */
    public SendRequests atomicCmpSwp(long wrId, int sendFlags, int rkey, long remoteAddr, long compare, long swap) {
        long wa = start(WorkRequestOpcode.ATOMIC_CMP_AND_SWP, OP_ATOMIC_CMP_AND_SWP, wrId, sendFlags);
        atomic(wa, rkey, remoteAddr, compare, swap);
        return this;
    }

    /** {@code IBV_WR_ATOMIC_FETCH_AND_ADD}: add {@code add}; the original value lands in the (8-byte) SGE. */
    public SendRequests atomicFetchAdd(long wrId, int sendFlags, int rkey, long remoteAddr, long add) {
        long wa = start(WorkRequestOpcode.ATOMIC_FETCH_AND_ADD, OP_ATOMIC_FETCH_AND_ADD, wrId, sendFlags);
        atomic(wa, rkey, remoteAddr, add, 0L);
        return this;
    }

    /** {@code IBV_WR_LOCAL_INV}: invalidate local {@code invalidateRkey} (memory windows / fast-registered MRs). */
    public SendRequests localInv(long wrId, int sendFlags, int invalidateRkey) {
        long wa = start(WorkRequestOpcode.LOCAL_INV, OP_LOCAL_INV, wrId, sendFlags);
        NATIVE.set(INT, wa + IMM_DATA, invalidateRkey);
        return this;
    }

    /**
     * {@code IBV_WR_LOCAL_INV} of a memory window: invalidates {@code mw}'s current rkey. Once the WR is posted the
     * window counts as unbound (its region may be closed after this WR's completion).
     */
    public SendRequests localInv(long wrId, int sendFlags, MemoryWindow mw) {
        int rkey = mw.rkey();
        localInv(wrId, sendFlags, rkey);
        windowOps().invalidate(count - 1, mw, rkey);
        return this;
    }

    /**
     * {@code IBV_WR_BIND_MW} ({@code ibv_post_send(3)}, {@code wr.bind_mw}): binds the type 2 window {@code mw} to
     * {@code length} bytes at {@code offset} in {@code mr} with the remote rights {@code access}, under the new remote
     * key {@code rkey} (usually {@code MemoryWindow.nextRkey(mw.rkey())}: its low byte must change). The WR carries
     * no SGE; it references {@code mr} until its completion, and the post re-checks {@code mr} like an SGE's region.
     * Once the WR is posted the window reports {@code rkey} and its new range, and {@code mr} refuses to close while
     * the window stays bound; {@link MemoryWindow#completed(WorkCompletion)} undoes that if the bind completes in
     * error. Checks as {@link MemoryWindow#bind}: refused by name before the provider.
     */
    public SendRequests bindMw(long wrId, int sendFlags, MemoryWindow mw, int rkey, MemoryRegion mr, long offset,
                               long length, java.util.Set<Access> access) {
        QueuePair qp = windowQp();
        if (mw.type() != MemoryWindowType.TYPE_2) {
            throw new IllegalArgumentException("ibv_post_send(IBV_WR_BIND_MW): " + mw + " is a type 1 window: bind "
                    + "it with MemoryWindow.bind (ibv_bind_mw)");
        }
        int rights = mw.checkBind("ibv_post_send(IBV_WR_BIND_MW, " + mw + ")", qp, mr, offset, length, access);
        KeySnapshot k = DataPathAccess.stagedSnapshot(mr); // re-checked by the post, after its fence
        rules.checkSgeKey(k); // the snapshot staged: a later sge(mr, ...) of this chain checks only its range
        rules.checkOwnerOpen("ibv_post_send");
        MemorySegment mwHandle = mw.resource.handle("ibv_post_send");
        MemorySegment mrHandle = mr.resource.handle("ibv_post_send");
        start(WorkRequestOpcode.BIND_MW, OP_BIND_MW, wrId, sendFlags);
        long w = wrOffset(count - 1); // an offset in wrs (cold: checked segment stores)
        wrs.set(INT, w + IMM_DATA, 0); // rxe refuses a BIND_MW whose imm_data is not 0
        wrs.set(ValueLayout.ADDRESS_UNALIGNED, w + BIND_MW_MW, mwHandle);
        wrs.set(INT, w + BIND_MW_RKEY, rkey);
        wrs.set(ValueLayout.ADDRESS_UNALIGNED, w + BIND_INFO_MR, mrHandle);
        wrs.set(LONG, w + BIND_INFO_ADDR, k.address + offset);
        wrs.set(LONG, w + BIND_INFO_LENGTH, length);
        wrs.set(INT, w + BIND_INFO_ACCESS, rights);
        stageKeyOnly(k);
        sgeChecks = SGE_NONE;
        windowOps().bind(count - 1, wrId, mw, rkey, mr, k.address + offset, length, access, mwHandle.address());
        return this;
    }

    /** The QP of this chain (window operations only post on a QP's send queue). */
    private QueuePair windowQp() {
        if (queue instanceof SendQueue sq) {
            return sq.qp;
        }
        return ((ChainWindowOps) queue).queue.qp;
    }

    /** This chain's window operations; the chain then posts through them (until it is fully posted). */
    private ChainWindowOps windowOps() {
        ChainWindowOps ops = windowOps;
        if (ops == null) {
            ops = new ChainWindowOps((SendQueue) queue, capacity());
            windowOps = ops;
        }
        queue = ops;
        return ops;
    }

    /**
     * Appends one scatter/gather entry to the current WR: {@code length} bytes at {@code offset} in {@code key}
     * ({@code struct ibv_sge} with its lkey). Rejected in Java when it leaves the key's range, when the key is closed
     * or its memory's arena is, when it belongs to another protection domain than the QP, or when the NIC must write
     * it (RDMA READ, atomics) and the key lacks {@link Access#LOCAL_WRITE}.
     *
     * <p>DMA contract: a staged SGE already counts: {@link #post()} re-checks the key and refuses if it was closed
     * or re-registered meanwhile. From the post until the WR's completion has been polled the queue keeps the key
     * referenced, and {@link MemoryRegion#close()} refuses to deregister it.
     */
    public SendRequests sge(LocalKey key, long offset, int length) {
        KeySnapshot k = DataPathAccess.stagedSnapshot(key);
        if (!isPlainChainKey(k) || sgeChecks != 0) { // another key, an ODP key, or a READ/atomic/INLINE/bind WR
            return sgeChecked(k, offset, length);
        }
        // the chain's key (the common case): checked in full when first staged on this queue, re-checked by the post
        // after its fence; here its range (and at a chain's first SGE its memory, as before). The rest of the checks
        // live in sgeChecked: a call C2 leaves out of line keeps this path small enough to inline whole into a
        // caller's per-WR loop (C2 cut it at NodeCountInliningCutoff with them inlined).
        if (!chainStarted() && !k.memoryAlive()) {
            throw rules.unusableSge(k);
        }
        rules.checkSgeRange(k, offset, length);
        appendChainKeySge(k.address + offset, length, k.lkey, k);
        return this;
    }

    /** {@link #sge} of any key and WR: every check. */
    private SendRequests sgeChecked(KeySnapshot k, long offset, int length) {
        boolean chainKey = isChainKey(k);
        if (chainKey) { // checked in full when first staged on this queue; the post re-checks it after its fence
            if (!chainStarted() && !k.memoryAlive()) { // a chain's first SGE: its memory checked again, as before
                throw rules.unusableSge(k);
            }
            rules.checkSgeRange(k, offset, length);
        } else if (k == lastStaged) { // open and in this PD when last checked (immutable); the post re-checks both
            rules.checkSameKeySge(k, offset, length);
        } else {
            rules.checkSge(k, offset, length);
            lastStaged = k; // a new key: stored only when it changes
        }
        if (k.odp) {
            rules.checkOdp(k, OdpSupport.operation(opcodeValue(count - 1)));
        }
        if (sgeChecks != 0) {
            checkSpecialSge(k, length);
        }
        if (chainKey) {
            appendChainKeySge(k.address + offset, length, k.lkey, k);
        } else {
            appendSge(k.address + offset, length, k.lkey, k);
        }
        return this;
    }

    /**
     * Appends {@code data} as inline payload of the current WR (sets {@code IBV_SEND_INLINE}). It needs no memory
     * region and may be a heap segment: it is copied here, into the chain's own inline area, from which the provider
     * copies it into the WQE during {@code ibv_post_send}. So {@code data} is reusable as soon as this returns, and
     * closing its arena before the post cannot make the provider read freed memory. The WR's inline bytes may not
     * exceed the QP's {@code max_inline_data}.
     */
    public SendRequests inline(MemorySegment data) {
        try {
            int wr = current();
            long w = wrOffset(wr);
            int used = inlineUsed(wr);
            int len = rules.checkInline(data, used);
            MemorySegment area = inlineArea();
            long at = (long) wr * rules.maxInlineData() + used;
            MemorySegment.copy(data, 0, area, at, len);
            inlineBytes = used + len;
            inlineWr = wr;
            wrs.set(INT, w + SEND_FLAGS, wrs.get(INT, w + SEND_FLAGS) | SendFlag.INLINE_BIT);
            appendSge(area.address() + at, len, 0, null);
            return this;
        } catch (IllegalStateException e) {
            throw rules.ifClosed(e, "ibv_post_send");
        } catch (WrongThreadException e) {
            throw dev.panverbs.core.internal.Errors.wrongThread("ibv_post_send", "the inline data segment", e);
        }
    }

    /** capacity x max_inline_data bytes for {@link #inline} copies, allocated on first use. */
    private MemorySegment inlineArea() {
        HotMemory m = inlineMemory;
        if (m == null) {
            m = HotMemory.allocate((long) capacity() * Math.max(rules.maxInlineData(), 1), 8);
            inlineMemory = m;
        }
        return m.segment;
    }

    /** Addresses the current WR of a UD QP ({@code wr.ud}): to {@code remoteQpn} with queue key {@code remoteQkey}. */
    public SendRequests ud(AddressHandle ah, int remoteQpn, int remoteQkey) {
        try {
            int i = current();
            long w = wrOffset(i);
            rules.checkUd(ah);
            wrs.set(ValueLayout.ADDRESS_UNALIGNED, w + UD_AH, ah.resource.handle("ibv_post_send"));
            wrs.set(INT, w + UD_QPN, remoteQpn);
            wrs.set(INT, w + UD_QKEY, remoteQkey);
            udAddressed[i] = true;
            udAh[i] = ah;
            tracker.stageAh(base + i, ah.trackingId); // published with the WR: the AH's close then refuses
            return this;
        } catch (IllegalStateException e) {
            throw rules.ifClosed(e, "ibv_post_send");
        }
    }

    /**
     * Addresses the current WR of an XRC initiator ({@link QueuePairType#XRC_SEND}): it is delivered to the XRC shared
     * receive queue number {@code remoteSrqn} ({@code qp_type.xrc.remote_srqn}; the peer's
     * {@link SharedReceiveQueue#srqNum()}) through the target QP this QP is connected to. Every WR of an XRC
     * initiator needs it; the post refuses one without.
     */
    public SendRequests xrcSrqn(int remoteSrqn) {
        int i = current();
        if (rules.type() != QueuePairType.XRC_SEND) {
            throw rules.notXrc("ibv_post_send(qp_type.xrc.remote_srqn)");
        }
        wrs.set(INT, wrOffset(i) + XRC_SRQN, remoteSrqn);
        udAddressed[i] = true;
        return this;
    }

    /**
     * Starts a WR of {@code opcode}, whose C value is {@code value} (a constant at every call); returns its native
     * address ({@link #wrAt}): the callers write its other fields at constant displacements from it.
     */
    private long start(WorkRequestOpcode opcode, int value, long wrId, int sendFlags) {
        rules.checkOpcode(opcode, value);
        // opcode and send_flags in one (unaligned) store; imm_data: written by the opcodes that read it
        long wa = startWr(wrId, OPCODE, pair(value, sendFlags));
        if (rules.addressedSends) { // read by the post for UD and XRC only
            udAddressed[count - 1] = false;
            udAh[count - 1] = null;
        }
        // WorkRequestOpcode.writesLocalSges() of the constant value: folded while C2 parses (no call to parse)
        boolean writesLocal = value == OP_RDMA_READ || value == OP_ATOMIC_CMP_AND_SWP || value == OP_ATOMIC_FETCH_AND_ADD;
        sgeChecks = (writesLocal ? SGE_LOCAL_WRITE : 0)
                | ((sendFlags & SendFlag.INLINE_BIT) != 0 ? SGE_INLINE : 0);
        return wa;
    }

    /** The inline bytes WR {@code wr} carries so far. */
    private int inlineUsed(int wr) {
        return inlineWr == wr ? inlineBytes : 0;
    }

    private void checkSpecialSge(KeySnapshot key, int length) {
        if ((sgeChecks & SGE_NONE) != 0) {
            throw new IllegalStateException("ibv_post_send: a BIND_MW work request carries no SGE (its region is "
                    + "given to bindMw)");
        }
        if ((sgeChecks & SGE_LOCAL_WRITE) != 0) {
            rules.checkLocalWrite(key, length, "an RDMA READ or atomic");
        }
        if ((sgeChecks & SGE_INLINE) != 0) {
            int wr = count - 1;
            inlineBytes = rules.checkInlineSge(length, inlineUsed(wr));
            inlineWr = wr;
        }
    }

    private void remote(long wa, int rkey, long remoteAddr) {
        LONG_AT.set(NATIVE, wa + RDMA_ADDR, remoteAddr);
        INT_AT.set(NATIVE, wa + RDMA_RKEY, rkey);
    }

    private void atomic(long wa, int rkey, long remoteAddr, long compareAdd, long swap) {
        if ((remoteAddr & 7) != 0) {
            throw rules.unalignedAtomic(remoteAddr);
        }
        NATIVE.set(LONG, wa + ATOMIC_ADDR, remoteAddr);
        NATIVE.set(LONG, wa + ATOMIC_COMPARE_ADD, compareAdd);
        NATIVE.set(LONG, wa + ATOMIC_SWAP, swap);
        NATIVE.set(INT, wa + ATOMIC_RKEY, rkey);
    }

    /** The {@code bind_mw.mw} handle written into WR {@code i} (window bookkeeping). */
    long bindMwHandle(int i) {
        return wrs.get(ValueLayout.ADDRESS_UNALIGNED, wrOffset(i) + BIND_MW_MW).address();
    }

    /** The {@code invalidate_rkey} of WR {@code i} (window bookkeeping). */
    int invalidateRkey(int i) {
        return wrs.get(INT, wrOffset(i) + IMM_DATA);
    }

    /**
     * The first of WRs {@code from .. from+n-1} whose address handle is closing or closed, or -1: read by the post
     * after its fence (the post side of {@link AddressHandle#close()}'s handshake). UD only.
     */
    int firstClosedAh(int from, int n) {
        AddressHandle[] ahs = udAh;
        AddressHandle previous = null;
        for (int i = from, end = from + n; i < end; i++) {
            AddressHandle ah = ahs[i];
            if (ah != previous) { // one volatile read per run of WRs to the same AH
                if (ah.isClosing()) {
                    return i;
                }
                previous = ah;
            }
        }
        return -1;
    }

    /** The opcode of WR {@code i} (messages). */
    int opcodeValue(int i) {
        return wrs.get(INT, wrOffset(i) + OPCODE);
    }
}
