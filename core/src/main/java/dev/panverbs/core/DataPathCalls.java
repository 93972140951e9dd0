package dev.panverbs.core;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Address-first ("virtual") downcall handles for provider function pointers on the data path: one
 * {@code static final} handle per C signature, the function address passed first, as in the JDK's
 * {@code CallOverheadVirtual} benchmark. QPs and CQs read each slot ({@code ibv_context.ops.post_send},
 * {@code ibv_qp_ex.wr_*}, {@code ibv_cq_ex.start_poll}, ...) once at creation into a final field and call through
 * these with {@code invokeExact}. All are {@link Linker.Option#critical critical(false)}: providers implement them
 * without syscalls, blocking or upcalls (they at most take a spinlock the same thread releases in
 * {@code wr_complete}/{@code end_poll}).
 *
 * <p>Names spell the C signature: return, underscore, parameters; {@code p} pointer, {@code i} 32-bit,
 * {@code j} 64-bit, {@code v} void, {@code b} u8, {@code s} u16.
 */
final class DataPathCalls {
    private static final ValueLayout P = ValueLayout.ADDRESS;
    private static final ValueLayout.OfInt I = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong J = ValueLayout.JAVA_LONG;

    static final MethodHandle I_PPP = hot(FunctionDescriptor.of(I, P, P, P));
    static final MethodHandle I_PIP = hot(FunctionDescriptor.of(I, P, I, P));
    static final MethodHandle I_PI = hot(FunctionDescriptor.of(I, P, I));
    static final MethodHandle I_PP = hot(FunctionDescriptor.of(I, P, P));
    static final MethodHandle I_P = hot(FunctionDescriptor.of(I, P));
    static final MethodHandle J_P = hot(FunctionDescriptor.of(J, P));
    static final MethodHandle B_P = hot(FunctionDescriptor.of(ValueLayout.JAVA_BYTE, P));
    static final MethodHandle S_P = hot(FunctionDescriptor.of(ValueLayout.JAVA_SHORT, P));
    static final MethodHandle V_P = hot(FunctionDescriptor.ofVoid(P));
    static final MethodHandle V_PI = hot(FunctionDescriptor.ofVoid(P, I));
    static final MethodHandle V_PIJ = hot(FunctionDescriptor.ofVoid(P, I, J));
    static final MethodHandle V_PIJI = hot(FunctionDescriptor.ofVoid(P, I, J, I));
    static final MethodHandle V_PIJJ = hot(FunctionDescriptor.ofVoid(P, I, J, J));
    static final MethodHandle V_PIJJJ = hot(FunctionDescriptor.ofVoid(P, I, J, J, J));
    static final MethodHandle V_PJP = hot(FunctionDescriptor.ofVoid(P, J, P));
    static final MethodHandle V_PPJ = hot(FunctionDescriptor.ofVoid(P, P, J));
    static final MethodHandle V_PPII = hot(FunctionDescriptor.ofVoid(P, P, I, I));
    static final MethodHandle V_PPIP = hot(FunctionDescriptor.ofVoid(P, P, I, P));

    /** {@code int (*query_device_ex)(ctx, const input*, attr*, size_t)}: control path, enters the kernel. */
    static final MethodHandle I_PPPJ = Linker.nativeLinker().downcallHandle(FunctionDescriptor.of(I, P, P, P, J));

    private DataPathCalls() {}

    private static MethodHandle hot(FunctionDescriptor d) {
        return Linker.nativeLinker().downcallHandle(d, Linker.Option.critical(false));
    }

    /** The function pointer stored at {@code offset} in {@code struct}, as a zero-length segment (read once). */
    static MemorySegment slot(MemorySegment struct, long offset) {
        return struct.get(ValueLayout.ADDRESS, offset);
    }

    static AssertionError unreachable(Throwable t) {
        return new AssertionError("a downcall threw a checked exception", t);
    }
}
