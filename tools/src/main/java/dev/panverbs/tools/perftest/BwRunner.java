package dev.panverbs.tools.perftest;

import dev.panverbs.tools.perftest.PerftestParameters.TestType;
import dev.panverbs.tools.perftest.VerbsEngine.Cq;
import dev.panverbs.tools.perftest.VerbsEngine.Qp;

/**
 * The bandwidth data paths: perftest's {@code run_iter_bw} (the sender of write, read and send tests) and
 * {@code run_iter_bw_server} (the receiver of ib_send_bw), with the same rules: at most tx-depth WRs
 * outstanding per QP, one signaled WR every cq-mod (and the last), each completion counting cq-mod messages,
 * round robin over the QPs, 16 completions per poll, and the same timestamps for the report.
 *
 * <p>One instance per size; allocation happens in the constructor, none in the loops.
 *
 * <p>Timestamps: C perftest reads the TSC ({@code get_cycles}) for every post and every completion. Here the
 * clock is {@link System#nanoTime()}, which costs 1-3 µs a read where the kernel's clocksource is not the TSC
 * (the Soft-RoCE TCG guest reads the emulated HPET: a syscall and an MMIO exit), up to 10 % of a 64 B message's
 * time there. So the clock is read once per burst of posts (the posts that fit between two polls: every post of
 * the burst gets the burst's start time) and once per poll that returned completions. The average BW and message
 * rate use only {@code tposted[0]} and the last completion time, which stay exact; for the peak, a window that
 * starts inside a burst gets an earlier start than its first post and so a lower rate, while every window that
 * starts at a burst's first post is exact: the peak can only read lower than with a read per post, never higher.
 */
final class BwRunner {
    private final PerftestParameters p;
    private final VerbsEngine.Resources res;
    private final BufferLayout layout;
    private final long timeoutNanos;
    private final PeerWatch peer;

    /** Post times, indexed by global post count (or [0] = start with noPeak / -D). */
    final long[] tposted;
    /** Completion times, indexed by completed-message count - 1 (or [0] = end). */
    final long[] tcompleted;
    /** Messages counted in the -D sample window, or iterations run. */
    long measuredIters;
    DurationTimer timer;

    BwRunner(PerftestParameters p, VerbsEngine.Resources res, BufferLayout layout) {
        this(p, res, layout, PeerWatch.NONE);
    }

    /** @param peer ends a wait early when the peer has closed the exchange connection (exited or killed) */
    BwRunner(PerftestParameters p, VerbsEngine.Resources res, BufferLayout layout, PeerWatch peer) {
        this.p = p;
        this.peer = peer;
        this.res = res;
        this.layout = layout;
        this.timeoutNanos = p.timeoutSeconds * 1_000_000_000L;
        int n = p.noPeak ? 1 : Math.max(1, p.iters * p.numQps);
        this.tposted = new long[n];
        this.tcompleted = new long[n];
    }

    /** {@code run_iter_bw}: posts and polls until every QP has sent -n messages, or until -D ends. */
    void runSender(long[] localBase, long[] remoteBase) {
        final int numQps = p.numQps;
        final int postList = p.postList;
        final int cqMod = p.cqMod;
        final boolean duration = p.testType == TestType.DURATION;
        final boolean noPeak = p.noPeak;
        final long iters = p.iters;
        final long totIters = iters * numQps;
        final long size = p.size;
        final boolean cycle = postList == 1 && layout.cycles(size);
        final long inc = BufferLayout.inc(size, layout.cacheLine);
        final long slots = layout.slots(size);

        final Qp[] qps = new Qp[numQps];
        final long[][] local = new long[numQps][postList];
        final long[][] remote = new long[numQps][postList];
        final long[] scnt = new long[numQps];
        final long[] ccnt = new long[numQps];
        long listMask = 0;
        for (int j = 0; j < postList; j++) {
            if ((j + 1) % cqMod == 0) {
                listMask |= 1L << j;
            }
        }
        for (int i = 0; i < numQps; i++) {
            qps[i] = res.qp(i);
            for (int j = 0; j < postList; j++) {
                // a post list is laid out once, each WR one step further (ctx_set_send_reg_wqes)
                boolean step = j > 0 && layout.cycles(size);
                local[i][j] = j == 0 ? localBase[i] : local[i][j - 1] + (step ? inc : 0);
                remote[i][j] = j == 0 ? remoteBase[i] : remote[i][j - 1] + (step ? inc : 0);
                if (step && (j % slots) == 0) {
                    local[i][j] = localBase[i];
                    remote[i][j] = remoteBase[i];
                }
            }
        }
        DurationTimer t = null;
        if (duration) {
            t = new DurationTimer();
            timer = t;
            t.start(p.duration, p.margin);
        }
        Sender st = new Sender(qps, local, remote, localBase, remoteBase, scnt, ccnt, listMask, cycle, inc, slots,
                totIters, t);
        if (!duration && noPeak) {
            tposted[0] = System.nanoTime();
        }
        try {
            while (senderRounds(st)) {
                // the rounds run in senderRounds: see LatencyRunner.ROUNDS
            }
        } finally {
            if (t != null) {
                t.cancel();
            }
        }
        long counted = st.counted;
        if (duration) {
            tposted[0] = t.sampleStart();
            tcompleted[0] = t.sampleEnd();
            measuredIters = counted;
        } else {
            if (noPeak) {
                tcompleted[0] = System.nanoTime();
            }
            measuredIters = iters;
        }
    }

