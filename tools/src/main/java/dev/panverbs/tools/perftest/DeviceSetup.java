package dev.panverbs.tools.perftest;

import dev.panverbs.tools.perftest.PerftestParameters.LinkType;
import dev.panverbs.tools.perftest.VerbsEngine.GidEntry;
import dev.panverbs.tools.perftest.VerbsEngine.PortInfo;

import java.io.PrintStream;
import java.util.List;

import static dev.panverbs.tools.perftest.PerftestParser.RESULT_LINE;

/**
 * The device-dependent part of perftest's setup: {@code ctx_find_dev}, {@code verify_params_with_device_context},
 * {@code check_link} (link layer, port state, inline and outstanding reads), {@code set_mtu} and the GID choice
 * of {@code set_up_connection}. Messages are perftest's, followed by what panverbs can add (the list of devices,
 * the valid GID indexes).
 */
final class DeviceSetup {
    private final PerftestParameters p;
    private final PrintStream out;
    private final PrintStream err;

    DeviceSetup(PerftestParameters p, PrintStream out, PrintStream err) {
        this.p = p;
        this.out = out;
        this.err = err;
    }

    /** {@code ctx_find_dev} + {@code ctx_open_device}: the -d device or the first one. */
    VerbsEngine.Device open(VerbsEngine engine) {
        List<String> names = engine.deviceNames();
        if (names.isEmpty()) {
            throw new RunFailure(" Did not detect devices \n If device exists, check if driver is up\n"
                    + " Unable to find the Infiniband/RoCE device\n"
                    + " (no RDMA device on this host: /sys/class/infiniband is empty; load a driver, e.g. "
                    + "'rdma link add rxe0 type rxe netdev eth0' for Soft-RoCE)");
        }
        String name = p.ibDevName == null ? names.get(0) : p.ibDevName;
        if (!names.contains(name)) {
            throw new RunFailure("IB device " + name + " not found\n Unable to find the Infiniband/RoCE device\n"
                    + " (available devices: " + String.join(", ", names) + ")");
        }
        p.ibDevName = name;
        try {
            return engine.open(name);
        } catch (RuntimeException e) {
            throw new RunFailure(" Couldn't get context for the device\n (" + e.getMessage() + ")", e);
        }
    }

    /** {@code verify_params_with_device_context} and {@code check_link}. */
    void check(VerbsEngine.Device dev) {
        if (p.directWqe && !dev.isMlx5()) {
            throw new RunFailure(" " + dev.name() + " is not an mlx5 device: --direct_wqe (panverbs only) writes the "
                    + "ConnectX send queue itself\n Couldn't get context for the device\n (run without --direct_wqe)");
        }
        if (p.directWqe && p.connection != PerftestParameters.Connection.RC) {
            throw new RunFailure(" --direct_wqe posts RC work queue entries; connection type " + p.connection
                    + " is not supported with it\n (use -c RC or run without --direct_wqe)");
        }
        if (p.useEvent && p.eqNum > dev.numCompVectors()) {
            throw new RunFailure(" Completion vector specified is invalid\n Max completion vector = "
                    + (dev.numCompVectors() - 1) + "\n Couldn't get context for the device");
        }
        if (!p.useOldPostSend && !dev.supportsWrApi()) {
            p.useOldPostSend = true; // like perftest on devices without the ibv_wr_* API
        }
        p.transport = dev.transport();
        PortInfo port;
        try {
            port = dev.port(p.ibPort);
        } catch (RuntimeException e) {
            throw new RunFailure(" Unable to query port " + p.ibPort + " attributes\n Couldn't set the link layer\n"
                    + " Couldn't get context for the device\n (" + e.getMessage() + ")", e);
        }
        p.linkType = p.forceLink != null ? p.forceLink : (port.ethernet() ? LinkType.ETHERNET : LinkType.IB);
        if (port.state() != PortInfo.ACTIVE) {
            throw new RunFailure(" Port number " + p.ibPort + " state is " + port.stateName()
                    + "\n Couldn't set the link layer\n Couldn't get context for the device\n"
                    + " (bring the link up: 'ip link set <netdev> up' for RoCE, a subnet manager for IB)");
        }
        if (p.linkType == LinkType.ETHERNET && p.gidIndex == PerftestParameters.DEF_GID_INDEX) {
            p.gidIndex = 0; // RoCE always needs a GID; the best one is picked in chooseGid
        }
        DeviceFamily family = DeviceFamily.of(dev.vendorId(), dev.vendorPartId());
        if (family == DeviceFamily.UNKNOWN) {
            if (p.inlineSize != PerftestParameters.DEF_INLINE) {
                out.print(RESULT_LINE);
                err.println("Device not recognized to implement inline feature. Disabling it");
            }
            p.inlineSize = 0;
        } else if (p.inlineSize == PerftestParameters.DEF_INLINE) {
            p.inlineSize = family.defaultInline(p.test, p.connection);
        }
        if (p.verb() == PerftestTest.Verb.READ) {
            int max = dev.maxQpRdAtom();
            if (p.outReads > max) {
                out.print(RESULT_LINE);
                err.println(" Number of outstanding reads is above max = " + max);
                err.println(" Changing to that max value");
                p.outReads = max;
            } else if (p.outReads <= 0) {
                p.outReads = max;
            }
        } else {
            p.outReads = 1;
        }
        if (p.pkeyIndex > 0 && p.pkeyIndex > dev.maxPkeys() - 1) {
            out.print(RESULT_LINE);
            err.printf(" Specified PKey Index, %d, greater than allowed max, %d%n", p.pkeyIndex, dev.maxPkeys() - 1);
            err.println(" Changing to 0");
            p.pkeyIndex = 0;
        }
    }

