package dev.panverbs.bindings;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.bindings.verbs.verbs_h;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.HashSet;
import org.junit.jupiter.api.Test;

class ErrnoTest {

    @Test
    void nameUsesTheCanonicalSpelling() {
        assertThat(Errno.name(verbs_h.EPERM())).isEqualTo("EPERM");
        assertThat(Errno.name(verbs_h.ENOMEM())).isEqualTo("ENOMEM");
        assertThat(Errno.name(verbs_h.EOPNOTSUPP())).isEqualTo("EOPNOTSUPP");
        // the aliases share a value with these; the man pages use these spellings
        assertThat(Errno.name(verbs_h.EWOULDBLOCK())).isEqualTo("EAGAIN");
        assertThat(Errno.name(verbs_h.EDEADLOCK())).isEqualTo("EDEADLK");
        assertThat(Errno.name(verbs_h.EHWPOISON())).isEqualTo("EHWPOISON");
    }

    @Test
    void nameOfNegativeValueIsThatOfItsMagnitude() {
        assertThat(Errno.name(-verbs_h.EINVAL())).isEqualTo("EINVAL");
    }

    @Test
    void nameOfUnknownValueShowsTheNumber() {
        assertThat(Errno.name(4242)).isEqualTo("errno 4242");
        assertThat(Errno.name(0)).isEqualTo("errno 0");
    }

    @Test
    void everyNameIsDistinctAndEveryValuePositive() {
        assertThat(new HashSet<>(ErrnoNames.BY_VALUE.values())).hasSameSizeAs(ErrnoNames.BY_VALUE.values());
        assertThat(ErrnoNames.BY_VALUE.keySet()).allMatch(v -> v > 0);
        assertThat(ErrnoNames.BY_VALUE).hasSizeGreaterThan(120);
    }

    @Test
    void strerrorIsLibcsTextForTheSameValue() throws Throwable {
        Linker linker = Linker.nativeLinker();
        MethodHandle strerror = linker.downcallHandle(linker.defaultLookup().find("strerror").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        for (int errno : new int[] {verbs_h.EPERM(), verbs_h.ENOMEM(), verbs_h.EOPNOTSUPP(), verbs_h.EHWPOISON()}) {
            String expected = ((MemorySegment) strerror.invokeExact(errno)).reinterpret(256).getString(0);
            assertThat(Errno.strerror(errno)).isEqualTo(expected);
        }
        assertThat(Errno.strerror(-verbs_h.ENOSYS())).isEqualTo(Errno.strerror(verbs_h.ENOSYS()));
        assertThat(Errno.strerror(4242)).isEqualTo("Unknown error 4242");
    }

    @Test
    void describeCombinesNameAndText() {
        assertThat(Errno.describe(verbs_h.ENOENT())).isEqualTo("ENOENT (" + Errno.strerror(verbs_h.ENOENT()) + ")");
    }

    @Test
    void captureReadsErrnoOfTheCall() throws Throwable {
        Linker linker = Linker.nativeLinker();
        MethodHandle close = linker.downcallHandle(linker.defaultLookup().find("close").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT), Errno.CAPTURE);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Errno.allocateCapture(arena);
            int rc = (int) close.invokeExact(capture, -1);
            assertThat(rc).isEqualTo(-1);
            assertThat(Errno.get(capture)).isEqualTo(verbs_h.EBADF());
        }
    }
}
