package dev.panverbs.core.internal;

import dev.panverbs.core.CompletionChannel;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairAttributes;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.SendOperation;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * The one deliberate route from a public verbs object to its native handle and lifecycle, for code of this
 * module outside {@code dev.panverbs.core} (provider extensions such as {@code dev.panverbs.core.mlx5}, an
 * rdma_cm binding) and for core's own cross-object plumbing. This package is not exported, so users never
 * see it; public objects have no {@code segment()}.
 *
 * <p>Typical use, creating a provider QP that is still a normal {@code QueuePair} ({@code attr} is a
 * {@code struct ibv_qp_init_attr_ex}, {@code dvAttr} a {@code struct mlx5dv_qp_init_attr}; the code is
 * {@code NativeHandlesExample} in this package's tests, which compile it and keep this copy identical):
 * <pre>{@code
 * MemorySegment ctx = NativeHandles.context(context, "mlx5dv_create_qp");
 * MemorySegment pd = NativeHandles.pd(protectionDomain, "mlx5dv_create_qp");
 * ibv_qp_init_attr_ex.pd(attr, pd);
 * MemorySegment qp = LibMlx5.mlx5dv_create_qp(errno, ctx, attr, dvAttr); // raw binding
 * if (qp.equals(MemorySegment.NULL)) throw Errors.failure(call, Errno.get(errno));
 * QueuePair wrapped = NativeHandles.access().adoptQueuePair(protectionDomain, sendCq, recvCq,
 *         QueuePairType.RC, qp, Set.of(), "ibv_destroy_qp", LibIbverbsQueues::ibv_destroy_qp);
 * }</pre>
 * Adoption comes in two patterns: <em>owning</em> ({@code adoptQueuePair} with the destroy verb of the API that
 * created it: mlx5dv QPs, later mkeys and DCTs) and <em>non-owning</em> ({@code adoptContext}, {@code adoptPd}: a
 * handle another library frees, such as rdma_cm's context). A provider object that is no core type holds its own {@link Resource} made by {@link Resource#adopt} with
 * {@code NativeHandles.resource(context)} as parent, so the cascade closes it with the context.
 *
 * <p>The typed accessors check that the object is open and name {@code verb} in the
 * {@link IllegalStateException} otherwise. The handles are borrowed: never destroy them, never keep them
 * beyond the object's life.
 */
public final class NativeHandles {

    /**
     * What {@code dev.panverbs.core} implements for this route (the JDK's SharedSecrets pattern):
     * reaching package-private state and constructors of the public types. Factories that adopt a handle
     * made elsewhere (a {@code QueuePair} from mlx5dv or rdma_cm) are added here.
     */
    public interface Access {
        /** The lifecycle of a core verbs object; {@link IllegalArgumentException} for anything else. */
        Resource resourceOf(Object verbsObject);

        /**
         * Wraps a {@code struct ibv_context *} that another library owns (rdma_cm's {@code cm_id->verbs}) as a
         * {@link Context} that does <em>not</em> own it: everything created through it follows the usual rules and is
         * closed with it, but closing it never calls {@code ibv_close_device} (non-owning adoption). The owner must
         * keep the context alive until this object is closed.
         */
        Context adoptContext(MemorySegment context);

        /**
         * Wraps a {@code struct ibv_pd *} of {@code context} that another library owns (an rdma_cm ID's PD, a PD
         * shared by a framework) as a {@link ProtectionDomain} that does not own it: closing it closes its QPs and
         * MRs, never calls {@code ibv_dealloc_pd}. {@link IllegalArgumentException} if it belongs to another context.
         */
        ProtectionDomain adoptPd(Context context, MemorySegment pd);

        /**
         * Wraps a {@code struct ibv_qp *} created by another verb ({@code mlx5dv_create_qp},
         * {@code rdma_create_qp}, a raw {@code ibv_create_qp}) into a {@link QueuePair} with the lifetime rules
         * of a built one: child of {@code pd}, {@code sendCq} and {@code recvCq} (closed by their cascade), its
         * completions retired through the CQs, its work requests tracked against memory-region closes.
         *
         * <p>The granted capabilities, {@code sq_sig_all}, the state and the port are read with
         * {@code ibv_query_qp}; the handle's {@code pd}, {@code send_cq}, {@code recv_cq} and {@code qp_type}
         * must be those given. A QP on a shared receive queue has no receive queue of its own: its receives are posted
         * to, and its receive completions retired by, the SRQ.
         *
         * @param sendOps     empty for a QP posted with {@code ibv_post_send} only; otherwise the
         *                    {@code send_ops_flags} it was created with, and {@code ibv_qp_to_qp_ex} must
         *                    return its {@code struct ibv_qp_ex *} ({@link QueuePair#startSend()})
         * @param destroyVerb the verb {@code destroy} calls, named in errors ({@code "rdma_destroy_qp"})
         * @param destroy     runs exactly once, when the QP is closed directly or by a parent's cascade
         * @throws IllegalArgumentException if the handle does not match the arguments; the caller then still
         *                                  owns it and must destroy it
         */
        QueuePair adoptQueuePair(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                                 QueuePairType type, MemorySegment qp, Set<SendOperation> sendOps,
                                 String destroyVerb, Destroyer destroy);

        /**
         * Attributes for {@link QueuePair#modify} copied from a {@code struct ibv_qp_attr} and its mask that a
         * library filled ({@code rdma_init_qp_attr}).
         */
        QueuePairAttributes qpAttributes(MemorySegment attr, int mask);
    }

    private static volatile Access access;

    private NativeHandles() {}

    /** Called once by {@code dev.panverbs.core} when its accessor class initialises. */
    public static void install(Access implementation) {
        if (access != null) {
            throw new IllegalStateException("NativeHandles.Access installed twice");
        }
        access = implementation;
    }

    /** The accessor implemented by {@code dev.panverbs.core}. */
    public static Access access() {
        Access a = access;
        if (a == null) {
            try {
                // initialising the class runs install(); it lives in dev.panverbs.core, hence by name
                Class.forName("dev.panverbs.core.CoreAccess", true, NativeHandles.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException("dev.panverbs.core.CoreAccess is missing", e);
            }
            a = access;
        }
        return a;
    }

    /** The lifecycle of any core verbs object ({@code Context}, {@code QueuePair}, ...). */
    public static Resource resource(Object verbsObject) {
        return access().resourceOf(verbsObject);
    }

    /** The native handle of any core verbs object, checked open for a call of {@code verb}. */
    public static MemorySegment handle(Object verbsObject, String verb) {
        return resource(verbsObject).handle(verb);
    }

    /** {@code struct ibv_context *}. */
    public static MemorySegment context(Context context, String verb) {
        return handle(context, verb);
    }

    /** {@code struct ibv_pd *}. */
    public static MemorySegment pd(ProtectionDomain pd, String verb) {
        return handle(pd, verb);
    }

    /** {@code struct ibv_mr *}. */
    public static MemorySegment mr(MemoryRegion mr, String verb) {
        return handle(mr, verb);
    }

    /** {@code struct ibv_comp_channel *}. */
    public static MemorySegment channel(CompletionChannel channel, String verb) {
        return handle(channel, verb);
    }
}
