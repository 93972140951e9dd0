package dev.panverbs.core.internal;

import dev.panverbs.bindings.Errno;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The two libc calls the event waits need: {@code fcntl(2)} to make the async-event and completion-channel
 * descriptors non-blocking, and {@code poll(2)} to wait on them with a timeout. Both capture errno (they
 * fail with -1). Linux x86-64/aarch64 values: {@code F_GETFL} 3, {@code F_SETFL} 4, {@code O_NONBLOCK}
 * 0x800 (04000), {@code POLLIN} 1 (asm-generic/fcntl.h and poll.h, identical on both).
 *
 * <p>Control path only: these are the only raw downcalls in core, kept here because the bindings module
 * binds rdma-core, not libc.
 */
public final class Posix {

    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;
    private static final int O_NONBLOCK = 0x800;
    /** {@code POLLIN}: data to read. */
    public static final short POLLIN = 1;
    private static final short POLLERR = 8;
    private static final short POLLHUP = 16;
    private static final short POLLNVAL = 32;
    private static final int EINTR = 4;

    /** {@code struct pollfd { int fd; short events; short revents; }}. */
    private static final StructLayout POLLFD = MemoryLayout.structLayout(
            ValueLayout.JAVA_INT.withName("fd"), ValueLayout.JAVA_SHORT.withName("events"),
            ValueLayout.JAVA_SHORT.withName("revents"));

    private static final MethodHandle FCNTL;
    private static final MethodHandle POLL;

    static {
        Linker linker = Linker.nativeLinker();
        // fcntl is variadic: (int fd, int cmd, ...) with one int vararg
        FCNTL = linker.downcallHandle(linker.defaultLookup().find("fcntl").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT),
                Linker.Option.firstVariadicArg(2), Errno.CAPTURE);
        POLL = linker.downcallHandle(linker.defaultLookup().find("poll").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                        ValueLayout.JAVA_INT),
                Errno.CAPTURE);
    }

    private Posix() {}

    /**
     * Sets {@code O_NONBLOCK} on {@code fd} ({@code fcntl(F_SETFL)}), so that {@code ibv_get_async_event} /
     * {@code ibv_get_cq_event} return EAGAIN instead of blocking; waits then block in {@link #pollIn}.
     *
     * @param what names the descriptor in errors, e.g. {@code Context[rxe0] async_fd}
     */
    public static void setNonBlocking(int fd, String what) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            int flags = (int) FCNTL.invokeExact(errno, fd, F_GETFL, 0);
            if (flags < 0) {
                throw Errors.failure(Errors.call("fcntl", "fd", fd + " (" + what + ")", "cmd", "F_GETFL"), Errno.get(errno));
            }
            if ((flags & O_NONBLOCK) != 0) {
                return;
            }
            int rc = (int) FCNTL.invokeExact(errno, fd, F_SETFL, flags | O_NONBLOCK);
            if (rc < 0) {
                throw Errors.failure(Errors.call("fcntl", "fd", fd + " (" + what + ")", "cmd", "F_SETFL"), Errno.get(errno));
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("a downcall handle threw a checked exception", t);
        }
    }

    /**
     * Waits up to {@code timeoutMillis} (-1: forever) until {@code fd} is readable ({@code poll(2)},
     * {@code POLLIN}). EINTR is retried with the remaining time.
     *
     * @return whether the descriptor is readable (false on timeout)
     * @throws dev.panverbs.core.VerbsException if poll fails or reports the descriptor invalid or hung up
     */
    public static boolean pollIn(int fd, int timeoutMillis, String what) {
        long deadline = timeoutMillis < 0 ? Long.MAX_VALUE : System.nanoTime() + timeoutMillis * 1_000_000L;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment pfd = arena.allocate(POLLFD);
            while (true) {
                pfd.set(ValueLayout.JAVA_INT, 0, fd);
                pfd.set(ValueLayout.JAVA_SHORT, 4, POLLIN);
                pfd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
                int wait = timeoutMillis < 0 ? -1
                        : (int) Math.max(0, Math.min(Integer.MAX_VALUE, (deadline - System.nanoTime()) / 1_000_000L));
                int rc = (int) POLL.invokeExact(errno, pfd, 1L, wait);
                if (rc < 0) {
                    int e = Errno.get(errno);
                    if (e == EINTR) {
                        continue;
                    }
                    throw Errors.failure(Errors.call("poll", "fd", fd + " (" + what + ")"), e);
                }
                if (rc == 0) {
                    return false;
                }
                short revents = pfd.get(ValueLayout.JAVA_SHORT, 6);
                if ((revents & (POLLERR | POLLHUP | POLLNVAL)) != 0 && (revents & POLLIN) == 0) {
                    throw new dev.panverbs.core.VerbsException(Errors.call("poll", "fd", fd + " (" + what + ")"),
                            "the descriptor reported revents=0x" + Integer.toHexString(revents)
                                    + " (error, hang-up or invalid): the device was removed or the object closed");
                }
                return true;
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("a downcall handle threw a checked exception", t);
        }
    }
}
