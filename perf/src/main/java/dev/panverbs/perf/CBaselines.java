package dev.panverbs.perf;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * The C baselines' downcall handles (the fake provider's {@code fake_c_*} and {@code fake_nop}) as constants.
 * Held in instance fields, a handle is not a constant to C2: {@code invokeExact} then compiles to a real call into
 * the handle's compiled LambdaForm, whose code and placement differ from one JVM to the next (the C rows read ~20 or
 * ~27 ns per fork, bimodal); the library's own handles are constants, folded into the caller. Loads the library
 * {@code -Dpanverbs.fake} names (the one {@code FakeProvider} opens: the same {@code dlopen} handle).
 */
final class CBaselines {
    private CBaselines() {
    }

    private static final SymbolLookup LIB = SymbolLookup.libraryLookup(
            Path.of(System.getProperty("panverbs.fake", "perf/target/libfakeprovider.so")).toAbsolutePath(),
            Arena.global());

    private static MethodHandle downcall(String name, FunctionDescriptor fd, boolean critical) {
        Linker linker = Linker.nativeLinker();
        return critical
                ? linker.downcallHandle(LIB.find(name).orElseThrow(), fd, Linker.Option.critical(false))
                : linker.downcallHandle(LIB.find(name).orElseThrow(), fd);
    }

    private static final ValueLayout.OfLong J = ValueLayout.JAVA_LONG;
    private static final ValueLayout.OfInt I = ValueLayout.JAVA_INT;
    private static final ValueLayout P = ValueLayout.ADDRESS;

    static final MethodHandle NOP = downcall("fake_nop", FunctionDescriptor.ofVoid(), false);
    static final MethodHandle NOP_CRITICAL = downcall("fake_nop", FunctionDescriptor.ofVoid(), true);
    static final MethodHandle POST_SEND = downcall("fake_c_post_send",
            FunctionDescriptor.of(J, P, P, I, I, J, J, I, J, I), true);
    static final MethodHandle POST_BATCH1 = downcall("fake_c_post_batch1",
            FunctionDescriptor.of(J, P, P, J, J, I, J, I), true);
    static final MethodHandle EXTENDED_POLL16 = downcall("fake_c_extended_poll16",
            FunctionDescriptor.of(J, P, P, J, J, I, J, I), true);
}
