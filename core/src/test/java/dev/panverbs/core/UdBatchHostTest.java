package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A UD QP's {@code ibv_wr_*} batch on the host, over the fake provider: a send WR that was never given an address
 * ({@code setUdAddr}, {@code ibv_wr_set_ud_addr}) is refused at submit before it reaches {@code ibv_wr_complete},
 * where the provider would send to whatever address vector its WQE slot last held (the twin of the XRC check in
 * {@link XrcHostTest}). The addressed path runs against rxe in {@code DataPathIT} and the UD perftest interop IT.
 */
class UdBatchHostTest {
    private static FakeProvider fake;

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
    }

    @Test
    void theBatchRefusesAUdSendWithoutAnAddressBeforeAnythingReachesTheProvider() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair ud = fake.createUdQp(cq, 16, EnumSet.of(SendOperation.SEND));
        MemoryRegion buf = fake.buffer(0x65);
        try (PostBatch b = ud.startSend()) {
            b.send(1, SendFlag.SIGNALED_BIT).setSge(buf, 0, 32); // no setUdAddr
            DataPathHostTest.assertSubmitRefusedWithout(b, ud, "work request 0", "setUdAddr");
        } // close() aborts it
        assertThat(DataPathHostTest.drain(cq)).as("nothing was posted").isEmpty();
        buf.close();
    }
}
