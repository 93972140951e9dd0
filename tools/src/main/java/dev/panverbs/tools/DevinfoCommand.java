package dev.panverbs.tools;

import dev.panverbs.core.Context;
import dev.panverbs.core.Device;
import dev.panverbs.core.DeviceAttributes;
import dev.panverbs.core.GidEntry;
import dev.panverbs.core.PortAttributes;
import dev.panverbs.core.VerbsException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code panverbs devinfo}: device and port attributes formatted like {@code ibv_devinfo} (rdma-core 44), with
 * its options. With -v, the attributes panverbs queries (device limits and capability flags, port details and the
 * GID table) are printed; the extended blocks of ibv_devinfo -v (ODP, TSO, RSS, tag matching, packet pacing) are
 * not.
 */
@Command(name = "devinfo", description = "Print device and port attributes (like ibv_devinfo).",
        mixinStandardHelpOptions = true)
final class DevinfoCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = {"-d", "--ib-dev"}, paramLabel = "<dev>", description = "use IB device <dev> (default all)")
    String device;

    @Option(names = {"-i", "--ib-port"}, paramLabel = "<port>", description = "use port <port> (default all ports)")
    int port;

    @Option(names = {"-l", "--list"}, description = "print only the IB devices names")
    boolean list;

    @Option(names = {"-v", "--verbose"}, description = "print all the attributes of the IB device(s)")
    boolean verbose;

    @Override
    public Integer call() {
        List<Device> devices = DevicesCommand.list(spec);
        if (devices == null) {
            return 1;
        }
        if (list) {
            StringBuilder s = new StringBuilder();
            s.append(devices.size()).append(" HCA").append(devices.size() != 1 ? "s" : "").append(" found:\n");
            for (Device d : devices) {
                s.append('\t').append(d.name()).append('\n');
            }
            spec.commandLine().getOut().print(s.append('\n'));
            spec.commandLine().getOut().flush();
            return 0;
        }
        List<Device> chosen = new ArrayList<>();
        if (device != null) {
            devices.stream().filter(d -> d.name().equals(device)).forEach(chosen::add);
            if (chosen.isEmpty()) {
                spec.commandLine().getErr().println("IB device '" + device + "' wasn't found");
                spec.commandLine().getErr().println(" (available: " + String.join(", ", devices.stream().map(Device::name).toList())
                        + ")");
                return 1;
            }
        } else {
            if (devices.isEmpty()) {
                spec.commandLine().getErr().println("No IB devices found");
                return 1;
            }
            chosen.addAll(devices);
        }
        int rc = 0;
        for (Device d : chosen) {
            rc |= print(d);
        }
        spec.commandLine().getOut().flush();
        return rc;
    }

    private int print(Device d) {
        try (Context ctx = d.open()) {
            DeviceAttributes a = ctx.queryDevice();
            if (port > a.physPortCnt()) {
                spec.commandLine().getErr().println("Invalid port requested for device");
                return 1;
            }
            StringBuilder s = new StringBuilder(DevinfoFormat.device(d.name(), d.transportType(), a, boardId(d.name()),
                    verbose, ctx.numCompVectors()));
            List<GidEntry> gids = verbose ? ctx.queryGidTable() : List.of();
            for (int p = 1; p <= a.physPortCnt(); p++) {
                if (port != 0 && p != port) {
                    continue;
                }
                PortAttributes pa = ctx.queryPort(p);
                final int portNum = p;
                List<GidEntry> mine = gids.stream().filter(g -> g.portNum() == portNum && !nullGid(g))
                        .sorted((x, y) -> Integer.compare(x.index(), y.index())).toList();
                s.append(DevinfoFormat.port(pa, d.transportType(), verbose, mine));
            }
            spec.commandLine().getOut().print(s);
            return 0;
        } catch (VerbsException e) {
            spec.commandLine().getErr().println(e.getMessage());
            return 1;
        }
    }

    /** {@code null_gid}: devinfo hides GIDs whose interface id (last 8 bytes) is zero. */
    private static boolean nullGid(GidEntry g) {
        byte[] b = g.gid().toBytes();
        for (int i = 8; i < 16; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }

    private static String boardId(String name) {
        try {
            return Files.readString(Path.of("/sys/class/infiniband", name, "board_id")).trim();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
