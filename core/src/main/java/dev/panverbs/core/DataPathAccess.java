package dev.panverbs.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * What the post paths read from other verbs objects: the current {@link KeySnapshot} of a {@link LocalKey}. One
 * place, so every post path reads keys the same way: one read per SGE while a chain is built, then final fields, and
 * one ordered read per staged key when it is posted.
 *
 * <p>The address an SGE names for a key's first byte is its iova ({@link MemoryRegion#address()}): local (lkey)
 * access goes through the MR's iova space just like remote access ({@code ibv_reg_mr(3)}: "the virtual base address
 * of the MR when accessed through a lkey or rkey"; rxe checks SGEs against it), so for zero-based, iova and DMA-BUF
 * MRs it differs from {@code buffer().address()}.
 */
final class DataPathAccess {
    private static final VarHandle SNAPSHOT;

    static {
        try {
            SNAPSHOT = MethodHandles.lookup().findVarHandle(MemoryRegion.class, "snapshot", KeySnapshot.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private DataPathAccess() {}

    /**
     * {@link #snapshot} as a plain read, for {@code sge(...)} while a chain is built: the post re-reads every staged
     * key's snapshot (ordered, after its fence) and refuses one that is no longer current, so an early read that is
     * stale can only lead to that refusal, never to a post of a closed key. Plain, so the JIT keeps the chain's
     * other fields in registers across it (a volatile read per SGE forced them to be re-read).
     */
    static KeySnapshot stagedSnapshot(LocalKey key) {
        if (key instanceof MemoryRegion mr) {
            return (KeySnapshot) SNAPSHOT.get(mr);
        }
        if (key instanceof dev.panverbs.core.mlx5.IndirectMkey m) {
            return MkeyPathAccess.stagedSnapshotOf(m);
        }
        throw notAKey(key);
    }

    /** The key's current snapshot (the sealed family grows here: UMR mkeys, window-bound ranges, device memory). */
    static KeySnapshot snapshot(LocalKey key) {
        if (key instanceof MemoryRegion mr) {
            return mr.snapshot;
        }
        if (key instanceof dev.panverbs.core.mlx5.IndirectMkey m) {
            return MkeyPathAccess.snapshotOf(m);
        }
        throw notAKey(key);
    }

    private static IllegalArgumentException notAKey(LocalKey key) {
        return new IllegalArgumentException("ibv_sge.lkey: " + (key == null ? "an SGE's key is null" : key
                + " is not a local key of this library") + "; pass a MemoryRegion or an IndirectMkey");
    }
}
