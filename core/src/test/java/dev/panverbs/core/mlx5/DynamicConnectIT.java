package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.panverbs.core.Access;
import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.AddressVector;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.Mtu;
import dev.panverbs.core.PostBatch;
import dev.panverbs.core.QueuePairState;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.SharedReceiveQueue;
import dev.panverbs.core.UnsupportedVerbException;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletionOpcode;
import dev.panverbs.core.WorkCompletionStatus;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * mlx5's Dynamically Connected transport on the test device. On any other device (the rxe guest) the DC entry points
 * are refused up front, naming the device ("rxe0 is not an mlx5 device"), before any {@code mlx5dv_*} call. On a
 * ConnectX (the hardware lane, see README) a DCI sends RDMA WRITEs and a SEND with immediate to a DCT on the same
 * port (an SRQ receiving, bytes checked), the AH a posted WR names refuses to close until its completion is polled,
 * and a wrong DC access key fails the WR instead of reaching the target; then a second DCI does a WRITE and an inline
 * SEND with immediate through Direct WQE ({@link DirectDcQueue}), its completions polled directly.
 */
class DynamicConnectIT extends Mlx5DeviceFixture {
    private static final long KEY = 0x0DC0_FFEE_1234_5678L;

    @Test
    void aNonMlx5DeviceIsRefusedByNameBeforeAnyDcVerb() {
        assumeFalse(Mlx5.isSupported(ctx), name + " is an mlx5 device: the refusal is tested on rxe");
        CompletionQueue cq = ctx.createCq(16).build();
        SharedReceiveQueue srq = pd.createSrq(16).build();
        String refusal = name + " is not an mlx5 device";
        assertThatThrownBy(() -> DynamicConnect.capabilities(ctx)).isInstanceOf(UnsupportedVerbException.class)
                .hasMessageContaining(refusal).hasMessageContaining("mlx5dv_query_device");
        assertThatThrownBy(() -> DcInitiator.builder(pd, cq).build()).isInstanceOf(UnsupportedVerbException.class)
                .hasMessageContaining(refusal).hasMessageContaining("mlx5dv_create_qp");
        assertThatThrownBy(() -> DcInitiator.builder(pd, cq).dciStreams(2, 1).build())
                .isInstanceOf(UnsupportedVerbException.class).hasMessageContaining(refusal);
        assertThatThrownBy(() -> DcTarget.create(pd, cq, srq, KEY)).isInstanceOf(UnsupportedVerbException.class)
                .hasMessageContaining(refusal).hasMessageContaining("mlx5dv_create_qp")
                .satisfies(e -> assertThat(((UnsupportedVerbException) e).capability())
                        .isEqualTo(DynamicConnect.CAPABILITY));
        srq.close(); // nothing was created on it
        cq.close();
    }

