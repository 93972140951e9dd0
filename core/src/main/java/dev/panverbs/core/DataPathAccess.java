package dev.panverbs.core;

/**
 * What the post paths read from other verbs objects: the local address, length, key and protection domain of a
 * memory region. One place, so the post path's checks read the region the same way everywhere.
 */
final class DataPathAccess {
    private DataPathAccess() {}

    /** The local virtual address of the region's first byte (what an SGE names), not the remote iova. */
    static long address(MemoryRegion region) {
        return region.buffer().address();
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

    static Object protectionDomain(MemoryRegion region) {
        return region.protectionDomain();
    }
}
