package dev.panverbs.core;

import dev.panverbs.bindings.LibIbverbs;
import dev.panverbs.bindings.verbs.ibv_context;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.ResourceKind;
import java.lang.foreign.MemorySegment;

/**
 * An open device ({@code struct ibv_context}, {@code ibv_open_device(3)}): the root every other verbs object
 * is created from, and the source of device, port and GID queries and of asynchronous events. Made by
 * {@link Device#open()}; closing it ({@code ibv_close_device(3)}) first closes everything created from it:
 * protection domains (with their QPs, AHs and MRs), CQs, completion channels.
 *
 * <pre>{@code
 * try (Context ctx = Device.first().open()) {
 *     ProtectionDomain pd = ctx.allocPd();
 *     MemoryRegion mr = pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE));
 *     ...
 * } // closes mr, then pd, then the context
 * }</pre>
 *
 * <p>Thread safety: libibverbs contexts are thread-safe; every method may be called from any thread.
 * {@link #close()} must not race with calls on this context or its children.
 */
public final class Context extends VerbsObject {

    private final Device device;
    private final int numCompVectors;
    private final int asyncFd;

    Context(Device device, MemorySegment handle) {
        super(ResourceKind.CONTEXT, "Context[" + device.name() + "]", handle, Context::closeDevice);
        this.device = device;
        MemorySegment s = handle.reinterpret(ibv_context.sizeof());
        this.numCompVectors = ibv_context.num_comp_vectors(s);
        this.asyncFd = ibv_context.async_fd(s);
    }

    private static void closeDevice(MemorySegment ctx) {
        int rc = LibIbverbs.ibv_close_device(ctx);
        if (rc != 0) {
            throw Errors.failure("ibv_close_device()", rc);
        }
    }

    /** The device this context was opened on. */
    public Device device() {
        return device;
    }

    /**
     * The number of completion vectors (interrupt vectors) CQs may be spread over
     * ({@code ibv_context.num_comp_vectors}); a CQ's {@code compVector} must be below it.
     */
    public int numCompVectors() {
        return numCompVectors;
    }

    /** The async event file descriptor ({@code ibv_context.async_fd}). */
    int asyncFd() {
        return asyncFd;
    }

    /**
     * Allocates a protection domain ({@code ibv_alloc_pd(3)}).
     *
     * <p>Errors: {@code ENOMEM} → {@link VerbsException}. Thread-safe.
     *
     * @throws IllegalStateException if this context is closed
     */
    public ProtectionDomain allocPd() {
        return ProtectionDomain.alloc(this);
    }

    /**
     * Creates a completion channel ({@code ibv_create_comp_channel(3)}): a file descriptor on which the
     * completion events of the CQs created with it are delivered. Pass it to the CQ builder, arm the CQ
     * ({@code ibv_req_notify_cq}), then wait on the channel.
     *
     * <p>Errors: {@code EMFILE}/{@code ENFILE} (out of file descriptors), {@code ENOMEM} → {@link VerbsException}.
     */
    public CompletionChannel createCompChannel() {
        return CompletionChannel.create(this);
    }

    /**
     * Closes everything created from this context (see {@link VerbsObject#close()}), then the context
     * ({@code ibv_close_device(3)}).
     */
    @Override
    public void close() {
        super.close();
    }

    /**
     * Starts a completion queue of at least {@code cqe} entries ({@code ibv_create_cq(3)} /
     * {@code ibv_create_cq_ex(3)}): set options on the builder, then {@code build()} or {@code buildEx()}.
     */
    public CompletionQueue.Builder createCq(int cqe) {
        resource.checkOpen("ibv_create_cq");
        return new CompletionQueue.Builder(this, cqe);
    }
}
