package dev.panverbs.bindings.libc;

import dev.panverbs.bindings.Downcalls;
import dev.panverbs.bindings.Errno;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Locale;
import java.util.Optional;

/**
 * Linux's {@code membarrier(2)}, called as {@code syscall(SYS_membarrier, cmd, 0, 0)}: glibc has no wrapper. With
 * {@link #CMD_PRIVATE_EXPEDITED} every running thread of the process executes a full memory barrier before the call
 * returns (an IPI to each CPU running one; a thread not running passes one at its next context switch), which lets a
 * rare side pay for the StoreLoad ordering that a frequent side then gets from a compiler barrier alone.
 *
 * <p>Linked only on Linux x86-64 ({@code __NR_membarrier} 324) and aarch64 (283); elsewhere {@link #call} returns
 * {@code -ENOSYS}. Control path: each call allocates its errno capture.
 */
public final class Membarrier {
    /** {@code MEMBARRIER_CMD_QUERY}: the bit mask of the supported commands. */
    public static final int CMD_QUERY = 0;
    /** {@code MEMBARRIER_CMD_PRIVATE_EXPEDITED}: a barrier on every running thread of this process. */
    public static final int CMD_PRIVATE_EXPEDITED = 1 << 3;
    /** {@code MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED}: required once per process before the command above. */
    public static final int CMD_REGISTER_PRIVATE_EXPEDITED = 1 << 4;
    /** {@code ENOSYS}, returned (negated) when the call is not linked on this platform. */
    public static final int ENOSYS = 38;

    private static final MethodHandle SYSCALL;
    private static final long NR;

    static {
        NR = syscallNumber(System.getProperty("os.name", ""), System.getProperty("os.arch", ""));
        Linker linker = Linker.nativeLinker();
        Optional<MemorySegment> sym = NR < 0 ? Optional.empty() : linker.defaultLookup().find("syscall");
        // long syscall(long number, ...): the command and its two arguments are variadic, passed as longs
        SYSCALL = sym.map(s -> linker.downcallHandle(s, FunctionDescriptor.of(ValueLayout.JAVA_LONG,
                ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG),
                Linker.Option.firstVariadicArg(1), Errno.CAPTURE)).orElse(null);
    }

    private Membarrier() {}

    /** {@code __NR_membarrier} for {@code os.name}/{@code os.arch}, or -1 where it is not bound. */
    public static long syscallNumber(String osName, String osArch) {
        if (!osName.toLowerCase(Locale.ROOT).startsWith("linux")) {
            return -1;
        }
        return switch (osArch) {
            case "amd64", "x86_64" -> 324;
            case "aarch64" -> 283;
            default -> -1;
        };
    }

    /** {@code membarrier(cmd, 0, 0)}: its non-negative result, or {@code -errno} (-{@link #ENOSYS} if not linked). */
    public static int call(int cmd) {
        if (SYSCALL == null) {
            return -ENOSYS;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(a);
            long rc = (long) SYSCALL.invokeExact(errno, NR, (long) cmd, 0L, 0L);
            return rc < 0 ? -Errno.get(errno) : (int) rc;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }
}
