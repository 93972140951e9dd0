package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * XRC domains, on-demand paging and device memory: each is detected from the device attributes before any verb
 * runs. Where the device lacks it (rxe in Linux 6.1 lacks all three) the entry point is refused with
 * {@link UnsupportedVerbException} naming the capability, which these tests assert; where it has it (the hardware
 * lane: mlx5) the same tests run the verbs: an XRC domain opened and closed, an RDMA WRITE into an ODP region after a
 * prefetch (and through an implicit ODP region), a round trip through device memory and an RDMA WRITE into it.
 */
class XrcOdpDeviceMemoryIT extends DataPathResources {

    @Test
    void xrcDomainIsGatedOnIbvDeviceXrc() {
        if (!ctx.queryDevice().supportsXrc()) {
            assertThatThrownBy(ctx::openXrcd).isInstanceOf(UnsupportedVerbException.class)
                    .hasMessageContaining("ibv_open_xrcd").hasMessageContaining(ctx.device().name())
                    .extracting(e -> ((UnsupportedVerbException) e).capability()).asString()
                    .contains("IBV_DEVICE_XRC");
            CompletionQueue cq = ctx.createCq(4).build();
            for (QueuePairType t : new QueuePairType[] {QueuePairType.XRC_SEND, QueuePairType.XRC_RECV}) {
                assertThatThrownBy(() -> pd.createQp(t, cq, cq)).isInstanceOf(UnsupportedVerbException.class)
                        .extracting(e -> ((UnsupportedVerbException) e).capability()).asString()
                        .contains("IBV_DEVICE_XRC");
            }
            return;
        }
        XrcDomain xrcd = ctx.openXrcd(); // hardware lane
        assertThat(xrcd.context()).isSameAs(ctx);
        xrcd.close();
        assertThat(xrcd.isClosed()).isTrue();
    }

    @Test
    void onDemandPagingIsGatedOnItsCapabilities() {
        OdpCapabilities odp = ctx.queryDevice().odp();
        MemoryRegion plain = pd.allocate(4096, ALL_REMOTE);
        assertThatThrownBy(() -> plain.prefetch(0, 64, false)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_advise_mr").hasMessageContaining("ON_DEMAND");
        EnumSet<Access> odpAccess = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.ON_DEMAND);
        if (!odp.supported()) {
            assertThatThrownBy(() -> pd.allocate(4096, odpAccess)).isInstanceOf(UnsupportedVerbException.class)
                    .extracting(e -> ((UnsupportedVerbException) e).capability()).asString()
                    .contains("IBV_ODP_SUPPORT");
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment s = arena.allocate(4096, 4096);
                assertThatThrownBy(() -> pd.regMr(arena, s, odpAccess)).isInstanceOf(UnsupportedVerbException.class)
                        .hasMessageContaining("ibv_reg_mr");
            }
            assertThatThrownBy(() -> pd.regImplicitOdpMr(EnumSet.of(Access.LOCAL_WRITE)))
                    .isInstanceOf(UnsupportedVerbException.class)
                    .extracting(e -> ((UnsupportedVerbException) e).capability()).asString()
                    .contains("IBV_ODP_SUPPORT");
            return;
        }
        // hardware lane: an RC RDMA WRITE into an ODP region, after a prefetch
        MemoryRegion target = pd.allocate(8192, odpAccess);
        target.prefetch(0, 8192, true);
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(a, b);
        fill(plain.buffer(), 0, 1024, 9);
        a.sendRequests().rdmaWrite(1, SendFlag.SIGNALED_BIT, target.rkey(), target.address() + 4096)
                .sge(plain, 0, 1024).post();
        assertThat(pollOne(cq).status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertSameBytes(target.buffer(), 4096, plain.buffer(), 0, 1024);
        // at post time: an ODP buffer in an RC WR whose operation rc_odp_caps lacks is refused by name
        SendRequests wrs = a.sendRequests();
        for (OdpCapabilities.Operation op : EnumSet.of(OdpCapabilities.Operation.SEND,
                OdpCapabilities.Operation.WRITE, OdpCapabilities.Operation.READ)) {
            if (!odp.rc().contains(op)) {
                switch (op) {
                    case SEND -> wrs.send(3, 0);
                    case WRITE -> wrs.rdmaWrite(3, 0, plain.rkey(), plain.address());
                    default -> wrs.rdmaRead(3, 0, plain.rkey(), plain.address());
                }
                assertThatThrownBy(() -> wrs.sge(target, 0, 64)).isInstanceOf(UnsupportedVerbException.class)
                        .hasMessageContaining("IBV_ODP_SUPPORT_" + op).hasMessageContaining("rc_odp_caps");
                wrs.clear();
            }
        }
        if (odp.implicit()) {
            MemoryRegion all = pd.regImplicitOdpMr(EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment s = arena.allocate(4096, 4096);
                a.sendRequests().rdmaWrite(2, SendFlag.SIGNALED_BIT, all.rkey(), s.address())
                        .sge(plain, 0, 1024).post();
                assertThat(pollOne(cq).status()).isEqualTo(WorkCompletionStatus.SUCCESS);
                assertSameBytes(s, 0, plain.buffer(), 0, 1024);
            }
        } else {
            assertThatThrownBy(() -> pd.regImplicitOdpMr(EnumSet.of(Access.LOCAL_WRITE)))
                    .isInstanceOf(UnsupportedVerbException.class)
                    .extracting(e -> ((UnsupportedVerbException) e).capability()).asString()
                    .contains("IBV_ODP_SUPPORT_IMPLICIT");
        }
    }

    @Test
    void deviceMemoryIsGatedOnMaxDmSize() {
        long max = ctx.queryDevice().maxDmSize();
        if (max == 0) {
            assertThatThrownBy(() -> ctx.allocDm(4096)).isInstanceOf(UnsupportedVerbException.class)
                    .hasMessageContaining("ibv_alloc_dm")
                    .extracting(e -> ((UnsupportedVerbException) e).capability()).asString()
                    .contains("max_dm_size");
            return;
        }
        // hardware lane: copies both ways, and an RDMA WRITE into a region over the device memory
        long len = Math.min(max, 4096);
        assertThatThrownBy(() -> ctx.allocDm(max + 1)).isInstanceOf(VerbsException.class)
                .hasMessageContaining("max_dm_size");
        DeviceMemory dm = ctx.allocDm(len);
        MemoryRegion host = pd.allocate(len, ALL_REMOTE);
        fill(host.buffer(), 0, 256, 3);
        dm.copyTo(0, host.buffer().asSlice(0, 256));
        MemorySegment back = host.buffer().asSlice(1024, 256);
        dm.copyFrom(0, back);
        assertSameBytes(back, 0, host.buffer(), 0, 256);
        MemoryRegion onDevice = dm.register(pd, 0, len, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(a, b);
        fill(host.buffer(), 2048, 128, 44);
        a.sendRequests().rdmaWrite(1, SendFlag.SIGNALED_BIT, onDevice.rkey(), 512).sge(host, 2048, 128).post();
        assertThat(pollOne(cq).status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        MemorySegment got = host.buffer().asSlice(3072, 128);
        dm.copyFrom(512, got);
        assertSameBytes(got, 0, host.buffer(), 2048, 128);
        dm.close(); // closes the region over it first
        assertThat(onDevice.isClosed()).isTrue();
    }
}
