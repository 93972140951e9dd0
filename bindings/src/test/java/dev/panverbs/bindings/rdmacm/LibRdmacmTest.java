package dev.panverbs.bindings.rdmacm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.rdmacma.rdma_cma_h;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Links every {@link LibRdmacm} handle against the installed {@code librdmacm.so.1} and calls the functions that
 * need no device: {@code rdma_event_str} for every event type (descriptor and return type), and, on a host without
 * {@code /dev/infiniband/rdma_cm}, {@code rdma_create_event_channel} failing with its errno captured. The calls that
 * need a device are exercised on rxe by core's {@code dev.panverbs.core.cm} ITs.
 */
class LibRdmacmTest {

    @Test
    void everyFunctionLinks() throws IllegalAccessException {
        List<String> unlinked = new ArrayList<>();
        int handles = 0;
        for (Field f : RdmacmHandles.class.getDeclaredFields()) {
            if (f.getType() == MethodHandle.class && Modifier.isStatic(f.getModifiers())) {
                handles++;
                if (f.get(null) == null) {
                    unlinked.add(f.getName());
                }
            }
        }
        assertThat(unlinked).as("librdmacm functions that did not link (install librdmacm1)").isEmpty();
        assertThat(handles).isEqualTo(28);
    }

    @Test
    void eventStringsNameEveryEventType() {
        int[] events = {rdma_cma_h.RDMA_CM_EVENT_ADDR_RESOLVED(), rdma_cma_h.RDMA_CM_EVENT_ESTABLISHED(),
                rdma_cma_h.RDMA_CM_EVENT_TIMEWAIT_EXIT()};
        String[] names = {"RDMA_CM_EVENT_ADDR_RESOLVED", "RDMA_CM_EVENT_ESTABLISHED", "RDMA_CM_EVENT_TIMEWAIT_EXIT"};
        for (int i = 0; i < events.length; i++) {
            assertThat(LibRdmacm.rdma_event_str(events[i]).reinterpret(64).getString(0)).isEqualTo(names[i]);
        }
        assertThat(LibRdmacm.rdma_event_str(4242).reinterpret(64).getString(0)).isEqualTo("UNKNOWN EVENT");
    }

    @Test
    void aFailedCallReportsItsErrno() {
        assumeTrue(!Files.exists(Path.of("/dev/infiniband/rdma_cm")),
                "this host has rdma_cm: the failure path is covered where it has not");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment channel = LibRdmacm.rdma_create_event_channel(errno);
            assertThat(channel.address()).isZero();
            assertThat(Errno.name(Errno.get(errno))).isIn("ENODEV", "ENOENT", "ENOSYS");
        }
    }
}
