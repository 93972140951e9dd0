package dev.panverbs.testing;

import dev.panverbs.testing.RdmaTestDevice.DeviceList;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * The device list as libibverbs reports it: {@code ibv_get_device_list(3)} with errno captured, so that "this
 * kernel has no RDMA support" (ENOSYS) can be told apart from "no device".
 *
 * <p>The one piece of test code that calls libibverbs itself, and deliberately: the bindings' own tests use
 * the policy, so it cannot use the bindings (they would depend on each other). It only lists names.
 */
final class DeviceQuery {
    static final String IBVERBS_SONAME = "libibverbs.so.1";
    /** ENOSYS in Linux's asm-generic errno.h, which every architecture the JDK's FFM runs on uses. */
    private static final int ENOSYS = 38;

    private DeviceQuery() {}

    static DeviceList query() {
        if (Native.MISSING != null) {
            return new DeviceList(List.of(), Native.MISSING);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = arena.allocate(Native.CAPTURE);
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment list = Native.getDeviceList(capture, count);
            if (list.equals(MemorySegment.NULL)) {
                int errno = (int) Native.ERRNO.get(capture, 0L);
                String why = errno == ENOSYS
                        ? "ibv_get_device_list: ENOSYS, this kernel has no RDMA support (no ib_uverbs)"
                        : "ibv_get_device_list returned NULL, errno " + errno;
                return new DeviceList(List.of(), why);
            }
            try {
                int n = count.get(ValueLayout.JAVA_INT, 0);
                MemorySegment devices = list.reinterpret(ValueLayout.ADDRESS.byteSize() * n);
                List<String> names = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    names.add(Native.deviceName(devices.getAtIndex(ValueLayout.ADDRESS, i)));
                }
                return new DeviceList(List.copyOf(names),
                        n == 0 ? "ibv_get_device_list found no device (no /sys/class/infiniband entry)" : null);
            } finally {
                Native.freeDeviceList(list);
            }
        }
    }

    /** The three downcalls, linked once; {@link #MISSING} says why when libibverbs cannot be loaded. */
    private static final class Native {
        static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
        static final VarHandle ERRNO = CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
        static final String MISSING;
        private static final MethodHandle GET_DEVICE_LIST;
        private static final MethodHandle GET_DEVICE_NAME;
        private static final MethodHandle FREE_DEVICE_LIST;

        static {
            SymbolLookup lib = null;
            String missing = null;
            try {
                lib = SymbolLookup.libraryLookup(IBVERBS_SONAME, Arena.global());
            } catch (IllegalArgumentException e) {
                missing = IBVERBS_SONAME + " cannot be loaded (" + e.getMessage()
                        + "); install it: apt-get install libibverbs1 ibverbs-providers";
            }
            MISSING = missing;
            Linker linker = Linker.nativeLinker();
            GET_DEVICE_LIST = lib == null ? null : linker.downcallHandle(symbol(lib, "ibv_get_device_list"),
                    FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS), Linker.Option.captureCallState("errno"));
            GET_DEVICE_NAME = lib == null ? null : linker.downcallHandle(symbol(lib, "ibv_get_device_name"),
                    FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS));
            FREE_DEVICE_LIST = lib == null ? null : linker.downcallHandle(symbol(lib, "ibv_free_device_list"),
                    FunctionDescriptor.ofVoid(ValueLayout.ADDRESS));
        }

        private static MemorySegment symbol(SymbolLookup lib, String name) {
            return lib.find(name).orElseThrow(() -> new IllegalStateException(IBVERBS_SONAME + " has no " + name));
        }

        static MemorySegment getDeviceList(MemorySegment capture, MemorySegment count) {
            try {
                return (MemorySegment) GET_DEVICE_LIST.invokeExact(capture, count);
            } catch (Throwable t) {
                throw new IllegalStateException("ibv_get_device_list downcall failed", t);
            }
        }

        static String deviceName(MemorySegment device) {
            try {
                return ((MemorySegment) GET_DEVICE_NAME.invokeExact(device)).reinterpret(256).getString(0);
            } catch (Throwable t) {
                throw new IllegalStateException("ibv_get_device_name downcall failed", t);
            }
        }

        static void freeDeviceList(MemorySegment list) {
            try {
                FREE_DEVICE_LIST.invokeExact(list);
            } catch (Throwable t) {
                throw new IllegalStateException("ibv_free_device_list downcall failed", t);
            }
        }
    }
}
