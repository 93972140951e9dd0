package dev.panverbs.core;

/**
 * What the post paths read from other verbs objects: the current {@link KeySnapshot} of a {@link LocalKey}. One
 * place, so every post path reads keys the same way: one volatile read per SGE, then final fields.
 *
 * <p>The address an SGE names for a key's first byte is its iova ({@link MemoryRegion#address()}): local (lkey)
 * access goes through the MR's iova space just like remote access ({@code ibv_reg_mr(3)}: "the virtual base address
 * of the MR when accessed through a lkey or rkey"; rxe checks SGEs against it), so for zero-based, iova and DMA-BUF
 * MRs it differs from {@code buffer().address()}.
 */
final class DataPathAccess {
    private DataPathAccess() {}

    /** The key's current snapshot (the sealed family grows here: UMR mkeys, window-bound ranges, device memory). */
    static KeySnapshot snapshot(LocalKey key) {
        if (key instanceof MemoryRegion mr) {
            return mr.snapshot;
        }
        throw new IllegalArgumentException("not a local key of this library: " + key);
    }
}
