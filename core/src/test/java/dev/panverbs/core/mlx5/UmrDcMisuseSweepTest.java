package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.mlx5dv.mlx5dv_qp_ex;
import dev.panverbs.bindings.verbs.ibv_context;
import dev.panverbs.bindings.verbs.ibv_device;
import dev.panverbs.core.Access;
import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.FakeProvider;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.MisuseSweep;
import dev.panverbs.core.Mtu;
import dev.panverbs.core.PostBatch;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.SendOperation;
import dev.panverbs.core.UmrHostSupport;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link MisuseSweep} over the rest of {@code core.mlx5} on the host: every public method of {@link IndirectMkey}
 * (free, configured, closed), {@link UmrQueuePair} (open, then its QP closed), {@link DcInitiator} (open and closed;
 * its state transitions closed only) and its builder, {@link DcAddress}, and every public static method and
 * constructor of the package's types (the factories against a device libmlx5 does not drive, {@link MkeyLayout}'s
 * records), one argument at a time set to a boundary or misuse value (an mkey closed or of another PD, a layout
 * outside its region, over a closed region or one of another PD, rights a UMR cannot grant, a closed AH or one of
 * another PD, a closed batch or one of another QP, null), answers with a documented exception that names the verb,
 * or works.
 */
class UmrDcMisuseSweepTest {
    private static final int QP_INLINE = 512;
    private static UmrFake umrFake;
    private static FakeProvider fake;
    private static MemorySegment mqp;
    private int nextKey = 0x7000;

    @BeforeAll
    static void build() {
        umrFake = new UmrFake();
        fake = umrFake.fake;
        // a struct verbs_device whose provider ops are not libmlx5's: mlx5dv_is_supported reads them
        MemorySegment ctx = FakeProvider.handle(fake.context()).reinterpret(ibv_context.sizeof());
        ibv_context.device(ctx, Arena.global().allocate(ibv_device.sizeof() + 64, 8));
        mqp = Arena.global().allocate(mlx5dv_qp_ex.sizeof(), 8);
        mqp.set(ValueLayout.ADDRESS, mlx5dv_qp_ex.wr_set_dc_addr$offset(), fake.symbol("fake_wr_set_dc_addr"));
        mqp.set(ValueLayout.ADDRESS, mlx5dv_qp_ex.wr_set_dc_addr_stream$offset(),
                fake.symbol("fake_wr_set_dc_addr_stream"));
    }

    private static MisuseSweep sweep() {
        MemoryRegion closed = fake.buffer(0x6001);
        closed.close();
        return new MisuseSweep(fake.buffer(0x6000), fake.register(fake.newPd(), Arena.ofShared().allocate(4096),
                0x6002), closed).alsoNaming("mlx5dv_").alsoNaming("mlx5_").alsoNaming("dct_number");
    }

    private IndirectMkey mkey(ProtectionDomain pd) {
        return UmrFake.mkey(pd, 4, (nextKey++) << 8, () -> { });
    }

    private static void drain(QueuePair qp, CompletionQueue cq) {
        UmrHostSupport.retireAllSends(qp); // unsignaled UMRs: nothing completes them on the fake
        WorkCompletions wcs = WorkCompletions.allocate(64);
        while (cq.poll(wcs) > 0) {
            // retire what the calls posted
        }
    }

