package dev.panverbs.core.internal;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The lifecycle of one native verbs object: its handle (the C pointer), the parents it depends on, the
 * children that depend on it, and the verb that destroys it. Every public verbs object
 * ({@code Context}, {@code ProtectionDomain}, {@code QueuePair}, an mlx5 DCI, a QP made by rdma_cm, ...)
 * holds exactly one {@code Resource} and delegates {@code close()} to it; it never subclasses anything.
 *
 * <h2>Rules</h2>
 * <ul>
 *   <li><b>Ownership.</b> {@link #adopt} takes ownership of a handle that a creation verb just returned.
 *       From then on only {@link #close()} destroys it (the garbage collector never does). If a parent was
 *       closed in the meantime, {@code adopt} destroys the handle itself and throws.</li>
 *   <li><b>Registry.</b> A resource registers with every parent it depends on (a QP with its PD, both CQs and
 *       its SRQ, as pyverbs' {@code add_ref} does) and holds them strongly, so a parent is never destroyed
 *       under a live child.</li>
 *   <li><b>Cascade.</b> {@code close()} first closes every live child, in {@link ResourceKind} order, newest
 *       first within a kind; then runs the destroyer; then unregisters from its parents.</li>
 *   <li><b>Idempotent.</b> A second {@code close()} (including the one that a cascade makes normal) does
 *       nothing. Unlike {@code Arena.close()}, a double close is not a bug here.</li>
 *   <li><b>Keep going.</b> When a child or the destroyer fails, the cascade continues; the first failure is
 *       thrown with the others suppressed (Agrona's {@code CloseHelper.closeAll}). The resource is closed
 *       even when its destroy verb failed: the exception says the native object may have leaked.</li>
 *   <li><b>After close</b> {@link #checkOpen} and {@link #handle(String)} throw {@link IllegalStateException}
 *       naming the object, the verb and, for a cascade, the parent that closed it.</li>
 * </ul>
 *
 * <p>Thread safety: all methods may be called from any thread. Registration and the cascade are
 * synchronised; {@link #checkOpen} is one volatile read for hot paths. Closing an object while another
 * thread is inside a verb on it is a caller error that this class does not prevent (C has the same rule):
 * the other thread's verb may run on a destroyed handle. The objects whose verbs block or spin (channels, async
 * events, CQ polling, QP posting) make their destroyer wait for, or wake, such a thread themselves; so does an
 * rdma_cm ID, whose every call holds a lock its destroy takes.
 */
public final class Resource implements AutoCloseable {

    /** Destroys the native object ({@code ibv_dealloc_pd}, ...); throws a {@code VerbsException} on failure. */
    @FunctionalInterface
    public interface Destroyer {
        void destroy(MemorySegment handle);
    }

    private static final int OPEN = 0;
    private static final int CLOSING = 1;
    private static final int CLOSED = 2;
    private static final long CHILD_CLOSE_WAIT_NANOS = 10_000_000_000L;
    private static final VarHandle STATE;
    private static final AtomicLong SEQUENCE = new AtomicLong();
    private static final Comparator<Resource> CLOSE_ORDER =
            Comparator.comparingInt((Resource r) -> r.kind.ordinal()).thenComparing(r -> -r.sequence);

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Resource.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ResourceKind kind;
    private final String description;
    private final long sequence = SEQUENCE.incrementAndGet();
    private volatile List<Resource> parents;
    private final Destroyer destroyer;
    private final Object owner;
    private final Set<Resource> children = new LinkedHashSet<>(); // guarded by itself
    private volatile int state = OPEN;
    private volatile MemorySegment handle;
    private volatile String closedBy;

    private Resource(ResourceKind kind, Object owner, String description, MemorySegment handle,
                     Destroyer destroyer, List<Resource> parents) {
        this.kind = kind;
        this.owner = owner;
        this.description = description;
        this.handle = handle;
        this.destroyer = destroyer;
        this.parents = parents;
    }

    /**
     * Takes ownership of {@code handle}, just returned by a creation verb, and registers with each parent.
     *
     * @param kind        what the object is; decides the cascade order among siblings
     * @param owner       the public Java object that holds this resource (found again by {@link #findOwner})
     * @param description how messages name it, e.g. {@code ProtectionDomain[0x5574a0 on rxe0]}
     * @param handle      the native pointer; never {@code NULL}
     * @param destroyer   the destroy verb, run exactly once by {@link #close()}
     * @param parents     the resources this one depends on (none for a {@code Context})
     * @throws IllegalStateException if a parent is no longer open; the handle has then been destroyed
     */
    public static Resource adopt(ResourceKind kind, Object owner, String description, MemorySegment handle,
                                 Destroyer destroyer, Resource... parents) {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(destroyer, "destroyer");
        if (handle == null || handle.address() == 0) {
            throw new IllegalArgumentException("adopting a NULL handle for " + description);
        }
        List<Resource> parentList = List.copyOf(Arrays.asList(parents));
        Resource r = new Resource(kind, owner, description, handle, destroyer, parentList);
        List<Resource> registered = new ArrayList<>(parentList.size());
        for (Resource parent : parentList) {
            if (!parent.addChild(r)) {
                for (Resource p : registered) {
                    p.removeChild(r);
                }
                IllegalStateException closed = parent.closedException("create " + description);
                try {
                    destroyer.destroy(handle);
                } catch (RuntimeException e) {
                    closed.addSuppressed(e);
                }
                throw closed;
            }
            registered.add(parent);
        }
        return r;
    }

    /** Throws {@link IllegalStateException} naming this object and {@code verb} unless it is open. Hot-path cheap. */
    public void checkOpen(String verb) {
        if (state != OPEN) {
            throw closedException(verb);
        }
    }

    /** Whether {@link #close()} has started. */
    public boolean isClosed() {
        return state != OPEN;
    }

    /**
     * {@link #isClosed()} as a plain read: no ordering, so the JIT may keep it in a register. For per-WR checks
     * that only give an early, friendlier error, where the post re-reads the state (ordered) before the provider.
     */
    public boolean isClosedRelaxed() {
        return (int) STATE.get(this) != OPEN;
    }

    /** The native handle for a call of {@code verb}; throws {@link IllegalStateException} after close. */
    public MemorySegment handle(String verb) {
        MemorySegment h = handle;
        if (state != OPEN) {
            throw closedException(verb);
        }
        return h;
    }

    /** The native handle without a liveness check ({@code NULL} after close), for diagnostics and tests. */
    public MemorySegment rawHandle() {
        return handle;
    }

    public ResourceKind kind() {
        return kind;
    }

    /** How messages name this object, e.g. {@code ProtectionDomain[0x5574a0 on rxe0]}. */
    public String description() {
        return description;
    }

    /** The public object that holds this resource. */
    public Object owner() {
        return owner;
    }

    /** The parents this resource depends on, in the order given to {@link #adopt}. */
    public List<Resource> parents() {
        return parents;
    }

    /** A snapshot of the live children. */
    public List<Resource> children() {
        synchronized (children) {
            return List.copyOf(children);
        }
    }

    /**
     * The owner of the live descendant of {@code kind} whose handle address is {@code address}, or
     * {@code null}: how an async event's or a completion event's C pointer is turned back into the Java
     * object (control path only; walks the registry).
     */
    public Object findOwner(ResourceKind kind, long address) {
        Deque<Resource> work = new ArrayDeque<>(children());
        Set<Resource> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        while (!work.isEmpty()) {
            Resource r = work.pop();
            if (!seen.add(r)) {
                continue;
            }
            MemorySegment h = r.handle;
            if (r.kind == kind && r.state == OPEN && h.address() == address) {
                return r.owner;
            }
            work.addAll(r.children());
        }
        return null;
    }

    /**
     * A child that another thread is closing at the same time as this parent's cascade: the parent's destroy
     * verb must wait for the child's ({@code ibv_dealloc_pd} under a QP whose {@code ibv_destroy_qp} is still
     * running on the other thread fails with EBUSY). Bounded, so that a caller holding a lock the other closer
     * needs cannot deadlock here; past the bound the parent's destroy runs and reports what the provider says. Also
     * for an arena tie that must not let the JDK free memory while another thread's destroy verb still runs.
     */
    public void awaitClosed() {
        if (state == CLOSED) {
            return;
        }
        long deadline = System.nanoTime() + CHILD_CLOSE_WAIT_NANOS;
        for (int spins = 0; state != CLOSED && System.nanoTime() - deadline < 0; spins++) {
            if (spins < 1_000) {
                Thread.onSpinWait();
            } else {
                java.util.concurrent.locks.LockSupport.parkNanos(50_000);
            }
        }
    }

    /**
     * {@link #awaitClosed()} without the bound, for the closes that must not give up: an arena tie (the JDK frees the
     * memory once the tie's action returns, whatever it throws) waiting for another thread's destroy verb of an object
     * that keeps the memory reachable. That verb runs no application code, so it ends. Keeps an interrupt pending.
     */
    public void awaitClosedUnbounded() {
        boolean interrupted = false;
        for (int spins = 0; state != CLOSED; spins++) {
            if (spins < 1_000) {
                Thread.onSpinWait();
            } else {
                java.util.concurrent.locks.LockSupport.parkNanos(50_000);
                interrupted |= Thread.interrupted(); // parkNanos returns at once while the flag is set
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Closes the live children, then destroys the native object, then unregisters from the parents.
     * Idempotent: returns at once if the resource is already closed or being closed by another thread. A child
     * being closed by another thread is waited for (up to 10 s) before this object's own destroy verb.
     *
     * @throws RuntimeException the first failure of the cascade, the others suppressed
     */
    @Override
    public void close() {
        close(null);
    }

    private void close(Resource cause) {
        if (!STATE.compareAndSet(this, OPEN, CLOSING)) {
            return;
        }
        if (cause != null) {
            closedBy = cause.description;
        }
        Throwable failure = null;
        Resource[] snapshot;
        synchronized (children) {
            snapshot = children.toArray(new Resource[0]);
        }
        Arrays.sort(snapshot, CLOSE_ORDER);
        for (Resource child : snapshot) {
            try {
                child.close(this);
                child.awaitClosed();
            } catch (RuntimeException | Error e) {
                failure = CloseHelper.accumulate(failure, e);
            }
        }
        MemorySegment h = handle;
        try {
            destroyer.destroy(h);
        } catch (RuntimeException | Error e) {
            failure = CloseHelper.accumulate(failure, e);
        } finally {
            handle = MemorySegment.NULL;
            state = CLOSED;
            for (Resource parent : parents) {
                parent.removeChild(this);
            }
        }
        if (failure != null) {
            CloseHelper.rethrow(failure);
        }
    }

    /** The exception for a call of {@code verb} on this closed object (built on the cold path only). */
    public IllegalStateException closedException(String verb) {
        String by = closedBy;
        String how = state == CLOSING ? " is being closed" : " is closed";
        String cascade = by == null ? "" : " (closed with its parent " + by + ")";
        return new IllegalStateException(description + how + cascade + "; cannot call " + verb);
    }

    /**
     * Moves this resource from parent {@code from} to parent {@code to} (after a verb that changed the
     * dependency, e.g. {@code ibv_rereg_mr} with {@code IBV_REREG_MR_CHANGE_PD}).
     *
     * @throws IllegalStateException if {@code to} is closed or {@code from} is not a parent
     */
    public void replaceParent(Resource from, Resource to) {
        synchronized (this) {
            List<Resource> current = parents;
            int i = current.indexOf(from);
            if (i < 0) {
                throw new IllegalStateException(from.description + " is not a parent of " + description);
            }
            if (!to.addChild(this)) {
                throw to.closedException("move " + description + " to it");
            }
            from.removeChild(this);
            List<Resource> next = new ArrayList<>(current);
            next.set(i, to);
            parents = List.copyOf(next);
        }
    }

    private boolean addChild(Resource child) {
        synchronized (children) {
            if (state != OPEN) {
                return false;
            }
            children.add(child);
            return true;
        }
    }

    private void removeChild(Resource child) {
        synchronized (children) {
            children.remove(child);
        }
    }

    @Override
    public String toString() {
        return state == OPEN ? description : description + " (closed)";
    }
}
