package dev.panverbs.core;

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

    WorkRequestRules(String qpName, QueuePairType type, boolean atomicsSupported, int maxInlineData, Object pd) {
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
            case RC, XRC_SEND -> op != WorkRequestOpcode.TSO && op != WorkRequestOpcode.ATOMIC_WRITE;
            case UC -> op == WorkRequestOpcode.SEND || op == WorkRequestOpcode.SEND_WITH_IMM
                    || op == WorkRequestOpcode.SEND_WITH_INV || op == WorkRequestOpcode.RDMA_WRITE
                    || op == WorkRequestOpcode.RDMA_WRITE_WITH_IMM || op == WorkRequestOpcode.LOCAL_INV
                    || op == WorkRequestOpcode.BIND_MW;
            case UD -> op == WorkRequestOpcode.SEND || op == WorkRequestOpcode.SEND_WITH_IMM;
            case RAW_PACKET -> op == WorkRequestOpcode.SEND || op == WorkRequestOpcode.TSO;
            case XRC_RECV -> false;
        };
    }

    QueuePairType type() {
        return type;
    }

    int maxInlineData() {
        return maxInlineData;
    }

    void checkOpcode(WorkRequestOpcode op) {
        if ((allowedOpcodes & (1 << op.value())) == 0) {
            throw opcodeRefused(op);
        }
    }

    void checkSge(MemoryRegion region, long offset, int length) {
        if (DataPathAccess.protectionDomain(region) != pd) {
            throw foreignRegion(region);
        }
        long size = DataPathAccess.length(region); // also fails if the region is closed
        if (!inBounds(offset, length, size)) {
            throw outOfBounds(region, offset, length, size);
        }
    }

    /** Whether {@code [offset, offset + length)} lies inside a region of {@code size} bytes (overflow-safe). */
    static boolean inBounds(long offset, int length, long size) {
        return offset >= 0 && length >= 0 && offset <= size - length;
    }

    int checkInline(MemorySegment data, int alreadyInline) {
        if (!data.isNative()) {
            throw new IllegalArgumentException("inline data must be a native segment (the provider copies it from "
                    + "its address); copy heap arrays into a native buffer first");
        }
        long len = data.byteSize();
        if (len > maxInlineData - alreadyInline) {
            throw inlineTooLong(len + alreadyInline);
        }
        return (int) len;
    }

    void checkUd(AddressHandle ah) {
        if (type != QueuePairType.UD) {
            throw new IllegalStateException("ud(ah, remoteQpn, remoteQkey) addresses UD work requests; " + qpName
                    + " is " + type);
        }
    }

    // ---- cold: message building ----

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

    private IllegalArgumentException foreignRegion(MemoryRegion region) {
        return new IllegalArgumentException("SGE names " + region + ", registered in another protection domain "
                + "than " + qpName + "'s: its lkey would fail with LOC_PROT_ERR; register the memory in the QP's PD");
    }

    private IndexOutOfBoundsException outOfBounds(MemoryRegion region, long offset, int length, long size) {
        return new IndexOutOfBoundsException("SGE [offset " + offset + ", length " + length + "] lies outside "
                + region + " (" + size + " bytes): the NIC would fail it with LOC_PROT_ERR or LOC_LEN_ERR");
    }

    private IllegalArgumentException inlineTooLong(long len) {
        return new IllegalArgumentException("inline data of " + len + " bytes exceeds " + qpName
                + "'s max_inline_data of " + maxInlineData + " (ask for more with QueuePairBuilder.maxInlineData, "
                + "or send from a memory region)");
    }

    IllegalStateException chainFull(int capacity) {
        return new IllegalStateException("the work-request chain of " + qpName + " is full (" + capacity
                + " WRs): post it before adding more");
    }

    IllegalStateException noCurrentWr() {
        return new IllegalStateException("no work request to add to: start one first (send, rdmaWrite, recv, ...)");
    }

    IllegalArgumentException tooManySges(int maxSge) {
        return new IllegalArgumentException("a work request of " + qpName + " takes at most " + maxSge
                + " SGEs (max_send_sge/max_recv_sge granted at creation)");
    }

    IllegalArgumentException unalignedAtomic(long remoteAddr) {
        return new IllegalArgumentException("atomic remote address 0x" + Long.toHexString(remoteAddr)
                + " is not 8-byte aligned (IB atomics operate on aligned 64-bit words)");
    }

    IllegalStateException udUnaddressed(int index) {
        return new IllegalStateException("work request " + index + " of " + qpName
                + " has no destination: a UD send needs ud(ah, remoteQpn, remoteQkey)");
    }
}
