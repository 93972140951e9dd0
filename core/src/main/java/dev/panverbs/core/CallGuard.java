package dev.panverbs.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Marks the thread that is inside a provider call on one queue (a CQ's {@code ibv_poll_cq} or open
 * {@code ibv_start_poll} pass, a QP's {@code ibv_post_send}/{@code ibv_post_recv} or open {@code ibv_wr_start}
 * batch), so that:
 * <ul>
 *   <li>{@code close()} on another thread waits for the call to return before the destroy verb frees the
 *       provider's memory under it. Without this, a poller that passed the open check just before
 *       {@code ibv_destroy_cq} unmapped the CQ ring dies with SIGSEGV (seen on rxe: busy-poll on one thread,
 *       {@code Context.close()} on another);</li>
 *   <li>a second call while the mark is held is refused instead of deadlocking or corrupting the queue: on the
 *       same thread, {@code ibv_poll_cq} inside an open {@code ibv_start_poll} pass (or {@code ibv_post_send}
 *       inside an open {@code ibv_wr_start} batch) spins forever on the provider's own spinlock; on another
 *       thread, two pollers break the single-consumer bookkeeping of completions.</li>
 * </ul>
 *
 * <p>Protocol (Dekker-style, asymmetric to keep the hot path free of fences): the caller publishes itself with an
 * opaque store, checks that the object is open (one volatile read), calls, and clears with a release store. The
 * closer first marks the object closing (the volatile CAS of {@code Resource.close}), then waits until no caller is
 * published. A caller that saw the object open has published its mark before the closer looked, except within the
 * CPU's store buffer (nanoseconds, after which the closer still has to finish a destroy syscall while that call
 * runs); a full fence would close that window at the price of a locked instruction per call, which poll and post do
 * not pay. The concurrent-caller check is best effort for the same reason (read then write, not a CAS).
 *
 * <p>The closer waits at most {@link #AWAIT_NANOS}; a holder that is still inside after that (a thread blocked for
 * seconds inside an open pass or batch) makes the destroy refuse, leaking the native object rather than freeing
 * memory in use. A holder thread that has died cannot be inside a call and is ignored.
 */
final class CallGuard {
    /** How long {@code close()} waits for a call in progress on another thread. */
    static final long AWAIT_NANOS = TimeUnit.SECONDS.toNanos(5);

    private static final VarHandle CALLER;

    static {
        try {
            CALLER = MethodHandles.lookup().findVarHandle(CallGuard.class, "caller", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // through CALLER
    private Thread caller;

    /** Hot path: marks {@code me} as inside a call; {@code false} (nothing marked) when a call already holds it. */
    boolean enter(Thread me) {
        if (CALLER.getOpaque(this) != null) {
            return false;
        }
        CALLER.setOpaque(this, me);
        return true;
    }

    /** Hot path: the call returned. */
    void exit() {
        CALLER.setRelease(this, (Thread) null);
    }

    /** Whether {@code me} holds the mark (an open pass or batch of this thread). */
    boolean heldBy(Thread me) {
        return CALLER.getOpaque(this) == me;
    }

    /** The thread holding the mark, or null (messages only). */
    Thread holder() {
        return (Thread) CALLER.getVolatile(this);
    }

    /**
     * Closer side, after the object has been marked closing: waits until no other live thread holds the mark.
     * A mark held by the calling thread itself (an open pass or batch it is abandoning) is cleared.
     *
     * @return null when idle, else the thread still holding the mark after {@link #AWAIT_NANOS}
     */
    Thread awaitIdle() {
        Thread me = Thread.currentThread();
        long deadline = System.nanoTime() + AWAIT_NANOS;
        for (int spins = 0; ; spins++) {
            Thread t = (Thread) CALLER.getVolatile(this);
            if (t == null) {
                return null;
            }
            if (t == me || !t.isAlive()) {
                CALLER.compareAndSet(this, t, (Thread) null);
                return null;
            }
            if (System.nanoTime() - deadline > 0) {
                return t;
            }
            if (spins < 1000) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(100_000);
            }
        }
    }

    /** The destroy verb's refusal when {@link #awaitIdle()} timed out (cold). */
    static IllegalStateException stillInUse(String object, String verb, Thread holder) {
        return new IllegalStateException(verb + ": " + object + " is still in use by thread \"" + holder.getName()
                + "\" (inside a provider call, or an open poll pass / send batch) after "
                + TimeUnit.NANOSECONDS.toSeconds(AWAIT_NANOS) + " s; it was not destroyed, and its native memory is "
                + "leaked rather than freed under that call. End the pass or batch (or stop polling/posting) before "
                + "closing it from another thread");
    }
}
