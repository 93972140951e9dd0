package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.mlx5dv.mlx5dv_qp_ex;
import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.FakeProvider;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.PostBatch;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.SendOperation;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * DCI streams on the host: {@link DcInitiator#setDcAddrStream} reaches the provider's
 * {@code mlx5dv_qp_ex.wr_set_dc_addr_stream} slot (the fake's recording C function) with the stream, a plain
 * {@link DcInitiator#setDcAddr} the plain slot; a {@link DcAddress#onStream} WQE carries the stream in its control
 * segment on the Direct WQE path; a stream the DCI was not built with, or any stream on a DCI without streams, is
 * refused by name before the provider or the ring. The WQE bytes against libmlx5's
 * {@code mlx5_send_wr_set_dc_addr_stream} are {@link Mlx5DcOracleTest}'s; the device's {@code dci_streams_caps}
 * refusal needs mlx5 hardware (the hardware lane).
 */
class DciStreamsTest {
    private static final ValueLayout.OfShort BE16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static FakeProvider fake;
    private static MemorySegment mqp;
    private static MethodHandle lastStream;
    private static MethodHandle lastDcAddr;

    @BeforeAll
    static void openFake() {
        fake = new FakeProvider(FakeProvider.compile(Path.of("src/test/c/fake_provider.c"), Path.of("target/fake")));
        mqp = Arena.global().allocate(mlx5dv_qp_ex.sizeof(), 8);
        mqp.set(ValueLayout.ADDRESS, mlx5dv_qp_ex.wr_set_dc_addr$offset(), fake.symbol("fake_wr_set_dc_addr"));
        mqp.set(ValueLayout.ADDRESS, mlx5dv_qp_ex.wr_set_dc_addr_stream$offset(),
                fake.symbol("fake_wr_set_dc_addr_stream"));
        lastStream = fake.downcall("fake_last_dc_stream", FunctionDescriptor.of(ValueLayout.JAVA_LONG), false);
        lastDcAddr = fake.downcall("fake_last_dc_addr", FunctionDescriptor.of(ValueLayout.JAVA_LONG,
                ValueLayout.ADDRESS), false);
    }

    private static long calls() throws Throwable {
        return (long) lastDcAddr.invokeExact(Arena.ofAuto().allocate(32, 8));
    }

    private static QueuePair rawDci(CompletionQueue cq) {
        return fake.createDcInitiator(cq, 16, EnumSet.of(SendOperation.RDMA_WRITE, SendOperation.SEND));
    }

    private static void drain(CompletionQueue cq) {
        WorkCompletions wcs = WorkCompletions.allocate(16);
        while (cq.poll(wcs) > 0) {
            // retire what the fake completed
        }
    }

    @Test
    void theBatchStepPassesTheStreamToTheProviderAndRefusesOthersBeforeIt() throws Throwable {
        CompletionQueue cq = fake.createCq(64);
        DcInitiator dci = new DcInitiator(rawDci(cq), mqp, 4); // built with dciStreams(2, ...)
        MemoryRegion buf = fake.buffer(0x91);
        AddressHandle ah = FakeProvider.fakeAh(fake.protectionDomain(), new AtomicInteger());
        try (PostBatch b = dci.startSend()) {
            b.rdmaWrite(5, SendFlag.SIGNALED_BIT, 0x1234, 0x10000);
            dci.setDcAddrStream(b, ah, 0xABCDEF, 77, 3).setSge(buf, 0, 64);
            b.submit();
        }
        assertThat((long) lastStream.invokeExact()).as("stream_id the provider got").isEqualTo(3);
        long before = calls();
        try (PostBatch b = dci.startSend()) {
            b.send(6, SendFlag.SIGNALED_BIT);
            assertThatThrownBy(() -> dci.setDcAddrStream(b, ah, 1, 2, 4)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("mlx5dv_wr_set_dc_addr_stream").hasMessageContaining("4 DCI streams (0..3)");
            assertThatThrownBy(() -> dci.setDcAddrStream(b, ah, 1, 2, -1))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("stream -1");
            dci.setDcAddr(b, ah, 1, 2).setSge(buf, 0, 8);
            b.submit();
        }
        assertThat(calls() - before).as("only the plain setter reached the provider").isEqualTo(1);
        assertThat((long) lastStream.invokeExact()).as("the plain slot, no stream").isEqualTo(-1);
        drain(cq);
        DcInitiator plain = new DcInitiator(rawDci(cq), mqp);
        try (PostBatch b = plain.startSend()) {
            b.send(7, 0);
            assertThatThrownBy(() -> plain.setDcAddrStream(b, ah, 1, 2, 1))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("without DCI streams")
                    .hasMessageContaining("dciStreams").hasMessageContaining("stream 1 refused");
        }
        assertThat(calls() - before).isEqualTo(1);
        ah.close();
        dci.close();
        plain.close();
        buf.close();
    }

    @Test
    void aDirectWqeOnAStreamCarriesItAndAStreamTheDciLacksIsRefusedWithNothingWritten() {
        try (Arena arena = Arena.ofShared()) {
            CompletionQueue cq = fake.createCq(64);
            QueuePair dci = rawDci(cq);
            MemoryRegion mr = fake.register(arena.allocate(4096, 64), 0x4444);
            MemorySegment sq = arena.allocate(64 * 64, 64).fill((byte) 0xEE);
            MemorySegment dbrec = arena.allocate(8, 8);
            DirectCompletionQueue dcq = DirectCompletionQueue.over(cq, new Mlx5CompletionQueueView(
                    Mlx5Model.invalidCqes(arena.allocate(64 * 64, 64), 64), 64, 64, arena.allocate(8, 8),
                    arena.allocate(8, 8), 0x77));
            AddressHandle ah = FakeProvider.fakeAh(fake.protectionDomain(), new AtomicInteger());
            DcAddress to = new DcAddress(ah, DirectDcQueue.trackingId(ah), new byte[48], 0x42, 9);
            Mlx5QueuePairView view = new Mlx5QueuePairView(sq, 64, 64, dbrec, arena.allocate(512, 64), 256,
                    dci.qpNum());
            DirectDcQueue plain = DirectDcQueue.over(dci, view, dcq, false, false);
            assertThatThrownBy(() -> plain.send(to.onStream(1), 1, 0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("no DCI streams").hasMessageContaining("stream 1");
            DirectDcQueue one = DirectDcQueue.over(dci, view, dcq, false, false, 1); // dciStreams(0, ...)
            assertThatThrownBy(() -> one.send(to.onStream(1), 1, 0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("has 1 DCI streams (0..0)").hasMessageNotContaining("no DCI streams");
            DirectDcQueue streams = DirectDcQueue.over(dci, view, dcq, false, false, 1 << 10);
            assertThatThrownBy(() -> streams.send(to.onStream(1024), 1, 0))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0..1023");
            assertThatThrownBy(() -> to.onStream(1 << 16)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("uint16_t");
            assertThat(sq.get(ValueLayout.JAVA_LONG, 0)).as("nothing written").isEqualTo(0xEEEE_EEEE_EEEE_EEEEL);
            streams.send(to.onStream(0x3A5), 1, SendFlag.SIGNALED_BIT).sge(mr, 0, 16);
            assertThat(streams.post()).isEqualTo(1);
            assertThat(sq.get(ValueLayout.JAVA_BYTE, 8)).as("signature").isZero();
            assertThat(sq.get(BE16, 9)).as("dci_stream_channel_id, big-endian").isEqualTo((short) 0x3A5);
            assertThat(sq.get(ValueLayout.JAVA_BYTE, 11) & 0x08).as("fm_ce_se: CQ update").isEqualTo(0x08);
            assertThat(sq.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 24))
                    .as("dqp_dct beside it").isEqualTo(0x8000_0000 | 0x42);
            dci.close();
            ah.close();
            mr.close();
        }
    }

    /**
     * Stream 0 on a DCI built without streams is the plain address on both paths, as in libmlx5 44: its
     * {@code wr_set_dc_addr_stream} slot is set for every DCI and writes {@code dci_stream_channel_id}, which
     * {@code _common_wqe_init} zeroed and {@code mlx5_send_wr_set_dc_addr} leaves 0 (mlx5dv_wr_post(3): "equivalent to
     * using stream_id=0"; the bytes of both against libmlx5 are {@link Mlx5DcOracleTest}'s); any other stream is
     * refused by both before the provider or the ring.
     */
    @Test
    void streamZeroOfADciWithoutStreamsIsThePlainAddressOnBothPaths() throws Throwable {
        CompletionQueue cq = fake.createCq(64);
        MemoryRegion buf = fake.buffer(0x92);
        AddressHandle ah = FakeProvider.fakeAh(fake.protectionDomain(), new AtomicInteger());
        DcInitiator plain = new DcInitiator(rawDci(cq), mqp);
        long before = calls();
        try (PostBatch b = plain.startSend()) {
            b.send(8, SendFlag.SIGNALED_BIT);
            plain.setDcAddrStream(b, ah, 0x77, 5, 0).setSge(buf, 0, 8);
            b.submit();
        }
        assertThat(calls() - before).as("the setter reached the provider").isEqualTo(1);
        assertThat((long) lastStream.invokeExact()).as("stream_id the provider got").isZero();
        drain(cq);
        try (Arena arena = Arena.ofShared()) {
            QueuePair dci = rawDci(cq);
            MemorySegment sq = arena.allocate(64 * 64, 64).fill((byte) 0xEE);
            DirectCompletionQueue dcq = DirectCompletionQueue.over(cq, new Mlx5CompletionQueueView(
                    Mlx5Model.invalidCqes(arena.allocate(64 * 64, 64), 64), 64, 64, arena.allocate(8, 8),
                    arena.allocate(8, 8), 0x78));
            DirectDcQueue q = DirectDcQueue.over(dci, new Mlx5QueuePairView(sq, 64, 64, arena.allocate(8, 8),
                    arena.allocate(512, 64), 256, dci.qpNum()), dcq, false, false);
            DcAddress to = new DcAddress(ah, DirectDcQueue.trackingId(ah), new byte[48], 0x42, 9);
            assertThatThrownBy(() -> q.send(to.onStream(1), 1, 0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("no DCI streams").hasMessageContaining("stream 1");
            assertThat(sq.get(ValueLayout.JAVA_LONG, 0)).as("nothing written").isEqualTo(0xEEEE_EEEE_EEEE_EEEEL);
            q.send(to.onStream(0), 2, SendFlag.SIGNALED_BIT).sge(buf, 0, 8);
            assertThat(q.post()).isEqualTo(1);
            assertThat(sq.get(BE16, 9)).as("dci_stream_channel_id").isZero();
            assertThat(sq.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 24))
                    .as("dqp_dct").isEqualTo(0x8000_0000 | 0x42);
            dci.close();
        }
        ah.close();
        plain.close();
        buf.close();
    }

    /**
     * {@code dciStreams}: more errored than concurrent streams is taken (rdma-core's {@code tests/mlx5_base.py}
     * creates such DCIs; nothing relates the two); out-of-range values are refused by name before any verb.
     */
    @Test
    void dciStreamsTakesMoreErroredThanConcurrentStreamsAndRefusesOutOfRangeValuesByName() {
        CompletionQueue cq = fake.createCq(8);
        DcInitiator.Builder b = DcInitiator.builder(fake.protectionDomain(), cq);
        assertThat(b.dciStreams(2, 3)).isSameAs(b);
        assertThat(b.dciStreams(16, 31)).isSameAs(b);
        for (int[] bad : new int[][] {{17, 0}, {0, 32}, {-1, 0}, {0, -1}, {Integer.MIN_VALUE, 0}, {0, 256}}) {
            assertThatThrownBy(() -> b.dciStreams(bad[0], bad[1])).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("mlx5dv_create_qp").hasMessageContaining("log_num_concurent " + bad[0])
                    .hasMessageContaining("log_num_errored " + bad[1]);
        }
    }
}
