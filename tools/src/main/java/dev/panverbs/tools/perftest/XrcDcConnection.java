package dev.panverbs.tools.perftest;

import static dev.panverbs.tools.perftest.PerftestParser.RESULT_LINE;
import static dev.panverbs.tools.perftest.PerftestParser.exit;

import java.io.PrintStream;

/**
 * perftest's {@code -c XRC} and {@code -c DC} ({@code connection_type} XRC/DC of perftest 6.06) and the DC-stream
 * options {@code --log_dci_streams}/{@code --log_active_dci_streams}: parsed and checked as perftest's
 * {@code force_dependecies} does, with its words and streams, then refused where perftest fails or where panverbs has
 * no data path:
 * <ul>
 *   <li>A device without the transport (rxe: no {@code IBV_DEVICE_XRC}; not an mlx5 device, so no DCI/DCT) fails
 *   where perftest's {@code ctx_init} fails, after the TCP connection and the version/sys-data/MTU exchange, with
 *   perftest's own stderr lines and exit status 1, then one line naming the capability. So a panverbs side and a C
 *   side refuse alike, in either role (recorded from C perftest 6.06 on rxe; {@code XrcDcRefusalIT}).</li>
 *   <li>A device that has it is refused up front, before any connection: panverbs' perftest has no XRC or DC data
 *   path yet (the core has both: {@code XrcDomain}/XRC QPs, {@code DcInitiator}/{@code DcTarget}).</li>
 * </ul>
 */
final class XrcDcConnection {
    /** The two connection types. */
    enum Kind { XRC, DC }

    private XrcDcConnection() { }

    /**
     * {@code force_dependecies}' XRC/DC part, in its order: XRC with -R; DC with {@code --use_old_post_send} or -R;
     * the DC-stream options (perftest is built with {@code HAVE_DCS}).
     */
    static void forceDependencies(PerftestParameters p, PrintStream out, PrintStream err) {
        if (p.logActiveDciStreams < 0) {
            p.logActiveDciStreams = p.logDciStreams; // parser: !log_active_dci_streams_flag_was_ever_set
        }
        if (p.xrcDc == Kind.XRC && p.rdmaCm) {
            out.print(RESULT_LINE);
            exit(err, " XRC does not support RDMA_CM");
        }
        if (p.xrcDc == Kind.DC) {
            if (p.useOldPostSend) {
                out.print(RESULT_LINE);
                exit(err, " DC does not support old post send flow");
            }
            if (p.rdmaCm) {
                out.print(RESULT_LINE);
                exit(err, " DC does not support RDMA_CM");
            }
        }
        if (p.logDciStreams != 0 && p.xrcDc != Kind.DC) {
            out.print(RESULT_LINE);
            exit(err, " log_dci_streams supported only on DC");
        }
        if (p.logActiveDciStreams > 0) {
            if (p.xrcDc != Kind.DC) {
                out.print(RESULT_LINE);
                exit(err, " log_active_dci_streams supported only on DC");
            }
            if (p.logDciStreams == 0) {
                out.print(RESULT_LINE);
                exit(err, " log_dci_streams must be greater than 0");
            }
        }
    }

    /** Before any connection: a device that has the transport is refused (no data path in panverbs' perftest yet). */
    static void refuseIfCapable(PerftestParameters p, VerbsEngine.Device device) {
        if (p.xrcDc == null || !capable(p.xrcDc, device)) {
            return;
        }
        throw new RunFailure(" -c " + p.xrcDc + " is not supported by panverbs' perftest yet: " + device.name()
                + (p.xrcDc == Kind.XRC ? " reports IBV_DEVICE_XRC, but the XRC test path (an XRC SRQ per QP, its "
                + "SRQN in the key message) is not written; panverbs' core has XRC (XrcDomain, XRC_SEND/XRC_RECV QPs)"
                : " is an mlx5 device, but the DC test path (DCIs, DCTs, the DCT number in the key message) is not "
                + "written; panverbs' core has DC (DcInitiator, DcTarget, DirectDcQueue)"));
    }

    /**
     * Where perftest's {@code ctx_init} fails on a device without the transport: its stderr lines (rdma-core's
     * {@code ibv_open_xrcd} or {@code mlx5dv_create_qp} failing inside), then the capability panverbs names.
     */
    static void failAsCtxInit(PerftestParameters p, VerbsEngine.Device device) {
        if (p.xrcDc == null) {
            return;
        }
        if (p.xrcDc == Kind.XRC) {
            throw new RunFailure("Error opening XRC domain\nCouldn't create XRC resources\n"
                    + " Couldn't create IB resources\n (ibv_open_xrcd: " + device.name() + " does not report "
                    + "IBV_DEVICE_XRC in device_cap_flags; XRC needs a device with XRC (IBV_DEVICE_XRC))");
        }
        throw new RunFailure("Unable to create QP.\nFailed to create QP.\n Couldn't create IB resources\n"
                + " (mlx5dv_create_qp: " + device.name() + " is not an mlx5 device; DC needs the mlx5 Dynamically "
                + "Connected transport (DCI/DCT, mlx5dv_create_qp))");
    }

    private static boolean capable(Kind kind, VerbsEngine.Device device) {
        return kind == Kind.XRC ? device.supportsXrc() : device.isMlx5();
    }
}
