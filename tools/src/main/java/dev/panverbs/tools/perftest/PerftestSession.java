package dev.panverbs.tools.perftest;

import dev.panverbs.tools.perftest.PerftestParameters.Connection;
import dev.panverbs.tools.perftest.PerftestParameters.TestMethod;
import dev.panverbs.tools.perftest.VerbsEngine.GidEntry;

import java.io.PrintStream;
import java.util.Random;
import java.util.function.IntConsumer;

import static dev.panverbs.tools.perftest.PerftestOutput.RESULT_LINE;

/**
 * One run of a perftest clone, in perftest's order: device checks, TCP connection, version/system/MTU
 * exchange, resources, key exchange, QP connection, then the test flow of the program (see {@link TestFlows}).
 * Returns the exit status; failures are printed perftest-style on stderr, with a stack trace only under --debug.
 */
final class PerftestSession {
    /** perftest's QKey for UD ({@code DEF_QKEY}). */
    static final int DEF_QKEY = 0x11111111;

    final PerftestParameters p;
    final PrintStream out;
    final PrintStream err;
    private final VerbsEngine engine;
    private final IntConsumer boundPort;
    final boolean pcieRoCompliant;
    /** The parameters as parsed, before this session completes them: what the JIT warm-up copies. */
    private final PerftestParameters asParsed;

    VerbsEngine.Device device;
    VerbsEngine.Resources res;
    PerftestExchange ex;
    BufferLayout layout;
    KeyMessage[] my;
    KeyMessage[] rem;
    /** -R: the rdma_cm connections of the test's QPs, which own {@link #res}; null otherwise. */
    CmDataConnections cm;

    /**
     * @param boundPort told the listening TCP port once the server socket is bound (--loopback), or null
     */
    PerftestSession(PerftestParameters p, VerbsEngine engine, PrintStream out, PrintStream err,
                    IntConsumer boundPort) {
        this.p = p;
        this.engine = engine;
        this.out = out;
        this.err = err;
        this.boundPort = boundPort;
        this.pcieRoCompliant = Platform.pcieRelaxedOrderingCompliant();
        this.asParsed = p.copy();
    }

    int run() {
        try {
            runOrThrow();
            return 0;
        } catch (RunFailure | ExchangeException e) {
            out.flush();
            err.println(e.getMessage());
            if (p.debug) {
                e.printStackTrace(err);
            }
            return e instanceof RunFailure f ? f.exitStatus() : 1;
        } catch (RuntimeException e) {
            out.flush();
            err.println(" " + e.getMessage());
            if (p.debug) {
                e.printStackTrace(err);
            } else {
                err.println(" (" + e.getClass().getSimpleName() + "; run with --debug for the stack trace)");
            }
            return 1;
        } finally {
            out.flush();
            err.flush();
        }
    }

    private void runOrThrow() {
        if (p.test == PerftestTest.WRITE_LAT) {
            // the latency ping-pong polls for the last byte of each write: relaxed ordering would break it
            p.disablePcieRelaxed = true;
        }
        DeviceSetup setup = new DeviceSetup(p, out, err);
        device = setup.open(engine);
        try {
            setup.check(device);
            XrcDcConnection.refuseIfCapable(p, device);
            if (p.output == PerftestParameters.Output.FULL && p.servername == null) {
                out.print(PerftestOutput.WAITING_BANNER);
                out.flush();
            }
            ExchangeTransport channel = connect();
            try {
                ex = new PerftestExchange(channel);
                ex.exchangeVersions();
                int[] sys = ex.exchangeSysData(Platform.pageSize(), Platform.cacheLineSize());
                p.cycleBuffer = sys[0];
                p.cacheLineSize = sys[1];
                p.currMtu = ex.exchangeMtu(setup.mtu(device));
                checkUdSize();
                allocate();
                try {
                    GidEntry gid = setup.chooseGid(device);
                    setUpConnection(gid);
                    out.print(PerftestOutput.header(p, pcieRoCompliant));
                    out.flush();
                    new TestFlows(this).run();
                } finally {
                    if (p.waitDestroy > 0) {
                        sleepQuietly(p.waitDestroy * 1000L);
                    }
                    if (cm != null) {
                        cm.close(); // disconnects, then releases the QPs before the buffers
                    } else if (res != null) {
                        res.close();
                    }
                }
            } finally {
                channel.close();
            }
        } finally {
            device.close();
        }
    }

    VerbsEngine engine() {
        return engine;
    }

    private ExchangeTransport connect() {
        long timeout = p.timeoutSeconds * 1000L;
        try {
            if (p.commRdmaCm) { // -z, and -R which implies it: the exchange runs over an rdma_cm connection
                return p.servername != null
                        ? CmExchangeChannel.connect(p.servername, p.port, p.sourceIp, p.retryCount, timeout)
                        : CmExchangeChannel.accept(p.sourceIp, p.port, p.loopback ? timeout : 0, timeout, boundPort);
            }
            if (p.servername != null) {
                ExchangeChannel c = ExchangeChannel.connect(p.servername, p.port, p.sourceIp, timeout);
                Warmup.run(asParsed, engine, err); // the server waits for our first message meanwhile
                return c;
            }
            return ExchangeChannel.accept(p.sourceIp, p.port, p.loopback ? timeout : 0, timeout, port -> {
                if (boundPort != null) {
                    boundPort.accept(port);
                }
                Warmup.run(asParsed, engine, err); // listening: a client may connect and wait meanwhile
            });
        } catch (ExchangeChannel.ConnectException e) {
            throw new RunFailure(e.getMessage() + (e.getMessage().contains("Unable to init") ? ""
                    : "\n Unable to init the socket connection"), e);
        }
    }