    /** The sender's state between calls of {@link #senderRounds}. */
    private static final class Sender {
        final Qp[] qps;
        final long[][] local;
        final long[][] remote;
        final long[] localBase;
        final long[] remoteBase;
        final long[] scnt;
        final long[] ccnt;
        final long listMask;
        final boolean cycle;
        final long inc;
        final long slots;
        final long totIters;
        final DurationTimer t;
        long totscnt;
        long totccnt;
        long counted;
        long lastProgress = System.nanoTime();
        int idle;
        int idleCheck = 1;

        Sender(Qp[] qps, long[][] local, long[][] remote, long[] localBase, long[] remoteBase, long[] scnt,
               long[] ccnt, long listMask, boolean cycle, long inc, long slots, long totIters, DurationTimer t) {
            this.qps = qps;
            this.local = local;
            this.remote = remote;
            this.localBase = localBase;
            this.remoteBase = remoteBase;
            this.scnt = scnt;
            this.ccnt = ccnt;
            this.listMask = listMask;
            this.cycle = cycle;
            this.inc = inc;
            this.slots = slots;
            this.totIters = totIters;
            this.t = t;
        }
    }

    /**
     * Up to {@link LatencyRunner#ROUNDS} passes of {@code run_iter_bw}'s loop (post what fits on every QP, poll
     * once); false when the run is over. A method called many times, so that the timed run calls the code C2
     * compiled during the JIT warm-up (see LatencyRunner.ROUNDS).
     */
    private boolean senderRounds(Sender st) {
        final int numQps = p.numQps;
        final int postList = p.postList;
        final int cqMod = p.cqMod;
        final int txDepth = p.txDepth;
        final boolean duration = p.testType == TestType.DURATION;
        final boolean noPeak = p.noPeak;
        final long iters = p.iters;
        final long totIters = st.totIters;
        final long[] scnt = st.scnt;
        final long[] ccnt = st.ccnt;
        final DurationTimer t = st.t;
        final Cq cq = res.sendCq();
        long totscnt = st.totscnt;
        long totccnt = st.totccnt;
        boolean more = true;
        try {
            for (int round = 0; round < LatencyRunner.ROUNDS; round++) {
                if (!(totscnt < totIters || totccnt < totIters || (duration && t.state() != DurationTimer.END))) {
                    more = false;
                    break;
                }
                for (int index = 0; index < numQps; index++) {
                    boolean stamped = false; // the clock is read once per burst of posts (class comment)
                    long stamp = 0;
                    while ((scnt[index] < iters || duration) && scnt[index] - ccnt[index] + postList <= txDepth) {
                        long mask;
                        if (postList == 1) {
                            long k = scnt[index];
                            mask = (k % cqMod == cqMod - 1 || (!duration && k == iters - 1)) ? 1 : 0;
                        } else {
                            mask = st.listMask;
                        }
                        if (!noPeak) {
                            if (!stamped) {
                                stamp = System.nanoTime();
                                stamped = true;
                            }
                            tposted[(int) totscnt] = stamp;
                        }
                        if (duration && t.state() == DurationTimer.END) {
                            break;
                        }
                        int err = st.qps[index].post(postList, st.local[index], st.remote[index], mask, index);
                        if (err != 0) {
                            throw new RunFailure("Couldn't post send: qp " + index + " scnt=" + scnt[index] + " \n"
                                    + " (" + Errno.describe(err) + ")");
                        }
                        if (st.cycle) {
                            long s = scnt[index];
                            st.local[index][0] += st.inc;
                            st.remote[index][0] += st.inc;
                            if ((s + 1) % st.slots == 0) {
                                st.local[index][0] = st.localBase[index];
                                st.remote[index][0] = st.remoteBase[index];
                            }
                        }
                        scnt[index] += postList;
                        totscnt += postList;
                    }
                }
                if (totccnt < totIters || (duration && totccnt < totscnt)) {
                    if (p.useEvent && !peer.awaitEvent(cq, p.timeoutSeconds * 1000L)) {
                        throw new RunFailure(" No completion event for " + p.timeoutSeconds + " s (scnt=" + totscnt
                                + ", ccnt=" + totccnt + "): the peer is gone or its QP is not ready");
                    }
                    int ne = cq.poll(VerbsEngine.Cq.BATCH);
                    if (ne > 0) {
                        st.idle = 0;
                        st.idleCheck = 1;
                        long now = noPeak ? 0 : System.nanoTime(); // once for all completions of this poll
                        for (int i = 0; i < ne; i++) {
                            int wcId = (int) cq.wrId(i);
                            int status = cq.status(i);
                            if (status != 0) {
                                throw completionError(cq, i, totscnt, totccnt, "client");
                            }
                            ccnt[wcId] += cqMod;
                            totccnt += cqMod;
                            if (!noPeak) {
                                tcompleted[(int) (totccnt > totIters ? totIters - 1 : totccnt - 1)] = now;
                            }
                            if (duration && t.state() == DurationTimer.SAMPLE) {
                                st.counted += cqMod;
                            }
                        }
                    } else if (ne < 0) {
                        throw new RunFailure("poll CQ failed " + ne);
                    } else if (++st.idle == st.idleCheck) {
                        // at 1, 2, 4, ... empty polls in a row: a branch the warm-up takes too
                        st.idleCheck += Math.min(st.idleCheck, 4096);
                        long now = System.nanoTime();
                        if (st.idle == 1) {
                            st.lastProgress = now;
                        } else if (now - st.lastProgress > timeoutNanos) {
                            throw new RunFailure(" No completion for " + p.timeoutSeconds + " s (scnt=" + totscnt
                                    + ", ccnt=" + totccnt + "): the peer is gone or its QP is not ready");
                        } else if (peer.gone(now, st.lastProgress)) {
                            throw new RunFailure(PeerWatch.message() + "\n scnt=" + totscnt + ", ccnt=" + totccnt);
                        }
                    }
                }
            }
        } finally {
            st.totscnt = totscnt;
            st.totccnt = totccnt;
        }
        return more;
    }

