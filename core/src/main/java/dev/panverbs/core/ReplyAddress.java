package dev.panverbs.core;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.LibIbverbsQueues;
import dev.panverbs.bindings.verbs.ibv_ah_attr;
import dev.panverbs.bindings.verbs.ibv_grh;
import dev.panverbs.bindings.verbs.ibv_wc;
import dev.panverbs.core.internal.Errors;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * {@code ibv_init_ah_from_wc(3)}: the address vector that answers the sender of a UD receive, from its work
 * completion and the 40-byte global route header the receive buffer starts with. Behind
 * {@link Context#initAhFromWc} and {@link ProtectionDomain#createAhFromWc}.
 *
 * <p>The completion and the GRH are copied into memory of this call before libibverbs sees them: it never reads the
 * caller's receive buffer (which another thread may free) nor the completion array (which the next poll
 * overwrites). libibverbs reads the GRH even when the completion has none ({@code IBV_WC_GRH} clear), so a zeroed one
 * is passed then.
 */
final class ReplyAddress {

    /** {@code sizeof(struct ibv_grh)}: what a UD receive buffer starts with. */
    static final int GRH_BYTES = (int) ibv_grh.sizeof();

    private ReplyAddress() {}

    static AddressVector init(Context ctx, int portNum, WorkCompletion wc, MemorySegment grh, String verb) {
        Objects.requireNonNull(wc, "wc");
        String call = Errors.call(verb, "port", portNum, "wc", wc);
        if (!wc.ok()) {
            throw new IllegalArgumentException(call + ": a completion with status " + wc.status() + " carries no "
                    + "source address; only successful receives of a UD QP do");
        }
        WorkCompletionOpcode op = wc.opcode();
        if (op != WorkCompletionOpcode.RECV && op != WorkCompletionOpcode.RECV_RDMA_WITH_IMM) {
            throw new IllegalArgumentException(call + ": " + op + " completions have no sender to answer; pass the "
                    + "completion of a receive (RECV)");
        }
        if (wc.hasGrh() && (grh == null || grh.byteSize() < GRH_BYTES)) {
            throw new IllegalArgumentException(call + ": the completion has IBV_WC_GRH set, so its receive buffer "
                    + "starts with the " + GRH_BYTES + "-byte GRH; pass that (buffer.asSlice(offsetOfTheReceive, "
                    + GRH_BYTES + ")), got " + (grh == null ? "null" : grh.byteSize() + " bytes"));
        }
        if (portNum < 1 || portNum > 255) {
            throw new IllegalArgumentException(call + ": ports are numbered from 1 to 255");
        }
        MemorySegment ctxHandle = ctx.resource.handle(verb);
        DeviceChecks.port(ctx, call, portNum);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment wcCopy = arena.allocate(ibv_wc.layout());
            wc.copyTo(wcCopy);
            MemorySegment grhCopy = arena.allocate(ibv_grh.layout());
            if (wc.hasGrh()) {
                try {
                    MemorySegment.copy(grh, 0, grhCopy, 0, GRH_BYTES); // throws if grh's arena is closed
                } catch (WrongThreadException e) {
                    throw dev.panverbs.core.internal.Errors.wrongThread(verb, "the GRH segment", e);
                }
            }
            MemorySegment attr = arena.allocate(ibv_ah_attr.layout());
            MemorySegment errno = Errno.allocateCapture(arena);
            int rc = LibIbverbsQueues.ibv_init_ah_from_wc(errno, ctxHandle, (byte) portNum, wcCopy, grhCopy, attr);
            if (rc != 0) {
                int e = rc > 0 ? rc : Errno.get(errno); // the GID lookup's own errno, or -1 and errno
                throw failure(call, e == 0 ? Errno.EINVAL : e, ctx, portNum);
            }
            return AddressVector.readFrom(attr);
        }
    }

    /**
     * A refused header is the peer's doing, not a missing capability: always a plain {@link VerbsException}, even
     * for {@code EPROTONOSUPPORT} (which {@link Errors#failure} would turn into an unsupported-verb refusal).
     */
    private static VerbsException failure(String call, int errno, Context ctx, int portNum) {
        String hint = errno == dev.panverbs.bindings.verbs.verbs_h.EPROTONOSUPPORT()
                ? "the GRH is neither a RoCE v2 IPv4/IPv6 header nor an IB/RoCE v1 GRH (next header 0x1b); is the "
                        + "segment the first 40 bytes of the receive?"
                : "the address the packet was sent to is not a GID of port " + portNum + " (or it was sent to a "
                        + "multicast group, which cannot be answered by its group address); "
                        + DeviceChecks.validGids(ctx, portNum);
        return new VerbsException(call, errno, Errno.name(errno), Errno.strerror(errno), hint);
    }
}
