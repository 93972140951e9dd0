package dev.panverbs.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/** The device policy of {@link RdmaTestDevice}, without a device. */
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
    void deviceListOnThisHostNeverThrows() {
        // the build host may or may not have devices; the query itself must not throw either way
        RdmaTestDevice.DeviceList list = RdmaTestDevice.deviceList();
        if (list.names().isEmpty()) {
            assertThat(list.problem()).isNotBlank();
        }
    }
}