    /** {@code check_mtu}'s UD rule: a UD message must fit one MTU. */
    private void checkUdSize() {
        if (p.connection == Connection.UD && p.size > p.mtuBytes()) {
            if (p.testMethod == TestMethod.ALL || !p.reqSize) {
                err.println(" Max msg size in UD is MTU " + p.mtuBytes());
                err.println(" Changing to this MTU");
                p.size = p.mtuBytes();
            } else {
                throw new RunFailure(" Max message size in UD cannot be greater than MTU \n"
                        + " Couldn't get context for the device\n (MTU is " + p.mtuBytes() + "; use -s "
                        + p.mtuBytes() + " or less)");
            }
        }
    }

    private void allocate() {
        XrcDcConnection.failAsCtxInit(p, device); // where perftest's ctx_init fails without the transport
        layout = new BufferLayout(p.size, p.cycleBuffer, p.cacheLineSize, p.numQps, p.mrPerQp,
                p.connection == Connection.UD);
        VerbsEngine.ResourceSpec spec = new VerbsEngine.ResourceSpec(p.verb(), p.connection, p.numQps, p.ibPort,
                p.pkeyIndex, p.txDepth, p.rxDepth, p.inlineSize, layout.bufferSize(), p.mrPerQp,
                !p.disablePcieRelaxed, "IW".equals(p.transport), p.test == PerftestTest.WRITE_LAT,
                !p.useOldPostSend, p.useEvent, p.eqNum, p.srqExists(), p.directWqe, p.useOdp);
        try {
            if (p.rdmaCm) {
                cm = CmDataConnections.establish(this, spec);
                res = cm.resources();
            } else {
                res = device.allocate(spec);
            }
        } catch (RunFailure | ExchangeException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new RunFailure(" Couldn't create IB resources\n (" + e.getMessage() + ")", e);
        }
        p.useOldPostSend = !res.usesWrApi();
        int granted = res.qp(0).maxInlineData();
        if (p.inlineSize > granted) {
            p.inlineSize = granted;
            out.printf("  Actual inline-size(%d) > requested inline-size(%d)%n", granted, p.inlineSize);
        }
    }

    /** {@code set_up_connection}: one key message per QP. */
    private void setUpConnection(GidEntry gid) {
        Random random = new Random();
        int lid = device.port(p.ibPort).lid();
        my = new KeyMessage[p.numQps];
        rem = new KeyMessage[p.numQps];
        for (int i = 0; i < p.numQps; i++) {
            int mr = layout.mrOf(i);
            long vaddr = res.buffer(mr).address() + layout.remoteOffset(i);
            my[i] = new KeyMessage(lid, p.outReads, res.qp(i).qpNum(), random.nextInt() & 0xffffff, res.rkey(mr),
                    vaddr, gid == null ? null : gid.gid(), 0);
        }
    }

    /** {@code ctx_connect}: RTR (and RTS on senders) for every QP from the peer's key messages. */
    void connectQps() {
        if (p.rdmaCm) {
            return; // rdma_cm connected them (perftest skips ctx_connect and the GID check with -R)
        }
        if (p.usesGid() && rem[0].isIpv4MappedGid() != my[0].isIpv4MappedGid()) {
            throw new RunFailure("\n Found Incompatibility issue with GID types.\n"
                    + " Please Try to use a different IP version.\n");
        }
        boolean toRts = !p.isBw() || p.isClient() || p.duplex;
        for (int i = 0; i < p.numQps; i++) {
            VerbsEngine.Connect c = new VerbsEngine.Connect(p.currMtu, rem[i].qpn(), rem[i].psn(), my[i].psn(),
                    p.dlid != 0 ? p.dlid : rem[i].lid(), p.usesGid() ? rem[i].gid() : null, p.gidIndex,
                    p.trafficClass, p.sl, my[i].outReads(), rem[i].outReads(), p.qpTimeout, toRts);
            try {
                res.qp(i).connect(c);
            } catch (RuntimeException e) {
                throw new RunFailure("Failed to modify QP " + res.qp(i).qpNum() + " to RTR\n"
                        + " Unable to Connect the HCA's through the link\n (" + e.getMessage() + ")", e);
            }
        }
    }

    /** Waits up to the run budget: how long one side may take to finish a measurement the other side awaits. */
    long runBudgetMillis() {
        long base = 10L * p.timeoutSeconds * 1000L;
        return p.testType == PerftestParameters.TestType.DURATION ? base + p.duration * 1000L : base;
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
