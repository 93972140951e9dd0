package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The measurement loops allocate nothing per message: two QPs of the device connected to each other in this JVM
 * (no TCP), a warm-up run, then the bytes the posting (and receiving) thread allocated during a measured run of
 * thousands of messages must stay under a small constant (the loop's few setup arrays).
 */
class ZeroAllocationIT {
    static String device;

    @BeforeAll
    static void device() {
        device = ItSupport.device();
    }

    static long allocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    /** Parameters as the parser would make them for {@code args} (client side unless {@code server}). */
    static PerftestParameters params(PerftestTest test, boolean server, String... args) {
        List<String> a = new ArrayList<>(List.of(args));
        if (!server) {
            a.add("127.0.0.1");
        }
        PerftestParser.Outcome o = PerftestParser.parse(test, test.programName(), a,
                new java.io.PrintStream(new java.io.ByteArrayOutputStream()),
                new java.io.PrintStream(new java.io.ByteArrayOutputStream()));
        assertThat(o.proceed()).isTrue();
        return o.params();
    }

    @ParameterizedTest(name = "{0} -s {1} -n {2} use_old_post_send={3}")
    @CsvSource({"WRITE_BW, 64, 4000, false", "WRITE_BW, 64, 4000, true", "READ_BW, 64, 3000, false",
            "SEND_BW, 64, 3000, false", "SEND_BW, 64, 3000, true"})
    void measuredLoopAllocatesNothingPerMessage(PerftestTest test, long size, int iters, boolean oldPostSend)
            throws Exception {
        String[] args = oldPostSend ? new String[] {"-s", Long.toString(size), "-n", Integer.toString(iters),
                "--use_old_post_send"} : new String[] {"-s", Long.toString(size), "-n", Integer.toString(iters)};
        PerftestParameters cp = params(test, false, args);
        PerftestParameters sp = params(test, true, args);
        try (VerbsEngine.Device cd = new CoreEngine().open(device); VerbsEngine.Device sd = new CoreEngine().open(device)) {
            for (PerftestParameters p : List.of(cp, sp)) {
                new DeviceSetup(p, System.out, System.err).check(p == cp ? cd : sd);
                p.currMtu = cd.port(p.ibPort).activeMtu();
                p.cycleBuffer = Platform.pageSize();
                p.cacheLineSize = Platform.cacheLineSize();
            }
            VerbsEngine.GidEntry gid = new DeviceSetup(cp, System.out, System.err).chooseGid(cd);
            sp.gidIndex = cp.gidIndex;
            BufferLayout layout = new BufferLayout(size, cp.cycleBuffer, cp.cacheLineSize, 1, false, false);
            try (VerbsEngine.Resources c = cd.allocate(spec(cp, layout));
                 VerbsEngine.Resources s = sd.allocate(spec(sp, layout))) {
                byte[] g = gid == null ? null : gid.gid();
                int lid = cd.port(cp.ibPort).lid();
                VerbsEngine.Qp cq = c.qp(0);
                VerbsEngine.Qp sq = s.qp(0);
                int out = test.verb() == PerftestTest.Verb.READ ? Math.min(16, cd.maxQpRdAtom()) : 1;
                sq.connect(new VerbsEngine.Connect(cp.currMtu, cq.qpNum(), 7, 9, lid, g, cp.gidIndex, 0, 0, out, out,
                        14, false));
                cq.connect(new VerbsEngine.Connect(cp.currMtu, sq.qpNum(), 9, 7, lid, g, cp.gidIndex, 0, 0, out, out,
                        14, true));
                long remote = s.buffer(0).address() + layout.remoteOffset(0);
                long local = c.buffer(0).address() + layout.sendOffset(0);
                cq.configureSend((int) size, c.lkey(0), s.rkey(0), false, sq.qpNum(), PerftestSession.DEF_QKEY);
                for (int round = 0; round < 2; round++) { // round 0 warms up the JIT
                    long[] recvAllocated = {0};
                    CompletableFuture<Void> receiver = null;
                    if (test.verb() == PerftestTest.Verb.SEND) {
                        long base = s.buffer(0).address() + layout.recvOffset(0);
                        for (int j = 0; j < sp.rxDepth; j++) {
                            assertThat(sq.postRecv(base, (int) size, s.lkey(0), 0)).isZero();
                        }
                        BwRunner rr = new BwRunner(sp, s, layout);
                        long[] posted = {sp.rxDepth};
                        long[] next = {base};
                        receiver = CompletableFuture.runAsync(() -> {
                            long before = allocated();
                            rr.runReceiver(new long[] {base}, next, posted);
                            recvAllocated[0] = allocated() - before;
                        });
                    }
                    BwRunner r = new BwRunner(cp, c, layout);
                    long before = allocated();
                    r.runSender(new long[] {local}, new long[] {remote});
                    long sent = allocated() - before;
                    if (receiver != null) {
                        receiver.get(120, TimeUnit.SECONDS);
                    }
                    if (round == 0) {
                        warmPollSites(c.sendCq());
                        if (receiver != null) {
                            warmPollSites(s.recvCq());
                        }
                    }
                    if (round == 1) {
                        assertThat(sent).as("bytes the sender allocated for %d messages", iters).isLessThan(8192);
                        assertThat(recvAllocated[0]).as("bytes the receiver allocated").isLessThan(8192);
                        System.out.printf("%s %s: sender allocated %d B, receiver %d B for %d messages%n",
                                test.programName(), oldPostSend ? "ibv_post_send" : "ibv_wr_*", sent,
                                recvAllocated[0], iters);
                    }
                }
            }
        }
    }

    /**
     * Polls the (drained) CQ more times than {@code java.lang.invoke.MethodHandle.CUSTOMIZE_THRESHOLD} (127): the
     * JDK customizes a method handle (spins a LambdaForm class, ~64 KB on this thread) once, at its 128th
     * {@code invokeExact} from interpreted or C1 code (the ITs run C1 only). The posts of the warm-up round pass that
     * count for the post downcall, but its polls number what the timing gives (a few dozen when the guest is slow),
     * so the poll downcall's one-time customization could fall in the measured round, not per message.
     */
    static void warmPollSites(VerbsEngine.Cq cq) {
        for (int i = 0; i < 256; i++) {
            assertThat(cq.poll(VerbsEngine.Cq.BATCH)).as("completions left after the warm-up round").isZero();
        }
    }

    static VerbsEngine.ResourceSpec spec(PerftestParameters p, BufferLayout layout) {
        return new VerbsEngine.ResourceSpec(p.verb(), p.connection, 1, p.ibPort, 0, p.txDepth, p.rxDepth, p.inlineSize,
                layout.bufferSize(), false, true, false, false, !p.useOldPostSend, false, 0);
    }
}
