package dev.panverbs.core;

import dev.panverbs.bindings.ProviderSlots;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.Resource;
import dev.panverbs.core.internal.ResourceKind;
import java.lang.foreign.MemorySegment;

/**
 * What every verbs object of this package shares: one {@link Resource} (handle, parents, children, close
 * cascade) and the public {@code close()}/{@code isClosed()} built on it. Package-private on purpose: users
 * see only the concrete objects, and nothing here exposes the native handle (other packages of this module
 * reach it through {@link dev.panverbs.core.internal.NativeHandles}).
 */
abstract class VerbsObject implements AutoCloseable {

    static {
        // Every object that can reach a provider function pointer (context ops, ibv_qp_ex builders, ibv_cq_ex
        // readers, mlx5dv_qp_ex builders) is a VerbsObject, so this runs before the first slot can be found NULL:
        // from then on the bindings throw UnsupportedVerbException for it, as core does for EOPNOTSUPP.
        ProviderSlots.translateWith(Errors::unsupportedSlot);
    }

    /** The lifecycle; its handle is the C object. Hot paths call {@code resource.checkOpen(verb)}. */
    final Resource resource;

    /**
     * Adopts {@code handle}, just returned by a creation verb; see {@link Resource#adopt} (if a parent has
     * been closed meanwhile the handle is destroyed and {@link IllegalStateException} thrown).
     */
    VerbsObject(ResourceKind kind, String description, MemorySegment handle, Resource.Destroyer destroyer,
                Resource... parents) {
        this.resource = Resource.adopt(kind, this, description, handle, destroyer, parents);
    }

    /**
     * Destroys this object after closing every object that depends on it, newest first (queue pairs before
     * the memory regions and CQs they use). Idempotent: closing an object twice, or closing one whose parent
     * already closed it, does nothing; a double close is normal with a cascade, not a bug. Every other
     * method throws {@link IllegalStateException} naming this object after close.
     *
     * <p>Failures do not stop the cascade: the first is thrown, the others are suppressed in it, and the
     * object counts as closed either way.
     *
     * <p>Thread safety: safe to call from any thread. Threads waiting on a {@link CompletionChannel} or for an async
     * event wake and throw {@link IllegalStateException}; a poll, post, open poll pass or send batch on another
     * thread is waited for (up to 5 s) before its CQ or QP is destroyed, and that thread's next call throws. Other
     * verbs (modify, query, registration, creation) must not race with the close of their object or its parents:
     * as in C, they could run on a destroyed object.
     *
     * @throws VerbsException when a destroy verb of the cascade fails (e.g. {@code EBUSY})
     */
    @Override
    public void close() {
        resource.close();
    }

    /** Whether {@link #close()} has been called on this object or on one of its parents. */
    public boolean isClosed() {
        return resource.isClosed();
    }

    @Override
    public String toString() {
        return resource.toString();
    }
}
