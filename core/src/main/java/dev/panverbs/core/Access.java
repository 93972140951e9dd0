package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;
import dev.panverbs.core.internal.Errors;
import java.util.EnumSet;
import java.util.Set;

/**
 * Access rights of a memory region or window, C {@code enum ibv_access_flags} ({@code ibv_reg_mr(3)}).
 * Local read access is always granted. Pass an {@code EnumSet}: {@code EnumSet.of(LOCAL_WRITE, REMOTE_WRITE)};
 * hot paths use the precomputed {@link #mask(Set)} instead.
 */
public enum Access {
    /** {@code IBV_ACCESS_LOCAL_WRITE}: the local HCA may write (needed by every receive and RDMA read buffer). */
    LOCAL_WRITE(verbs_h.IBV_ACCESS_LOCAL_WRITE()),
    /**
     * {@code IBV_ACCESS_REMOTE_WRITE}: peers may RDMA-write into the region. <b>Requires
     * {@link #LOCAL_WRITE}</b> ({@code ibv_reg_mr(3)}: "If IBV_ACCESS_REMOTE_WRITE or IBV_ACCESS_REMOTE_ATOMIC
     * is set, then IBV_ACCESS_LOCAL_WRITE must be set too"); rejected before the kernel otherwise.
     */
    REMOTE_WRITE(verbs_h.IBV_ACCESS_REMOTE_WRITE()),
    /** {@code IBV_ACCESS_REMOTE_READ}: peers may RDMA-read the region. */
    REMOTE_READ(verbs_h.IBV_ACCESS_REMOTE_READ()),
    /**
     * {@code IBV_ACCESS_REMOTE_ATOMIC}: peers may run atomics on the region (8-byte aligned targets). <b>Requires
     * {@link #LOCAL_WRITE}</b>, like {@link #REMOTE_WRITE}; needs a device whose {@code atomicCap} is not NONE.
     */
    REMOTE_ATOMIC(verbs_h.IBV_ACCESS_REMOTE_ATOMIC()),
    /** {@code IBV_ACCESS_MW_BIND}: memory windows may be bound to the region (needs memory-window support). */
    MW_BIND(verbs_h.IBV_ACCESS_MW_BIND()),
    /**
     * {@code IBV_ACCESS_ZERO_BASED}: for memory windows, remote addresses are offsets from the window start.
     * For a zero-based memory region use {@code ProtectionDomain.regMrBuilder(...).zeroBased()} (iova 0).
     */
    ZERO_BASED(verbs_h.IBV_ACCESS_ZERO_BASED()),
    /**
     * {@code IBV_ACCESS_ON_DEMAND}: on-demand paging; the memory is not pinned at registration. Needs
     * {@code DeviceAttributes.odp()} support for the transport and operations used.
     */
    ON_DEMAND(verbs_h.IBV_ACCESS_ON_DEMAND()),
    /** {@code IBV_ACCESS_HUGETLB}: the range is backed by huge pages (lets ODP use huge-page granularity). */
    HUGETLB(verbs_h.IBV_ACCESS_HUGETLB()),
    /**
     * {@code IBV_ACCESS_RELAXED_ORDERING}: allow PCIe relaxed ordering for this region. An optional flag:
     * libibverbs silently drops it where the kernel does not support it.
     */
    RELAXED_ORDERING(verbs_h.IBV_ACCESS_RELAXED_ORDERING());

    private final int value;

    Access(int value) {
        this.value = value;
    }

    /** The C bit. */
    public int value() {
        return value;
    }

    /** The C mask of {@code access}, for hot paths and raw calls; computed once, not per post. */
    public static int mask(Set<Access> access) {
        int m = 0;
        for (Access a : access) {
            m |= a.value;
        }
        return m;
    }

    /** The flags set in a C mask (unknown bits are ignored). */
    public static EnumSet<Access> fromMask(int mask) {
        EnumSet<Access> set = EnumSet.noneOf(Access.class);
        for (Access a : values()) {
            if ((mask & a.value) != 0) {
                set.add(a);
            }
        }
        return set;
    }

    /**
     * Rejects combinations the man page forbids, before any kernel call: REMOTE_WRITE or REMOTE_ATOMIC
     * without LOCAL_WRITE (the kernel would answer EINVAL without saying why).
     *
     * @param verb the verb about to be called, for the message
     * @throws IllegalArgumentException naming the flags, the rule and the fix
     */
    static int validate(String verb, Set<Access> access) {
        if (access == null) {
            throw new NullPointerException(verb + ": access is null; pass EnumSet.noneOf(Access.class) for local read only");
        }
        if (!access.contains(LOCAL_WRITE) && (access.contains(REMOTE_WRITE) || access.contains(REMOTE_ATOMIC))) {
            Set<Access> bad = EnumSet.noneOf(Access.class);
            for (Access a : access) {
                if (a == REMOTE_WRITE || a == REMOTE_ATOMIC) {
                    bad.add(a);
                }
            }
            throw new IllegalArgumentException(Errors.call(verb, "access", access) + ": " + bad
                    + " requires LOCAL_WRITE (ibv_reg_mr(3); the kernel would fail with EINVAL): add Access.LOCAL_WRITE");
        }
        return mask(access);
    }
}
