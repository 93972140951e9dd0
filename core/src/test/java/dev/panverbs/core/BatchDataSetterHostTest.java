package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An {@code ibv_wr_*} batch's WR takes exactly one data setter (ibv_wr_post(3): every operation but BIND_MW and
 * LOCAL_INV lists DATA): libmlx5 44 finishes a WQE ({@code qpn_ds}, {@code sq.cur_post}) in the data setter only, so a
 * WR without one would be overwritten by the next or never rung while its completion is awaited, and a second setter
 * finishes its slot twice. On the host, over the fake provider: refused naming the WR by the next operation or the
 * submit, before anything is published; a zero-length WR is {@code setSge(key, 0, 0)}.
 */
class BatchDataSetterHostTest {
    private static FakeProvider fake;

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
    }

    @Test
    void aWorkRequestWithoutDataIsRefusedByTheNextOperationAndTheSubmitNamingIt() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(cq, 16, 0, EnumSet.of(SendOperation.SEND_WITH_IMM,
                SendOperation.SEND));
        MemoryRegion buf = fake.buffer(0x101);
        try (PostBatch b = qp.startSend()) {
            b.send(1, SendFlag.SIGNALED_BIT).setSge(buf, 0, 32);
            b.sendWithImm(2, SendFlag.SIGNALED_BIT, 7); // a notification: no data setter
            assertThatThrownBy(() -> b.send(3, 0)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("work request 1").hasMessageContaining("no data")
                    .hasMessageContaining("setSge(key, 0, 0)");
            assertThatThrownBy(b::submit).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("ibv_wr_complete").hasMessageContaining("work request 1")
                    .hasMessageContaining("no data");
            assertThat(qp.sendQueue.tracker.outstanding()).as("nothing published").isZero();
            assertThat(b.isOpen()).as("the batch stays open").isTrue();
            b.setSge(buf, 0, 0); // the zero-length form: the batch goes on
            b.send(3, SendFlag.SIGNALED_BIT).setSge(buf, 32, 32);
            b.submit();
        }
        assertThat(DataPathHostTest.drain(cq)).extracting(c -> c[0]).containsExactly(1L, 2L, 3L);
        buf.close();
    }

    @Test
    void aSecondDataSetterIsRefusedAndTheBatchIsNeverPosted() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(cq, 16, 64, EnumSet.of(SendOperation.SEND, SendOperation.LOCAL_INV));
        MemoryRegion buf = fake.buffer(0x102);
        try (PostBatch b = qp.startSend()) {
            b.send(1, SendFlag.SIGNALED_BIT | SendFlag.INLINE_BIT).setSge(buf, 0, 32)
                    .setInlineData(MemorySegment.ofArray(new byte[8]));
            assertThatThrownBy(b::submit).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("work request 0").hasMessageContaining("data twice");
        }
        try (PostBatch b = qp.startSend()) {
            b.localInv(1, 0, 0x55).setSgeList(new LocalKey[0], new long[0], new int[0], 0); // LOCAL_INV: NONE
            assertThatThrownBy(() -> b.send(2, 0)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("work request 0").hasMessageContaining("data twice");
        }
        assertThat(DataPathHostTest.drain(cq)).as("nothing was posted").isEmpty();
        try (PostBatch b = qp.startSend()) { // LOCAL_INV without data, then an empty list
            b.localInv(4, SendFlag.SIGNALED_BIT, 0x55);
            b.send(5, SendFlag.SIGNALED_BIT).setSgeList(new LocalKey[0], new long[0], new int[0], 0);
            b.submit();
        }
        assertThat(DataPathHostTest.drain(cq)).extracting(c -> c[0]).containsExactly(4L, 5L);
        buf.close();
    }

    @Test
    void aUdSendWithItsAddressButNoDataIsRefused() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair ud = fake.createUdQp(cq, 16, EnumSet.of(SendOperation.SEND));
        AddressHandle ah = FakeProvider.fakeAh(fake.protectionDomain(), new AtomicInteger());
        try (PostBatch b = ud.startSend()) {
            b.send(1, SendFlag.SIGNALED_BIT).setUdAddr(ah, 7, 0x11); // the address alone: libmlx5 waits for data
            assertThatThrownBy(b::submit).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("work request 0").hasMessageContaining("no data");
        }
        assertThat(DataPathHostTest.drain(cq)).as("nothing was posted").isEmpty();
        ah.close(); // the aborted batch pinned nothing
    }
}
