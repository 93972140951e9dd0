package dev.panverbs.bindings.libc;

import dev.panverbs.bindings.Downcalls;
import dev.panverbs.bindings.Errno;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The two libc functions that waiting for verbs events needs: {@code fcntl(2)}, to make the async-event and
 * completion-channel descriptors non-blocking, and {@code poll(2)}, to wait on them with a timeout. Both fail
 * with -1 and errno, so both take an {@link Errno} capture segment first, as the verbs of
 * {@code ibverbs.LibIbverbs} do.
 *
 * <p>The constants are Linux's for x86-64 and aarch64 (asm-generic/fcntl.h and poll.h, identical on both): the
 * generated bindings cover rdma-core's headers, not libc's. Control path only; libc is always loaded, so these
 * handles are linked from the JVM's default lookup and never missing.
 */
public final class Posix {

    /** {@code F_GETFL}: read the file status flags. */
    public static final int F_GETFL = 3;
    /** {@code F_SETFL}: write the file status flags. */
    public static final int F_SETFL = 4;
    /** {@code O_NONBLOCK} (04000): reads that would block fail with EAGAIN instead. */
    public static final int O_NONBLOCK = 0x800;
    /** {@code POLLIN}: there is data to read. */
    public static final short POLLIN = 1;
    /** {@code POLLERR}: an error condition (output only). */
    public static final short POLLERR = 8;
    /** {@code POLLHUP}: hang-up (output only). */
    public static final short POLLHUP = 16;
    /** {@code POLLNVAL}: the descriptor is not open (output only). */
    public static final short POLLNVAL = 32;

    /** {@code struct pollfd { int fd; short events; short revents; }}: 8 bytes. */
    public static final StructLayout POLLFD = MemoryLayout.structLayout(
            ValueLayout.JAVA_INT.withName("fd"), ValueLayout.JAVA_SHORT.withName("events"),
            ValueLayout.JAVA_SHORT.withName("revents"));
    private static final long FD = 0;
    private static final long EVENTS = 4;
    private static final long REVENTS = 6;

    private static final MethodHandle FCNTL;
    private static final MethodHandle POLL;

    static {
        Linker linker = Linker.nativeLinker();
        // fcntl is variadic, (int fd, int cmd, ...): the third argument, an int for F_SETFL, is the first variadic one
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
     * {@code int fcntl(int fd, int cmd, int arg)} for the commands that take an int ({@code F_GETFL} ignores
     * it, {@code F_SETFL}): the result of the command, or -1 + errno (EBADF: {@code fd} is not open). The first
     * argument is an {@link Errno} capture segment.
     */
    public static int fcntl(MemorySegment errno, int fd, int cmd, int arg) {
        try {
            return (int) FCNTL.invokeExact(errno, fd, cmd, arg);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int poll(struct pollfd *fds, nfds_t nfds, int timeout)}: the number of descriptors with events, 0 on
     * timeout, or -1 + errno (EINTR: a signal arrived first; ENOMEM). {@code timeout} is in milliseconds, -1
     * waits forever. Blocks: never call it with a lock the woken side needs. The first argument is an
     * {@link Errno} capture segment.
     */
    public static int poll(MemorySegment errno, MemorySegment fds, long nfds, int timeout) {
        try {
            return (int) POLL.invokeExact(errno, fds, nfds, timeout);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Allocates one {@code struct pollfd}. */
    public static MemorySegment allocatePollfd(SegmentAllocator allocator) {
        return allocator.allocate(POLLFD);
    }

    /** Sets {@code pollfd->fd = fd, ->events = events, ->revents = 0}, as before every {@code poll} call. */
    public static void pollfd(MemorySegment pollfd, int fd, short events) {
        pollfd.set(ValueLayout.JAVA_INT, FD, fd);
        pollfd.set(ValueLayout.JAVA_SHORT, EVENTS, events);
        pollfd.set(ValueLayout.JAVA_SHORT, REVENTS, (short) 0);
    }

    /** {@code pollfd->revents}: what {@code poll} reported for the descriptor. */
    public static short revents(MemorySegment pollfd) {
        return pollfd.get(ValueLayout.JAVA_SHORT, REVENTS);
    }
}
