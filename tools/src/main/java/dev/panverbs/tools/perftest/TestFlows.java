package dev.panverbs.tools.perftest;

import dev.panverbs.tools.perftest.PerftestParameters.Connection;
import dev.panverbs.tools.perftest.PerftestParameters.Output;
import dev.panverbs.tools.perftest.PerftestParameters.TestMethod;
import dev.panverbs.tools.perftest.PerftestParameters.TestType;
import dev.panverbs.tools.perftest.PerftestTest.Verb;

import java.lang.foreign.MemorySegment;

import static dev.panverbs.tools.perftest.PerftestOutput.RESULT_LINE;

/**
 * The main functions of the six perftest programs after the header: the order of key exchanges and syncs (which
 * must match the C peer message for message), the runs per size, and what each side prints.
 *
 * <pre>
 * write_bw/read_bw: K*q, [RTR/RTS], local lines, K*q + remote lines, K sync | client runs | K end, report, K, done
 * send_bw:          K*q, [RTR/RTS], K, local, K*q + remote, per size: [post recvs] K sync, run, [-a: K] | K, done
 * write_lat:        K, K*q, [RTS], local, K*q + remote, K sync, run (both sides)       (no close handshake)
 * read_lat:         K, K*q, [RTS], local, K*q + remote, K sync | client runs | K, done
 * send_lat:         K*q, [RTS], K, local, K*q + remote, per size: post recvs, K sync, run | K, done
 * (K = one key message each way, q = number of QPs)
 * </pre>
 */
final class TestFlows {
    private final PerftestSession s;
    private final PerftestParameters p;
    private boolean bwLimitPassed = true;
    private boolean msgRateLimitPassed = true;
    private PeerWatch peer;

    TestFlows(PerftestSession s) {
        this.s = s;
        this.p = s.p;
    }

    /**
     * One watch of the exchange connection for all runs of the session (it remembers when the peer closed); the
     * JIT warm-up's pair gets a rehearsal (PeerWatch's class comment).
     */
    private PeerWatch peer() {
        if (peer == null) {
            peer = s.ex == null ? PeerWatch.NONE
                    : p.jitRehearsal ? PeerWatch.rehearsal(s.ex.channel()) : new PeerWatch(s.ex.channel());
        }
        return peer;
    }

    void run() {
        switch (p.test) {
            case WRITE_BW, READ_BW -> rdmaBw();
            case SEND_BW -> sendBw();
            case WRITE_LAT -> writeLat();
            case READ_LAT -> readLat();
            case SEND_LAT -> sendLat();
        }
    }

    // ---------------------------------------------------------------- key exchange helpers

    private void exchangeAll(String what) {
        for (int i = 0; i < p.numQps; i++) {
            s.rem[i] = s.ex.handShake(s.my[i], "QP " + i + " " + what);
        }
    }

    private void printLocalThenExchangeRemote() {
        for (int i = 0; i < p.numQps; i++) {
            s.out.print(PerftestOutput.address(p, s.my[i], true, 0));
        }
        for (int i = 0; i < p.numQps; i++) {
            s.rem[i] = s.ex.handShake(s.my[i], "QP " + i + " address (second round)");
            s.out.print(PerftestOutput.address(p, s.rem[i], false, p.dlid));
        }
        s.out.flush();
    }

    /** Lets the compiler drain before the timed section (Warmup.beforeTimedSection); {@code --debug} says how long. */
    private void beforeTimed(boolean timedHere) {
        if (!timedHere) {
            return;
        }
        long waited = Warmup.beforeTimedSection(p);
        if (p.debug && waited > 0) {
            s.err.printf(" JIT: waited %d ms for the compiler before the timed section%n", waited / 1_000_000);
        }
    }

    /**
     * {@code --debug}: the timed section's span in {@code System.nanoTime}, the clock of {@code -Xlog}'s
     * {@code timenanos} decorator, so a JIT or GC log can be laid against it (perf/README.md, issue 9).
     */
    private void debugTimed(long startNanos) {
        if (p.debug && p.testType == TestType.ITERATIONS) {
            long end = System.nanoTime();
            s.err.printf(" timed section: nanoTime %d to %d (%d ms)%n", startNanos, end,
                    (end - startNanos) / 1_000_000);
        }
    }

