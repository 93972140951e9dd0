package dev.panverbs.core.internal;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.libc.Membarrier;
import java.lang.invoke.VarHandle;
import java.util.function.IntUnaryOperator;

/**
 * The two fences of the close/post handshake (Dekker): a post stores its references (the tracker's tail, its call
 * guard's mark), then loads the state of what they name (a key's snapshot, an AH's mark, the queue's open state); a
 * close stores that state (closing), then loads the references. Each side needs StoreLoad ordering between its store
 * and its load, so that either the post sees the close and refuses, or the close sees the post and refuses (or waits).
 *
 * <p>Asymmetric when Linux's {@code membarrier(2)} works here (decided once, at class init, into
 * {@link #ASYMMETRIC}, which C2 folds): the closer calls {@code membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)}, which
 * runs a full barrier on every running thread of the process before it returns, and the post, which runs millions of
 * times more often, needs only a compiler barrier ({@code membarrier(2)}: "replace smp_mb() with barrier() on the fast
 * path"; HotSpot's {@code -XX:+UseSystemMemoryBarrier} does the same for its thread-state transitions). Why that holds:
 * the barrier the closer forces on the posting thread lands at an instruction boundary of it, either before the post's
 * store (then it is ordered after the closer's store, and the post's later load sees it) or after the post's load
 * (then the post's store is globally visible when the closer's {@code membarrier} returns, before the closer loads).
 * Otherwise (another OS or architecture, an old kernel, a seccomp filter: {@code ENOSYS}, {@code EINVAL},
 * {@code EPERM}; or {@code -Ddev.panverbs.membarrier=false}), both sides run {@link VarHandle#fullFence()}.
 *
 * <p>The compiler barrier is {@link VarHandle#acquireFence()}: C2 intrinsifies it as a {@code MemBarCPUOrder} plus a
 * {@code LoadFence}, memory barriers over all memory slices (wide), so no load after it is scheduled before a store
 * before it; on x86 both encode to nothing (aarch64: {@code dmb ishld}). Its Java-level acquire semantics are not
 * what is relied on: the membarrier supplies the hardware ordering.
 */
public final class Handshake {
    /** Whether the closer's {@code membarrier} replaces the post's full fence (see the class comment). */
    public static final boolean ASYMMETRIC =
            decide(System.getProperty("dev.panverbs.membarrier"), Membarrier::call);

    private Handshake() {}

    /**
     * Whether to run asymmetric: not when {@code forced} is "false", else when {@code membarrier} (the syscall:
     * {@code cmd} → result or {@code -errno}) supports the private expedited command and registering for it succeeds.
     */
    static boolean decide(String forced, IntUnaryOperator membarrier) {
        if ("false".equalsIgnoreCase(forced)) {
            return false;
        }
        int mask = membarrier.applyAsInt(Membarrier.CMD_QUERY);
        if (mask < 0 || (mask & Membarrier.CMD_PRIVATE_EXPEDITED) == 0
                || (mask & Membarrier.CMD_REGISTER_PRIVATE_EXPEDITED) == 0) {
            return false;
        }
        return membarrier.applyAsInt(Membarrier.CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
    }

    /**
     * Post side, between the store that publishes the post's references and the loads of the state they name:
     * a compiler barrier when {@link #ASYMMETRIC}, else a full fence. Hot path.
     */
    public static void postSide() {
        if (ASYMMETRIC) {
            VarHandle.acquireFence();
        } else {
            VarHandle.fullFence();
        }
    }

    /**
     * Closer side, between the store that marks the object closing and the loads of the posts' references:
     * {@code membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)} when {@link #ASYMMETRIC}, else a full fence. Control path
     * (a few microseconds). Throws {@link IllegalStateException} if the registered call fails (not seen; the caller
     * must then undo its mark: nothing may be destroyed without the barrier).
     */
    public static void closerSide() {
        if (!ASYMMETRIC) {
            VarHandle.fullFence();
            return;
        }
        int rc = Membarrier.call(Membarrier.CMD_PRIVATE_EXPEDITED);
        if (rc != 0) {
            throw new IllegalStateException("membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed: "
                    + Errno.name(-rc) + "; the close cannot order itself against concurrent posts and was not "
                    + "done");
        }
    }

    /**
     * {@link #closerSide()} right after the caller marked its object closing: if the barrier fails, runs {@code undo}
     * (clears that mark, so the object stays usable and a later close may try again), then rethrows.
     */
    public static void closerSide(Runnable undo) {
        try {
            closerSide();
        } catch (RuntimeException e) {
            undo.run();
            throw e;
        }
    }
}
