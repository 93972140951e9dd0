package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.verbs.ibv_send_wr;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * XRC initiators on the host, over the fake provider (rxe has no XRC; the traffic runs on the hardware lane in
 * {@code XrcIT}): the classic chain writes {@code qp_type.xrc.remote_srqn} where the C header puts it and refuses at
 * post a WR that names no remote SRQ; the {@code ibv_wr_*} batch dispatches {@code ibv_wr_set_xrc_srqn} through the
 * QP's provider slot and refuses at submit a WR that names none; a non-XRC QP refuses both by name; an initiator has no receive queue. The layouts themselves are
 * checked against gcc by the bindings' ABI oracle ({@code AbiConformanceTest}: {@code struct ibv_send_wr},
 * {@code ibv_srq_init_attr_ex}, {@code ibv_qp_init_attr_ex}), the other XRC twins ({@code ibv_create_srq_ex} with
 * {@code IBV_SRQT_XRC}, {@code ibv_get_srq_num}, {@code ibv_open_xrcd}, ...) by its dispatch tests.
 */
class XrcHostTest {
    private static FakeProvider fake;

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
    }

    @Test
    void theChainAddressesTheRemoteSrqAndRefusesAWrWithoutOne() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair ini = fake.createXrcInitiator(cq, 16, EnumSet.noneOf(SendOperation.class));
        assertThat(ini.type()).isEqualTo(QueuePairType.XRC_SEND);
        assertThatThrownBy(ini::receiveRequests).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("XRC initiator");
        MemoryRegion buf = fake.buffer(0x61);
        SendRequests s = ini.sendRequests();
        s.rdmaWrite(1, SendFlag.SIGNALED_BIT, 0x77, 0x1000).sge(buf, 0, 64).xrcSrqn(0xABCDE);
        MemorySegment w = s.wrs.asSlice(0, ibv_send_wr.layout());
        MemorySegment xrc = ibv_send_wr.qp_type.xrc(ibv_send_wr.qp_type(w));
        assertThat(ibv_send_wr.qp_type.xrc.remote_srqn(xrc)).isEqualTo(0xABCDE);
        s.rdmaWrite(2, SendFlag.SIGNALED_BIT, 0x77, 0x2000).sge(buf, 64, 64); // no xrcSrqn
        assertThatThrownBy(s::post).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("work request 1").hasMessageContaining("xrcSrqn");
        assertThat(ini.sendQueue.tracker.outstanding()).as("nothing posted").isZero();
        s.xrcSrqn(0x123);
        assertThat(s.post()).isEqualTo(2);
        assertThat(DataPathHostTest.drain(cq)).extracting(c -> c[0]).containsExactly(1L, 2L);
        buf.close();
    }

    @Test
    void theBatchDispatchesIbvWrSetXrcSrqn() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair ini = fake.createXrcInitiator(cq, 16, EnumSet.of(SendOperation.RDMA_WRITE));
        MemoryRegion buf = fake.buffer(0x62);
        try (PostBatch b = ini.startSend()) {
            b.rdmaWrite(5, SendFlag.SIGNALED_BIT, 0x77, 0x3000).setXrcSrqn(0x4242).setSge(buf, 0, 32);
            assertThat(fake.lastXrcSrqn(ini)).isEqualTo(0x4242);
            b.submit();
        }
        assertThat(DataPathHostTest.drain(cq)).extracting(c -> c[0]).containsExactly(5L);
        buf.close();
    }

    @Test
    void theBatchRefusesAWrWithoutARemoteSrqBeforeAnythingReachesTheProvider() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair ini = fake.createXrcInitiator(cq, 16, EnumSet.of(SendOperation.RDMA_WRITE));
        MemoryRegion buf = fake.buffer(0x64);
        try (PostBatch b = ini.startSend()) {
            b.rdmaWrite(1, SendFlag.SIGNALED_BIT, 0x77, 0x1000).setXrcSrqn(0x11).setSge(buf, 0, 32);
            b.rdmaWrite(2, SendFlag.SIGNALED_BIT, 0x77, 0x2000).setSge(buf, 64, 32); // no setXrcSrqn
            DataPathHostTest.assertSubmitRefusedWithout(b, ini, "work request 1", "setXrcSrqn");
            b.setXrcSrqn(0x22);
            b.submit();
        }
        assertThat(DataPathHostTest.drain(cq)).extracting(c -> c[0]).containsExactly(1L, 2L);
        try (PostBatch b = ini.startSend()) { // a new batch keeps nothing of the last one's SRQ numbers
            b.rdmaWrite(3, SendFlag.SIGNALED_BIT, 0x77, 0x3000).setSge(buf, 0, 8);
            assertThatThrownBy(b::submit).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("work request 0");
        } // close() aborts it
        assertThat(DataPathHostTest.drain(cq)).as("nothing was posted").isEmpty();
        buf.close();
    }

    @Test
    void aQpThatIsNoXrcInitiatorRefusesRemoteSrqNumbers() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair rc = fake.createRtsQp(cq, 16, 0, EnumSet.of(SendOperation.SEND));
        assertThatThrownBy(() -> rc.sendRequests().send(1, 0).xrcSrqn(5)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("XRC_SEND");
        rc.sendRequests().clear();
        try (PostBatch b = rc.startSend()) {
            assertThatThrownBy(() -> b.send(2, 0).setXrcSrqn(5)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("ibv_wr_set_xrc_srqn");
        }
    }

    @Test
    void anInitiatorRefusesASrqNumberBeforeAnyWrAndEveryWrOnceClosed() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair ini = fake.createXrcInitiator(cq, 16, EnumSet.noneOf(SendOperation.class));
        MemoryRegion buf = fake.buffer(0x63);
        SendRequests s = ini.sendRequests();
        assertThatThrownBy(() -> s.xrcSrqn(7)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("start one first");
        s.send(1, SendFlag.SIGNALED_BIT).sge(buf, 0, 8).xrcSrqn(7);
        ini.close();
        assertThatThrownBy(s::post).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThatThrownBy(() -> s.send(2, 0)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(ini::sendRequests).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        buf.close(); // nothing was posted: nothing holds the region
    }
}
