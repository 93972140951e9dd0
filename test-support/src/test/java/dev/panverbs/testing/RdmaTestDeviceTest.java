package dev.panverbs.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/** The device policy of {@link RdmaTestDevice}, without a device: the same in every module's ITs. */
class RdmaTestDeviceTest {

    @Test
    void resolveFirstDeviceWhenUnset() {
        assertThat(RdmaTestDevice.resolve(List.of("mlx5_0", "rxe0"), null, Map.of())).isEqualTo("mlx5_0");
    }

    @Test
    void resolveNamedDevice() {
        assertThat(RdmaTestDevice.resolve(List.of("mlx5_0", "rxe0"), null,
                Map.of(RdmaTestDevice.DEVICE_ENV, "rxe0"))).isEqualTo("rxe0");
    }

    @Test
    void resolveUnknownNamedDeviceFailsEvenOffCi() {
        assertThatThrownBy(() -> RdmaTestDevice.resolve(List.of("rxe0"), null,
                Map.of(RdmaTestDevice.DEVICE_ENV, "mlx5_9")))
                .isInstanceOf(AssertionFailedError.class)
                .hasMessageContaining("PANVERBS_TEST_DEVICE=mlx5_9")
                .hasMessageContaining("only [rxe0]");
    }

    @Test
    void resolveNoDeviceOnCiFailsWithHint() {
        assertThatThrownBy(() -> RdmaTestDevice.resolve(List.of(), "ibv_get_device_list: ENOSYS", Map.of("CI", "true")))
                .isInstanceOf(AssertionFailedError.class)
                .hasMessageContaining("NO RDMA DEVICE")
                .hasMessageContaining("ENOSYS")
                .hasMessageContaining("testbed/test");
    }

    @Test
    void resolveNoDeviceWhenRequiredFails() {
        assertThatThrownBy(() -> RdmaTestDevice.resolve(List.of(), null, Map.of(RdmaTestDevice.REQUIRE_ENV, "1")))
                .isInstanceOf(AssertionFailedError.class)
                .hasMessageContaining(RdmaTestDevice.REQUIRE_ENV + "=1");
    }

    @Test
    void resolveNoDeviceOnDeveloperHostAbortsLoudly() {
        assertThatThrownBy(() -> RdmaTestDevice.resolve(List.of(), null, Map.of("CI", "false")))
                .isInstanceOf(TestAbortedException.class)
                .hasMessageContaining("NO RDMA DEVICE")
                .hasMessageContaining("rdma link add rxe0");
    }

    @Test
    void requiredForCiTrueInAnyCaseOrRequireDeviceOne() {
        assertThat(RdmaTestDevice.required(Map.of("CI", "true"))).isTrue();
        assertThat(RdmaTestDevice.required(Map.of("CI", "TRUE"))).isTrue();
        assertThat(RdmaTestDevice.required(Map.of(RdmaTestDevice.REQUIRE_ENV, "1"))).isTrue();
        assertThat(RdmaTestDevice.required(Map.of("CI", "false", RdmaTestDevice.REQUIRE_ENV, "1"))).isTrue();
        assertThat(RdmaTestDevice.required(Map.of())).isFalse();
        assertThat(RdmaTestDevice.required(Map.of("CI", "1"))).isFalse();
        assertThat(RdmaTestDevice.required(Map.of("CI", "false"))).isFalse();
        assertThat(RdmaTestDevice.required(Map.of(RdmaTestDevice.REQUIRE_ENV, "true"))).isFalse();
        assertThat(RdmaTestDevice.required(Map.of(RdmaTestDevice.REQUIRE_ENV, "0"))).isFalse();
    }

    @Test
    void resolveNoDeviceOnCiInCapitalsFails() {
        assertThatThrownBy(() -> RdmaTestDevice.resolve(List.of(), null, Map.of("CI", "TRUE")))
                .isInstanceOf(AssertionFailedError.class)
                .hasMessageContaining("CI=true");
    }

    @Test
    void resolveProgramFindsFirstExecutableOnPath(@TempDir Path dir) throws IOException {
        Path first = Files.createDirectories(dir.resolve("first"));
        Path second = Files.createDirectories(dir.resolve("second"));
        Files.writeString(first.resolve("ib_write_bw"), "not executable");
        Path tool = Files.writeString(second.resolve("ib_write_bw"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(tool, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path later = Files.createDirectories(dir.resolve("later"));
        Files.copy(tool, later.resolve("ib_write_bw"));
        String path = first + ":" + second + ":" + later;
        assertThat(RdmaTestDevice.resolveProgram("ib_write_bw", "perftest", Map.of("PATH", path, "CI", "true")))
                .isEqualTo(tool.toString());
    }

    @Test
    void resolveProgramMissingOnCiFailsNamingThePackage(@TempDir Path dir) {
        assertThatThrownBy(() -> RdmaTestDevice.resolveProgram("ibv_devinfo", "ibverbs-utils",
                Map.of("PATH", dir.toString(), "CI", "true")))
                .isInstanceOf(AssertionFailedError.class)
                .hasMessageContaining("ibv_devinfo is not on PATH: apt-get install ibverbs-utils")
                .hasMessageContaining("CI=true");
    }

    @Test
    void resolveProgramMissingWhenRequiredFails(@TempDir Path dir) {
        assertThatThrownBy(() -> RdmaTestDevice.resolveProgram("ib_write_bw", "perftest",
                Map.of("PATH", dir.toString(), RdmaTestDevice.REQUIRE_ENV, "1")))
                .isInstanceOf(AssertionFailedError.class)
                .hasMessageContaining("apt-get install perftest");
    }

    @Test
    void resolveProgramMissingOnDeveloperHostAborts(@TempDir Path dir) {
        assertThatThrownBy(() -> RdmaTestDevice.resolveProgram("ib_write_bw", "perftest", Map.of("PATH", dir.toString())))
                .isInstanceOf(TestAbortedException.class)
                .hasMessageContaining("ib_write_bw is not on PATH: apt-get install perftest");
    }

    @Test
    void deviceListOnThisHostNeverThrows() {
        // the build host may or may not have devices; the query itself must not throw either way
        RdmaTestDevice.DeviceList list = RdmaTestDevice.deviceList();
        if (list.names().isEmpty()) {
            assertThat(list.problem()).isNotBlank();
        }
    }
}
