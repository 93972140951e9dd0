package dev.panverbs.core.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * Explains why libibverbs sees no device, from what the kernel exposes: no {@code ib_uverbs} character
 * devices, no RDMA devices at all (then: how to create a Soft-RoCE one), or kernel devices that no installed
 * provider library claims.
 */
public final class DeviceDiagnostics {

    /** How to get a device on a machine without RDMA hardware. */
    public static final String RXE_HINT = "no RDMA hardware? create a Soft-RoCE device over an Ethernet interface: "
            + "'modprobe rdma_rxe; rdma link add rxe0 type rxe netdev <if>' (iproute2), then check 'ibv_devices'";

    private final Path sysClassInfiniband;
    private final Path devInfiniband;

    /** Diagnostics reading {@code /sys/class/infiniband} and {@code /dev/infiniband}. */
    public DeviceDiagnostics() {
        this(Path.of("/sys/class/infiniband"), Path.of("/dev/infiniband"));
    }

    /** Diagnostics reading other roots (tests). */
    public DeviceDiagnostics(Path sysClassInfiniband, Path devInfiniband) {
        this.sysClassInfiniband = sysClassInfiniband;
        this.devInfiniband = devInfiniband;
    }

    /** The kernel's RDMA device names, from {@code /sys/class/infiniband}. */
    public List<String> kernelDevices() {
        if (!Files.isDirectory(sysClassInfiniband)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(sysClassInfiniband)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    /** The hint for "ibv_get_device_list found nothing" (or failed with ENOSYS). */
    public String noDeviceHint() {
        List<String> kernel = kernelDevices();
        if (kernel.isEmpty()) {
            return "the kernel has no RDMA device (/sys/class/infiniband is empty or missing); " + RXE_HINT;
        }
        if (!Files.isDirectory(devInfiniband)) {
            return "the kernel has RDMA devices " + kernel + " but /dev/infiniband is missing: load the verbs "
                    + "character devices with 'modprobe ib_uverbs' (in a container, pass --device /dev/infiniband)";
        }
        return "the kernel has RDMA devices " + kernel + " but libibverbs found no provider for them: install "
                + "the providers ('apt-get install ibverbs-providers' / 'dnf install libibverbs'), check "
                + "/etc/libibverbs.d, or run with IBV_SHOW_WARNINGS=1 to see why a provider was not loaded";
    }

    /** The hint for a named device that is not in the list. */
    public static String notFoundHint(String name, List<String> present) {
        return present.isEmpty()
                ? new DeviceDiagnostics().noDeviceHint()
                : "no device named '" + name + "'; present: " + present + " (see 'ibv_devices')";
    }
}
