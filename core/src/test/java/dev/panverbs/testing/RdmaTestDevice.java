package dev.panverbs.testing;

import dev.panverbs.bindings.NativeLibraries;
import dev.panverbs.bindings.NativeLibraryException;
import dev.panverbs.bindings.verbs.verbs_h;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * The RDMA device an integration test ({@code *IT}) runs against: {@code $PANVERBS_TEST_DEVICE}, else the
 * first device {@code ibv_get_device_list(3)} reports.
 *
 * <p>Where a device is expected, a missing one is a test <em>failure</em> with a setup hint: when
 * {@code CI=true} or {@code PANVERBS_REQUIRE_DEVICE=1} (the Soft-RoCE guest of {@code testbed/} sets it).
 * Elsewhere (a developer's laptop running an IT from the IDE) the test is aborted (skipped) with the same
 * loud reason. A device named by {@code PANVERBS_TEST_DEVICE} that does not exist always fails.
 *
 * <p>Use: {@code String device = RdmaTestDevice.name();} in {@code @BeforeAll}/{@code @BeforeEach}. Skip
 * only for a capability the device reports absent: {@link #assumeCapability(boolean, String)}.
 */
public final class RdmaTestDevice {

    /** Environment variable naming the device to test; unset means the first device. */
    public static final String DEVICE_ENV = "PANVERBS_TEST_DEVICE";
    /** Environment variable that, set to {@code 1}, makes a missing device a failure (set in the guest). */
    public static final String REQUIRE_ENV = "PANVERBS_REQUIRE_DEVICE";

    static final String SETUP_HINT = "run the integration tests in the Soft-RoCE guest with testbed/test "
            + "(or testbed/run), or attach a device (as root: modprobe rdma_rxe; rdma link add rxe0 type rxe "
            + "netdev eth0) and set " + DEVICE_ENV + "=rxe0";

    private RdmaTestDevice() {}

    /**
     * The name of the device to test. Fails the test (missing device where one is expected, or an unknown
     * {@code PANVERBS_TEST_DEVICE}) or aborts it (no device on a developer host).
     */
    public static String name() {
        DeviceList list = deviceList();
        return resolve(list.names(), list.problem(), System.getenv());
    }

    /** Whether this environment expects a device: {@code CI=true} or {@code PANVERBS_REQUIRE_DEVICE=1}. */
    public static boolean required() {
        return required(System.getenv());
    }

    /**
     * Skips the calling test, naming the capability, when the device reports it absent; the only other
     * reason to skip is a verb returning EOPNOTSUPP/EPROTONOSUPPORT.
     */
    public static void assumeCapability(boolean present, String capability) {
        Assumptions.assumeTrue(present, () -> "device " + name() + " lacks " + capability);
    }

    /**
     * Names of the RDMA devices the verbs library reports; empty when there are none, the kernel has no
     * RDMA support or libibverbs is not installed (then {@link #problem()} says which).
     */
    public static DeviceList deviceList() {
        try {
            return DeviceQuery.query();
        } catch (NativeLibraryException e) {
            return new DeviceList(List.of(), e.getMessage());
        }
    }

    /** Device names plus, when the list is empty, why. */
    public record DeviceList(List<String> names, String problem) {}

    static boolean required(Map<String, String> env) {
        return "true".equalsIgnoreCase(env.getOrDefault("CI", "")) || "1".equals(env.get(REQUIRE_ENV));
    }

    /** The policy, apart from the native query so that it is unit-tested without a device. */
    static String resolve(List<String> devices, String problem, Map<String, String> env) {
        String wanted = env.get(DEVICE_ENV);
        if (wanted != null && !wanted.isBlank()) {
            if (!devices.contains(wanted)) {
                Assertions.fail(DEVICE_ENV + "=" + wanted + " but the verbs library reports "
                        + (devices.isEmpty() ? "no device" + because(problem) : "only " + devices)
                        + "; unset it or name one of those");
            }
            return wanted;
        }
        if (!devices.isEmpty()) {
            return devices.get(0);
        }
        String reason = "NO RDMA DEVICE: this integration test needs one" + because(problem) + "; " + SETUP_HINT;
        if (required(env)) {
            Assertions.fail(reason + " (a device is required here: CI=true or " + REQUIRE_ENV + "=1)");
        }
        Assumptions.abort(reason);
        throw new AssertionError("unreachable");
    }

    private static String because(String problem) {
        return problem == null || problem.isEmpty() ? "" : " (" + problem + ")";
    }

    /** ibv_get_device_list with errno captured, so "kernel has no RDMA support" (ENOSYS) can be told apart. */
    private static final class DeviceQuery {
        private static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
        private static final VarHandle ERRNO =
                CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
        private static final MethodHandle GET_DEVICE_LIST = Linker.nativeLinker().downcallHandle(
                NativeLibraries.ibverbsSymbol("ibv_get_device_list"),
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS),
                Linker.Option.captureCallState("errno"));

        static DeviceList query() {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment capture = arena.allocate(CAPTURE);
                MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
                MemorySegment list;
                try {
                    list = (MemorySegment) GET_DEVICE_LIST.invokeExact(capture, count);
                } catch (Throwable t) {
                    throw new IllegalStateException("ibv_get_device_list downcall failed", t);
                }
                if (list.equals(MemorySegment.NULL)) {
                    int errno = (int) ERRNO.get(capture, 0L);
                    String why = errno == verbs_h.ENOSYS()
                            ? "ibv_get_device_list: ENOSYS, this kernel has no RDMA support (no ib_uverbs)"
                            : "ibv_get_device_list returned NULL, errno " + errno;
                    return new DeviceList(List.of(), why);
                }
                try {
                    int n = count.get(ValueLayout.JAVA_INT, 0);
                    MemorySegment devices = list.reinterpret(ValueLayout.ADDRESS.byteSize() * n);
                    List<String> names = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        MemorySegment device = devices.getAtIndex(ValueLayout.ADDRESS, i);
                        names.add(verbs_h.ibv_get_device_name(device).reinterpret(256).getString(0));
                    }
                    return new DeviceList(List.copyOf(names),
                            n == 0 ? "ibv_get_device_list found no device (no /sys/class/infiniband entry)" : null);
                } finally {
                    verbs_h.ibv_free_device_list(list);
                }
            }
        }
    }
}
