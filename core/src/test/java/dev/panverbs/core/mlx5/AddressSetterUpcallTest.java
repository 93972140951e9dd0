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
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The address setters of an {@code ibv_wr_*} batch against a concurrent {@link AddressHandle#close()}: libmlx5's
 * {@code mlx5_send_wr_set_dc_addr} / {@code set_ud_addr} copy the AH's {@code mlx5_ah.av}, memory
 * {@code ibv_destroy_ah} frees. The fake's setter calls back into Java (its own JVM: surefire {@code upcall-tests})
 * and closes the AH on another thread while the setter runs: that close must wait for the setter (its thread is seen
 * BLOCKED on the AH's monitor (DC) or parked in {@code AddressCopyGuard} (UD), the AH not yet destroyed), then
 * succeed, and the submit must refuse the WR naming the closed AH.
 */
class AddressSetterUpcallTest {
    private static FakeProvider fake;
    private static MemorySegment mqp;

    @BeforeAll
    static void openFake() {
        fake = new FakeProvider(FakeProvider.compile(Path.of("src/test/c/fake_provider.c"), Path.of("target/fake")));
        mqp = Arena.global().allocate(mlx5dv_qp_ex.sizeof(), 8);
        mqp.set(ValueLayout.ADDRESS, mlx5dv_qp_ex.wr_set_dc_addr$offset(), fake.symbol("fake_wr_set_dc_addr"));
    }

    @Test
    void aDcAddressHandleClosedDuringItsSetterIsDestroyedOnlyAfterIt() throws Exception {
        CompletionQueue cq = fake.createCq(64);
        DcInitiator dci = new DcInitiator(fake.createDcInitiator(cq, 16, EnumSet.of(SendOperation.SEND)), mqp);
        closeDuringSetter(dci.queuePair(), (b, ah) -> dci.setDcAddr(b, ah, 1, 2));
        dci.close();
    }

    @Test
    void aUdAddressHandleClosedDuringItsSetterIsDestroyedOnlyAfterIt() throws Exception {
        CompletionQueue cq = fake.createCq(64);
        QueuePair ud = fake.createUdQp(cq, 16, EnumSet.of(SendOperation.SEND));
        closeDuringSetter(ud, (b, ah) -> b.setUdAddr(ah, 7, 0x11));
        ud.close();
    }

    private static void closeDuringSetter(QueuePair qp, BiConsumer<PostBatch, AddressHandle> setter)
            throws Exception {
        MemoryRegion buf = fake.buffer(0x131);
        AtomicInteger destroyed = new AtomicInteger();
        AddressHandle ah = FakeProvider.fakeAh(fake.protectionDomain(), destroyed);
        Thread[] closer = new Thread[1];
        Thread.State[] seen = new Thread.State[1];
        int[] destroyedDuring = new int[1];
        fake.setAhHook(() -> { // inside the provider's setter, where libmlx5 reads mlx5_ah.av
            closer[0] = Thread.ofPlatform().start(ah::close);
            Thread.State s;
            while ((s = closer[0].getState()) != Thread.State.BLOCKED && s != Thread.State.TIMED_WAITING
                    && s != Thread.State.TERMINATED) { // UD: AddressCopyGuard parks; DC: the AH's monitor
                Thread.onSpinWait();
            }
            seen[0] = s;
            destroyedDuring[0] = destroyed.get();
        });
        try (PostBatch b = qp.startSend()) {
            b.send(1, SendFlag.SIGNALED_BIT);
            setter.accept(b, ah);
            fake.setAhHook(null);
            b.setSge(buf, 0, 8);
            closer[0].join();
            assertThat(destroyedDuring[0]).as("destroyed while the setter read it").isZero();
            assertThat(seen[0]).as("the close waited for the setter").isNotEqualTo(Thread.State.TERMINATED);
            assertThat(destroyed).as("then the close went on: nothing published named it").hasValue(1);
            assertThatThrownBy(b::submit).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining(ah.toString());
        } finally {
            fake.setAhHook(null);
        }
        buf.close();
    }
}
