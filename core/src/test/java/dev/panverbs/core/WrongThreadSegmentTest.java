package dev.panverbs.core;

import static dev.panverbs.testing.Threads.onAnotherThread;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A segment of a confined arena handed to a verb on a thread that does not own it: the JDK refuses the access
 * ({@link WrongThreadException}); panverbs names the verb and the fix, and nothing reaches the provider. Over the fake
 * provider.
 */
class WrongThreadSegmentTest {
    private static FakeProvider fake;

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
    }

    private static void assertNamed(Throwable e, String verb) {
        assertThat(e).isInstanceOf(WrongThreadException.class).hasMessageContaining(verb)
                .hasMessageContaining("owner thread").hasCauseInstanceOf(WrongThreadException.class);
    }

    @Test
    void inlineDataOfTheClassicChain() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(cq, 16, 64, EnumSet.noneOf(SendOperation.class));
        try (Arena confined = Arena.ofConfined()) {
            MemorySegment data = confined.allocate(16);
            Throwable e = onAnotherThread(() -> qp.sendRequests().clear()
                    .rdmaWrite(1, SendFlag.INLINE_BIT | SendFlag.SIGNALED_BIT, 0x99, 0x1000).inline(data));
            assertNamed(e, "ibv_post_send");
        }
        qp.sendRequests().clear();
        assertThat(DataPathHostTest.drain(cq)).isEmpty();
    }

    @Test
    void inlineDataOfABatch() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(cq, 16, 64, EnumSet.of(SendOperation.RDMA_WRITE));
        try (Arena confined = Arena.ofConfined()) {
            MemorySegment data = confined.allocate(16);
            MemorySegment[] list = {data};
            Throwable e = onAnotherThread(() -> {
                try (PostBatch b = qp.startSend()) {
                    b.rdmaWrite(1, SendFlag.INLINE_BIT | SendFlag.SIGNALED_BIT, 0x99, 0x1000).setInlineData(data);
                }
            });
            assertNamed(e, "ibv_wr_set_inline_data");
            e = onAnotherThread(() -> {
                try (PostBatch b = qp.startSend()) {
                    b.rdmaWrite(1, SendFlag.INLINE_BIT | SendFlag.SIGNALED_BIT, 0x99, 0x1000)
                            .setInlineDataList(list, 1);
                }
            });
            assertNamed(e, "ibv_wr_set_inline_data_list");
        }
        assertThat(DataPathHostTest.drain(cq)).isEmpty();
    }

    @Test
    void regMrOfAConfinedSegmentOfAnotherThread() {
        ProtectionDomain pd = fake.protectionDomain();
        int children = pd.resource.children().size();
        try (Arena confined = Arena.ofConfined()) {
            MemorySegment seg = confined.allocate(4096, 4096);
            Throwable e = onAnotherThread(() -> pd.regMr(seg, EnumSet.of(Access.LOCAL_WRITE)));
            assertNamed(e, "ibv_reg_mr");
        }
        assertThat(pd.resource.children()).hasSize(children);
    }
}
