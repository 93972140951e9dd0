package dev.panverbs.bindings.ibverbs;

import dev.panverbs.bindings.verbs.verbs_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * The device the bindings' ITs use, with the policy of core's {@code dev.panverbs.testing.RdmaTestDevice}
 * (which this module cannot depend on: core depends on bindings): {@code $PANVERBS_TEST_DEVICE}, else the
 * first device; a missing device fails when {@code CI=true} or {@code PANVERBS_REQUIRE_DEVICE=1} (the
 * Soft-RoCE guest sets it) and aborts the test with a loud reason elsewhere.
 */
final class BedDevice {
    private BedDevice() {}

    static String name() {
        List<String> devices = deviceNames();
        String wanted = System.getenv("PANVERBS_TEST_DEVICE");
        if (wanted != null && !wanted.isBlank()) {
            if (!devices.contains(wanted)) {
                Assertions.fail("PANVERBS_TEST_DEVICE=" + wanted + " but the verbs library reports " + devices);
            }
            return wanted;
        }
        if (!devices.isEmpty()) {
            return devices.get(0);
        }
        String reason = "NO RDMA DEVICE: this integration test needs one; run it in the Soft-RoCE guest with "
                + "testbed/test, or attach a device (rdma link add rxe0 type rxe netdev eth0) and set "
                + "PANVERBS_TEST_DEVICE=rxe0";
        if ("true".equalsIgnoreCase(System.getenv("CI")) || "1".equals(System.getenv("PANVERBS_REQUIRE_DEVICE"))) {
            Assertions.fail(reason + " (a device is required here: CI=true or PANVERBS_REQUIRE_DEVICE=1)");
        }
        Assumptions.abort(reason);
        throw new AssertionError("unreachable");
    }

    static List<String> deviceNames() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment list = verbs_h.ibv_get_device_list(count);
            if (list.equals(MemorySegment.NULL)) {
                return List.of(); // ENOSYS: the kernel has no RDMA support
            }
            try {
                int n = count.get(ValueLayout.JAVA_INT, 0);
                MemorySegment devices = list.reinterpret(ValueLayout.ADDRESS.byteSize() * n);
                List<String> names = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    MemorySegment device = devices.getAtIndex(ValueLayout.ADDRESS, i);
                    names.add(verbs_h.ibv_get_device_name(device).reinterpret(256).getString(0));
                }
                return names;
            } finally {
                verbs_h.ibv_free_device_list(list);
            }
        }
    }

    /** The opened {@code ibv_device*} named {@code name} as an {@code ibv_context*}; the caller closes it. */
    static MemorySegment open(String name) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment list = verbs_h.ibv_get_device_list(count);
            Assertions.assertNotEquals(MemorySegment.NULL, list, "ibv_get_device_list returned NULL");
            try {
                int n = count.get(ValueLayout.JAVA_INT, 0);
                MemorySegment devices = list.reinterpret(ValueLayout.ADDRESS.byteSize() * n);
                for (int i = 0; i < n; i++) {
                    MemorySegment device = devices.getAtIndex(ValueLayout.ADDRESS, i);
                    if (verbs_h.ibv_get_device_name(device).reinterpret(256).getString(0).equals(name)) {
                        MemorySegment context = verbs_h.ibv_open_device(device);
                        Assertions.assertNotEquals(MemorySegment.NULL, context, "ibv_open_device(" + name + ")");
                        return context;
                    }
                }
                return Assertions.fail("device " + name + " disappeared");
            } finally {
                verbs_h.ibv_free_device_list(list);
            }
        }
    }
}
