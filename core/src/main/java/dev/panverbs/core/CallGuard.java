package dev.panverbs.core;

import dev.panverbs.core.internal.DirectPath;
import dev.panverbs.core.internal.Handshake;
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
 * <p>Protocol (Dekker-style, asymmetric to keep the hot path free of fences): the caller publishes its thread id
 * with a release store (a plain store on x86; a primitive, so no GC barrier), checks that the object is open (one
 * volatile read), calls, and clears with a release store. The closer first marks the object closing (the volatile
 * CAS of {@code Resource.close}), runs the closer side of {@link Handshake} ({@code membarrier(2)} where it works),
 * then waits until no caller is published. A post runs the post side of {@link Handshake} after its mark and before
 * its state re-check, so a post that saw the object open has published its mark before the closer looked. A poll has
 * no barrier there: it may be missed within its store buffer or a compiler reordering of the two accesses
 * (nanoseconds, after which the closer still has to finish a destroy syscall while that call runs), which a
 * fence per poll would close at the price of a locked instruction. The concurrent-caller check is best effort for
 * the same reason (read then write, not a CAS).
 *
 * <p>The closer waits at most {@link #AWAIT_NANOS}; a holder that is still inside after that (a thread blocked for
 * seconds inside an open pass or batch) makes the destroy refuse, leaking the native object rather than freeing
 * memory in use. A holder thread that has died cannot be inside a call and is ignored.
 */
final class CallGuard extends DirectPath.Guard {
    /** How long {@code close()} waits for a call in progress on another thread. */
    static final long AWAIT_NANOS = TimeUnit.SECONDS.toNanos(5);

    private static final VarHandle CALLER;

    static {
        try {
            // not withInvokeExactBehavior(): the call sites are typed exactly, and the exact check parses
            // VarHandle.accessModeType into every post and poll (C2's inlining node budget)
            CALLER = MethodHandles.lookup().findVarHandle(CallGuard.class, "caller", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * The mark: the {@link Thread#threadId()} of the thread inside a call, 0 when none. A primitive, not the
     * {@code Thread}: storing a reference into this (old-generation) object runs G1's post-write barrier, whose
     * StoreLoad fence (a locked instruction) cost every post and poll as much as a full fence.
     */
    @SuppressWarnings("unused") // through CALLER
    private long caller;
    /**
     * The thread whose id {@link #caller} holds, for the closer's liveness check and for messages. Written by
     * {@link #enter} only when a different thread enters (a reference store, so not per call), before the mark is
     * released: whoever reads the mark with acquire semantics and then this field sees that thread. It starts as
     * the thread that created the queue, the usual caller: a queue created and used on one thread never takes that
     * branch. When it started null, every queue took it once, at its first call, mostly in code that records no
     * branch profile: C2 compiled it as an uncommon trap, and a fresh CQ's first poll inside a timed loop deoptimized
     * that loop (perf/README.md, issue 9, rxe, seventh round).
     */
    private Thread callerThread = Thread.currentThread();
    /**
     * A poll pass is open on the holder thread: the per-completion calls check this plain flag instead of the mark
     * (no thread lookup per read). Written by the holder; cleared by {@link #awaitIdle()} when the holder closes the
     * object itself, so its later reads fail instead of reaching freed provider memory.
     */
    boolean open;

    /** Hot path: marks {@code me} as inside a call; {@code false} (nothing marked) when a call already holds it. */
    boolean enter(Thread me) {
        if ((long) CALLER.getOpaque(this) != 0L) {
            return false;
        }
        if (callerThread != me) { // rare: another thread than the last one
            callerThread = me;
        }
        CALLER.setRelease(this, me.threadId()); // a plain store on x86 and no barrier: the field is a primitive
        return true;
    }

    /** Hot path: the call returned. */
    void exit() {
        CALLER.setRelease(this, 0L);
    }

    /** Whether {@code me} holds the mark (an open pass or batch of this thread). */
    boolean heldBy(Thread me) {
        return (long) CALLER.getOpaque(this) == me.threadId();
    }

    /** {@link #heldBy} the current thread (the direct queues' per-WR check). */
    @Override
    public boolean heldByMe() {
        return heldBy(Thread.currentThread());
    }

    /** The thread holding the mark, or null (messages only). */
    Thread holder() {
        long id = (long) CALLER.getVolatile(this);
        Thread t = callerThread;
        return id != 0L && t != null && t.threadId() == id ? t : null;
    }

    /**
     * Closer side, after the object has been marked closing: waits until no other live thread holds the mark.
     * A mark held by the calling thread itself (an open pass or batch it is abandoning) is cleared.
     *
     * @return null when idle, else the thread still holding the mark after {@link #AWAIT_NANOS}
     */
    Thread awaitIdle() {
        Handshake.closerSide(); // after the closing mark, before reading the mark of a caller
        Thread me = Thread.currentThread();
        long deadline = System.nanoTime() + AWAIT_NANOS;
        for (int spins = 0; ; spins++) {
            long id = (long) CALLER.getVolatile(this);
            if (id == 0L) {
                return null;
            }
            Thread t = callerThread; // written before the mark was released: the holder of id, or a newer one
            if (t != null && t.threadId() == id && (t == me || !t.isAlive())) {
                open = false;
                CALLER.compareAndSet(this, id, 0L);
                return null;
            }
            if (System.nanoTime() - deadline > 0) {
                return t != null ? t : me; // never null: callerThread is written before any mark
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
