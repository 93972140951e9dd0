package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.FakeProvider;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.SendOperation;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link DirectDcQueue} on the core's real objects over the fake provider, its ring in plain memory: a DCI's WQE
 * carries the datagram segment of its {@link DcAddress} (the DC key, the DCT number with {@code MLX5_EXTENDED_UD_AV},
 * the rest of the AH's address vector) and the doorbell record moves; the address handle a posted WQE names refuses to
 * close until the WR is gone; the misuses (a closed AH, an AH of another PD, no address, a QP of another type on
 * either direct queue) are refused by name with nothing written. The bytes themselves are {@link Mlx5DcOracleTest}'s.
 */
class DirectDcQueueTest {
    private static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private FakeProvider fp;
    private Arena arena;
    private CompletionQueue cq;
    private QueuePair dci;
    private MemorySegment sq;
    private MemorySegment dbrec;
    private DirectCompletionQueue dcq;
    private MemoryRegion mr;

    @BeforeEach
    void setUp() {
        fp = new FakeProvider(FakeProvider.compile(Path.of("src/test/c/fake_provider.c"), Path.of("target/fake")));
        arena = Arena.ofShared();
        cq = fp.createCq(64);
        dci = fp.createDcInitiator(cq, 16, EnumSet.of(SendOperation.RDMA_WRITE, SendOperation.SEND));
        sq = arena.allocate(64 * 64, 64).fill((byte) 0xEE);
        dbrec = arena.allocate(8, 8);
        dcq = DirectCompletionQueue.over(cq, new Mlx5CompletionQueueView(
                Mlx5Model.invalidCqes(arena.allocate(64 * 64, 64), 64), 64, 64, arena.allocate(8, 8),
                arena.allocate(8, 8), 0x77));
        mr = fp.register(arena.allocate(4096, 64), 0x4444);
    }

    @AfterEach
    void tearDown() {
        dci.close();
        mr.close();
    }

    private DirectDcQueue queue(QueuePair qp) {
        return DirectDcQueue.over(qp, new Mlx5QueuePairView(sq, 64, 64, dbrec, arena.allocate(512, 64), 256,
                qp.qpNum()), dcq, false, false);
    }

    private static byte[] av(int seed) {
        byte[] b = new byte[48];
        for (int i = 0; i < 48; i++) {
            b[i] = (byte) (seed + i * 3);
        }
        return b;
    }

    private static DcAddress address(AddressHandle ah, int dctn, long key) {
        return new DcAddress(ah, DirectDcQueue.trackingId(ah), av(ah.hashCode()), dctn, key);
    }

    @Test
    void aWqeCarriesTheDatagramSegmentAndItsAddressHandleStaysUntilTheWrIsGone() {
        AtomicInteger destroyed = new AtomicInteger();
        AddressHandle ah = FakeProvider.fakeAh(fp.protectionDomain(), destroyed);
        DcAddress to = address(ah, 0x00ABCDEF, 0x1122334455667788L);
        DirectDcQueue q = queue(dci);
        q.rdmaWrite(to, 9, SendFlag.SIGNALED_BIT, 0x5555, 0x7000).sge(mr, 0, 256);
        assertThat(q.post()).isEqualTo(1);
        assertThat(sq.get(BE32, 0) & 0xFF).as("opcode RDMA_WRITE").isEqualTo(0x08);
        assertThat(sq.get(BE32, 4) & 0xFF).as("ds: ctrl + datagram + raddr + data").isEqualTo(6);
        assertThat(sq.get(BE64, 16)).as("dc_key").isEqualTo(0x1122334455667788L);
        byte[] mine = av(ah.hashCode());
        int dqp = MemorySegment.ofArray(mine).get(BE32, 8);
        assertThat(sq.get(BE32, 24)).as("dqp_dct").isEqualTo(dqp | 0x8000_0000 | 0x00ABCDEF);
        assertThat(sq.asSlice(28, 36).toArray(ValueLayout.JAVA_BYTE)).as("the rest of the AV")
                .containsExactly(java.util.Arrays.copyOfRange(mine, 12, 48));
        assertThat(sq.get(BE64, 64)).as("raddr in the next WQEBB").isEqualTo(0x7000);
        assertThat(dbrec.get(BE32, 4)).as("send counter: 2 WQEBBs").isEqualTo(2);
        assertThatThrownBy(ah::close).isInstanceOf(IllegalStateException.class).hasMessageContaining("ibv_destroy_ah")
                .hasMessageContaining("outstanding");
        assertThat(destroyed).hasValue(0);
        dci.close(); // the QP's end forgets its WRs
        ah.close();
        assertThat(destroyed).hasValue(1);
    }

    @Test
    void misusesAreRefusedByNameWithNothingWritten() {
        AddressHandle closed = FakeProvider.fakeAh(fp.protectionDomain(), new AtomicInteger());
        DcAddress stale = address(closed, 1, 2);
        closed.close();
        AddressHandle foreign = FakeProvider.fakeAh(fp.newPd(), new AtomicInteger());
        DirectDcQueue q = queue(dci);
        assertThatThrownBy(() -> q.send(stale, 1, 0)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("mlx5 Direct WQE post (DCI)");
        assertThatThrownBy(() -> q.send(address(foreign, 1, 2), 1, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("another protection domain");
        assertThatThrownBy(() -> q.send(null, 1, 0)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("DC address");
        assertThatThrownBy(() -> new DcAddress(foreign, 0, av(1), 1 << 24, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("24-bit");
        assertThat(q.pending()).isZero();
        assertThat(sq.get(ValueLayout.JAVA_LONG, 0)).as("nothing written").isEqualTo(0xEEEE_EEEE_EEEE_EEEEL);
        assertThat(dbrec.get(BE32, 4)).isZero();
        QueuePair rc = fp.createRtsQp(cq, 16, 0, Set.of());
        assertThatThrownBy(() -> queue(rc)).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("DirectDcQueue writes DC initiator WQEs");
        assertThatThrownBy(() -> DirectSendQueue.over(dci, new Mlx5QueuePairView(sq, 64, 64, dbrec,
                arena.allocate(512, 64), 256, dci.qpNum()), dcq, false, false))
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("DirectDcQueue");
        rc.close();
    }

    @Test
    void buildingDciWrsAllocatesNothing() throws Exception {
        // com.sun.management.ThreadMXBean.getCurrentThreadAllocatedBytes, reflectively (as Mlx5EndToEndTest)
        Object mx = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        java.lang.reflect.Method allocatedBytes = Class.forName("com.sun.management.ThreadMXBean")
                .getMethod("getCurrentThreadAllocatedBytes");
        AddressHandle ah = FakeProvider.fakeAh(fp.protectionDomain(), new AtomicInteger());
        DcAddress to = address(ah, 0x42, 7);
        DirectDcQueue q = queue(dci);
        for (int warm = 0; warm < 2; warm++) {
            long before = (Long) allocatedBytes.invoke(mx);
            for (int i = 0; i < 20_000; i++) {
                q.rdmaWrite(to, i, SendFlag.SIGNALED_BIT, 0x5555, 0x7000).sge(mr, 0, 32);
                q.send(to, i, 0).sge(mr, 64, 32);
                q.clear(); // nothing rung: the ring never fills on the fake (no completions)
            }
            long allocated = (Long) allocatedBytes.invoke(mx) - before;
            if (warm == 1) {
                assertThat(allocated).as("bytes allocated by 40,000 DCI WRs built").isLessThan(20_000);
            }
        }
        ah.close(); // nothing was posted: nothing names it
    }
}
