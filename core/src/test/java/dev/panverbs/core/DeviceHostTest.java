package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The real libibverbs on a host without RDMA devices (the build host): the list is empty, not an error, and
 * asking for a device explains how to get one. Skipped where a device exists (the *IT cover that case).
 */
class DeviceHostTest {

    @BeforeAll
    static void onlyWithoutDevices() {
        Assumptions.assumeFalse(Files.isDirectory(Path.of("/sys/class/infiniband"))
                        && Path.of("/sys/class/infiniband").toFile().list().length > 0,
                "this host has RDMA devices; DeviceIT covers it");
    }

    @Test
    void listIsEmptyWithoutDevices() {
        assertThat(Device.list()).isEmpty();
    }

    @Test
    void firstWithoutDevicesFailsWithEnodevAndRxeHint() {
        assertThatThrownBy(Device::first)
                .isInstanceOf(VerbsException.class)
                .hasMessageStartingWith("ibv_get_device_list() failed: ENODEV (No such device); ")
                .hasMessageContaining("modprobe rdma_rxe; rdma link add rxe0 type rxe netdev <if>")
                .satisfies(e -> assertThat(((VerbsException) e).errnoName()).isEqualTo("ENODEV"));
    }

    @Test
    void openByNameWithoutDevicesFails() {
        assertThatThrownBy(() -> Device.open("rxe0"))
                .isInstanceOf(VerbsException.class)
                .hasMessageStartingWith("ibv_get_device_list(name=rxe0) failed: ENODEV");
    }
}
