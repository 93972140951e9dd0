package dev.panverbs.tools;

import dev.panverbs.core.Device;
import dev.panverbs.core.VerbsException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.util.List;
import java.util.concurrent.Callable;

/** {@code panverbs devices}: the RDMA devices and their node GUIDs, formatted like {@code ibv_devices}. */
@Command(name = "devices", description = "List RDMA devices and node GUIDs (like ibv_devices).",
        mixinStandardHelpOptions = true)
final class DevicesCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        List<Device> devices = list(spec);
        if (devices == null) {
            return 1;
        }
        StringBuilder s = new StringBuilder(DevinfoFormat.devicesHeader());
        for (Device d : devices) {
            s.append(DevinfoFormat.devicesRow(d.name(), d.guid()));
        }
        spec.commandLine().getOut().print(s);
        spec.commandLine().getOut().flush();
        return 0;
    }

    /** The devices ({@code ibv_get_device_list(3)}), or {@code null} after the C tools' message on stderr. */
    static List<Device> list(CommandSpec spec) {
        try {
            return Device.list();
        } catch (VerbsException | IllegalStateException e) {
            spec.commandLine().getErr().println("Failed to get IB devices list: " + e.getMessage());
            return null;
        }
    }
}