    /**
     * {@code run_iter_bw_server}: the receiver of ib_send_bw. Receives were posted before the sync; each one
     * consumed is reposted (to the next address in the cycle) until -n have been posted per QP.
     *
     * @param recvBase per QP, the address of its first receive buffer
     * @param posted   per QP, receives posted so far ({@code ctx->rposted}); updated
     */
    void runReceiver(long[] recvBase, long[] nextRecv, long[] posted) {
        final int numQps = p.numQps;
        final boolean duration = p.testType == TestType.DURATION;
        final long iters = p.iters;
        final long totIters = iters * numQps;
        final int recvLength = (int) (p.size + (layout.ud ? 40 : 0));
        final boolean cycle = layout.cycles(recvLength);
        final long inc = BufferLayout.inc(p.size, layout.cacheLine);
        final long slots = layout.slots(p.size);
        final Qp[] qps = new Qp[numQps];
        final int[] lkeys = new int[numQps];
        for (int i = 0; i < numQps; i++) {
            qps[i] = res.qp(i);
            lkeys[i] = res.lkey(layout.mrOf(i));
        }
        Receiver st = new Receiver(qps, lkeys, recvBase, nextRecv, posted, recvLength, cycle, inc, slots, totIters);
        try {
            while (receiverRounds(st)) {
                // the rounds run in receiverRounds: see LatencyRunner.ROUNDS
            }
        } finally {
            if (timer != null) {
                timer.cancel();
            }
        }
        if (duration) {
            tposted[0] = timer.sampleStart();
            tcompleted[0] = timer.sampleEnd();
            measuredIters = st.counted;
        } else {
            tcompleted[0] = System.nanoTime();
            measuredIters = iters;
        }
    }

    /** The receiver's state between calls of {@link #receiverRounds}. */
    private static final class Receiver {
        final Qp[] qps;
        final int[] lkeys;
        final long[] recvBase;
        final long[] nextRecv;
        final long[] posted;
        final int recvLength;
        final boolean cycle;
        final long inc;
        final long slots;
        final long totIters;
        long rcnt;
        long counted;
        boolean firstRx = true;
        long lastProgress = System.nanoTime();
        int idle;
        int idleCheck = 1;

