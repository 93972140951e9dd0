package dev.panverbs.bindings;

import java.lang.invoke.MethodHandle;

/** Shared plumbing of the typed downcall methods in this package. */
public final class Downcalls {

    private Downcalls() {}

    /**
     * {@code handle}, or the {@link NativeLibraryException} that explains why it could not be linked (library
     * missing, or a symbol missing from an older rdma-core). Handles are linked in a holder class whose
     * initialisation never throws, so a missing library gives this exception on every call rather than one
     * {@code ExceptionInInitializerError} followed by {@code NoClassDefFoundError}. Once the holder is
     * initialised the JIT folds the null check away.
     */
    public static MethodHandle linked(MethodHandle handle, String symbol) {
        if (handle == null) {
            NativeLibraries.ibverbsSymbol(symbol); // throws the NativeLibraryException naming package or symbol
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