    private void sync(String step) {
        s.ex.handShake(s.my[0], step);
    }

    private void syncLong(String step, long millis) {
        s.ex.handShake(s.my[0], step, millis);
    }

    /** {@code ctx_close_connection}: a last key message, then "done". */
    private void close() {
        sync("close");
        s.ex.channel().sendDoneAndClose();
    }

    // ---------------------------------------------------------------- the six programs

    private void rdmaBw() {
        exchangeAll("address");
        s.connectQps();
        printLocalThenExchangeRemote();
        sync("sync after RTR");
        if (p.useEvent) {
            s.res.sendCq().requestNotify();
        }
        s.out.print(PerftestOutput.bwResultsHeader(p));
        s.out.flush();
        beforeTimed(!p.isServer() || p.duplex); // a BW server is passive or receiving: the client times
        long budget = s.runBudgetMillis() * (p.testMethod == TestMethod.ALL ? 23 : 1);
        if (p.isServer() && !p.duplex) {
            syncLong("end of test", budget);
            BwReport theirs = s.ex.exchangeReports(new BwReport(0, 0, 0, 0, 0));
            printFullBwReport(theirs, null, 0);
            close();
            if (p.output == Output.FULL) {
                s.out.print(RESULT_LINE);
            }
            return;
        }
        BwReport last = null;
        BwReport lastRemote = null;
        for (long size : sizes(23)) {
            p.size = size;
            configureSend();
            if (p.performWarmUp) {
                warmUp();
            }
            if (p.duplex) {
                syncLong("bidirectional sync before size " + size, s.runBudgetMillis());
            }
            BwRunner r = new BwRunner(p, s.res, s.layout, peer());
            try {
                r.runSender(localBases(), remoteBases());
            } catch (RunFailure e) {
                throw iterationFailed(e);
            }
            if (p.duplex && p.testMethod == TestMethod.ALL) {
                syncLong("bidirectional sync after size " + size, s.runBudgetMillis());
            }
            last = measure(r);
            double cpu = r.timer == null ? 0 : r.timer.cpuUtil();
            if (p.duplex) {
                lastRemote = s.ex.exchangeReports(last);
                printFullBwReport(last, lastRemote, cpu);
            } else {
                printFullBwReport(last, null, cpu);
            }
        }
        if (p.reportBoth && p.duplex && p.testMethod == TestMethod.REGULAR) {
            String columns = PerftestOutput.bwResultsHeader(p).substring(RESULT_LINE.length());
            s.out.print(RESULT_LINE + "\n Local results: \n" + RESULT_LINE + columns);
            printFullBwReport(last, null, 0);
            s.out.print(RESULT_LINE + "\n Remote results: \n" + RESULT_LINE + columns);
            printFullBwReport(lastRemote, null, 0);
        }
        if (p.output == Output.FULL) {
            s.out.print(RESULT_LINE);
        }
        if (!p.duplex) {
            syncLong("end of test", s.runBudgetMillis());
            s.ex.exchangeReports(last);
        }
        close();
        checkLimits();
    }

    /**
     * The start of ib_send_bw and ib_send_lat in their wire order: the sync after RTR comes before the second key
     * exchange (the RDMA tests sync after it, see WireTranscriptTest); with -e both CQs are armed.
     */
    private void connectSendTest() {
        exchangeAll("address");
        s.connectQps();
        sync("sync after RTR");
        printLocalThenExchangeRemote();
        if (p.useEvent) {
            s.res.sendCq().requestNotify();
            s.res.recvCq().requestNotify();
        }
    }

