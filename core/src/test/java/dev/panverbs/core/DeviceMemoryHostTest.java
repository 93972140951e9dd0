package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Misuse of {@link DeviceMemory} on the host over the fake provider (rxe has no device memory, so no IT reaches
 * these paths there): closing the memory while work requests still reference a region over it, and copies from or
 * into heap segments.
 */
class DeviceMemoryHostTest {
    private static FakeProvider fake;

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
    }

    private static DeviceMemory memoryOf(MemoryRegion mr) {
        return (DeviceMemory) mr.resource.parents().get(1).owner();
    }

    @Test
    void closingDeviceMemoryUnderPostedWorkIsRefusedAndFreesNothing() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 8, 8, 0, EnumSet.noneOf(SendOperation.class));
        AtomicInteger frees = new AtomicInteger();
        MemoryRegion mr = fake.registerDeviceMemory(4096, 0xD1, frees::incrementAndGet);
        DeviceMemory dm = memoryOf(mr);
        qp.receiveRequests().recv(1).sge(mr, 0, 64).post(); // the NIC may write the device memory until it completes

        assertThatThrownBy(dm::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_dereg_mr: " + mr).hasMessageContaining("outstanding work request");
        assertThat(dm.isClosed()).as("the memory stays allocated").isFalse();
        assertThat(mr.isClosed()).as("the region stays registered").isFalse();
        assertThat(frees).hasValue(0);

        fake.flushReceives(qp);
        assertThat(DataPathHostTest.drain(cq)).extracting(c -> c[0]).containsExactly(1L);
        dm.close(); // nothing references it any more: the region goes first, then the memory
        assertThat(mr.isClosed()).isTrue();
        assertThat(dm.isClosed()).isTrue();
        assertThat(frees).hasValue(1);
        dm.close();
        assertThat(frees).as("a second close is a no-op").hasValue(1);
        qp.close();
    }

    @Test
    void aContextOrPdCascadeStillClosesTheQpsBeforeTheRegionOverDeviceMemory() {
        ProtectionDomain pd = fake.protectionDomain();
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(pd, cq, cq, 8, 8, 0, EnumSet.noneOf(SendOperation.class));
        MemoryRegion mr = fake.registerDeviceMemory(4096, 0xD2, () -> { });
        qp.receiveRequests().recv(2).sge(mr, 64, 64).post();
        assertThatThrownBy(mr::close).hasMessageContaining("outstanding work request");
        qp.close(); // destroying the QP forgets its WRs: the region may go now
        memoryOf(mr).close();
        assertThat(mr.isClosed()).isTrue();
    }

    @Test
    void copiesNeedNativeSegmentsAndNameTheVerb() {
        MemoryRegion mr = fake.registerDeviceMemory(4096, 0xD3, () -> { });
        DeviceMemory dm = memoryOf(mr);
        MemorySegment heap = MemorySegment.ofArray(new byte[64]);
        assertThatThrownBy(() -> dm.copyTo(0, heap)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("ibv_memcpy_to_dm(").hasMessageContaining("heap segment");
        assertThatThrownBy(() -> dm.copyFrom(0, heap)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("ibv_memcpy_from_dm(").hasMessageContaining("heap segment");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(64);
            assertThatThrownBy(() -> dm.copyTo(4090, s)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("outside the 4096 bytes");
            assertThatThrownBy(() -> dm.copyFrom(Long.MAX_VALUE, s)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("outside the 4096 bytes");
        }
        dm.close();
        assertThat(mr.isClosed()).isTrue();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(64);
            assertThatThrownBy(() -> dm.copyTo(0, s)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("is closed").hasMessageContaining("ibv_memcpy_to_dm");
        }
    }
}
