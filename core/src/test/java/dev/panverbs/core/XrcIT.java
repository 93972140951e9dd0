package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * XRC traffic on a device that has it (the hardware lane: mlx5): an XRC domain, an XRC SRQ with its own CQ
 * ({@code ibv_create_srq_ex} with {@code IBV_SRQT_XRC}), an XRC target QP in the domain and an XRC initiator in a PD,
 * connected (and the target opened a second time, {@code ibv_open_qp}); {@code XRC_SEND}s through the classic chain and an {@code ibv_wr_*} batch naming the SRQ by its number
 * ({@code ibv_get_srq_num}) land in the SRQ's receives and complete on its CQ; then the lifetime rules: the domain's
 * close closes its SRQ and target QP first, and a region named by a posted SRQ receive refuses to close until then.
 * On rxe (no {@code IBV_DEVICE_XRC}) every entry point is refused by name, which is asserted, and the traffic is
 * skipped with that reason.
 */
class XrcIT extends DataPathResources {
    private static final int MSG = 128;

    @Test
    void xrcSendsReachTheRemoteXrcSrqByNumber() {
        CompletionQueue cq = ctx.createCq(32).build();
        SharedReceiveQueue basic = pd.createSrq(4).build();
        assertThat(basic.xrcDomain()).isEmpty();
        assertThatThrownBy(basic::srqNum).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_get_srq_num").hasMessageContaining("XRC SRQ");
        if (!ctx.queryDevice().supportsXrc()) {
            assertThatThrownBy(ctx::openXrcd).isInstanceOf(UnsupportedVerbException.class)
                    .extracting(e -> ((UnsupportedVerbException) e).capability()).asString()
                    .contains("IBV_DEVICE_XRC");
            assertThatThrownBy(() -> pd.createQp(QueuePairType.XRC_SEND, cq, cq))
                    .isInstanceOf(UnsupportedVerbException.class).hasMessageContaining("IBV_DEVICE_XRC");
            assertThatThrownBy(() -> pd.createQp(QueuePairType.XRC_RECV, cq, cq))
                    .isInstanceOf(UnsupportedVerbException.class).hasMessageContaining("IBV_DEVICE_XRC");
        }
        assumeThat(ctx.queryDevice().supportsXrc()).as(ctx.device().name()
                + " has no IBV_DEVICE_XRC: XRC traffic runs on the hardware lane").isTrue();

        // hardware lane
        XrcDomain xrcd = ctx.openXrcd();
        CompletionQueue srqCq = ctx.createCq(32).build();
        SharedReceiveQueue srq = pd.createSrq(16).xrc(xrcd, srqCq).build();
        assertThat(srq.xrcDomain()).containsSame(xrcd);
        int srqNum = srq.srqNum();
        XrcTargetQueuePair tgt = xrcd.createTargetQp();
        assertThatThrownBy(() -> pd.createQp(QueuePairType.XRC_RECV, cq, cq))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("createTargetQp");
        QueuePair ini = pd.createQp(QueuePairType.XRC_SEND, cq, cq)
                .sendOps(EnumSet.of(SendOperation.SEND)).build();
        assertThatThrownBy(ini::receiveRequests).isInstanceOf(IllegalStateException.class);

        ini.toInit(PORT, EnumSet.noneOf(Access.class));
        tgt.toInit(PORT, EnumSet.noneOf(Access.class));
        AddressVector path = path();
        ini.toRtr(path, Mtu.MTU_1024, tgt.qpNum(), 0);
        tgt.toRtr(path, Mtu.MTU_1024, ini.qpNum(), 0);
        ini.toRts(0);
        assertThat(tgt.state()).isEqualTo(QueuePairState.RTR);
        XrcTargetQueuePair second = xrcd.openTargetQp(tgt.qpNum()); // ibv_open_qp: another handle, same QP
        assertThat(second.qpNum()).isEqualTo(tgt.qpNum());
        assertThat(second.state()).isEqualTo(QueuePairState.RTR);
        second.close();
        assertThat(tgt.isClosed()).isFalse();

        MemoryRegion rx = pd.allocate(4L * MSG, ALL_REMOTE);
        MemoryRegion tx = pd.allocate(2L * MSG, ALL_REMOTE);
        ReceiveRequests r = srq.receiveRequests();
        for (int k = 0; k < 4; k++) {
            r.recv(300 + k).sge(rx, (long) k * MSG, MSG);
        }
        r.post();
        fill(tx.buffer(), 0, MSG, 5);
        fill(tx.buffer(), MSG, MSG, 6);
        ini.sendRequests().send(1, SendFlag.SIGNALED_BIT).sge(tx, 0, MSG).xrcSrqn(srqNum).post();
        try (PostBatch b = ini.startSend()) {
            b.send(2, SendFlag.SIGNALED_BIT).setXrcSrqn(srqNum).setSge(tx, MSG, MSG);
            b.submit();
        }
        assertThat(awaitSuccesses(cq, 2, java.time.Duration.ofMillis(50))).containsExactlyInAnyOrder(1L, 2L);
        java.util.List<Long> received = awaitSuccesses(srqCq, 2, java.time.Duration.ofMillis(50));
        assertThat(received).hasSize(2).allMatch(id -> id >= 300 && id < 304);
        assertSameBytes(rx.buffer(), (received.get(0) - 300) * MSG, tx.buffer(), 0, MSG);
        assertSameBytes(rx.buffer(), (received.get(1) - 300) * MSG, tx.buffer(), MSG, MSG);

        // lifetimes: a region under posted SRQ receives refuses to close; the domain closes its SRQ and TGT first
        assertThatThrownBy(rx::close).isInstanceOf(IllegalStateException.class);
        xrcd.close();
        assertThat(srq.isClosed()).isTrue();
        assertThat(tgt.isClosed()).isTrue();
        assertThat(ini.isClosed()).as("the initiator belongs to the PD").isFalse();
        rx.close();
        assertThat(rx.isClosed()).isTrue();
    }
}
