package dev.panverbs.core;

import java.util.EnumSet;
import java.util.Set;

/** The checks of a memory-window bind, every post path ({@link MemoryWindow#bind}, chain, batch), before the provider. */
final class WindowBindChecks {
    private WindowBindChecks() {
    }

    /**
     * The checks every bind makes before the provider sees it (cold). Returns the {@code mw_access_flags} mask.
     */
    static int check(String call, ProtectionDomain pd, QueuePair qp, MemoryRegion mr, long offset, long length,
                     Set<Access> access) {
        if (qp.protectionDomain() != pd) {
            throw new IllegalArgumentException(call + ": " + qp + " belongs to " + qp.protectionDomain()
                    + ", not to the window's " + pd + " (IB spec C10-72)");
        }
        if (mr.protectionDomain() != pd) {
            throw new IllegalArgumentException(call + ": " + mr + " belongs to " + mr.protectionDomain()
                    + ", not to the window's " + pd + " (IB spec C10-74; ibv_bind_mw answers EPERM)");
        }
        if (!mr.access().contains(Access.MW_BIND)) {
            throw new IllegalArgumentException(call + ": " + mr + " was registered without Access.MW_BIND "
                    + "(IBV_ACCESS_MW_BIND), so no window can be bound to it (IB spec C10-75); register it with "
                    + "MW_BIND");
        }
        if (offset < 0 || length < 1 || offset > mr.length() || length > mr.length() - offset) {
            throw new IllegalArgumentException(call + ": the window [" + offset + ", " + offset + " + " + length
                    + ") must be a non-empty range inside the region's " + mr.length() + " bytes (IB spec C10-77)");
        }
        Set<Access> remote = EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC,
                Access.ZERO_BASED);
        for (Access a : access) {
            if (!remote.contains(a)) {
                throw new IllegalArgumentException(call + ": a window grants remote rights (REMOTE_READ, "
                        + "REMOTE_WRITE, REMOTE_ATOMIC) and ZERO_BASED, not " + a);
            }
        }
        if ((access.contains(Access.REMOTE_WRITE) || access.contains(Access.REMOTE_ATOMIC))
                && !mr.access().contains(Access.LOCAL_WRITE)) {
            throw new IllegalArgumentException(call + ": remote write or atomic rights need a region registered "
                    + "with LOCAL_WRITE (IB spec C10-76); " + mr + " has " + mr.access());
        }
        return Access.mask(access);
    }
}
