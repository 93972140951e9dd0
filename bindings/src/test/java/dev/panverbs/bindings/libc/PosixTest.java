package dev.panverbs.bindings.libc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.verbs.verbs_h;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** The libc calls against the real libc, on descriptors that are not open (no device, no file needed). */
class PosixTest {

    /** Far above any descriptor this JVM has open. */
    private static final int NOT_OPEN = 1 << 20;

    @Test
    void fcntlOnADescriptorThatIsNotOpenFailsWithEbadfInErrno() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            assertThat(Posix.fcntl(errno, NOT_OPEN, Posix.F_GETFL, 0)).isEqualTo(-1);
            assertThat(Errno.get(errno)).isEqualTo(verbs_h.EBADF());
        }
    }

    @Test
    void pollReportsPollnvalForADescriptorThatIsNotOpen() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment pfd = Posix.allocatePollfd(arena);
            Posix.pollfd(pfd, NOT_OPEN, Posix.POLLIN);
            assertThat(Posix.poll(errno, pfd, 1, 0)).isEqualTo(1);
            assertThat(Posix.revents(pfd)).isEqualTo(Posix.POLLNVAL);
        }
    }

    @Test
    void pollIgnoresANegativeDescriptorAndTimesOut() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pfd = Posix.allocatePollfd(arena);
            Posix.pollfd(pfd, -1, Posix.POLLIN);
            assertThat(Posix.poll(Errno.allocateCapture(arena), pfd, 1, 10)).isZero();
            assertThat(Posix.revents(pfd)).isZero();
            assertThat(Posix.POLLFD.byteSize()).isEqualTo(8);
        }
    }
}
