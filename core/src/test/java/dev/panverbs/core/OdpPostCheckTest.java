package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The per-transport, per-operation ODP checks at post time, on the host over the fake provider: an SGE over a region
 * registered with {@link Access#ON_DEMAND} is refused by name ({@code IBV_ODP_SUPPORT_*} of the transport's
 * {@code *_odp_caps}) when the WR's operation is one the device's ODP capabilities do not allow for the QP's
 * transport, on every post path (the classic send and receive chains, including a repeated key, and
 * {@code ibv_wr_*} batches); allowed operations and plain regions post as before. On rxe (no ODP) the registration
 * itself is refused ({@code XrcOdpDeviceMemoryIT}).
 */
class OdpPostCheckTest {
    private static FakeProvider fake;
    private static final Set<Access> ODP = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.ON_DEMAND);

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
    }

    /** ODP for RC SEND and RECV only; UD may also receive; XRC may read. */
    private static OdpCapabilities caps(Set<OdpCapabilities.Operation> rc) {
        return new OdpCapabilities(true, false, rc, Set.of(),
                EnumSet.of(OdpCapabilities.Operation.RECV, OdpCapabilities.Operation.SRQ_RECV),
                EnumSet.of(OdpCapabilities.Operation.READ));
    }

    private static MemoryRegion region(Set<Access> access, int key) {
        return fake.register(fake.protectionDomain(), Arena.ofShared().allocate(4096, 64), key, access);
    }

    @Test
    void sendChainRefusesOdpSgesOfOperationsTheTransportLacks() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 16, 16, 0,
                EnumSet.noneOf(SendOperation.class));
        qp.rules.odp(caps(EnumSet.of(OdpCapabilities.Operation.SEND, OdpCapabilities.Operation.RECV)), "fake0");
        MemoryRegion odp = region(ODP, 0x31);
        MemoryRegion plain = region(EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE), 0x32);
        assertThat(DataPathAccess.snapshot(odp).odp).isTrue();
        assertThat(DataPathAccess.snapshot(plain).odp).isFalse();

        SendRequests s = qp.sendRequests();
        s.send(1, 0).sge(odp, 0, 64).send(11, 0).sge(odp, 64, 64); // SEND allowed, the repeated key too
        assertThatThrownBy(() -> s.rdmaWrite(2, 0, 0x77, 0x1000).sge(odp, 0, 64))
                .isInstanceOf(UnsupportedVerbException.class)
                .hasMessageContaining("ibv_post_send").hasMessageContaining(odp.toString())
                .hasMessageContaining("fake0").hasMessageContaining("rc_odp_caps")
                .extracting(e -> ((UnsupportedVerbException) e).capability()).asString()
                .contains("IBV_ODP_SUPPORT_WRITE");
        s.clear();
        // the same key as the previous SGE (the chain's fast path) is still checked against the new WR's operation
        s.send(3, 0).sge(odp, 0, 64);
        assertThatThrownBy(() -> s.rdmaRead(4, 0, 0x77, 0x1000).sge(odp, 0, 64))
                .isInstanceOf(UnsupportedVerbException.class).hasMessageContaining("IBV_ODP_SUPPORT_READ");
        assertThatThrownBy(() -> s.atomicFetchAdd(5, 0, 0x77, 0x1000, 1).sge(odp, 0, 8))
                .isInstanceOf(UnsupportedVerbException.class).hasMessageContaining("IBV_ODP_SUPPORT_ATOMIC");
        s.clear();
        // allowed operations and plain regions post through the provider as before
        s.send(6, SendFlag.SIGNALED_BIT).sge(odp, 0, 64);
        s.rdmaWrite(7, SendFlag.SIGNALED_BIT, 0x77, 0x1000).sge(plain, 0, 64);
        assertThat(s.post()).isEqualTo(2);
        assertThat(DataPathHostTest.drain(cq)).extracting(c -> c[0]).containsExactly(6L, 7L);

        // receives: RECV allowed
        qp.receiveRequests().recv(8).sge(odp, 0, 64);
        assertThat(qp.receiveRequests().post()).isEqualTo(1);
        assertThatThrownBy(odp::close).as("DMA safety holds for ODP keys too").isInstanceOf(IllegalStateException.class);
        fake.flushReceives(qp);
        assertThat(DataPathHostTest.drain(cq)).hasSize(1);
        odp.close();
        plain.close();
    }

    @Test
    void receivesAndBatchesAreCheckedToo() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 16, 16, 0,
                EnumSet.of(SendOperation.SEND, SendOperation.RDMA_WRITE));
        qp.rules.odp(caps(EnumSet.of(OdpCapabilities.Operation.WRITE)), "fake0"); // no SEND, no RECV
        MemoryRegion odp = region(ODP, 0x41);
        assertThatThrownBy(() -> qp.receiveRequests().recv(1).sge(odp, 0, 64))
                .isInstanceOf(UnsupportedVerbException.class).hasMessageContaining("ibv_post_recv")
                .hasMessageContaining("IBV_ODP_SUPPORT_RECV");
        qp.receiveRequests().clear();
        MemoryRegion noWrite = region(EnumSet.of(Access.REMOTE_READ), 0x42); // the LOCAL_WRITE check still holds
        assertThatThrownBy(() -> qp.receiveRequests().recv(2).sge(noWrite, 0, 64))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("LOCAL_WRITE");
        qp.receiveRequests().clear();
        try (PostBatch b = qp.startSend()) {
            b.rdmaWrite(3, SendFlag.SIGNALED_BIT, 0x77, 0x2000).setSge(odp, 0, 64); // WRITE allowed
            assertThatThrownBy(() -> b.send(4, 0).setSge(odp, 0, 64))
                    .isInstanceOf(UnsupportedVerbException.class).hasMessageContaining("IBV_ODP_SUPPORT_SEND");
            assertThatThrownBy(() -> b.setSgeList(new LocalKey[] {odp}, new long[] {0}, new int[] {64}, 1))
                    .isInstanceOf(UnsupportedVerbException.class).hasMessageContaining("IBV_ODP_SUPPORT_SEND");
        }
        odp.close();
        noWrite.close();
    }

    @Test
    void eachTransportReadsItsOwnCapsAndSharedReceiveQueuesNeedSrqRecv() {
        OdpCapabilities c = caps(EnumSet.of(OdpCapabilities.Operation.SEND));
        assertThat(OdpSupport.mask(c, QueuePairType.RC)).isEqualTo(OdpCapabilities.Operation.SEND.value());
        assertThat(OdpSupport.mask(c, QueuePairType.UC)).isZero();
        assertThat(OdpSupport.mask(c, QueuePairType.UD)).isEqualTo(OdpCapabilities.Operation.RECV.value()
                | OdpCapabilities.Operation.SRQ_RECV.value());
        assertThat(OdpSupport.mask(c, QueuePairType.XRC_SEND)).isEqualTo(OdpCapabilities.Operation.READ.value());
        assertThat(OdpSupport.mask(c, null)).as("an SRQ: any transport").isEqualTo(
                OdpCapabilities.Operation.SEND.value() | OdpCapabilities.Operation.RECV.value()
                        | OdpCapabilities.Operation.SRQ_RECV.value() | OdpCapabilities.Operation.READ.value());
        OdpCapabilities none = new OdpCapabilities(false, false, Set.of(), Set.of(), Set.of(), Set.of());
        assertThat(OdpSupport.mask(none, QueuePairType.RC)).isZero();
        assertThat(OdpSupport.operation(WorkRequestOpcode.RDMA_WRITE_WITH_IMM)).isEqualTo(OdpCapabilities.Operation.WRITE);
        assertThat(OdpSupport.operation(WorkRequestOpcode.SEND_WITH_INV)).isEqualTo(OdpCapabilities.Operation.SEND);
        assertThat(OdpSupport.operation(WorkRequestOpcode.ATOMIC_CMP_AND_SWP.value()))
                .isEqualTo(OdpCapabilities.Operation.ATOMIC);

        // an SRQ's receive chain: SRQ_RECV of some transport
        MemoryRegion odp = region(ODP, 0x51);
        WorkRequestRules srqRules = new WorkRequestRules("SRQ#t", QueuePairType.RC, false, 0, fake.protectionDomain());
        srqRules.odpForSrq(new OdpCapabilities(true, false, EnumSet.of(OdpCapabilities.Operation.RECV), Set.of(),
                Set.of(), Set.of()), "fake0");
        ReceiveRequests r = new ReceiveRequests(srqRules, 4, 1);
        assertThatThrownBy(() -> r.recv(1).sge(odp, 0, 64)).isInstanceOf(UnsupportedVerbException.class)
                .hasMessageContaining("ibv_post_srq_recv").hasMessageContaining("IBV_ODP_SUPPORT_SRQ_RECV")
                .hasMessageContaining("shared receive queues");
        r.clear();
        srqRules.odpForSrq(new OdpCapabilities(true, false, Set.of(), Set.of(),
                EnumSet.of(OdpCapabilities.Operation.SRQ_RECV), Set.of()), "fake0");
        r.recv(2).sge(odp, 0, 64);
        assertThat(r.count()).isEqualTo(1);
        odp.close();
    }
}
