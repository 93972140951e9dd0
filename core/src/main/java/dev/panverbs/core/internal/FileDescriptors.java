package dev.panverbs.core.internal;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.libc.Posix;
import dev.panverbs.core.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Waiting on the descriptors that verbs events arrive on (a context's {@code async_fd}, a completion channel's
 * {@code fd}): made non-blocking once, so that {@code ibv_get_async_event}/{@code ibv_get_cq_event} return EAGAIN
 * instead of blocking, then waited on with {@code poll(2)} in slices, so that a wait notices a close. The libc
 * calls are {@link Posix}'s; this class adds the retries and the errors.
 */
public final class FileDescriptors {

    private static final int EINTR = Errno.EINTR;

    private FileDescriptors() {}

    /**
     * Sets {@code O_NONBLOCK} on {@code fd} ({@code fcntl(F_SETFL)}) unless already set; waits then block in
     * {@link #pollIn}.
     *
     * @param what names the descriptor in errors, e.g. {@code Context[rxe0] async_fd}
     * @throws VerbsException if {@code fcntl} fails (EBADF: the descriptor is not open)
     */
    public static void setNonBlocking(int fd, String what) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            int flags = Posix.fcntl(errno, fd, Posix.F_GETFL, 0);
            if (flags < 0) {
                throw Errors.failure(Errors.call("fcntl", "fd", fd + " (" + what + ")", "cmd", "F_GETFL"), Errno.get(errno));
            }
            if ((flags & Posix.O_NONBLOCK) != 0) {
                return;
            }
            if (Posix.fcntl(errno, fd, Posix.F_SETFL, flags | Posix.O_NONBLOCK) < 0) {
                throw Errors.failure(Errors.call("fcntl", "fd", fd + " (" + what + ")", "cmd", "F_SETFL"), Errno.get(errno));
            }
        }
    }

    /**
     * Waits up to {@code timeoutMillis} (-1: forever) until {@code fd} is readable ({@code poll(2)},
     * {@code POLLIN}). EINTR is retried with the remaining time.
     *
     * @return whether the descriptor is readable (false on timeout)
     * @throws VerbsException if poll fails or reports the descriptor invalid or hung up
     */
    public static boolean pollIn(int fd, int timeoutMillis, String what) {
        long deadline = timeoutMillis < 0 ? Long.MAX_VALUE : System.nanoTime() + timeoutMillis * 1_000_000L;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment pfd = Posix.allocatePollfd(arena);
            while (true) {
                Posix.pollfd(pfd, fd, Posix.POLLIN);
                int wait = timeoutMillis < 0 ? -1
                        : (int) Math.max(0, Math.min(Integer.MAX_VALUE, (deadline - System.nanoTime()) / 1_000_000L));
                int rc = Posix.poll(errno, pfd, 1L, wait);
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
                short revents = Posix.revents(pfd);
                if ((revents & (Posix.POLLERR | Posix.POLLHUP | Posix.POLLNVAL)) != 0 && (revents & Posix.POLLIN) == 0) {
                    throw new VerbsException(Errors.call("poll", "fd", fd + " (" + what + ")"),
                            "the descriptor reported revents=0x" + Integer.toHexString(revents)
                                    + " (error, hang-up or invalid): the device was removed or the object closed");
                }
                return true;
            }
        }
    }
}
