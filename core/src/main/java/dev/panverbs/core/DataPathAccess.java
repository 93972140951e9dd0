package dev.panverbs.core;

/**
 * What the post paths read from other verbs objects: the local address, length, key and protection domain of a
 * memory region. One place, so the post path's checks read the region the same way everywhere.
 */
final class DataPathAccess {
    private DataPathAccess() {}

    /**
     * The address an SGE names for the region's first byte: its iova ({@link MemoryRegion#address()}). Local
     * (lkey) access goes through the MR's iova space just like remote access ({@code ibv_reg_mr(3)}: "the
     * virtual base address of the MR when accessed through a lkey or rkey"; rxe checks SGEs against it), so
     * for zero-based, iova and DMA-BUF MRs this differs from {@code buffer().address()}.
     */
    static long address(MemoryRegion region) {
        return region.address();
    }

    static int lkey(MemoryRegion region) {
        return region.lkey();
    }

    /** The region's length; {@link IllegalStateException} if it has been deregistered. */
    static long length(MemoryRegion region) {
        if (region.isClosed()) {
            throw region.resource.closedException("ibv_post_send (SGE)");
        }
        return region.length();
    }

    /** Whether the region grants {@code IBV_ACCESS_LOCAL_WRITE} (one volatile read). */
    static boolean localWrite(MemoryRegion region) {
        return (region.accessMask() & Access.LOCAL_WRITE.value()) != 0;
    }

    static Object protectionDomain(MemoryRegion region) {
        return region.protectionDomain();
    }
}