    private void sendBw() {
        connectSendTest();
        s.out.print(PerftestOutput.bwResultsHeader(p));
        s.out.flush();
        beforeTimed(!p.isServer() || p.duplex); // a BW server is passive or receiving: the client times
        int maxPow = p.connection == Connection.UD ? log2(p.mtuBytes()) : 23;
        long[] posted = new long[p.numQps];
        long[] nextRecv = new long[p.numQps];
        for (long size : sizes(maxPow)) {
            p.size = size;
            if (p.isClient()) {
                configureSend();
            } else {
                postReceives(posted, nextRecv);
            }
            syncLong("pre-run sync", s.runBudgetMillis());
            BwRunner r = new BwRunner(p, s.res, s.layout, peer());
            try {
                if (p.isClient()) {
                    r.runSender(localBases(), localBases()); // SEND has no remote address; unused
                } else {
                    r.runReceiver(recvBases(), nextRecv, posted);
                }
            } catch (RunFailure e) {
                throw iterationFailed(e);
            }
            reportBw(r);
            if (p.testMethod == TestMethod.ALL) {
                syncLong("sync after size " + size, s.runBudgetMillis());
            }
        }
        if (p.output == Output.FULL) {
            s.out.print(RESULT_LINE);
        }
        close();
        checkLimits();
    }

    private void writeLat() {
        sync("first sync");
        exchangeAll("address");
        s.connectQps();
        printLocalThenExchangeRemote();
        sync("sync after RTR");
        s.out.print(PerftestOutput.latResultsHeader(p));
        s.out.flush();
        beforeTimed(true);
        MemorySegment buf = s.res.buffer(0);
        for (long size : sizes(23)) {
            p.size = size;
            configureSend();
            LatencyRunner r = new LatencyRunner(p, s.res, peer());
            try {
                r.runWrite(buf, s.layout.sendOffset(0) + size - 1, s.layout.remoteOffset(0) + size - 1,
                        localBases()[0], s.rem[0].vaddr());
            } catch (RunFailure e) {
                throw iterationFailed(e);
            }
            reportLat(r, false);
        }
        if (p.output == Output.FULL) {
            s.out.print(RESULT_LINE);
        }
        // perftest's write_lat has no close handshake and sends no "done": each side just closes
    }

    private void readLat() {
        sync("first sync");
        exchangeAll("address");
        s.connectQps();
        printLocalThenExchangeRemote();
        sync("sync after RTR");
        if (p.isServer()) {
            s.ex.handShake(s.my[0], "close", s.runBudgetMillis() * (p.testMethod == TestMethod.ALL ? 23 : 1));
            s.ex.channel().sendDoneAndClose();
            if (p.output == Output.FULL) {
                s.out.print(RESULT_LINE);
            }
            return;
        }
        if (p.useEvent) {
            s.res.sendCq().requestNotify();
        }
        s.out.print(PerftestOutput.latResultsHeader(p));
        s.out.flush();
        beforeTimed(true);
        for (long size : sizes(23)) {
            p.size = size;
            configureSend();
            LatencyRunner r = new LatencyRunner(p, s.res, peer());
            try {
                r.runRead(localBases()[0], s.rem[0].vaddr());
            } catch (RunFailure e) {
                throw iterationFailed(e);
            }
            reportLat(r, true);
        }
        if (p.output == Output.FULL) {
            s.out.print(RESULT_LINE);
        }
        close();
    }

    private void sendLat() {
        connectSendTest();
        s.out.print(PerftestOutput.latResultsHeader(p));
        s.out.flush();
        beforeTimed(true);
        int maxPow = p.connection == Connection.UD ? log2(p.mtuBytes()) : 23;
        long[] posted = new long[1];
        long[] nextRecv = new long[1];
        for (long size : sizes(maxPow)) {
            p.size = size;
            configureSend();
            postReceives(posted, nextRecv);
            syncLong("pre-run sync", s.runBudgetMillis());
            LatencyRunner r = new LatencyRunner(p, s.res, peer());
            try {
                r.runSend(localBases()[0], recvBases()[0], recvLength(), s.res.lkey(0), p.recvPerQp());
            } catch (RunFailure e) {
                throw iterationFailed(e);
            }
            reportLat(r, false);
        }
        if (p.output == Output.FULL) {
            s.out.print(RESULT_LINE);
        }
        close();
    }

