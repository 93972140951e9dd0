package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Zero-based and iova MRs carry data: local SGEs and remote addresses are both in the MR's iova space
 * ({@code ibv_reg_mr(3)}: "the virtual base address of the MR when accessed through a lkey or rkey").
 */
class IovaMemoryRegionIT {
    private static final Set<Access> RW = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
    private static final int PORT = 1;

    private CoreResources res;

    @BeforeEach
    void open() {
        res = new CoreResources();
    }

    @AfterEach
    void close() {
        res.close();
    }

    @Test
    void rdmaWriteBetweenZeroBasedAndIovaMrs() {
        Context ctx = res.context;
        int gidIndex = ctx.queryGid(PORT, 1).isZero() ? 0 : 1;
        AddressVector path = AddressVector.builder(PORT).grh(ctx.queryGid(PORT, gidIndex).toBytes(), gidIndex, 64).build();
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair a = res.pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = res.pd.createQp(QueuePairType.RC, cq, cq).build();
        a.toInit(PORT, RW);
        b.toInit(PORT, RW);
        a.toRtr(path, Mtu.MTU_1024, b.qpNum(), 10);
        b.toRtr(path, Mtu.MTU_1024, a.qpNum(), 20);
        a.toRts(20);
        b.toRts(10);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment srcMem = arena.allocate(8192, 4096);
            MemorySegment dstMem = arena.allocate(8192, 4096);
            for (int i = 0; i < 8192; i++) {
                srcMem.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 3));
            }
            MemoryRegion src = res.pd.regMrBuilder(srcMem, RW).zeroBased().register();
            long iova = 0x4000_0000L;
            MemoryRegion dst = res.pd.regMrBuilder(dstMem, RW).iova(iova).register();
            assertThat(src.address()).isZero();
            assertThat(dst.address()).isEqualTo(iova);

            // 1 KiB from src offset 512 (lkey, iova 512) to dst offset 2048 (rkey, iova + 2048)
            a.sendRequests().rdmaWrite(1, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address() + 2048).sge(src, 512, 1024);
            a.sendRequests().post();
            WorkCompletions wcs = WorkCompletions.allocate(1);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (cq.poll(wcs) == 0) {
                assertThat(System.nanoTime()).as("completion within 60 s").isLessThan(deadline);
                Thread.onSpinWait();
            }
            assertThat(wcs.get(0).status()).isEqualTo(WorkCompletionStatus.SUCCESS);
            assertThat(MemorySegment.mismatch(srcMem, 512, 1536, dstMem, 2048, 3072)).isEqualTo(-1);
            assertThat(dstMem.get(ValueLayout.JAVA_BYTE, 2047)).isZero();
            assertThat(dstMem.get(ValueLayout.JAVA_BYTE, 3072)).isZero();
            a.close();
            b.close();
        }
    }
}
