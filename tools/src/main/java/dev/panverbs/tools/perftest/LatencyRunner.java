package dev.panverbs.tools.perftest;

import dev.panverbs.tools.perftest.PerftestParameters.TestType;
import dev.panverbs.tools.perftest.VerbsEngine.Cq;
import dev.panverbs.tools.perftest.VerbsEngine.Qp;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * The latency data paths: perftest's {@code run_iter_lat_write} (ping-pong of RDMA writes: each side spins on
 * the last byte of its buffer until the peer's write with the next counter value lands, then writes back),
 * {@code run_iter_lat} (ib_read_lat: the client reads, the server is passive) and {@code run_iter_lat_send}
 * (ping-pong of sends). Post times go to {@link #tposted} for {@link Statistics#latency}.
 */
final class LatencyRunner {
    /** Volatile byte access: the peer's NIC writes the polled byte behind the JIT's back. */
    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();
    /**
     * Rounds per call of the round methods. The timed loop must run code C2 compiled during the JIT warm-up
     * ({@link Warmup}). A single long loop gets only an OSR compilation, and C2 turns the branch that ends the
     * loop into an uncommon trap (it was never taken while compiling): at the end of the warm-up's run the OSR
     * code deoptimizes and is discarded, and the timed run starts interpreted and compiles again while it is
     * timed (seen on rxe with -Xlog:jit+compilation: "made not entrant: uncommon trap" at the loop's exit test).
     * A method called every few rounds is compiled normally, its returns are not traps, and the timed run calls
     * the compiled code from its first round. For the same reason each rare branch in the rounds (the timeout
     * checks of the spin loops) is one the warm-up takes too: C2 traps on a branch it never saw taken.
     */
    static final int ROUNDS = 8;
    /** The spin loops read the clock at 1, 2, 4, ... spins, then every this many. */
    private static final int MAX_CHECK_SPINS = 1 << 16;

    private final PerftestParameters p;
    private final Qp qp;
    private final Cq sendCq;
    private final Cq recvCq;
    private final long timeoutNanos;
    private final PeerWatch peer;
    final long[] tposted;
    long measuredIters;
    DurationTimer timer;
    /** The loop counters, kept here between batches of {@link #ROUNDS} rounds. */
    private long scnt;
    private long ccnt;
    private long rcnt;
    private long counted;
    private boolean firstRx;

    LatencyRunner(PerftestParameters p, VerbsEngine.Resources res) {
        this(p, res, PeerWatch.NONE);
    }

    /** @param peer ends a wait early when the peer has closed the exchange connection (exited or killed) */
    LatencyRunner(PerftestParameters p, VerbsEngine.Resources res, PeerWatch peer) {
        this.p = p;
        this.peer = peer;
        this.qp = res.qp(0);
        this.sendCq = res.sendCq();
        this.recvCq = res.recvCq();
        this.timeoutNanos = p.timeoutSeconds * 1_000_000_000L;
        this.tposted = new long[Math.max(1, p.iters)];
    }

    private DurationTimer startTimer() {
        DurationTimer t = new DurationTimer();
        timer = t;
        t.start(p.duration, p.margin);
        return t;
    }

    /**
     * ib_write_lat. {@code post} is the last byte of the message this side sends (local send area),
     * {@code poll} the last byte of the area the peer writes into.
     */
    void runWrite(MemorySegment buf, long postOffset, long pollOffset, long localAddr, long remoteAddr) {
        final boolean duration = p.testType == TestType.DURATION;
        final long[] local = {localAddr};
        final long[] remote = {remoteAddr};
        DurationTimer t = duration ? startTimer() : null;
        scnt = 0;
        ccnt = 0;
        rcnt = 0;
        counted = 0;
        try {
            boolean more = !p.isServer() || serverFirstWrite(buf, postOffset, local, remote, t, duration);
            while (more && writeRounds(buf, postOffset, pollOffset, local, remote, t, duration)) {
                // the rounds run in writeRounds: see ROUNDS
            }
        } finally {
            if (t != null) {
                t.cancel();
            }
        }
        measuredIters = duration ? counted : p.iters;
        if (duration) {
            keepAnswering(buf, pollOffset, postOffset, local, remote, rcnt, scnt, scnt - ccnt);
        }
    }

    /**
     * The server's first round of the write ping-pong: it writes first, with nothing to wait for; false when the run
     * is over. Peeled out of {@link #writeRounds}, where "first round" was a branch taken once per run: when C2
     * compiled the rounds inside a short warm-up it had never seen that branch taken and made it an uncommon trap,
     * which the timed run's first round then hit (seen on rxe: the server's writeRounds "made not entrant: uncommon
     * trap", unstable_if, and the next 8 s of a 16 s timed section in tier-3 code, perf/README.md issue 9).
     */
    private boolean serverFirstWrite(MemorySegment buf, long postOffset, long[] local, long[] remote,
                                     DurationTimer t, boolean duration) {
        if (p.iters > 0 || duration) {
            postWrite(buf, postOffset, local, remote, ++scnt, duration);
        }
        if (duration && t.state() == DurationTimer.END) {
            return false;
        }
        if (ccnt < p.iters || duration) {
            waitSend(scnt, ccnt);
            ccnt++;
            if (duration && t.state() == DurationTimer.SAMPLE) {
                counted++;
            }
        }
        return true;
    }

    /** Up to {@link #ROUNDS} rounds of the write ping-pong; false when the run is over. */
    private boolean writeRounds(MemorySegment buf, long postOffset, long pollOffset, long[] local, long[] remote,
                                DurationTimer t, boolean duration) {
        final long iters = p.iters;
        long scnt = this.scnt;
        long ccnt = this.ccnt;
        long rcnt = this.rcnt;
        long counted = this.counted;
        boolean more = true;
        for (int k = 0; k < ROUNDS; k++) {
            if (!(scnt < iters || ccnt < iters || rcnt < iters || (duration && t.state() != DurationTimer.END))) {
                more = false;
                break;
            }
            if (rcnt < iters || duration) {
                rcnt++;
                awaitByte(buf, pollOffset, (byte) rcnt, t, rcnt);
            }
            if (scnt < iters || duration) {
                postWrite(buf, postOffset, local, remote, ++scnt, duration);
            }
            if (duration && t.state() == DurationTimer.END) {
                more = false;
                break;
            }
            if (ccnt < iters || duration) {
                waitSend(scnt, ccnt);
                ccnt++;
                if (duration && t.state() == DurationTimer.SAMPLE) {
                    counted++;
                }
            }
        }
        this.scnt = scnt;
        this.ccnt = ccnt;
        this.rcnt = rcnt;
        this.counted = counted;
        return more;
    }

    /**
     * Write number {@code n} of the ping-pong (its low byte is what the peer spins on), after -l's gap and with its
     * post time unless -D. One method for the peeled first round and the rounds: their branches here are the same.
     */
    private void postWrite(MemorySegment buf, long postOffset, long[] local, long[] remote, long n,
                           boolean duration) {
        if (p.latencyGap > 0) {
            gap();
        }
        if (!duration) {
            tposted[(int) (n - 1)] = System.nanoTime();
        }
        // opaque, as C's store through a volatile char *: no StoreLoad fence (a locked instruction) per round trip; the
        // post's downcalls, which read the byte, cannot move before it (C2 keeps memory accesses on either side of a call)
        BYTE.setOpaque(buf, postOffset, (byte) n);
        int err = qp.post(1, local, remote, 1, 0);
        if (err != 0) {
            throw new RunFailure("Couldn't post send: scnt=" + n + " (" + Errno.describe(err) + ")");
        }
    }

    /** Spins until the peer's write number {@code n} (its low byte {@code want}) lands, or -D ends. */
    private void awaitByte(MemorySegment buf, long pollOffset, byte want, DurationTimer t, long n) {
        int spins = 0;
        int check = 1;
        long since = 0;
        while ((byte) BYTE.getVolatile(buf, pollOffset) != want && (t == null || t.state() != DurationTimer.END)) {
            if (++spins == check) { // at 1, 2, 4, ... spins: a branch every wait takes (see ROUNDS)
                check += Math.min(check, MAX_CHECK_SPINS);
                long now = System.nanoTime();
                if (since == 0) {
                    since = now;
                } else if (now - since > timeoutNanos) {
                    throw new RunFailure(" The peer's write number " + n + " did not arrive within "
                            + p.timeoutSeconds + " s: is the peer still running, with the same -n and -s?");
                } else if (peer.gone(now, since)) {
                    throw new RunFailure(PeerWatch.message() + " (waiting for its write number " + n + ")");
                }
            }
        }
    }

    /**
     * After -D ends here, keep answering the peer's writes for a moment: its clock ends a little later, and
     * perftest's write_lat can spin on its receive byte without re-reading its end-of-test state, so a peer
     * that stops answering first may leave it stuck. Nothing is measured; errors are ignored.
     */
    private void keepAnswering(MemorySegment buf, long pollOffset, long postOffset, long[] local, long[] remote,
                               long rcnt, long scnt, long outstanding) {
        long end = System.nanoTime() + 1_000_000_000L;
        long quietSince = System.nanoTime();
        while (System.nanoTime() < end && System.nanoTime() - quietSince < 300_000_000L) {
            int ne = sendCq.poll(VerbsEngine.Cq.BATCH);
            if (ne > 0) {
                outstanding -= ne;
            }
            // TX depth is 1: answer only once the previous write has completed
            if (outstanding <= 0 && (byte) BYTE.getVolatile(buf, pollOffset) == (byte) (rcnt + 1)) {
                rcnt++;
                BYTE.setOpaque(buf, postOffset, (byte) ++scnt);
                if (qp.post(1, local, remote, 1, 0) != 0) {
                    return;
                }
                outstanding = 1;
                quietSince = System.nanoTime();
            }
            Thread.onSpinWait();
        }
    }

    /** ib_read_lat client: read, wait for its completion, repeat. */
    void runRead(long localAddr, long remoteAddr) {
        final boolean duration = p.testType == TestType.DURATION;
        final long[] local = {localAddr};
        final long[] remote = {remoteAddr};
        DurationTimer t = duration ? startTimer() : null;
        scnt = 0;
        counted = 0;
        try {
            while (readRounds(local, remote, t, duration)) {
                // the rounds run in readRounds: see ROUNDS
            }
        } finally {
            if (t != null) {
                t.cancel();
            }
        }
        measuredIters = duration ? counted : p.iters;
    }

    /** Up to {@link #ROUNDS} reads; false when the run is over. */
    private boolean readRounds(long[] local, long[] remote, DurationTimer t, boolean duration) {
        final long iters = p.iters;
        long scnt = this.scnt;
        long counted = this.counted;
        boolean more = true;
        for (int k = 0; k < ROUNDS; k++) {
            if (!(scnt < iters || (duration && t.state() != DurationTimer.END))) {
                more = false;
                break;
            }
            if (p.latencyGap > 0) {
                gap();
            }
            if (!duration) {
                tposted[(int) scnt++] = System.nanoTime();
            }
            int err = qp.post(1, local, remote, 1, 0);
            if (err != 0) {
                throw new RunFailure("Couldn't post send: scnt=" + scnt + " (" + Errno.describe(err) + ")");
            }
            if (duration && t.state() == DurationTimer.END) {
                more = false;
                break;
            }
            if (p.useEvent && !peer.awaitEvent(sendCq, p.timeoutSeconds * 1000L)) {
                throw new RunFailure(" No completion event for " + p.timeoutSeconds + " s");
            }
            waitSend(scnt, scnt);
            if (duration && t.state() == DurationTimer.SAMPLE) {
                counted++;
            }
        }
        this.scnt = scnt;
        this.counted = counted;
        return more;
    }

    /**
     * ib_send_lat: the server waits for the client's message before answering; every received message is
     * followed by reposting its receive while more are expected.
     */
    void runSend(long localAddr, long recvAddr, int recvLength, int lkey, int rxDepth) {
        final boolean duration = p.testType == TestType.DURATION;
        final long[] local = {localAddr};
        final long[] none = {0};
        scnt = 0;
        rcnt = 0;
        counted = 0;
        firstRx = true;
        try {
            boolean more = !p.isClient() || clientFirstSend(local, none, duration);
            while (more && sendRounds(local, none, recvAddr, recvLength, lkey, rxDepth, duration)) {
                // the rounds run in sendRounds: see ROUNDS
            }
        } finally {
            if (timer != null) {
                timer.cancel();
            }
        }
        measuredIters = duration ? counted : p.iters;
    }

    /**
     * The client's first round of the send ping-pong: it sends first, with nothing to receive; false when the run is
     * over. Peeled out of {@link #sendRounds} for the reason given at {@link #serverFirstWrite}.
     */
    private boolean clientFirstSend(long[] local, long[] none, boolean duration) {
        if (p.iters > 0 || duration) { // -D: the timer starts at the first message received
            if (p.latencyGap > 0) {
                gap();
            }
            if (!duration) {
                tposted[0] = System.nanoTime();
            }
            scnt++;
            boolean signaled = scnt % p.cqMod == 0 || (!duration && scnt == p.iters);
            postSend(local, none, scnt, signaled);
        }
        return true;
    }

    /** Up to {@link #ROUNDS} rounds of the send ping-pong; false when the run is over. */
    private boolean sendRounds(long[] local, long[] none, long recvAddr, int recvLength, int lkey, int rxDepth,
                               boolean duration) {
        final long iters = p.iters;
        final int cqMod = p.cqMod;
        DurationTimer t = timer; // -D: started at the first message received
        long scnt = this.scnt;
        long rcnt = this.rcnt;
        long counted = this.counted;
        boolean more = true;
        for (int k = 0; k < ROUNDS; k++) {
            if (!(scnt < iters || rcnt < iters || (duration && (t == null || t.state() != DurationTimer.END)))) {
                more = false;
                break;
            }
            if (rcnt < iters || duration) {
                if (p.useEvent && !peer.awaitEvent(recvCq, p.timeoutSeconds * 1000L)) {
                    throw new RunFailure(" No message from the peer for " + p.timeoutSeconds + " s (received "
                            + received(rcnt) + ")");
                }
                int ne = awaitRecv(t, duration, rcnt);
                if (ne > 0) {
                    if (duration && firstRx) { // not "firstRx" alone: a branch taken once per run (clientFirstSend)
                        firstRx = false;
                        t = startTimer();
                    }
                    if (recvCq.status(0) != 0) {
                        throw BwRunner.completionError(recvCq, 0, rcnt, rcnt, "server");
                    }
                    rcnt++;
                    if (duration && t.state() == DurationTimer.SAMPLE) {
                        counted++;
                    }
                    if (duration || rcnt + rxDepth <= iters) {
                        int err = qp.postRecv(recvAddr, recvLength, lkey, 0);
                        if (err != 0) {
                            throw new RunFailure("Couldn't post recv: rcnt=" + rcnt + " ("
                                    + Errno.describe(err) + ")");
                        }
                    }
                } else if (ne < 0) {
                    throw new RunFailure("poll CQ failed " + ne);
                }
            }
            if (scnt < iters || (duration && t != null && t.state() != DurationTimer.END)
                    || (duration && t == null)) {
                if (p.latencyGap > 0) {
                    gap();
                }
                if (!duration) {
                    tposted[(int) scnt] = System.nanoTime();
                }
                scnt++;
                boolean signaled = scnt % cqMod == 0 || (!duration && scnt == iters);
                if (duration && t != null && t.state() == DurationTimer.END) {
                    more = false;
                    break;
                }
                postSend(local, none, scnt, signaled);
            }
        }
        this.scnt = scnt;
        this.rcnt = rcnt;
        this.counted = counted;
        return more;
    }

    /**
     * Posts send number {@code n} of the ping-pong and, when signaled, waits for its completion. One method for the
     * peeled first round and the rounds: their branches here are the same.
     */
    private void postSend(long[] local, long[] none, long n, boolean signaled) {
        int err = qp.post(1, local, none, signaled ? 1 : 0, 0);
        if (err != 0) {
            throw new RunFailure("Couldn't post send: scnt=" + n + " (" + Errno.describe(err) + ")");
        }
        if (signaled) {
            if (p.useEvent && !peer.awaitEvent(sendCq, p.timeoutSeconds * 1000L)) {
                throw new RunFailure(" No send completion event for " + p.timeoutSeconds + " s");
            }
            waitSend(n, n);
        }
    }

    /** Polls the receive CQ for one completion: its count (0 when -D ended first, negative on error). */
    private int awaitRecv(DurationTimer t, boolean duration, long rcnt) {
        int spins = 0;
        int check = 1;
        long since = 0;
        int ne;
        do {
            ne = recvCq.poll(1);
            if (duration && t != null && t.state() == DurationTimer.END) {
                break;
            }
            if (ne == 0 && ++spins == check) { // at 1, 2, 4, ... spins: a branch every wait takes (see ROUNDS)
                check += Math.min(check, MAX_CHECK_SPINS);
                long now = System.nanoTime();
                if (since == 0) {
                    since = now;
                } else if (now - since > timeoutNanos) {
                    throw new RunFailure(" No message from the peer for " + p.timeoutSeconds
                            + " s (received " + received(rcnt) + "): is it still running, with the"
                            + " same -n and -s? (UC/UD messages can be lost)");
                } else if (peer.gone(now, since)) {
                    throw new RunFailure(PeerWatch.message() + " (received " + received(rcnt) + ")");
                }
            }
        } while (ne == 0);
        return ne;
    }

    /** "5 of 20" with -n, "5" with -D (which has no count to reach). */
    private String received(long rcnt) {
        return p.testType == TestType.DURATION ? Long.toString(rcnt) : rcnt + " of " + p.iters;
    }

    private void waitSend(long scnt, long ccnt) {
        int spins = 0;
        int check = 1;
        long since = 0;
        int ne;
        do {
            ne = sendCq.poll(1);
            if (ne == 0 && ++spins == check) { // at 1, 2, 4, ... spins: a branch every wait takes (see ROUNDS)
                check += Math.min(check, MAX_CHECK_SPINS);
                long now = System.nanoTime();
                if (since == 0) {
                    since = now;
                } else if (now - since > timeoutNanos) {
                    throw new RunFailure(" No send completion for " + p.timeoutSeconds + " s (scnt=" + scnt
                            + "): the peer is gone or not ready");
                } else if (peer.gone(now, since)) {
                    throw new RunFailure(PeerWatch.message() + " (scnt=" + scnt + ")");
                }
            }
        } while (ne == 0);
        if (ne < 0) {
            throw new RunFailure("poll CQ failed " + ne);
        }
        if (sendCq.status(0) != 0) {
            throw BwRunner.completionError(sendCq, 0, scnt, ccnt, "client");
        }
    }

    /** --latency_gap: busy wait that many microseconds before each post. */
    private void gap() {
        long end = System.nanoTime() + p.latencyGap * 1000L;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }

    /** Ticks of the -D sample window. */
    long sampleTicks() {
        return timer.sampleEnd() - timer.sampleStart();
    }
}
