package dev.panverbs.core;

import dev.panverbs.core.internal.Errors;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * What {@code ibv_reg_mr(3)}, {@code ibv_reg_mr_iova2(3)} and {@code ibv_rereg_mr(3)} would otherwise answer with a
 * bare errno (or let corrupt the heap), refused before the call: a heap, freed, empty or read-only segment, invalid
 * access rights, on-demand paging the device lacks. Java-only; control path.
 */
final class RegistrationChecks {
    private RegistrationChecks() {}

    /**
     * Refuses on-demand paging up front where the device lacks it ({@code IBV_ODP_SUPPORT}, and
     * {@code IBV_ODP_SUPPORT_IMPLICIT} for {@code implicit}), naming the capability.
     */
    static void requireOdp(ProtectionDomain pd, String call, boolean implicit) {
        Context context = pd.context();
        OdpCapabilities odp = context.attributes().odp();
        if (!odp.supported()) {
            throw Errors.unsupported(call, "on-demand paging (IBV_ODP_SUPPORT)", context.device().name()
                    + " reports no IBV_ODP_SUPPORT in odp_caps.general_caps (ODP exists on mlx5)");
        }
        if (implicit && !odp.implicit()) {
            throw Errors.unsupported(call, "implicit on-demand paging (IBV_ODP_SUPPORT_IMPLICIT)",
                    context.device().name() + " reports ODP without IBV_ODP_SUPPORT_IMPLICIT");
        }
        if (odp.rc().isEmpty() && odp.uc().isEmpty() && odp.ud().isEmpty() && odp.xrc().isEmpty()) {
            throw Errors.unsupported(call, "on-demand paging for some transport (odp_caps.per_transport_caps)",
                    context.device().name() + " reports IBV_ODP_SUPPORT but no operation on any transport");
        }
    }

    /** Checks everything that would otherwise reach the kernel as a bare errno (or corrupt the heap). */
    static int checkRegistrable(String verb, MemorySegment segment, Set<Access> access) {
        int mask = Access.validate(verb, access);
        if (!segment.isNative()) {
            throw new IllegalArgumentException(Errors.call(verb, "segment", segment) + ": a heap segment cannot be "
                    + "registered (the garbage collector moves it while the NIC uses it); allocate native memory "
                    + "with an Arena, map a file, or wrap ByteBuffer.allocateDirect with MemorySegment.ofBuffer");
        }
        if (!segment.scope().isAlive()) {
            throw new IllegalStateException(Errors.call(verb, "segment", segment) + ": the segment's arena is "
                    + "already closed; its memory is freed");
        }
        if (segment.byteSize() == 0) {
            throw new IllegalArgumentException(Errors.call(verb, "length", 0) + ": cannot register an empty segment "
                    + "(the kernel would fail with EINVAL)");
        }
        boolean writes = access.contains(Access.LOCAL_WRITE) || access.contains(Access.REMOTE_WRITE)
                || access.contains(Access.REMOTE_ATOMIC);
        if (segment.isReadOnly() && writes) {
            throw new IllegalArgumentException(Errors.call(verb, "access", access) + ": the segment is read-only; "
                    + "registering it with write access would let the NIC write it; register without "
                    + "LOCAL_WRITE/REMOTE_WRITE/REMOTE_ATOMIC or pass a writable segment");
        }
        return mask;
    }
}