    /**
     * What perftest 6.06's {@code main} does when its {@code run_iter_*} fails: write_bw (and read_bw without -a)
     * print " Failed to complete run_iter_bw function successfully" and return 1, write_lat prints "Test exited
     * with Error" and returns 1, the others return 17 without a line.
     */
    private RunFailure iterationFailed(RunFailure e) {
        return switch (p.test) {
            case WRITE_BW -> new RunFailure(e.getMessage() + RUN_ITER_BW_FAILED, e);
            case READ_BW -> p.testMethod == TestMethod.ALL
                    ? new RunFailure(e.getMessage(), e, RunFailure.RUN_ITER_FAILED)
                    : new RunFailure(e.getMessage() + RUN_ITER_BW_FAILED, e);
            case WRITE_LAT -> new RunFailure(e.getMessage() + "\nTest exited with Error", e);
            default -> new RunFailure(e.getMessage(), e, RunFailure.RUN_ITER_FAILED);
        };
    }

    private static final String RUN_ITER_BW_FAILED = "\n Failed to complete run_iter_bw function successfully";

    // ---------------------------------------------------------------- data path setup

    /** The sizes to run: -s, or 2, 4, ... 2^maxPow with -a. */
    private long[] sizes(int maxPow) {
        if (p.testMethod != TestMethod.ALL) {
            return new long[] {p.size};
        }
        long[] v = new long[maxPow];
        for (int i = 1; i <= maxPow; i++) {
            v[i - 1] = 1L << i;
        }
        return v;
    }

    private static int log2(long v) {
        return 63 - Long.numberOfLeadingZeros(v);
    }

    private long[] localBases() {
        long[] b = new long[p.numQps];
        for (int i = 0; i < p.numQps; i++) {
            b[i] = s.res.buffer(s.layout.mrOf(i)).address() + s.layout.sendOffset(i);
        }
        return b;
    }

    private long[] remoteBases() {
        long[] b = new long[p.numQps];
        for (int i = 0; i < p.numQps; i++) {
            b[i] = s.rem[i].vaddr();
        }
        return b;
    }

    /** First receive address of each QP; UD receives start 40 bytes (the GRH) before a cache line. */
    private long[] recvBases() {
        long[] b = new long[p.numQps];
        for (int i = 0; i < p.numQps; i++) {
            b[i] = s.res.buffer(s.layout.mrOf(i)).address() + s.layout.recvOffset(i)
                    + (p.connection == Connection.UD ? s.layout.cacheLine - 40 : 0);
        }
        return b;
    }

    private int recvLength() {
        return (int) (p.size + (p.connection == Connection.UD ? 40 : 0));
    }

    /** {@code ctx_set_send_wqes} for the current size. */
    private void configureSend() {
        boolean inline = p.verb() != Verb.READ && p.size <= p.inlineSize;
        for (int i = 0; i < p.numQps; i++) {
            int qpn = s.cm != null ? s.cm.remoteQpn(i, s.rem[i].qpn()) : s.rem[i].qpn(); // -R -c UD: rdma_cm's
            int qkey = s.cm != null ? s.cm.remoteQkey(i, PerftestSession.DEF_QKEY) : PerftestSession.DEF_QKEY;
            s.res.qp(i).configureSend((int) p.size, s.res.lkey(s.layout.mrOf(i)), s.rem[i].rkey(), inline, qpn, qkey);
        }
    }

    /** {@code ctx_set_recv_wqes}: rx-depth receives per QP, spread over the page in BW tests. */
    private void postReceives(long[] posted, long[] nextRecv) {
        long[] base = recvBases();
        int length = recvLength();
        boolean cycle = p.isBw() && s.layout.cycles(p.size);
        long inc = BufferLayout.inc(p.size, s.layout.cacheLine);
        long slots = s.layout.slots(p.size);
        for (int i = 0; i < p.numQps; i++) {
            long addr = base[i];
            int lkey = s.res.lkey(s.layout.mrOf(i));
            for (int j = 0; j < p.recvPerQp(); j++) {
                int errno = s.res.qp(i).postRecv(addr, length, lkey, i);
                if (errno != 0) {
                    throw new RunFailure("Couldn't post recv Qp = " + i + ": counter=" + j + "\n Failed to post "
                            + "receive recv_wqes (" + Errno.describe(errno) + ")");
                }
                if (cycle) {
                    addr += inc;
                    if ((j + 1) % slots == 0) {
                        addr = base[i];
                    }
                }
            }
            posted[i] = p.recvPerQp();
            nextRecv[i] = base[i];
        }
    }