    @Test
    void indirectMkeysAndUmrQueuePairsAnswerEveryMisuseByName() {
        ProtectionDomain pd = fake.protectionDomain();
        CompletionQueue cq = fake.createCq(4096);
        QueuePair qp = fake.createRtsQp(pd, cq, cq, 256, 16, 1, QP_INLINE,
                EnumSet.of(SendOperation.RDMA_WRITE, SendOperation.LOCAL_INV));
        UmrQueuePair umr = umrFake.umr(qp, QP_INLINE);
        MemoryRegion r = fake.buffer(0x6003);
        MemoryRegion gone = fake.buffer(0x6004);
        gone.close();
        MemoryRegion foreign = fake.register(fake.newPd(), Arena.ofShared().allocate(4096), 0x6005);
        IndirectMkey free = mkey(pd);
        IndirectMkey closedKey = mkey(pd);
        closedKey.close();
        MkeyLayout one = MkeyLayout.list(new MkeyLayout.Sge(r, 0, 64));
        MkeyLayout.Sge[] five = new MkeyLayout.Sge[5];
        Arrays.fill(five, new MkeyLayout.Sge(r, 0, 8));
        IndirectMkey configured = mkey(pd);
        umr.configure(1L, SendFlag.SIGNALED_BIT, configured, Set.of(), one);
        WorkCompletions polled = WorkCompletions.allocate(1);
        assertThat(cq.poll(polled)).isEqualTo(1);
        WorkCompletion umrCompletion = polled.get(0);
        MisuseSweep s = sweep()
                .with(IndirectMkey.class, free, closedKey, mkey(fake.newPd()))
                .with(MkeyLayout.class, one, MkeyLayout.interleaved(4, new MkeyLayout.Entry(r, 4000, 64, 0)),
                        MkeyLayout.list(new MkeyLayout.Sge(gone, 0, 8)),
                        MkeyLayout.list(new MkeyLayout.Sge(foreign, 0, 8)), MkeyLayout.list(five),
                        MkeyLayout.interleaved(Integer.MAX_VALUE, new MkeyLayout.Entry(r, 0, 1, 0)))
                .with(Set.class, Set.of(Access.LOCAL_WRITE), EnumSet.allOf(Access.class),
                        EnumSet.of(Access.MW_BIND))
                .with(WorkCompletion.class, umrCompletion);
        Runnable after = () -> drain(qp, cq);
        s.sweep("UmrQueuePair", () -> umr, Set.of(), after);
        s.sweep("IndirectMkey(free)", () -> mkey(pd), Set.of(), after);
        s.sweep("IndirectMkey(configured)", () -> configured, Set.of(), after);
        s.sweep("closed IndirectMkey", () -> closedKey, Set.of(), after);
        drain(qp, cq);
        qp.close();
        s.sweep("UmrQueuePair(QP closed)", () -> umr, Set.of(), () -> { });
        assertThat(s.misfits()).isEmpty();
        assertThat(s.calls()).as("calls made").isGreaterThan(100);
    }

    @Test
    void dcInitiatorsTheirBuilderAndDcAddressesAnswerEveryMisuseByName() {
        ProtectionDomain pd = fake.protectionDomain();
        CompletionQueue cq = fake.createCq(4096);
        Set<SendOperation> ops = EnumSet.of(SendOperation.RDMA_WRITE, SendOperation.SEND);
        DcInitiator dci = new DcInitiator(fake.createDcInitiator(cq, 256, ops), mqp, 4);
        DcInitiator plain = new DcInitiator(fake.createDcInitiator(cq, 256, ops), mqp);
        AddressHandle ah = FakeProvider.fakeAh(pd, new AtomicInteger());
        AddressHandle closedAh = FakeProvider.fakeAh(pd, new AtomicInteger());
        closedAh.close();
        PostBatch[] open = new PostBatch[1];
        PostBatch closedBatch = dci.startSend();
        closedBatch.close();
        QueuePair other = fake.createDcInitiator(cq, 16, ops);
        PostBatch othersBatch = other.startSend().rdmaWrite(1, 0, 0x99, 0);
        Runnable after = () -> {
            if (open[0] != null) {
                open[0].close(); // unsubmitted: ibv_wr_abort
                open[0] = null;
            }
            drain(dci.queuePair(), cq);
            drain(plain.queuePair(), cq);
        };
        MisuseSweep s = sweep()
                .with(AddressHandle.class, ah, closedAh, FakeProvider.fakeAh(fake.newPd(), new AtomicInteger()))
                .withFresh(PostBatch.class, () -> open[0] = dci.startSend().rdmaWrite(1, 0, 0x99, 0), closedBatch,
                        othersBatch);
        // open: toInit/toRtr/toRts reach libibverbs (ibv_query_qp, ibv_modify_qp; toRts ibv_query_device_ex, which
        // crashes on the fake context), so only the closed DCI sweeps them; startSend is QueuePair's (swept in core)
        Set<String> modify = Set.of("toInit", "toRtr", "toRts", "startSend");
        s.sweep("DcInitiator", () -> dci, modify, after);
        s.sweep("DcInitiator.Builder", () -> DcInitiator.builder(pd, cq), Set.of(), after);
        s.sweep("DcAddress", () -> new DcAddress(ah, DirectDcQueue.trackingId(ah), new byte[48], 0x42, 9),
                Set.of(), after);
        MisuseSweep p = sweep().with(AddressHandle.class, ah, closedAh).withFresh(PostBatch.class,
                () -> open[0] = plain.startSend().send(1, 0));
        p.sweep("DcInitiator(no streams)", () -> plain, modify, after);
        dci.close();
        MisuseSweep c = sweep().with(AddressHandle.class, ah).with(PostBatch.class, othersBatch, closedBatch);
        c.sweep("closed DcInitiator", () -> dci, Set.of("startSend"), after);
        // refused by this DCI's own check before any native call (the QP's state query would name ibv_query_qp)
        for (ThrowingCallable transition : List.<ThrowingCallable>of(() -> dci.toInit(1),
                () -> dci.toRtr(Mtu.MTU_1024), () -> dci.toRtr(Mtu.MTU_1024, null), dci::toRts)) {
            assertThatThrownBy(transition).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("cannot call ibv_modify_qp");
        }
        othersBatch.close();
        assertThat(s.misfits()).isEmpty();
        assertThat(p.misfits()).isEmpty();
        assertThat(c.misfits()).isEmpty();
        assertThat(s.calls() + p.calls() + c.calls()).as("calls made").isGreaterThan(50);
    }

