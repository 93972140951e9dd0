package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.util.EnumSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A memory window named by an outstanding work request (a type 2 bind or a local invalidation, both post paths) is
 * not deallocated: {@code close()} ({@code ibv_dealloc_mw}) is refused until the WR's completion is polled, since the
 * device resolves the window when it executes the WR. The arena tie of its region still deallocates it. Over the fake
 * provider, which executes BIND_MW and LOCAL_INV as no-op sends.
 */
class MemoryWindowCloseHostTest {
    private static final EnumSet<Access> BINDABLE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
            Access.MW_BIND);

    private static FakeProvider fake;

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
    }

    private static MemoryRegion bindable(int key) {
        return fake.register(fake.protectionDomain(), Arena.ofShared().allocate(4096, 64), key, BINDABLE);
    }

    @Test
    void closeIsRefusedWhileAClassicBindOrInvalidationNamingItIsOutstanding() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(cq, 16, 0, EnumSet.noneOf(SendOperation.class));
        MemoryRegion mr = bindable(0x81);
        MemoryWindow mw = fake.allocMw(MemoryWindowType.TYPE_2, 0x100);
        qp.sendRequests().bindMw(1, SendFlag.SIGNALED_BIT, mw, MemoryWindow.nextRkey(mw.rkey()), mr, 0, 4096,
                EnumSet.of(Access.REMOTE_WRITE)).post();
        assertThatThrownBy(mw::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_dealloc_mw").hasMessageContaining("outstanding")
                .hasMessageContaining("poll its completion");
        assertThat(mw.isClosed()).isFalse();
        assertThat(DataPathHostTest.drainOk(cq)).containsExactly(1L);
        qp.sendRequests().localInv(2, SendFlag.SIGNALED_BIT, mw).post();
        assertThatThrownBy(mw::close).hasMessageContaining("ibv_dealloc_mw");
        assertThat(DataPathHostTest.drainOk(cq)).containsExactly(2L);
        mw.close();
        assertThat(mw.isClosed()).isTrue();
        mr.close();
    }

    @Test
    void closeIsRefusedWhileABatchBindNamingItIsOutstanding() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(cq, 16, 0, EnumSet.of(SendOperation.BIND_MW, SendOperation.LOCAL_INV));
        MemoryRegion mr = bindable(0x82);
        MemoryWindow mw = fake.allocMw(MemoryWindowType.TYPE_2, 0x200);
        try (PostBatch b = qp.startSend()) {
            b.bindMw(3, SendFlag.SIGNALED_BIT, mw, MemoryWindow.nextRkey(mw.rkey()), mr, 0, 4096,
                    EnumSet.of(Access.REMOTE_WRITE));
            b.submit();
        }
        assertThatThrownBy(mw::close).hasMessageContaining("ibv_dealloc_mw").hasMessageContaining("outstanding");
        assertThat(DataPathHostTest.drain(cq)).hasSize(1);
        mw.close();
        mr.close();
    }

    @Test
    void closingTheQpReleasesTheWindowAndTheArenaTieDeallocatesItWhatever() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(cq, 16, 0, EnumSet.noneOf(SendOperation.class));
        MemoryRegion mr = bindable(0x83);
        MemoryWindow mw = fake.allocMw(MemoryWindowType.TYPE_2, 0x300);
        qp.sendRequests().bindMw(4, SendFlag.SIGNALED_BIT, mw, MemoryWindow.nextRkey(mw.rkey()), mr, 0, 64,
                EnumSet.of(Access.REMOTE_WRITE)).post();
        assertThatThrownBy(mw::close).hasMessageContaining("ibv_dealloc_mw");
        qp.close(); // destroying the QP retires its WRs
        mw.close();
        assertThat(mw.isClosed()).isTrue();
        mr.close();

        // the arena tie: the region's arena closes while a bind is outstanding; the window goes first regardless
        QueuePair qp2 = fake.createRtsQp(cq, 16, 0, EnumSet.noneOf(SendOperation.class));
        Arena arena = Arena.ofShared();
        MemoryRegion tied = fake.register(fake.protectionDomain(), arena.allocate(4096, 64), 0x84, BINDABLE);
        MemoryWindow mw2 = fake.allocMw(MemoryWindowType.TYPE_2, 0x400);
        qp2.sendRequests().bindMw(5, SendFlag.SIGNALED_BIT, mw2, MemoryWindow.nextRkey(mw2.rkey()), tied, 0, 64,
                EnumSet.of(Access.REMOTE_WRITE)).post();
        tied.tieTo(arena);
        arena.close();
        assertThat(mw2.isClosed()).as("deallocated by the arena tie before the memory is freed").isTrue();
        assertThat(tied.isOpen()).isFalse();
        DataPathHostTest.drain(cq);
    }

    @Test
    void theArenaTieDeallocatesAWindowThatAnOpenBatchOfThisThreadNamesAndTheSubmitAborts() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(cq, 16, 0, EnumSet.of(SendOperation.BIND_MW, SendOperation.LOCAL_INV));
        MemoryRegion other = bindable(0x85);
        Arena arena = Arena.ofShared();
        MemoryRegion tied = fake.register(fake.protectionDomain(), arena.allocate(4096, 64), 0x86, BINDABLE);
        tied.tieTo(arena);
        MemoryWindow mw = fake.allocMw(MemoryWindowType.TYPE_2, 0x500);
        qp.sendRequests().bindMw(6, SendFlag.SIGNALED_BIT, mw, MemoryWindow.nextRkey(mw.rkey()), tied, 0, 64,
                EnumSet.of(Access.REMOTE_WRITE)).post();
        assertThat(DataPathHostTest.drainOk(cq)).containsExactly(6L);
        int deadUses = fake.mwDeadUses();
        try (PostBatch b = qp.startSend()) {
            b.bindMw(7, SendFlag.SIGNALED_BIT, mw, MemoryWindow.nextRkey(mw.rkey()), other, 0, 64,
                    EnumSet.of(Access.REMOTE_WRITE));
            assertThatThrownBy(mw::close).hasMessageContaining("being built or posted");
            arena.close(); // pinned by this thread's open batch, not read now: deallocated at once, no wait
            assertThat(mw.isClosed()).isTrue();
            assertThat(tied.isOpen()).isFalse();
            assertThatThrownBy(b::submit).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("MemoryWindow").hasMessageContaining("ibv_wr_complete")
                    .hasMessageContaining("aborted");
        }
        assertThat(qp.sendQueue.tracker.outstanding()).as("nothing posted").isZero();
        assertThat(DataPathHostTest.drain(cq)).isEmpty();
        assertThat(fake.mwDeadUses()).as("the deallocated ibv_mw was neither read nor written").isEqualTo(deadUses);
        other.close(); // the aborted bind left no window bound to it: not refused
        assertThat(other.isOpen()).isFalse();
    }
}
