package dev.panverbs.core.mlx5;

import dev.panverbs.core.FakeProvider;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.internal.NativeHandles;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

/**
 * The fake provider with fake {@code mlx5dv_qp_ex} UMR builders ({@code core/src/test/c/fake_mlx5dv.c}) that the
 * UMR host tests share: {@link UmrQueuePair}s over its QPs and {@link IndirectMkey}s over plain memory.
 */
final class UmrFake {
    final FakeProvider fake;
    private final SymbolLookup lib;

    UmrFake() {
        Path so = FakeProvider.compile(Path.of("src/test/c/fake_mlx5dv.c"), Path.of("target/fake-umr"));
        fake = new FakeProvider(so);
        lib = SymbolLookup.libraryLookup(so.toAbsolutePath(), Arena.global());
    }

    /** What the last UMR builder call received ({@code struct fake_umr}). */
    MemorySegment lastUmr() {
        return (MemorySegment) call("fake_last_umr", FunctionDescriptor.of(ValueLayout.ADDRESS));
    }

    /** {@code qp} (a fake QP with an {@code ibv_qp_ex}) as a UMR QP of {@code maxInlineData} bytes inline. */
    UmrQueuePair umr(QueuePair qp, int maxInlineData) {
        MemorySegment ex = NativeHandles.handle(qp, "test");
        MemorySegment dv = (MemorySegment) call("fake_dv_qp_ex",
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS), ex);
        return UmrQueuePair.wrap(qp, ex, dv, maxInlineData);
    }

    /** An indirect mkey of {@code pd} whose lkey and rkey are {@code key}; its destroy runs {@code destroyed}. */
    static IndirectMkey mkey(ProtectionDomain pd, int maxEntries, int key, Runnable destroyed) {
        MemorySegment m = Arena.global().allocate(8, 4);
        m.set(ValueLayout.JAVA_INT, 0, key);
        m.set(ValueLayout.JAVA_INT, 4, key);
        return IndirectMkey.wrap(pd, m, maxEntries, h -> {
            destroyed.run();
            return 0;
        });
    }

    private Object call(String name, FunctionDescriptor fd, Object... args) {
        try {
            return Linker.nativeLinker().downcallHandle(lib.find(name).orElseThrow(), fd).invokeWithArguments(args);
        } catch (Throwable t) {
            throw new IllegalStateException(name, t);
        }
    }
}
