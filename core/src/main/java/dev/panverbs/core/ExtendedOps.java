package dev.panverbs.core;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.LibIbverbs;
import dev.panverbs.bindings.verbs.ibv_device_attr;
import dev.panverbs.bindings.verbs.ibv_device_attr_ex;
import dev.panverbs.bindings.verbs.verbs_context;
import dev.panverbs.core.internal.Errors;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The {@code verbs_context} ops the data-path objects need at creation ({@code create_cq_ex}, {@code create_qp_ex},
 * {@code query_device_ex}), reached as verbs.h's {@code verbs_get_ctx_op} does: the extended context sits 320 bytes
 * below {@code ibv_context}, {@code abi_compat} must hold the all-ones sentinel and {@code sz} must cover the op.
 * Control path only.
 */
final class ExtendedOps {
    private static final long CONTEXT_OFFSET = verbs_context.context$offset();
    private static final long SIZE = verbs_context.sizeof();
    static final long CREATE_CQ_EX = verbs_context.create_cq_ex$offset() - CONTEXT_OFFSET;
    static final long CREATE_QP_EX = verbs_context.create_qp_ex$offset() - CONTEXT_OFFSET;
    static final long QUERY_DEVICE_EX = verbs_context.query_device_ex$offset() - CONTEXT_OFFSET;
    private static final long ABI_COMPAT = 320; // ibv_context.abi_compat

    /** {@code T *(*op)(ctx, attr)} returning NULL + errno; capture segment after the function address. */
    static final MethodHandle P_PP = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS), Errno.CAPTURE);

    private ExtendedOps() {}

    /** The op at {@code rel} (negative) from {@code ctx}, or {@code NULL} when the library or provider lacks it. */
    static MemorySegment op(MemorySegment ctx, long rel) {
        MemorySegment all = MemorySegment.ofAddress(ctx.address() - CONTEXT_OFFSET).reinterpret(SIZE);
        if (all.get(ValueLayout.JAVA_LONG, CONTEXT_OFFSET + ABI_COMPAT) != -1L) {
            return MemorySegment.NULL;
        }
        long sz = all.get(ValueLayout.JAVA_LONG, CONTEXT_OFFSET - 8);
        if (Long.compareUnsigned(sz, SIZE - (CONTEXT_OFFSET + rel)) < 0) {
            return MemorySegment.NULL;
        }
        return all.get(ValueLayout.ADDRESS, CONTEXT_OFFSET + rel);
    }

    /** What the data path needs to know about a device, queried once per QP/CQ creation. */
    record DeviceCaps(int atomicCap, long completionTimestampMask, long hcaCoreClock, int maxSge, int maxQpWr) {
        boolean atomics() {
            return atomicCap != dev.panverbs.bindings.verbs.verbs_h.IBV_ATOMIC_NONE();
        }
    }

    static DeviceCaps deviceCaps(Context context) {
        MemorySegment ctx = context.resource.handle("ibv_query_device_ex");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_device_attr_ex.layout());
            MemorySegment fn = op(ctx, QUERY_DEVICE_EX);
            int rc = -1;
            if (fn.address() != 0) {
                try {
                    rc = (int) DataPathCalls.I_PPPJ.invokeExact(fn, ctx, MemorySegment.NULL, attr,
                            ibv_device_attr_ex.layout().byteSize());
                } catch (Throwable t) {
                    throw CompletionQueue.rethrow(t);
                }
            }
            if (rc != 0) { // legacy path of the inline ibv_query_device_ex: only the basic attributes
                attr.fill((byte) 0);
                rc = LibIbverbs.ibv_query_device(ctx, ibv_device_attr_ex.orig_attr(attr));
                if (rc != 0) {
                    throw Errors.failure(Errors.call("ibv_query_device", "context", context.device().name()), rc);
                }
            }
            MemorySegment orig = ibv_device_attr_ex.orig_attr(attr);
            return new DeviceCaps(ibv_device_attr.atomic_cap(orig),
                    ibv_device_attr_ex.completion_timestamp_mask(attr), ibv_device_attr_ex.hca_core_clock(attr),
                    ibv_device_attr.max_sge(orig), ibv_device_attr.max_qp_wr(orig));
        }
    }
}
