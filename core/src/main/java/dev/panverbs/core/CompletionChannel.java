package dev.panverbs.core;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.LibIbverbsQueues;
import dev.panverbs.bindings.verbs.ibv_comp_channel;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.ResourceKind;
import dev.panverbs.core.internal.Units;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A completion event channel ({@code struct ibv_comp_channel}, {@code ibv_create_comp_channel(3)}): the file
 * descriptor on which armed CQs report "a completion arrived". Made by {@link Context#createCompChannel()};
 * CQs created with it are its children, so closing the channel ({@code ibv_destroy_comp_channel(3)}) closes
 * them first.
 *
 * <p>Thread safety: waits may run on any thread; concurrent waits each receive distinct events.
 */
public final class CompletionChannel extends VerbsObject {

    private final Context context;
    private final int fd;

    private CompletionChannel(Context context, MemorySegment handle) {
        super(ResourceKind.COMPLETION_CHANNEL,
                "CompletionChannel[" + Units.hex(handle.address()) + " on " + context.device().name() + "]",
                handle, CompletionChannel::destroy, context.resource);
        this.context = context;
        this.fd = ibv_comp_channel.fd(handle.reinterpret(ibv_comp_channel.sizeof()));
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
}
