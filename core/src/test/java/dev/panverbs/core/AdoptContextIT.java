package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.LibIbverbs;
import dev.panverbs.core.internal.NativeHandles;
import dev.panverbs.testing.RdmaTestDevice;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * Non-owning adoption ({@code NativeHandles.Access.adoptContext/adoptPd}): a context and a PD that another library
 * opened (as rdma_cm does) are used through the core's objects, and closing those objects leaves the handles to their
 * owner, who then frees them with the raw verbs (which would fail, or crash, had the core freed them).
 */
class AdoptContextIT {

    @Test
    void anAdoptedContextAndPdAreUsedButNeverFreedByTheCore() {
        RdmaTestDevice.name(); // the device policy: skip loudly, or fail in the bed
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment list = LibIbverbs.ibv_get_device_list(errno, count);
            MemorySegment rawCtx = MemorySegment.NULL;
            try {
                MemorySegment devices = list.reinterpret(8L * (count.get(ValueLayout.JAVA_INT, 0) + 1));
                for (int i = 0; i < count.get(ValueLayout.JAVA_INT, 0); i++) {
                    MemorySegment d = devices.getAtIndex(ValueLayout.ADDRESS, i);
                    String name = LibIbverbs.ibv_get_device_name(d).reinterpret(64).getString(0);
                    if (name.equals(RdmaTestDevice.name())) {
                        rawCtx = LibIbverbs.ibv_open_device(errno, d);
                    }
                }
            } finally {
                LibIbverbs.ibv_free_device_list(list);
            }
            assertThat(rawCtx.address()).isNotZero();
            MemorySegment rawPd = LibIbverbs.ibv_alloc_pd(errno, rawCtx);
            assertThat(rawPd.address()).isNotZero();

            Context ctx = NativeHandles.access().adoptContext(rawCtx);
            assertThat(ctx.device().name()).isEqualTo(RdmaTestDevice.name());
            assertThat(ctx.toString()).contains("not owned");
            ProtectionDomain pd = NativeHandles.access().adoptPd(ctx, rawPd);
            MemoryRegion mr = pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE));
            ProtectionDomain ownPd = ctx.allocPd(); // owned children of an adopted context are freed as usual
            CompletionQueue cq = ctx.createCq(8).build();
            QueuePair qp = pd.createQp(QueuePairType.RC, cq, cq).build();
            qp.receiveRequests().recv(1).sge(mr, 0, 64);
            assertThat(qp.receiveRequests().pending()).isEqualTo(1);
            Context other = Device.open(RdmaTestDevice.name());
            try {
                assertThatThrownBy(() -> NativeHandles.access().adoptPd(other, rawPd))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("another context");
            } finally {
                other.close();
            }

            ctx.close(); // cascade: QP, MR, CQ, own PD destroyed; the adopted PD and context are not
            assertThat(qp.isClosed()).isTrue();
            assertThat(mr.isClosed()).isTrue();
            assertThat(ownPd.isClosed()).isTrue();
            assertThat(pd.isClosed()).isTrue();
            // still alive natively: the owner can use and free them (EBUSY or a crash if the core had freed them)
            MemorySegment stillWorks = LibIbverbs.ibv_alloc_pd(errno, rawCtx);
            assertThat(stillWorks.address()).isNotZero();
            assertThat(LibIbverbs.ibv_dealloc_pd(stillWorks)).isZero();
            assertThat(LibIbverbs.ibv_dealloc_pd(rawPd)).isZero();
            assertThat(LibIbverbs.ibv_close_device(rawCtx)).isZero();
        }
    }
}