    /** {@code set_mtu}: the -m value if valid and not above the port's, else the port's active MTU. */
    int mtu(VerbsEngine.Device dev) {
        int active = dev.port(p.ibPort).activeMtu();
        if (p.mtu == 0) {
            return active;
        }
        int m = switch (p.mtu) {
            case 256 -> 1;
            case 512 -> 2;
            case 1024 -> 3;
            case 2048 -> 4;
            case 4096 -> 5;
            default -> {
                err.println(" Invalid MTU - " + p.mtu + " ");
                err.println(" Please choose mtu from {256,512,1024,2048,4096}");
                err.println(" Will run with the port active mtu - " + active);
                yield active;
            }
        };
        if (m > active) {
            out.print("Requested mtu is higher than active mtu \n");
            out.print("Changing to active mtu - " + active + "\n");
            m = active;
        }
        return m;
    }

    /**
     * The GID this side announces: -x as given (checked against the table, unlike perftest), or on Ethernet
     * the best entry ({@code get_best_gid_index}): IPv4-mapped first (non-mapped with --ipv6), then RoCE v2
     * over v1. Returns null when no GID is used (IB without -x).
     */
    GidEntry chooseGid(VerbsEngine.Device dev) {
        if (!p.usesGid()) {
            return null;
        }
        List<GidEntry> gids = dev.gids(p.ibPort);
        if (p.useGidUser) {
            for (GidEntry g : gids) {
                if (g.index() == p.gidIndex) {
                    return g;
                }
            }
            throw new RunFailure(" Unable to set up socket connection\n (GID index " + p.gidIndex + " is not valid on "
                    + p.ibDevName + " port " + p.ibPort + "; valid indexes: " + describe(gids) + ")");
        }
        if (gids.isEmpty()) {
            throw new RunFailure(" Unable to set up socket connection\n (" + p.ibDevName + " port " + p.ibPort
                    + " has no GID: configure an IP address on its network interface)");
        }
        GidEntry best = gids.get(0);
        for (GidEntry rival : gids.subList(1, gids.size())) {
            boolean v4 = best.isIpv4Mapped();
            boolean rivalV4 = rival.isIpv4Mapped();
            if (rivalV4 && !v4 && !p.ipv6) {
                best = rival;
            } else if (!rivalV4 && v4 && p.ipv6) {
                best = rival;
            } else if (rank(rival) > rank(best)) {
                best = rival;
            }
        }
        p.gidIndex = best.index();
        return best;
    }

    private static int rank(GidEntry g) {
        return "RoCE v2".equals(g.type()) ? 2 : "RoCE v1".equals(g.type()) || "IB/RoCE v1".equals(g.type()) ? 1 : -1;
    }

    static String describe(List<GidEntry> gids) {
        if (gids.isEmpty()) {
            return "none (no address on the port's network interface?)";
        }
        StringBuilder s = new StringBuilder();
        for (GidEntry g : gids) {
            if (!s.isEmpty()) {
                s.append(", ");
            }
            s.append(g.index()).append(" (").append(gidText(g.gid()));
            if (g.type() != null) {
                s.append(", ").append(g.type());
            }
            s.append(')');
        }
        return s.toString();
    }

    /** IPv6 text of a GID, IPv4-mapped ones as ::ffff:a.b.c.d. */
    static String gidText(byte[] gid) {
        try {
            java.net.InetAddress a = java.net.InetAddress.getByAddress(gid);
            return (a instanceof java.net.Inet4Address ? "::ffff:" : "") + a.getHostAddress().replaceFirst("%.*$", "");
        } catch (java.net.UnknownHostException e) {
            return KeyMessage.hex(gid);
        }
    }
}