    @Test
    void theStaticFactoriesAndRecordsAnswerEveryMisuseByName() {
        ProtectionDomain pd = fake.protectionDomain();
        ProtectionDomain closedPd = fake.newClosablePd();
        closedPd.close();
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(pd, cq, cq, 16, 16, 1, 64, Set.of());
        QueuePair closedQp = fake.createRtsQp(pd, cq, cq, 16, 16, 1, 64, Set.of());
        closedQp.close();
        MemoryRegion r = fake.buffer(0x6006);
        MkeyLayout.Entry entry = new MkeyLayout.Entry(r, 0, 8, 8);
        MkeyLayout.Sge sge = new MkeyLayout.Sge(r, 0, 8);
        AddressHandle ah = FakeProvider.fakeAh(pd, new AtomicInteger());
        MisuseSweep s = sweep()
                .with(Context.class, fake.context())
                .with(ProtectionDomain.class, pd, closedPd)
                .with(CompletionQueue.class, cq)
                .with(QueuePair.class, qp, closedQp)
                .with(AddressHandle.class, ah)
                .with(DcInitiator.class, new DcInitiator(fake.createDcInitiator(cq, 16, Set.of(SendOperation.SEND)),
                        mqp))
                .with(MkeyLayout.Entry[].class, new MkeyLayout.Entry[] {entry}, new MkeyLayout.Entry[0],
                        new MkeyLayout.Entry[] {null})
                .with(MkeyLayout.Sge[].class, new MkeyLayout.Sge[] {sge}, new MkeyLayout.Sge[0],
                        new MkeyLayout.Sge[] {null})
                .with(List.class, List.of(sge), List.of(), Arrays.asList(sge, null));
        for (Class<?> type : List.of(IndirectMkey.class, UmrQueuePair.class, DcInitiator.class, DcTarget.class,
                DcAddress.class, DynamicConnect.class, Mlx5.class, DirectSendQueue.class, DirectReceiveQueue.class,
                DirectCompletionQueue.class, DirectDcQueue.class, MkeyLayout.class, MkeyLayout.Entry.class,
                MkeyLayout.Sge.class, MkeyLayout.SgeList.class)) {
            s.sweepStatic(type, Set.of(), () -> { });
        }
        MisuseSweep interleaved = sweep().with(List.class, List.of(entry), List.of(), Arrays.asList(entry, null));
        interleaved.sweepStatic(MkeyLayout.Interleaved.class, Set.of(), () -> { });
        assertThat(s.misfits()).isEmpty();
        assertThat(interleaved.misfits()).isEmpty();
        assertThat(s.calls()).as("calls made").isGreaterThan(100);
    }
}
