package dev.panverbs.core.example;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.core.Access;
import dev.panverbs.core.AddressVector;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.Device;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.Mtu;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletionStatus;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.testing.RdmaTestDevice;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;

import org.junit.jupiter.api.Test;

/** The README's example, verbatim between the markers, run on the test device. */
class ReadmeExampleIT {

    @Test
    void rdmaWriteBetweenTwoQueuePairs() {
        String deviceName = RdmaTestDevice.name();
        // README-BEGIN
        try (Context ctx = Device.open(deviceName)) {                 // ibv_open_device
            ProtectionDomain pd = ctx.allocPd();                      // ibv_alloc_pd
            CompletionQueue cq = ctx.createCq(64).build();            // ibv_create_cq
            MemoryRegion src = pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE));   // ibv_reg_mr
            MemoryRegion dst = pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
            QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(16).build();  // ibv_create_qp
            QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(16).build();

            // RoCE: address by GID (index 1 is rxe's RoCE v2 GID of the netdev's IPv4 address)
            AddressVector path = AddressVector.builder(1).grh(ctx.queryGid(1, 1).toBytes(), 1, 64).build();
            a.toInit(1, EnumSet.of(Access.REMOTE_WRITE));             // ibv_modify_qp RESET -> INIT
            b.toInit(1, EnumSet.of(Access.REMOTE_WRITE));
            a.toRtr(path, Mtu.MTU_1024, b.qpNum(), 0);                 // INIT -> RTR
            b.toRtr(path, Mtu.MTU_1024, a.qpNum(), 0);
            a.toRts(0);                                               // RTR -> RTS
            b.toRts(0);

            src.buffer().fill((byte) 42);
            a.sendRequests()                                          // the send queue's reusable native WR chain
                    .rdmaWrite(7L, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address())
                    .sge(src, 0, 4096)
                    .post();                                          // ibv_post_send

            WorkCompletions wcs = WorkCompletions.allocate(16);       // native ibv_wc array, reused
            while (cq.poll(wcs) == 0) {                               // ibv_poll_cq
                Thread.onSpinWait();
            }
            WorkCompletion wc = wcs.get(0);                           // flyweight over wc[0]
            System.out.println(wc.wrId() + " " + wc.status());        // 7 SUCCESS
        }                                                             // closes QPs, MRs, CQ, PD, context
        // README-END
    }

    @Test
    void exampleMovesTheBytes() {
        try (Context ctx = Device.open(RdmaTestDevice.name())) {
            ProtectionDomain pd = ctx.allocPd();
            CompletionQueue cq = ctx.createCq(64).build();
            MemoryRegion src = pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE));
            MemoryRegion dst = pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
            QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(16).build();
            QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(16).build();
            int gidIndex = ctx.queryGid(1, 1).isZero() ? 0 : 1;
            AddressVector path = AddressVector.builder(1).grh(ctx.queryGid(1, gidIndex).toBytes(), gidIndex, 64).build();
            a.toInit(1, EnumSet.of(Access.REMOTE_WRITE));
            b.toInit(1, EnumSet.of(Access.REMOTE_WRITE));
            a.toRtr(path, Mtu.MTU_1024, b.qpNum(), 0);
            b.toRtr(path, Mtu.MTU_1024, a.qpNum(), 0);
            a.toRts(0);
            b.toRts(0);
            MemorySegment s = src.buffer();
            for (int i = 0; i < 4096; i++) {
                s.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7));
            }
            a.sendRequests().clear()
                    .rdmaWrite(7L, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address())
                    .sge(src, 0, 4096).post();
            WorkCompletions wcs = WorkCompletions.allocate(16);
            long deadline = System.nanoTime() + 60_000_000_000L;
            int n;
            while ((n = cq.poll(wcs)) == 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(n).isEqualTo(1);
            assertThat(wcs.get(0).status()).isEqualTo(WorkCompletionStatus.SUCCESS);
            assertThat(wcs.get(0).wrId()).isEqualTo(7L);
            assertThat(MemorySegment.mismatch(src.buffer(), 0, 4096, dst.buffer(), 0, 4096)).isEqualTo(-1);
        }
    }
}
