package dev.panverbs.bindings.ibverbs;

import dev.panverbs.bindings.verbs.verbs_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.junit.jupiter.api.Assertions;

/**
 * Opens the device under test with the raw verbs (which device, and what happens when there is none, is
 * {@link dev.panverbs.testing.RdmaTestDevice}'s policy).
 */
final class BedDevice {
    private BedDevice() {}

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
