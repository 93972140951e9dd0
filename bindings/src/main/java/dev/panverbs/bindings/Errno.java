package dev.panverbs.bindings;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

import dev.panverbs.bindings.verbs.verbs_h;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Collections;

/**
 * The C {@code errno} of a downcall, captured by the linker, and its symbolic name and text.
 *
 * <p>Verbs that fail with NULL or -1 report the reason in {@code errno}. Reading it with a later call to
 * {@code __errno_location()} is wrong: the JVM may run code between the two calls that overwrites it. A
 * handle linked with {@link #CAPTURE} instead takes a capture segment (allocate one with
 * {@link #allocateCapture}) as its first argument, into which the linker copies {@code errno} right after
 * the call; {@link #get} reads it back.
 *
 * <pre>{@code
 * MemorySegment errno = Errno.allocateCapture(arena);
 * MemorySegment ctx = LibIbverbs.ibv_open_device(errno, device);
 * if (ctx.equals(MemorySegment.NULL)) throw failure("ibv_open_device", Errno.get(errno));
 * }</pre>
 */
public final class Errno {

    /**
     * Linker option that makes a downcall handle capture {@code errno}; the handle's first parameter (after the
     * function address, for a virtual handle) is then the capture segment.
     */
    public static final Linker.Option CAPTURE = Linker.Option.captureCallState("errno");

    /** Layout of a capture segment (it holds more than {@code errno} on some platforms). */
    public static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();

    /** {@code errno} inside a capture segment: coordinates {@code (MemorySegment capture, long 0L)}, exact types. */
    public static final VarHandle ERRNO =
            CAPTURE_LAYOUT.varHandle(groupElement("errno")).withInvokeExactBehavior();

    /** {@code EOPNOTSUPP}, the value the inline verbs return (or set) when the provider lacks an op. */
    public static final int EOPNOTSUPP = verbs_h.EOPNOTSUPP();
    /** {@code EINVAL}, returned by some inline verbs that validate their arguments. */
    public static final int EINVAL = verbs_h.EINVAL();
    /** {@code EPERM}, returned by {@code ibv_bind_mw} when the MW and the MR belong to different PDs. */
    public static final int EPERM = verbs_h.EPERM();
    /** {@code ENOSYS}, which {@code ibv_query_device_ex} treats like {@code EOPNOTSUPP}. */
    public static final int ENOSYS = verbs_h.ENOSYS();
    /** {@code ENOENT}, returned by {@code ibv_start_poll}/{@code ibv_next_poll} when the CQ is empty. */
    public static final int ENOENT = verbs_h.ENOENT();
    /** {@code EAGAIN}, from a non-blocking read with nothing to read ({@code rdma_get_cm_event}). */
    public static final int EAGAIN = verbs_h.EAGAIN();
    /** {@code EINTR}, from a blocking libc call ({@code poll(2)}) that a signal interrupted. */
    public static final int EINTR = verbs_h.EINTR();

    private Errno() {}

    /** Allocates a capture segment for a handle linked with {@link #CAPTURE}; reuse it across calls on one thread. */
    public static MemorySegment allocateCapture(SegmentAllocator allocator) {
        return allocator.allocate(CAPTURE_LAYOUT);
    }

    /** The {@code errno} that the last call made with {@code capture} left behind. */
    public static int get(MemorySegment capture) {
        return (int) ERRNO.get(capture, 0L);
    }

    /** Stores {@code errno} in a capture segment, as the inline verbs do with C's {@code errno = EOPNOTSUPP}. */
    public static void set(MemorySegment capture, int errno) {
        ERRNO.set(capture, 0L, errno);
    }

    /**
     * The symbolic name of an errno value, e.g. {@code "ENOMEM"} for 12, or {@code "errno 4242"} for a value
     * Linux does not define. Negative values (as some verbs return {@code -errno}) are named by their
     * absolute value.
     */
    public static String name(int errno) {
        String name = ErrnoNames.BY_VALUE.get(Math.abs(errno));
        return name != null ? name : "errno " + errno;
    }

    /**
     * The C library's message for an errno value ({@code strerror(3)}), e.g. {@code "Cannot allocate memory"}.
     * Negative values are described by their absolute value.
     */
    public static String strerror(int errno) {
        int e = Math.abs(errno);
        String[] table = Messages.TABLE;
        return e < table.length ? table[e] : "Unknown error " + errno;
    }

    /** {@code "ENOMEM (Cannot allocate memory)"}: the form error messages use. */
    public static String describe(int errno) {
        return name(errno) + " (" + strerror(errno) + ")";
    }

    /**
     * strerror(3) of every Linux errno, read once. strerror may return a shared static buffer for unknown
     * values, so it is called only here, during class initialisation (which the JVM serialises).
     */
    private static final class Messages {
        static final String[] TABLE = load();

        private static String[] load() {
            Linker linker = Linker.nativeLinker();
            MethodHandle strerror = linker.downcallHandle(
                    linker.defaultLookup().find("strerror").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
            String[] table = new String[Collections.max(ErrnoNames.BY_VALUE.keySet()) + 1];
            for (int e = 0; e < table.length; e++) {
                table[e] = call(strerror, e);
            }
            return table;
        }

        private static String call(MethodHandle strerror, int errno) {
            try {
                MemorySegment text = (MemorySegment) strerror.invokeExact(errno);
                return text.reinterpret(Long.MAX_VALUE).getString(0);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new AssertionError("downcall handles throw no checked exception", t);
            }
        }
    }
}
