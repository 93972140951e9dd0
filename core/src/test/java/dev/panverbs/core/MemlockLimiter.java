package dev.panverbs.core;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Lowers {@code RLIMIT_MEMLOCK} (soft limit, process-wide) and drops {@code CAP_IPC_LOCK} from the calling
 * thread's effective set (capabilities are per thread), so that even root hits the pinned-memory limit;
 * {@link #close()} restores both. Use it on a thread of its own that ends afterwards: capset replaces the calling
 * thread's credential, and uverbs' write() refuses (EACCES) fds opened under another one. Linux x86-64/aarch64 only: RLIMIT_MEMLOCK 8, CAP_IPC_LOCK 14,
 * _LINUX_CAPABILITY_VERSION_3 0x20080522 (linux/capability.h, asm-generic/resource.h).
 */
final class MemlockLimiter implements AutoCloseable {
    private static final int RLIMIT_MEMLOCK = 8;
    private static final int CAP_IPC_LOCK = 14;
    private static final int CAP_VERSION_3 = 0x20080522;
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle GETRLIMIT = handle("getrlimit");
    private static final MethodHandle SETRLIMIT = handle("setrlimit");
    private static final MethodHandle CAPGET = handle("capget", ValueLayout.ADDRESS);
    private static final MethodHandle CAPSET = handle("capset", ValueLayout.ADDRESS);

    private final Arena arena = Arena.ofConfined();
    private final MemorySegment savedLimit = arena.allocate(16, 8);
    private final MemorySegment header = arena.allocate(8, 4);
    private final MemorySegment savedCaps = arena.allocate(24, 4);

    private static MethodHandle handle(String name) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
    }

    private static MethodHandle handle(String name, ValueLayout first) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, first, ValueLayout.ADDRESS));
    }

    MemlockLimiter(long softLimit) throws Throwable {
        check((int) GETRLIMIT.invokeExact(RLIMIT_MEMLOCK, savedLimit), "getrlimit");
        header.set(ValueLayout.JAVA_INT, 0, CAP_VERSION_3);
        header.set(ValueLayout.JAVA_INT, 4, 0);
        check((int) CAPGET.invokeExact(header, savedCaps), "capget");
        MemorySegment limit = arena.allocate(16, 8);
        limit.set(ValueLayout.JAVA_LONG, 0, softLimit);
        limit.set(ValueLayout.JAVA_LONG, 8, savedLimit.get(ValueLayout.JAVA_LONG, 8));
        check((int) SETRLIMIT.invokeExact(RLIMIT_MEMLOCK, limit), "setrlimit");
        MemorySegment caps = arena.allocate(24, 4);
        caps.copyFrom(savedCaps);
        caps.set(ValueLayout.JAVA_INT, 0, caps.get(ValueLayout.JAVA_INT, 0) & ~(1 << CAP_IPC_LOCK)); // effective[0]
        header.set(ValueLayout.JAVA_INT, 0, CAP_VERSION_3);
        check((int) CAPSET.invokeExact(header, caps), "capset");
    }

    private static void check(int rc, String call) {
        if (rc != 0) {
            throw new IllegalStateException(call + " failed");
        }
    }

    @Override
    public void close() throws Exception {
        try {
            header.set(ValueLayout.JAVA_INT, 0, CAP_VERSION_3);
            check((int) CAPSET.invokeExact(header, savedCaps), "capset (restore)");
            check((int) SETRLIMIT.invokeExact(RLIMIT_MEMLOCK, savedLimit), "setrlimit (restore)");
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        } finally {
            arena.close();
        }
    }
}
