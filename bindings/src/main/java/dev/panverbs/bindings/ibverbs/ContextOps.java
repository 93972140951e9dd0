package dev.panverbs.bindings.ibverbs;

import static dev.panverbs.bindings.NativeMemory.nonNull;

import dev.panverbs.bindings.ProviderDowncalls;
import dev.panverbs.bindings.ProviderSlots;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The data-path ops of one {@code struct ibv_context} ({@code ops.post_send}, {@code post_recv},
 * {@code post_srq_recv}, {@code poll_cq}, {@code req_notify_cq}), bound once: {@link #of} reads the five
 * function pointers when the context is opened, and each method calls its slot through a
 * {@code static final} virtual downcall handle with {@code invokeExact}: critical, except for the doorbells
 * post_send and req_notify_cq (see {@link ProviderDowncalls}). Nothing is looked up or allocated per call.
 *
 * <p>C reads {@code obj->context->ops.X} on every call; for objects created by libibverbs on this context,
 * {@code obj->context} is this context, so binding once is equivalent. Semantics are those of the
 * {@link VerbsInline} twin of the same name. Thread safety is the provider's: posting to one QP from two
 * threads is safe in libibverbs providers, but the caller's WR and WC buffers must not be shared.
 */
public final class ContextOps {

    private final MemorySegment postSend;
    private final MemorySegment postRecv;
    private final MemorySegment postSrqRecv;
    private final MemorySegment pollCq;
    private final MemorySegment reqNotifyCq;
    /** This context's hot slots are those of {@link First} (the same provider as the first bound: normally all). */
    private final boolean firstSlots;

    /** The first {@code ContextOps} bound in this process: {@link First} makes its hot slots constants. */
    private static final AtomicReference<ContextOps> FIRST = new AtomicReference<>();

    /**
     * The address-argument slots ({@code post_send}, {@code post_recv}, {@code poll_cq}) of the first
     * {@code ContextOps} bound (initialised on first use, after it) as {@code static final} segments: C2 folds the
     * linker's checks on a constant target (its class, its scope's class, NULL), as {@code QpExOps.First} explains.
     * A context of another provider keeps calling through its fields.
     */
    private static final class First {
        static final ContextOps OPS = FIRST.get();
        static final MemorySegment POST_SEND = OPS.postSend;
        static final MemorySegment POST_RECV = OPS.postRecv;
        static final MemorySegment POLL_CQ = OPS.pollCq;
    }

    private ContextOps(long ctx) {
        // libibverbs 44 fills every ops slot (provider op or a dummy), so NULL means a foreign context
        // each refusal names the verb that would call through the slot
        postSend = VerbsInline.opsSlot(ctx, VerbsInline.OPS_POST_SEND, "ibv_post_send", "ibv_context.ops.post_send");
        postRecv = VerbsInline.opsSlot(ctx, VerbsInline.OPS_POST_RECV, "ibv_post_recv", "ibv_context.ops.post_recv");
        postSrqRecv = VerbsInline.opsSlot(ctx, VerbsInline.OPS_POST_SRQ_RECV, "ibv_post_srq_recv",
                "ibv_context.ops.post_srq_recv");
        pollCq = VerbsInline.opsSlot(ctx, VerbsInline.OPS_POLL_CQ, "ibv_poll_cq", "ibv_context.ops.poll_cq");
        reqNotifyCq = VerbsInline.opsSlot(ctx, VerbsInline.OPS_REQ_NOTIFY_CQ, "ibv_req_notify_cq",
                "ibv_context.ops.req_notify_cq");
        ContextOps first = FIRST.compareAndExchange(null, this);
        firstSlots = first == null || sameSlots(first);
    }

    /** Whether every slot {@link First} holds is at the same address here (a context of the same provider). */
    private boolean sameSlots(ContextOps o) {
        return postSend.equals(o.postSend) && postRecv.equals(o.postRecv) && pollCq.equals(o.pollCq);
    }

    /** Whether this context calls its hot slots through {@link First}'s constants (tests). */
    boolean callsConstantSlots() {
        return firstSlots;
    }

    /**
     * Reads the data-path ops of {@code context} (an {@code ibv_context *} from {@code ibv_open_device}); they
     * never change while the context is open. Throws the exception of {@link ProviderSlots#missing} if one is NULL
     * (libibverbs 44 fills every slot, with a dummy op where the provider has none: NULL means a foreign context).
     */
    public static ContextOps of(MemorySegment context) {
        return new ContextOps(nonNull(context, "ContextOps.of", "context"));
    }

    /** {@link VerbsInline#ibv_post_send} through {@code ops.post_send} read at bind time. */
    public int ibv_post_send(MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
        return ProviderDowncalls.kick_i_ppp(postSend, qp, wr, badWr);
    }

    /**
     * {@link #ibv_post_send(MemorySegment, MemorySegment, MemorySegment)} given the addresses of the QP, the WR chain
     * and the {@code bad_wr} cell: the caller keeps that memory alive (and allocated) across the call; nothing is
     * checked here.
     */
    public int ibv_post_send(long qp, long wr, long badWr) {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            return ProviderDowncalls.kick_i_ppp(First.POST_SEND, qp, wr, badWr);
        }
        return ProviderDowncalls.kick_i_ppp(postSend, qp, wr, badWr);
    }

    /** {@link VerbsInline#ibv_post_recv} through {@code ops.post_recv} read at bind time. */
    public int ibv_post_recv(MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
        return ProviderDowncalls.i_ppp(postRecv, qp, wr, badWr);
    }

    /**
     * {@link #ibv_post_recv(MemorySegment, MemorySegment, MemorySegment)} given addresses, as
     * {@link #ibv_post_send(long, long, long)}.
     */
    public int ibv_post_recv(long qp, long wr, long badWr) {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            return ProviderDowncalls.i_ppp(First.POST_RECV, qp, wr, badWr);
        }
        return ProviderDowncalls.i_ppp(postRecv, qp, wr, badWr);
    }

    /** {@link VerbsInline#ibv_post_srq_recv} through {@code ops.post_srq_recv} read at bind time. */
    public int ibv_post_srq_recv(MemorySegment srq, MemorySegment recvWr, MemorySegment badRecvWr) {
        return ProviderDowncalls.i_ppp(postSrqRecv, srq, recvWr, badRecvWr);
    }

    /** {@link VerbsInline#ibv_poll_cq} through {@code ops.poll_cq} read at bind time. */
    public int ibv_poll_cq(MemorySegment cq, int numEntries, MemorySegment wc) {
        return ProviderDowncalls.i_pip(pollCq, cq, numEntries, wc);
    }

    /**
     * {@link #ibv_poll_cq(MemorySegment, int, MemorySegment)} given the addresses of the CQ and of the {@code ibv_wc}
     * array: the caller keeps both alive (and the array allocated) across the call; nothing is checked here.
     */
    public int ibv_poll_cq(long cq, int numEntries, long wc) {
        if (firstSlots) { // the constant slot: C2 folds the target's class, scope and NULL checks
            return ProviderDowncalls.i_pip(First.POLL_CQ, cq, numEntries, wc);
        }
        return ProviderDowncalls.i_pip(pollCq, cq, numEntries, wc);
    }

    /** {@link VerbsInline#ibv_req_notify_cq} through {@code ops.req_notify_cq} read at bind time. */
    public int ibv_req_notify_cq(MemorySegment cq, int solicitedOnly) {
        return ProviderDowncalls.kick_i_pi(reqNotifyCq, cq, solicitedOnly);
    }
}
