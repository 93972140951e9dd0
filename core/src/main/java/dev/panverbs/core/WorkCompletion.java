package dev.panverbs.core;

import dev.panverbs.bindings.verbs.ibv_wc;
import dev.panverbs.bindings.verbs.verbs_h;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * One work completion ({@code struct ibv_wc}, {@code ibv_poll_cq(3)}): a flyweight over one slot of a
 * {@link WorkCompletions} array, repositioned by {@link WorkCompletions#get(int)}. No object is created per
 * completion; a {@code WorkCompletion} is valid until the next poll into the same array.
 *
 * <p>Layout read ({@code struct ibv_wc}, 48 bytes on LP64):
 * <pre>
 *  0 wr_id u64 | 8 status | 12 opcode | 16 vendor_err | 20 byte_len | 24 imm_data/invalidated_rkey
 * 28 qp_num    | 32 src_qp | 36 wc_flags | 40 pkey_index u16 | 42 slid u16 | 44 sl u8 | 45 dlid_path_bits u8
 * </pre>
 *
 * <p>Only {@link #wrId()}, {@link #status()}, {@link #vendorErr()} and {@link #qpNum()} are valid when the status is
 * not {@link WorkCompletionStatus#SUCCESS}. Not thread-safe.
 */
public final class WorkCompletion {
    private static final long WR_ID = ibv_wc.wr_id$offset();
    private static final long STATUS = ibv_wc.status$offset();
    private static final long OPCODE = ibv_wc.opcode$offset();
    private static final long VENDOR_ERR = ibv_wc.vendor_err$offset();
    private static final long BYTE_LEN = ibv_wc.byte_len$offset();
    private static final long IMM_DATA = ibv_wc.imm_data$offset();
    private static final long QP_NUM = ibv_wc.qp_num$offset();
    private static final long SRC_QP = ibv_wc.src_qp$offset();
    private static final long WC_FLAGS = ibv_wc.wc_flags$offset();
    private static final long PKEY_INDEX = ibv_wc.pkey_index$offset();
    private static final long SLID = ibv_wc.slid$offset();
    private static final long SL = ibv_wc.sl$offset();
    private static final long DLID_PATH_BITS = ibv_wc.dlid_path_bits$offset();

    private static final int WITH_IMM = verbs_h.IBV_WC_WITH_IMM();
    private static final int WITH_INV = verbs_h.IBV_WC_WITH_INV();
    private static final int GRH = verbs_h.IBV_WC_GRH();

    /** {@code __be32}: the wire order, so the Java value is what the sender passed. */
    private static final ValueLayout.OfInt NETWORK_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /** The array polled into: this flyweight keeps it (and so its native memory) reachable. */
    private final WorkCompletions owner;
    private final MemorySegment array;
    /**
     * The current completion's address: {@link WorkCompletions#at} of its offset, which {@link WorkCompletions#get}
     * checks against the count (at most the capacity), so the whole struct lies inside the array.
     */
    private long address;

    WorkCompletion(WorkCompletions owner) {
        this.owner = owner;
        this.array = owner.array();
    }

    /**
     * The address of field {@code offset} of the current completion, for a load through {@code NATIVE}: the struct's
     * address was masked into the array once, at {@link #position}; the mask here only bounds it for C2 (one
     * {@code and} per completion, shared by its fields, instead of an {@code and} and an {@code add} per field).
     */
    private long at(long offset) {
        return (address & MaskedMemory.ADDR_BITS) + offset;
    }

    WorkCompletion position(long offset) {
        this.address = owner.at(offset);
        return this;
    }

    /** The 64-bit id the work request was posted with ({@code wr_id}). */
    public long wrId() {
        return MaskedMemory.NATIVE.get(ValueLayout.JAVA_LONG_UNALIGNED, at(WR_ID));
    }

    /** The completion status ({@code status}). */
    public WorkCompletionStatus status() {
        return WorkCompletionStatus.of(statusValue());
    }

    /** The raw C status ({@code enum ibv_wc_status}). */
    public int statusValue() {
        return MaskedMemory.NATIVE.get(ValueLayout.JAVA_INT_UNALIGNED, at(STATUS));
    }

    /** Whether the status is {@link WorkCompletionStatus#SUCCESS}. */
    public boolean ok() {
        return statusValue() == 0;
    }

    /** The operation ({@code opcode}); valid only on success. */
    public WorkCompletionOpcode opcode() {
        return WorkCompletionOpcode.of(MaskedMemory.NATIVE.get(ValueLayout.JAVA_INT_UNALIGNED, at(OPCODE)));
    }

    /** Provider-specific error syndrome ({@code vendor_err}). */
    public int vendorErr() {
        return MaskedMemory.NATIVE.get(ValueLayout.JAVA_INT_UNALIGNED, at(VENDOR_ERR));
    }

    /** Bytes transferred ({@code byte_len}): received bytes, or the length of an RDMA READ/atomic. */
    public int byteLen() {
        return MaskedMemory.NATIVE.get(ValueLayout.JAVA_INT_UNALIGNED, at(BYTE_LEN));
    }

    /**
     * The immediate data in host byte order (C {@code imm_data} is network order), valid when {@link #hasImm()};
     * equal to the {@code int} the sender passed.
     */
    public int immData() {
        return MaskedMemory.NATIVE.get(NETWORK_INT, at(IMM_DATA));
    }

    /** The rkey the peer invalidated with SEND_WITH_INV ({@code invalidated_rkey}), valid when {@link #hasInv()}. */
    public int invalidatedRkey() {
        return MaskedMemory.NATIVE.get(ValueLayout.JAVA_INT_UNALIGNED, at(IMM_DATA));
    }

    /** The local QP number this completion belongs to ({@code qp_num}). */
    public int qpNum() {
        return MaskedMemory.NATIVE.get(ValueLayout.JAVA_INT_UNALIGNED, at(QP_NUM));
    }

    /** The remote QP number of a UD receive ({@code src_qp}). */
    public int srcQp() {
        return MaskedMemory.NATIVE.get(ValueLayout.JAVA_INT_UNALIGNED, at(SRC_QP));
    }

    /** The raw {@code wc_flags} ({@code IBV_WC_GRH}, {@code IBV_WC_WITH_IMM}, ...). */
    public int wcFlags() {
        return MaskedMemory.NATIVE.get(ValueLayout.JAVA_INT_UNALIGNED, at(WC_FLAGS));
    }

    /** Whether immediate data arrived ({@code IBV_WC_WITH_IMM}). */
    public boolean hasImm() {
        return (wcFlags() & WITH_IMM) != 0;
    }

    /** Whether an rkey was invalidated ({@code IBV_WC_WITH_INV}). */
    public boolean hasInv() {
        return (wcFlags() & WITH_INV) != 0;
    }

    /** Whether a UD receive buffer starts with a 40-byte GRH ({@code IBV_WC_GRH}). */
    public boolean hasGrh() {
        return (wcFlags() & GRH) != 0;
    }

    /** {@code pkey_index} (GSI QPs). */
    public int pkeyIndex() {
        return Short.toUnsignedInt(MaskedMemory.NATIVE.get(ValueLayout.JAVA_SHORT, at(PKEY_INDEX)));
    }

    /** Source LID of a UD receive ({@code slid}). */
    public int slid() {
        return Short.toUnsignedInt(MaskedMemory.NATIVE.get(ValueLayout.JAVA_SHORT, at(SLID)));
    }

    /** Service level of a UD receive ({@code sl}). */
    public int sl() {
        return Byte.toUnsignedInt(MaskedMemory.NATIVE.get(ValueLayout.JAVA_BYTE, at(SL)));
    }

    /** {@code dlid_path_bits}. */
    public int dlidPathBits() {
        return Byte.toUnsignedInt(MaskedMemory.NATIVE.get(ValueLayout.JAVA_BYTE, at(DLID_PATH_BITS)));
    }

    /** Copies this completion's {@code struct ibv_wc} into {@code dst} (cold: verbs that take a whole wc). */
    void copyTo(MemorySegment dst) {
        MemorySegment.copy(array, address - owner.address(), dst, 0, ibv_wc.sizeof());
    }

    @Override
    public String toString() {
        return "WorkCompletion[wrId=" + wrId() + ", status=" + status() + ", qpNum=" + qpNum()
                + (ok() ? ", opcode=" + opcode() + ", byteLen=" + byteLen() : ", vendorErr=" + vendorErr()) + "]";
    }
}