        Receiver(Qp[] qps, int[] lkeys, long[] recvBase, long[] nextRecv, long[] posted, int recvLength,
                 boolean cycle, long inc, long slots, long totIters) {
            this.qps = qps;
            this.lkeys = lkeys;
            this.recvBase = recvBase;
            this.nextRecv = nextRecv;
            this.posted = posted;
            this.recvLength = recvLength;
            this.cycle = cycle;
            this.inc = inc;
            this.slots = slots;
            this.totIters = totIters;
        }
    }

    /** Up to {@link LatencyRunner#ROUNDS} passes of {@code run_iter_bw_server}'s loop; false when it is over. */
    private boolean receiverRounds(Receiver st) {
        final boolean duration = p.testType == TestType.DURATION;
        final long iters = p.iters;
        final long totIters = st.totIters;
        final Cq cq = res.recvCq();
        final long[] posted = st.posted;
        final long[] nextRecv = st.nextRecv;
        DurationTimer t = timer; // -D: started at the first message received
        long rcnt = st.rcnt;
        boolean more = true;
        try {
            for (int round = 0; round < LatencyRunner.ROUNDS; round++) {
                if (!(rcnt < totIters || (duration && (t == null || t.state() != DurationTimer.END)))) {
                    more = false;
                    break;
                }
                if (p.useEvent && !peer.awaitEvent(cq, p.timeoutSeconds * 1000L)) {
                    throw receiveStall(rcnt, totIters);
                }
                int ne;
                do {
                    if (duration && t != null && t.state() == DurationTimer.END) {
                        break;
                    }
                    ne = cq.poll(VerbsEngine.Cq.BATCH);
                    if (ne > 0) {
                        st.idle = 0;
                        st.idleCheck = 1;
                        if (st.firstRx) {
                            st.firstRx = false;
                            if (duration) {
                                t = new DurationTimer();
                                timer = t;
                                t.start(p.duration, p.margin);
                            } else {
                                tposted[0] = System.nanoTime();
                            }
                        }
                        for (int i = 0; i < ne; i++) {
                            int wcId = (int) cq.wrId(i);
                            if (cq.status(i) != 0) {
                                throw completionError(cq, i, rcnt, rcnt, "server");
                            }
                            rcnt++;
                            if (duration && t.state() == DurationTimer.SAMPLE) {
                                st.counted++;
                            }
                            if (duration || posted[wcId] + 1 <= iters) {
                                int err = st.qps[wcId].postRecv(nextRecv[wcId], st.recvLength, st.lkeys[wcId], wcId);
                                if (err != 0) {
                                    throw new RunFailure("Couldn't post recv Qp=" + wcId + " rcnt=" + rcnt
                                            + " (" + Errno.describe(err) + ")");
                                }
                                posted[wcId]++;
                                if (st.cycle) {
                                    nextRecv[wcId] += st.inc;
                                    if ((posted[wcId] + 1) % st.slots == 0) {
                                        nextRecv[wcId] = st.recvBase[wcId];
                                    }
                                }
                            }
                        }
                    } else if (ne < 0) {
                        throw new RunFailure("Poll Receive CQ failed " + ne);
                    }
                } while (ne > 0);
                if (++st.idle == st.idleCheck) { // at 1, 2, 4, ... passes without a completion (see senderRounds)
                    st.idleCheck += Math.min(st.idleCheck, 1024);
                    long now = System.nanoTime();
                    if (st.idle == 1) {
                        st.lastProgress = now;
                    } else if (now - st.lastProgress > timeoutNanos) {
                        throw receiveStall(rcnt, totIters);
                    } else if (peer.gone(now, st.lastProgress)) {
                        throw new RunFailure(PeerWatch.message() + "\n Total Received=" + rcnt
                                + ", Total Iters Required=" + totIters);
                    }
                }
            }
        } finally {
            st.rcnt = rcnt;
        }
        return more;
    }

    private RunFailure receiveStall(long rcnt, long total) {
        return new RunFailure(" Did not get Message for " + p.timeoutSeconds + " Seconds, exiting..\n"
                + " Total Received=" + rcnt + ", Total Iters Required=" + total + "\n"
                + " (messages lost on UC/UD, or the sender stopped; check the peer's output and that -n, -q and "
                + "-s match)");
    }

    static RunFailure completionError(Cq cq, int i, long scnt, long ccnt, String side) {
        int status = cq.status(i);
        String name = cq.statusName(status);
        return new RunFailure(" Completion with error at " + side + "\n"
                + " Failed status " + status + ": wr_id " + (int) cq.wrId(i) + " syndrom 0x"
                + Integer.toHexString(cq.vendorErr(i)) + "\n"
                + (side.equals("client") ? "scnt=" + scnt + ", ccnt=" + ccnt : " rcnt=" + scnt) + "\n"
                + " (" + name + ": " + CompletionHints.hint(name) + ")");
    }
}
