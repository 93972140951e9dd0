package dev.panverbs.core.internal;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.VerbsException;
import org.junit.jupiter.api.Test;

/** The event-descriptor waits on a descriptor that is not open: errors name the call, the descriptor and errno. */
class FileDescriptorsTest {

    private static final int NOT_OPEN = 1 << 20;

    @Test
    void setNonBlockingOnAClosedDescriptorFailsWithEbadfNamingIt() {
        assertThatThrownBy(() -> FileDescriptors.setNonBlocking(NOT_OPEN, "Context[fake0] async_fd"))
                .isInstanceOf(VerbsException.class)
                .hasMessageStartingWith("fcntl(fd=" + NOT_OPEN + " (Context[fake0] async_fd), cmd=F_GETFL) failed: EBADF");
    }

    @Test
    void pollInOnAClosedDescriptorReportsItInvalid() {
        assertThatThrownBy(() -> FileDescriptors.pollIn(NOT_OPEN, 0, "CompletionChannel[fake0] fd"))
                .isInstanceOf(VerbsException.class)
                .hasMessageStartingWith("poll(fd=" + NOT_OPEN + " (CompletionChannel[fake0] fd)): ")
                .hasMessageContaining("revents=0x20");
    }
}
