package dev.panverbs.bindings;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.function.Supplier;

/**
 * How every library class of these bindings ({@code ibverbs.LibIbverbs}, {@code mlx5.LibMlx5}, later
 * {@code rdmacm}) links and calls the functions a native library exports: one {@code static final} handle per
 * function in a holder class ({@code IbverbsHandles}, {@code Mlx5Handles}) made by {@link #link}, and one typed
 * static method per function that calls {@code linked(HANDLE, "symbol").invokeExact(...)}. Functions whose C
 * contract is "NULL or -1, reason in errno" are linked with {@link Errno#CAPTURE} and take the capture segment
 * first.
 *
 * <p>A holder's initialisation never throws: a missing library or symbol leaves its field {@code null}, and
 * {@link #linked} turns that into the {@link NativeLibraryException} naming the package, on every call, rather
 * than one {@code ExceptionInInitializerError} followed by {@code NoClassDefFoundError}. Once the holder is
 * initialised the JIT folds the null check away.
 */
public final class Downcalls {

    /**
     * Resolves a function of one native library ({@code dlsym(3)} on the handle {@code dlopen(3)} returned for its
     * soname), or throws the {@link NativeLibraryException} naming the package that provides it:
     * {@code NativeLibraries::ibverbsSymbol}, {@code NativeLibraries::mlx5Symbol}.
     */
    @FunctionalInterface
    public interface Library {
        /** The address of {@code symbol}; throws {@link NativeLibraryException} when it cannot be resolved. */
        MemorySegment symbol(String symbol);
    }

    private Downcalls() {}

    /**
     * Links {@code symbol} of {@code library} with jextract's descriptor (capturing errno if asked), or returns
     * {@code null} if the library or the symbol is missing. The symbol is resolved before the descriptor is asked
     * for: jextract's per-function holder resolves it too, and would fail with an
     * {@code ExceptionInInitializerError} instead.
     */
    public static MethodHandle link(Library library, String symbol, Supplier<FunctionDescriptor> descriptor,
                                    boolean captureErrno) {
        MemorySegment address;
        try {
            address = library.symbol(symbol);
        } catch (NativeLibraryException e) {
            return null;
        }
        return captureErrno
                ? Linker.nativeLinker().downcallHandle(address, descriptor.get(), Errno.CAPTURE)
                : Linker.nativeLinker().downcallHandle(address, descriptor.get());
    }

    /**
     * {@code handle}, or the {@link NativeLibraryException} that explains why {@link #link} could not link it
     * (library missing, or a symbol missing from an older rdma-core).
     */
    public static MethodHandle linked(MethodHandle handle, Library library, String symbol) {
        if (handle == null) {
            library.symbol(symbol); // throws the NativeLibraryException naming package or symbol
            throw new AssertionError(symbol + " resolves now but was not linked at class initialisation");
        }
        return handle;
    }

    /**
     * For the {@code catch (Throwable)} that {@code invokeExact} forces on callers: a downcall handle throws no
     * checked exception, and unchecked ones are rethrown unchanged before this is reached.
     */
    public static AssertionError unreachable(Throwable t) {
        return new AssertionError("a downcall handle threw a checked exception", t);
    }
}
