package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The close/post handshake, deterministically: the fake provider calls back into Java from inside
 * {@code post_send}, {@code post_recv} and {@code wr_complete} (where a device would already see the work request)
 * and tries to deregister the region the posted WR names. Runs in its own JVM (surefire execution
 * {@code upcall-tests}): upcalls are not allowed inside the shipped {@code critical} downcalls.
 */
class PostHandshakeUpcallTest {
    private static FakeProvider fake;

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
    }

    @Test
    void closeDuringTheProviderCallIsRefused() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 8, 8, 0, EnumSet.of(SendOperation.RDMA_WRITE));
        MemoryRegion mr = fake.buffer(0x66);
        List<Throwable> refusals = new ArrayList<>();
        fake.setPostHook(() -> { // "while the NIC may already DMA": inside ibv_post_send / wr_complete / post_recv
            try {
                mr.close();
                refusals.add(null);
            } catch (IllegalStateException e) {
                refusals.add(e);
            }
        });
        try {
            qp.sendRequests().rdmaWrite(1, SendFlag.SIGNALED_BIT, 0x99, 0x1000).sge(mr, 0, 64).post();
            qp.receiveRequests().recv(2).sge(mr, 64, 64).post();
            try (PostBatch b = qp.startSend()) {
                b.rdmaWrite(3, SendFlag.SIGNALED_BIT, 0x99, 0x1000).setSge(mr, 128, 64);
                b.submit();
            }
        } finally {
            fake.clearPostHook();
        }
        assertThat(refusals).hasSize(3).allSatisfy(e -> assertThat(e).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("still referenced by"));
        assertThat(mr.isOpen()).isTrue();
        DataPathHostTest.drain(cq);
        assertThatThrownBy(mr::close).as("the receive is still posted").hasMessageContaining("still referenced by 1");
        fake.flushReceives(qp);
        DataPathHostTest.drain(cq);
        mr.close();
        assertThat(mr.isOpen()).isFalse();
    }


    @Test
    void closingAnAddressHandleDuringTheProviderCallIsRefused() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair ud = fake.createUdQp(cq, 16, EnumSet.of(SendOperation.SEND));
        MemoryRegion mr = fake.buffer(0x67);
        AddressHandle ah = AddressHandle.wrap(fake.protectionDomain(), java.lang.foreign.Arena.global().allocate(64),
                AddressVector.builder(1).build(), h -> { });
        List<Throwable> refusals = new ArrayList<>();
        fake.setPostHook(() -> { // inside ibv_post_send / wr_complete: the provider holds the WR naming the AH
            try {
                ah.close();
                refusals.add(null);
            } catch (IllegalStateException e) {
                refusals.add(e);
            }
        });
        try {
            ud.sendRequests().send(1, SendFlag.SIGNALED_BIT).ud(ah, 7, 0x11).sge(mr, 0, 64).post();
            try (PostBatch b = ud.startSend()) {
                b.send(2, SendFlag.SIGNALED_BIT).setUdAddr(ah, 7, 0x11).setSge(mr, 64, 64);
                b.submit();
            }
        } finally {
            fake.clearPostHook();
        }
        assertThat(refusals).hasSize(2).allSatisfy(e -> assertThat(e).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_destroy_ah").hasMessageContaining("outstanding UD send"));
        DataPathHostTest.drain(cq);
        ah.close();
        assertThat(ah.isClosed()).isTrue();
        mr.close();
    }
}
