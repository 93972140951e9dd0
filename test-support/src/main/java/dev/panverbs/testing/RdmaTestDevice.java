package dev.panverbs.testing;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * The device policy of every module's integration tests ({@code *IT}), in one place: which RDMA device a test
 * runs against, and what happens when there is none.
 *
 * <ul>
 *   <li><b>Which device:</b> {@code $PANVERBS_TEST_DEVICE}, else the first device {@code ibv_get_device_list(3)}
 *       reports. A device named by {@code PANVERBS_TEST_DEVICE} that does not exist always fails.</li>
 *   <li><b>No device:</b> where a device is expected, that is a test <em>failure</em> with a setup hint:
 *       {@code CI=true} (any case) or {@code PANVERBS_REQUIRE_DEVICE=1} (the Soft-RoCE guest of {@code testbed/}
 *       sets it). Elsewhere (a developer's laptop running an IT from the IDE) the test is aborted (skipped) with
 *       the same loud reason.</li>
 *   <li><b>A C program the test compares against</b> ({@link #program(String, String)}: perftest,
 *       ibverbs-utils) follows the same rule.</li>
 *   <li><b>Skip</b> only for a capability the device reports absent ({@link #assumeCapability(boolean, String)})
 *       or a verb answering EOPNOTSUPP/EPROTONOSUPPORT.</li>
 * </ul>
 *
 * <p>This module has no production dependency (the bindings' tests use it, and core depends on bindings), so it
 * lists devices with its own three libibverbs calls ({@link DeviceQuery}).
 *
 * <p>Use: {@code String device = RdmaTestDevice.name();} in {@code @BeforeAll}/{@code @BeforeEach}.
 */
public final class RdmaTestDevice {

    /** Environment variable naming the device to test; unset means the first device. */
    public static final String DEVICE_ENV = "PANVERBS_TEST_DEVICE";
    /** Environment variable that, set to {@code 1}, makes a missing device a failure (set in the guest). */
    public static final String REQUIRE_ENV = "PANVERBS_REQUIRE_DEVICE";
    /** Environment variable that, set to {@code true} (any case), makes a missing device a failure too. */
    public static final String CI_ENV = "CI";

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
     * The path of {@code program} on {@code PATH}: a C tool a test runs or compares against. Missing, it fails
     * the test where a device is expected (the bed installs it) and aborts it elsewhere, naming the Debian
     * package that provides it.
     */
    public static String program(String program, String debianPackage) {
        return resolveProgram(program, debianPackage, System.getenv());
    }

    /**
     * Names of the RDMA devices the verbs library reports; empty when there are none, the kernel has no
     * RDMA support or libibverbs is not installed (then {@link DeviceList#problem()} says which).
     */
    public static DeviceList deviceList() {
        return DeviceQuery.query();
    }

    /** Device names plus, when the list is empty, why. */
    public record DeviceList(List<String> names, String problem) {}

    static boolean required(Map<String, String> env) {
        return "true".equalsIgnoreCase(env.getOrDefault(CI_ENV, "")) || "1".equals(env.get(REQUIRE_ENV));
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
        return missing("NO RDMA DEVICE: this integration test needs one" + because(problem) + "; " + SETUP_HINT, env);
    }

    /** {@link #program(String, String)} with the environment (and its {@code PATH}) as an argument. */
    static String resolveProgram(String program, String debianPackage, Map<String, String> env) {
        for (String dir : env.getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, program);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return missing(program + " is not on PATH: apt-get install " + debianPackage, env);
    }

    /** Fails where a device is expected, else aborts; both with {@code reason}. */
    private static String missing(String reason, Map<String, String> env) {
        if (required(env)) {
            Assertions.fail(reason + " (required here: " + CI_ENV + "=true or " + REQUIRE_ENV + "=1)");
        }
        Assumptions.abort(reason);
        throw new AssertionError("unreachable");
    }

    private static String because(String problem) {
        return problem == null || problem.isEmpty() ? "" : " (" + problem + ")";
    }
}