    @Test
    void aDciWritesAndSendsToADctOnConnectX() {
        assumeTrue(Mlx5.isSupported(ctx), name + " is not an mlx5 device: this runs in the hardware lane "
                + "(PANVERBS_TESTBED=host PANVERBS_TEST_DEVICE=mlx5_0 testbed/test --it DynamicConnectIT)");
        DcCapabilities caps = DynamicConnect.capabilities(ctx);
        assertThat(caps.device()).isEqualTo(name);
        CompletionQueue sendCq = ctx.createCq(64).build();
        CompletionQueue recvCq = ctx.createCq(64).build();
        SharedReceiveQueue srq = pd.createSrq(32).build();
        DcTarget dct = DcTarget.create(pd, recvCq, srq, KEY);
        assertThatThrownBy(dct::dctNumber).as("assigned at RTR").isInstanceOf(IllegalStateException.class);
        DcInitiator dci = DcInitiator.builder(pd, sendCq).maxSendWr(32).maxInlineData(64).build();
        AddressVector av = loopbackPath();
        dct.toInit(PORT, EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ));
        dct.toRtr(av, Mtu.MTU_1024, 12);
        assertThat(dct.state()).isEqualTo(QueuePairState.RTR);
        dci.toInit(PORT);
        dci.toRtr(Mtu.MTU_1024, av);
        dci.toRts();
        AddressHandle ah = pd.createAh(av);
        MemoryRegion src = pd.allocate(65536, EnumSet.of(Access.LOCAL_WRITE));
        MemoryRegion dst = pd.allocate(65536, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                Access.REMOTE_READ));
        for (int i = 0; i < 65536; i++) {
            src.buffer().set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 3));
        }
        WorkCompletions wcs = WorkCompletions.allocate(4);

        try (PostBatch b = dci.startSend()) {
            b.rdmaWrite(1, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address());
            dci.setDcAddr(b, ah, dct.dctNumber(), KEY).setSge(src, 0, 8192);
            b.submit();
        }
        assertThatThrownBy(ah::close).as("named by an outstanding DCI WR").isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_destroy_ah");
        WorkCompletion wc = poll(sendCq, wcs);
        assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(wc.wrId()).isEqualTo(1);
        assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.RDMA_WRITE);
        assertThat(dst.buffer().asSlice(0, 8192).mismatch(src.buffer().asSlice(0, 8192))).isEqualTo(-1);

        srq.receiveRequests().recv(70).sge(dst, 32768, 4096).post();
        try (PostBatch b = dci.startSend()) {
            b.sendWithImm(2, SendFlag.SIGNALED_BIT, 0x5150);
            dci.setDcAddr(b, ah, dct.dctNumber(), KEY).setSge(src, 1000, 3000);
            b.submit();
        }
        wc = poll(sendCq, wcs);
        assertThat(wc.ok()).isTrue();
        assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.SEND);
        WorkCompletion rwc = poll(recvCq, WorkCompletions.allocate(1));
        assertThat(rwc.wrId()).isEqualTo(70);
        assertThat(rwc.byteLen()).isEqualTo(3000);
        assertThat(rwc.immData()).isEqualTo(0x5150);
        assertThat(dst.buffer().asSlice(32768, 3000).mismatch(src.buffer().asSlice(1000, 3000))).isEqualTo(-1);

        try (PostBatch b = dci.startSend()) { // a wrong access key: the DCT refuses it
            b.rdmaWrite(3, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address());
            dci.setDcAddr(b, ah, dct.dctNumber(), KEY ^ 1).setSge(src, 0, 64);
            b.submit();
        }
        wc = poll(sendCq, wcs);
        assertThat(wc.wrId()).isEqualTo(3);
        assertThat(wc.status()).isNotEqualTo(WorkCompletionStatus.SUCCESS);

        // the Direct WQE path on a second DCI (never mixed with the ibv_wr_* path on one QP)
        CompletionQueue directCq = ctx.createCq(64).build();
        DcInitiator dci2 = DcInitiator.builder(pd, directCq).maxSendWr(32).maxInlineData(64).build();
        dci2.toInit(PORT);
        dci2.toRtr(Mtu.MTU_1024, av);
        dci2.toRts();
        DirectCompletionQueue dcq = DirectCompletionQueue.open(directCq);
        DirectDcQueue direct = DirectDcQueue.open(dci2, dcq);
        DcAddress to = DcAddress.of(ah, dct.dctNumber(), KEY);
        dst.buffer().asSlice(0, 8192).fill((byte) 0);
        direct.rdmaWrite(to, 11, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address()).sge(src, 4096, 8192);
        assertThat(direct.post()).isEqualTo(1);
        assertThatThrownBy(ah::close).as("named by a posted Direct WQE").isInstanceOf(IllegalStateException.class);
        wc = poll(dcq, wcs);
        assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(wc.wrId()).isEqualTo(11);
        assertThat(dst.buffer().asSlice(0, 8192).mismatch(src.buffer().asSlice(4096, 8192))).isEqualTo(-1);
        srq.receiveRequests().recv(71).sge(dst, 40960, 4096).post();
        direct.sendWithImm(to, 12, SendFlag.SIGNALED_BIT | SendFlag.INLINE_BIT, 0x77)
                .inline(src.buffer().asSlice(0, 48));
        direct.post();
        wc = poll(dcq, wcs);
        assertThat(wc.ok()).isTrue();
        rwc = poll(recvCq, WorkCompletions.allocate(1));
        assertThat(rwc.wrId()).isEqualTo(71);
        assertThat(rwc.byteLen()).isEqualTo(48);
        assertThat(dst.buffer().asSlice(40960, 48).mismatch(src.buffer().asSlice(0, 48))).isEqualTo(-1);

        ah.close(); // every WR retired
        srq.close(); // closes the DCT first
        assertThat(dct.isClosed()).isTrue();
    }

    @Test
    void aDciWithStreamsWritesOnEachStreamOrIsRefusedNamingDciStreamsCaps() {
        assumeTrue(Mlx5.isSupported(ctx), name + " is not an mlx5 device: this runs in the hardware lane");
        DcCapabilities caps = DynamicConnect.capabilities(ctx);
        CompletionQueue sendCq = ctx.createCq(64).build();
        if (!caps.dciStreams() || caps.maxLogNumConcurrent() < 1) {
            assertThatThrownBy(() -> DcInitiator.builder(pd, sendCq).dciStreams(1, 0).build())
                    .satisfies(e -> assertThat(e).isInstanceOfAny(UnsupportedVerbException.class,
                            IllegalArgumentException.class))
                    .hasMessageContaining("dci_streams");
            return;
        }
        assertThatThrownBy(() -> DcInitiator.builder(pd, sendCq).dciStreams(caps.maxLogNumConcurrent() + 1, 0)
                .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max_log_num_concurent");
        CompletionQueue recvCq = ctx.createCq(64).build();
        SharedReceiveQueue srq = pd.createSrq(32).build();
        DcTarget dct = DcTarget.create(pd, recvCq, srq, KEY);
        AddressVector av = loopbackPath();
        dct.toInit(PORT, EnumSet.of(Access.REMOTE_WRITE));
        dct.toRtr(av, Mtu.MTU_1024, 12);
        DcInitiator dci = DcInitiator.builder(pd, sendCq).maxSendWr(32).dciStreams(1, 0).build();
        dci.toInit(PORT);
        dci.toRtr(Mtu.MTU_1024, av);
        dci.toRts();
        AddressHandle ah = pd.createAh(av);
        MemoryRegion src = pd.allocate(8192, EnumSet.of(Access.LOCAL_WRITE));
        MemoryRegion dst = pd.allocate(8192, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        src.buffer().fill((byte) 0x5A);
        WorkCompletions wcs = WorkCompletions.allocate(4);
        for (int stream = 0; stream < 2; stream++) {
            try (PostBatch b = dci.startSend()) {
                b.rdmaWrite(stream, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address() + 4096L * stream);
                dci.setDcAddrStream(b, ah, dct.dctNumber(), KEY, stream).setSge(src, 0, 4096);
                b.submit();
            }
            WorkCompletion wc = poll(sendCq, wcs);
            assertThat(wc.status()).as("stream " + stream).isEqualTo(WorkCompletionStatus.SUCCESS);
        }
        assertThat(dst.buffer().mismatch(src.buffer())).isEqualTo(-1);
        try (PostBatch b = dci.startSend()) {
            b.rdmaWrite(9, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address());
            assertThatThrownBy(() -> dci.setDcAddrStream(b, ah, dct.dctNumber(), KEY, 2))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2 DCI streams");
        }
        ah.close();
        dci.close();
        srq.close();
    }
}
