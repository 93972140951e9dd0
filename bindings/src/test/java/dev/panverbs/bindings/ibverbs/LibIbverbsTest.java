package dev.panverbs.bindings.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.NativeLibraryException;
import dev.panverbs.bindings.verbs.verbs_h;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Links every handle against the installed libibverbs.so.1 (symbols exist without a device). */
class LibIbverbsTest {

    @Test
    void everyExportedFunctionLinks() throws IllegalAccessException {
        List<String> unlinked = new ArrayList<>();
        int handles = 0;
        for (Field f : IbverbsHandles.class.getDeclaredFields()) {
            if (f.getType() == MethodHandle.class && Modifier.isStatic(f.getModifiers())) {
                handles++;
                if (f.get(null) == null) {
                    unlinked.add(f.getName());
                }
            }
        }
        assertThat(unlinked).isEmpty();
        // every function in src-gen/verbs.includes
        assertThat(handles).isEqualTo(67);
    }

    @Test
    void errnoCapturingHandlesTakeTheCaptureSegmentFirst() {
        assertThat(IbverbsHandles.ibv_open_device.type().parameterCount()).isEqualTo(2);
        assertThat(IbverbsHandles.ibv_close_device.type().parameterCount()).isEqualTo(1);
        assertThat(IbverbsHandles.ibv_get_cq_event.type().parameterCount()).isEqualTo(4);
    }

    @Test
    void getDeviceListOnThisHostGivesNoDeviceAndDoesNotCrash() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment num = arena.allocate(ValueLayout.JAVA_INT);
            num.set(ValueLayout.JAVA_INT, 0, -7);
            MemorySegment list = LibIbverbs.ibv_get_device_list(errno, num);
            if (list.equals(MemorySegment.NULL)) {
                // no kernel verbs support (no /sys/class/infiniband_verbs): rdma-core 44 reports ENOSYS
                System.out.println("ibv_get_device_list: NULL, errno " + Errno.describe(Errno.get(errno)));
                assertThat(Errno.get(errno)).isNotZero();
            } else {
                System.out.println("ibv_get_device_list: " + num.get(ValueLayout.JAVA_INT, 0) + " devices");
                assertThat(num.get(ValueLayout.JAVA_INT, 0)).isGreaterThanOrEqualTo(0);
                LibIbverbs.ibv_free_device_list(list);
            }
        }
    }

    @Test
    void enumStringsComeFromLibibverbs() {
        assertThat(LibIbverbsStrings.ibv_wc_status_str(verbs_h.IBV_WC_SUCCESS()).reinterpret(64).getString(0))
                .isEqualTo("success");
        assertThat(LibIbverbsStrings.ibv_port_state_str(verbs_h.IBV_PORT_ACTIVE()).reinterpret(64).getString(0))
                .isEqualTo("active");
        assertThat(LibIbverbsStrings.ibv_rate_to_mbps(verbs_h.IBV_RATE_10_GBPS())).isEqualTo(10_000);
        assertThat(LibIbverbsStrings.mbps_to_ibv_rate(10_000)).isEqualTo(verbs_h.IBV_RATE_10_GBPS());
    }

    @Test
    void missingSymbolIsNullHandleThenNativeLibraryException() {
        MethodHandle h = IbverbsHandles.link("ibv_panverbs_no_such_verb", verbs_h::ibv_fork_init$descriptor, false);
        assertThat(h).isNull();
        assertThatThrownBy(() -> IbverbsHandles.linked(h, "ibv_panverbs_no_such_verb"))
                .isInstanceOf(NativeLibraryException.class)
                .hasMessageContaining("ibv_panverbs_no_such_verb")
                .hasMessageContaining("libibverbs1");
    }
}
