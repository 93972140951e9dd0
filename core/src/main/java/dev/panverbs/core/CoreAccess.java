package dev.panverbs.core;

import dev.panverbs.core.internal.Destroyer;
import dev.panverbs.core.internal.NativeHandles;
import dev.panverbs.core.internal.Resource;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/** Implements {@link NativeHandles.Access}: the only bridge from the internal package into this one. */
final class CoreAccess implements NativeHandles.Access {

    static {
        NativeHandles.install(new CoreAccess());
    }

    private CoreAccess() {}

    @Override
    public Resource resourceOf(Object verbsObject) {
        if (verbsObject instanceof VerbsObject v) {
            return v.resource;
        }
        throw new IllegalArgumentException("not a verbs object of dev.panverbs.core: "
                + (verbsObject == null ? "null" : verbsObject.getClass().getName()));
    }

    @Override
    public Context adoptContext(MemorySegment context) {
        if (context == null || context.address() == 0) {
            throw new IllegalArgumentException("adoptContext: the ibv_context handle is NULL");
        }
        return Context.adopt(context);
    }

    @Override
    public ProtectionDomain adoptPd(Context context, MemorySegment pd) {
        if (pd == null || pd.address() == 0) {
            throw new IllegalArgumentException("adoptPd: the ibv_pd handle is NULL");
        }
        return ProtectionDomain.adopt(context, pd);
    }

    @Override
    public QueuePair adoptQueuePair(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                                    QueuePairType type, MemorySegment qp, Set<SendOperation> sendOps,
                                    String destroyVerb, Destroyer destroy) {
        return QueuePairBuilder.adopt(pd, sendCq, recvCq, type, qp, sendOps, destroyVerb, destroy);
    }

    @Override
    public QueuePairAttributes qpAttributes(MemorySegment attr, int mask) {
        return QueuePairAttributes.copyOf(attr, mask);
    }
}