    /**
     * --perform_warm_up: tx-depth posts per QP before measuring, to warm caches and TLBs. perftest waits for
     * one completion per post, which never comes when CQ moderation leaves posts unsignaled; here every warm-up
     * post is signaled.
     */
    private void warmUp() {
        int cqMod = p.cqMod;
        int postList = p.postList;
        p.cqMod = 1;
        p.postList = 1;
        int iters = p.iters;
        TestType type = p.testType;
        boolean noPeak = p.noPeak;
        try {
            p.iters = Math.max(5, Math.min(p.txDepth, 128));
            p.testType = TestType.ITERATIONS;
            p.noPeak = true;
            new BwRunner(p, s.res, s.layout).runSender(localBases(), remoteBases());
        } finally {
            p.cqMod = cqMod;
            p.postList = postList;
            p.iters = iters;
            p.testType = type;
            p.noPeak = noPeak;
        }
    }

    // ---------------------------------------------------------------- reports

    /** {@code print_report_bw} without the printing: the numbers of one run. */
    private BwReport measure(BwRunner r) {
        debugTimed(r.tposted[0]);
        return Statistics.bw(p.size, r.measuredIters, p.numQps, p.postList, p.cqMod, p.noPeak,
                p.testType == TestType.DURATION, p.reportGbits, r.tposted, r.tcompleted);
    }

    private BwReport reportBw(BwRunner r) {
        BwReport rep = measure(r);
        printFullBwReport(rep, null, r.timer == null ? 0 : r.timer.cpuUtil());
        return rep;
    }

    /**
     * {@code print_full_bw_report}: with a remote report (bidirectional) the row shows the sums of both sides;
     * the -w/-y limits are checked on what is printed; the JSON file is rewritten.
     */
    private void printFullBwReport(BwReport mine, BwReport remote, double cpuUtil) {
        BwReport rep = remote == null ? mine : new BwReport(mine.size(), mine.iters(),
                mine.bwPeak() + remote.bwPeak(), mine.bwAvg() + remote.bwAvg(), mine.msgRate() + remote.msgRate());
        if (p.duplex == (remote != null)) {
            if (p.isLimitBw && p.limitBw > rep.bwAvg()) {
                bwLimitPassed = false;
            }
            if (p.isLimitMsgRate && p.limitMsgRate > rep.msgRate()) {
                msgRateLimitPassed = false;
            }
        }
        if (p.outJson) {
            JsonReport.write(p, JsonReport.bw(p, s.pcieRoCompliant, rep, cpuUtil), s.err);
        }
        s.out.print(PerftestOutput.bwRow(p, rep, cpuUtil));
        s.out.flush();
    }

    private void reportLat(LatencyRunner r, boolean read) {
        debugTimed(r.tposted[0]);
        double cpu = r.timer == null ? 0 : r.timer.cpuUtil();
        if (p.testType == TestType.DURATION) {
            double[] v = Statistics.latencyDuration(r.sampleTicks(), r.measuredIters, read);
            if (p.outJson) {
                JsonReport.write(p, JsonReport.latDuration(p, s.pcieRoCompliant, r.measuredIters, v[0], v[1], cpu),
                        s.err);
            }
            s.out.print(PerftestOutput.latDurationRow(p, r.measuredIters, v[0], v[1], cpu));
        } else {
            StringBuilder listing = new StringBuilder();
            LatencyStats st = Statistics.latency(r.tposted, p.iters, read, p.unsorted, p.histogram, listing);
            s.out.print(listing);
            if ((p.unsorted || p.histogram) && p.output == Output.FULL) {
                s.out.print(PerftestOutput.latResultsHeader(p));
            }
            if (p.outJson) {
                JsonReport.write(p, JsonReport.lat(p, s.pcieRoCompliant, st, cpu), s.err);
            }
            s.out.print(PerftestOutput.latRow(p, st, cpu));
        }
        s.out.flush();
    }

    /** -w/-y: perftest's verdict after the run (it checks the message rate only when -w is given; here either). */
    private void checkLimits() {
        if (!bwLimitPassed) {
            throw new RunFailure("Error: BW result is below bw limit");
        }
        if (!msgRateLimitPassed) {
            throw new RunFailure("Error: Msg rate  is below msg_rate limit");
        }
    }
}
