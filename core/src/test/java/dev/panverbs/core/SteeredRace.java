package dev.panverbs.core;

import dev.panverbs.core.internal.Handshake;
import java.util.EnumSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;

/**
 * A close on the calling thread against an operation on a second thread, many rounds over: both sides spin on one
 * counter, so they start together, and the close first spins for a head start steered each round towards where the two
 * overlap (the operation won: shorter; the close won: longer), with a random jitter around it. What the rounds assert
 * is up to their {@link Round}; the close/post races of {@link CloseRaceHostTest} and
 * {@link WindowForcedCloseRaceHostTest} run here, and the region close/UMR race of the mlx5 package's
 * {@code IndirectMkeyHostTest} (hence public).
 */
public final class SteeredRace {
    private SteeredRace() {
    }

    /** The number of rounds of each race ({@code -Dpanverbs.closeRaceRounds}). */
    static final int ROUNDS = Integer.getInteger("panverbs.closeRaceRounds", 1500);

    /** One round's two sides, made fresh for each round. */
    public interface Round {
        /** The second thread's operation: whether it happened (false: refused). */
        boolean post();

        /** This thread's close: whether it happened (false: refused). */
        boolean close();

        /** After both, on this thread: assert the round's invariant, retire what was posted, close what is open. */
        void check(int round, boolean posted, boolean closed);
    }

    /** How the head start moves from one round to the next. */
    public enum Steering {
        /** One spin per round (closes whose cost is close to the operation's). */
        ADDITIVE(64, 4096) {
            @Override
            int next(int center, boolean posted, boolean closed) {
                return posted ? Math.max(0, center - 1) : closed ? Math.min(max, center + 1) : center;
            }
        },
        /** An eighth per round (closes that cost orders of magnitude more than the operation, or less). */
        MULTIPLICATIVE(64, 1 << 20) {
            @Override
            int next(int center, boolean posted, boolean closed) {
                return posted ? center - (center >> 3) : Math.min(max, center + (center >> 3) + 1);
            }
        };

        final int start;
        final int max;

        Steering(int start, int max) {
            this.start = start;
            this.max = max;
        }

        abstract int next(int center, boolean posted, boolean closed);
    }

    /**
     * Runs {@link #ROUNDS} rounds of {@code setup}'s round and prints how they ended. Returns the outcomes indexed by
     * {@code (posted ? 1 : 0) + (closed ? 2 : 0)}.
     */
    public static int[] run(String what, Steering steering, IntFunction<Round> setup) {
        AtomicInteger go = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        AtomicInteger ready = new AtomicInteger(); // the poster spins for this round (so it runs when go moves)
        AtomicReference<Round> current = new AtomicReference<>();
        boolean[] posted = new boolean[ROUNDS + 1];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread poster = Thread.ofPlatform().name("poster").start(() -> {
            try {
                for (int r = 1; r <= ROUNDS; r++) {
                    ready.set(r);
                    await(go, r);
                    if (go.get() == Integer.MAX_VALUE) { // the closer stopped (a failed round)
                        return;
                    }
                    posted[r] = current.get().post();
                    done.set(r);
                }
            } catch (Throwable t) {
                failure.set(t);
                done.set(Integer.MAX_VALUE);
            }
        });
        int[] outcomes = new int[4];
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        int center = steering.start; // the close's head start in spins
        try {
            for (int r = 1; r <= ROUNDS && failure.get() == null; r++) {
                Round round = setup.apply(r);
                current.set(round);
                int delay = Math.max(0, center + rnd.nextInt(-8, 9));
                await(ready, r);
                go.set(r);
                for (int i = 0; i < delay; i++) {
                    Thread.onSpinWait();
                }
                boolean closed = round.close();
                await(done, r);
                if (failure.get() != null) {
                    break;
                }
                boolean p = posted[r];
                outcomes[(p ? 1 : 0) + (closed ? 2 : 0)]++;
                center = steering.next(center, p, closed);
                round.check(r, p, closed);
            }
        } finally {
            go.set(Integer.MAX_VALUE);
            try {
                poster.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (failure.get() != null) {
            throw new AssertionError(what + ": the poster thread failed", failure.get());
        }
        System.out.printf("%s (%s): %d rounds: post only %d, close only %d, both %d, both refused %d%n", what,
                Handshake.ASYMMETRIC ? "membarrier" : "full fences", ROUNDS, outcomes[1], outcomes[2], outcomes[3],
                outcomes[0]);
        return outcomes;
    }

    /** Spins until {@code counter} reaches {@code round}; yields after a long while (a loaded host). */
    private static void await(AtomicInteger counter, int round) {
        for (int spins = 0; counter.get() < round; spins++) {
            if (spins < 1 << 20) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    /** A window operation of round {@code r} naming {@code mw}, over {@code mr}: what the window races post. */
    interface WindowOp {
        void post(QueuePair qp, MemoryWindow mw, MemoryRegion mr, int r);
    }

    private static final EnumSet<Access> WRITE = EnumSet.of(Access.REMOTE_WRITE);

    /** A batch's {@code ibv_wr_bind_mw} (type 2), with a pause between the build (the provider read the window) and the submit. */
    static final WindowOp BATCH_BIND = (qp, mw, mr, r) -> {
        try (PostBatch b = qp.startSend()) {
            b.bindMw(r, SendFlag.SIGNALED_BIT, mw, MemoryWindow.nextRkey(mw.rkey()), mr, 0, 4096, WRITE);
            Thread.onSpinWait();
            b.submit();
        }
    };
    /** A chain's {@code IBV_WR_BIND_MW} through {@code ibv_post_send} (type 2). */
    static final WindowOp CHAIN_BIND = (qp, mw, mr, r) -> qp.sendRequests().bindMw(r, SendFlag.SIGNALED_BIT, mw,
            MemoryWindow.nextRkey(mw.rkey()), mr, 0, 4096, WRITE).post();
    /** A type 1 {@code ibv_bind_mw}. */
    static final WindowOp TYPE_1_BIND = (qp, mw, mr, r) -> mw.bind(qp, r, SendFlag.SIGNALED_BIT, mr, 0, 4096, WRITE);
}
