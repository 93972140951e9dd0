package dev.panverbs.core.internal;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.LibIbverbsQueues;
import dev.panverbs.bindings.mlx5.LibMlx5;
import dev.panverbs.bindings.verbs.ibv_qp_init_attr_ex;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairType;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * The example of {@link NativeHandles}' Javadoc, compiled: {@code NativeHandlesExampleTest} checks that the lines
 * between the markers are the Javadoc's, so the example names only classes and methods that exist.
 */
final class NativeHandlesExample {

    private NativeHandlesExample() {}

    static QueuePair createMlx5Qp(Context context, ProtectionDomain protectionDomain, CompletionQueue sendCq,
                                  CompletionQueue recvCq, MemorySegment attr, MemorySegment dvAttr,
                                  MemorySegment errno, String call) {
        // example:start
        MemorySegment ctx = NativeHandles.context(context, "mlx5dv_create_qp");
        MemorySegment pd = NativeHandles.pd(protectionDomain, "mlx5dv_create_qp");
        ibv_qp_init_attr_ex.pd(attr, pd);
        MemorySegment qp = LibMlx5.mlx5dv_create_qp(errno, ctx, attr, dvAttr); // raw binding
        if (qp.equals(MemorySegment.NULL)) throw Errors.failure(call, Errno.get(errno));
        QueuePair wrapped = NativeHandles.access().adoptQueuePair(protectionDomain, sendCq, recvCq,
                QueuePairType.RC, qp, Set.of(), "ibv_destroy_qp", LibIbverbsQueues::ibv_destroy_qp);
        // example:end
        return wrapped;
    }
}
