package dev.panverbs.core;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.LibIbverbsQueues;
import dev.panverbs.bindings.verbs.ibv_comp_channel;
import dev.panverbs.bindings.verbs.verbs_h;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.FileDescriptors;
import dev.panverbs.core.internal.ResourceKind;
import dev.panverbs.core.internal.Units;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A completion event channel ({@code struct ibv_comp_channel}, {@code ibv_create_comp_channel(3)}): the file
 * descriptor on which armed CQs report "a completion arrived". Made by {@link Context#createCompChannel()};
 * CQs created with it are its children, so closing the channel ({@code ibv_destroy_comp_channel(3)}) closes
 * them first.
 *
 * <p>Thread safety: waits may run on any thread; concurrent waits each receive distinct events.
 */
public final class CompletionChannel extends VerbsObject {

    /** Longest time a wait sleeps in poll(2) before re-checking that the channel is open. */
    private static final int POLL_SLICE_MILLIS = 100;

    private final Context context;
    private final int fd;
    private final WaitState wait;

    private CompletionChannel(Context context, MemorySegment handle) {
        this(context, handle, new WaitState());
    }

    private CompletionChannel(Context context, MemorySegment handle, WaitState wait) {
        super(ResourceKind.COMPLETION_CHANNEL,
                "CompletionChannel[" + Units.hex(handle.address()) + " on " + context.device().name() + "]",
                handle, wait::destroy, context.resource);
        this.context = context;
        this.wait = wait;
        this.fd = ibv_comp_channel.fd(handle.reinterpret(ibv_comp_channel.sizeof()));
    }

    /** Serialises event reads with {@code ibv_destroy_comp_channel}, so a wait never reads a freed channel. */
    private static final class WaitState {
        final ReentrantLock lock = new ReentrantLock();
        boolean nonBlocking;

        void destroy(MemorySegment channel) {
            lock.lock();
            try {
                CompletionChannel.destroy(channel);
            } finally {
                lock.unlock();
            }
        }
    }

    static CompletionChannel create(Context context) {
        MemorySegment ctx = context.resource.handle("ibv_create_comp_channel");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment ch = LibIbverbsQueues.ibv_create_comp_channel(errno, ctx);
            if (ch.equals(MemorySegment.NULL)) {
                throw Errors.failure(Errors.call("ibv_create_comp_channel", "context", context.device().name()),
                        Errno.get(errno));
            }
            return new CompletionChannel(context, ch);
        }
    }

    private static void destroy(MemorySegment channel) {
        int rc = LibIbverbsQueues.ibv_destroy_comp_channel(channel);
        if (rc != 0) {
            throw Errors.failure(Errors.call("ibv_destroy_comp_channel", "channel", Units.hex(channel.address())), rc);
        }
    }

    /** The context the channel belongs to. */
    public Context context() {
        return context;
    }

    /** The channel's file descriptor ({@code ibv_comp_channel.fd}). */
    int fd() {
        return fd;
    }

    /**
     * Waits up to {@code timeoutMillis} (-1: forever, 0: just check) for a completion event
     * ({@code ibv_get_cq_event(3)}) and acknowledges it at once ({@code ibv_ack_cq_events(cq, 1)}), so that
     * destroying the CQ never waits for unacknowledged events (the classic {@code ibv_destroy_cq} hang).
     * The CQ is disarmed afterwards: re-arm it ({@code ibv_req_notify_cq}) before polling it empty, as
     * {@code ibv_get_cq_event(3)} describes.
     *
     * @return the Java object of the CQ that fired (a child of this channel), {@link #UNKNOWN_CQ} if the CQ
     *         was not created through this library, or {@code null} on timeout
     */
    Object awaitCqEvent(long timeoutMillis) {
        // saturated: timeoutMillis * 1_000_000 overflows above ~292 years (Long.MAX_VALUE became a past deadline)
        long deadline = timeoutMillis < 0 ? Long.MAX_VALUE
                : System.nanoTime() + Math.min(timeoutMillis, Long.MAX_VALUE / 4 / 1_000_000L) * 1_000_000L;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment cqOut = arena.allocate(ValueLayout.ADDRESS);
            MemorySegment ctxOut = arena.allocate(ValueLayout.ADDRESS);
            while (true) {
                wait.lock.lock();
                try {
                    MemorySegment ch = resource.handle("ibv_get_cq_event");
                    if (!wait.nonBlocking) {
                        FileDescriptors.setNonBlocking(fd, resource.description() + " fd");
                        wait.nonBlocking = true;
                    }
                    int rc = LibIbverbsQueues.ibv_get_cq_event(errno, ch, cqOut, ctxOut);
                    if (rc == 0) {
                        MemorySegment cq = cqOut.get(ValueLayout.ADDRESS, 0);
                        LibIbverbsQueues.ibv_ack_cq_events(cq, 1);
                        Object owner = resource.findOwner(ResourceKind.COMPLETION_QUEUE, cq.address());
                        return owner != null ? owner : UNKNOWN_CQ;
                    }
                    int e = Errno.get(errno);
                    if (e != verbs_h.EAGAIN()) {
                        throw Errors.failure(Errors.call("ibv_get_cq_event", "channel", resource.description()), e);
                    }
                } finally {
                    wait.lock.unlock();
                }
                long remaining = deadline == Long.MAX_VALUE ? POLL_SLICE_MILLIS
                        : (deadline - System.nanoTime()) / 1_000_000L;
                if (remaining <= 0) {
                    return null;
                }
                try {
                    FileDescriptors.pollIn(fd, (int) Math.min(POLL_SLICE_MILLIS, remaining), resource.description() + " fd");
                } catch (VerbsException e) {
                    resource.checkOpen("ibv_get_cq_event");
                    throw e;
                }
            }
        }
    }

    /**
     * Waits up to {@code timeoutMillis} (-1: forever, 0: just check) for the next completion event of any CQ
     * created with this channel ({@code ibv_get_cq_event(3)}), acknowledges it ({@code ibv_ack_cq_events(3)}) and
     * returns that CQ, or {@code null} on timeout. The CQ is disarmed: call {@link CompletionQueue#reqNotify} again,
     * then poll it empty.
     */
    public CompletionQueue getCqEvent(long timeoutMillis) {
        Object cq = awaitCqEvent(timeoutMillis);
        if (cq == UNKNOWN_CQ) {
            throw new IllegalStateException("ibv_get_cq_event: an event for a CQ not created through panverbs");
        }
        return (CompletionQueue) cq;
    }

    /**
     * Blocks until the next completion event of a CQ created with this channel ({@code ibv_get_cq_event(3)})
     * and acknowledges it; see {@link #getCqEvent(long)}.
     *
     * @throws IllegalStateException when the channel is closed, also while waiting (wakes within 100 ms)
     */
    public CompletionQueue getCqEvent() {
        return getCqEvent(-1L);
    }

    /** Waits up to {@code timeout} for the next completion event; empty on timeout. See {@link #getCqEvent(long)}. */
    public java.util.Optional<CompletionQueue> getCqEvent(java.time.Duration timeout) {
        long ms = Units.clampedMillis(timeout);
        return java.util.Optional.ofNullable(getCqEvent(ms));
    }

    /** Returns the next completion event if one is pending, without waiting. See {@link #getCqEvent(long)}. */
    public java.util.Optional<CompletionQueue> tryGetCqEvent() {
        return java.util.Optional.ofNullable(getCqEvent(0L));
    }

    /** What {@link #awaitCqEvent} returns for an event of a CQ this library did not create. */
    static final Object UNKNOWN_CQ = new Object();
}
