package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.Access;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.FakeProvider;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.PostBatch;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.SendOperation;
import dev.panverbs.core.SteeredRace;
import dev.panverbs.core.UmrHostSupport;
import dev.panverbs.core.WorkCompletionOpcode;
import dev.panverbs.core.WorkCompletionStatus;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Indirect mkeys and their UMRs through the real {@link IndirectMkey}, {@link UmrQueuePair}, {@link QueuePair},
 * {@link MemoryRegion} and {@link CompletionQueue} objects over the fake provider plus fake {@code mlx5dv_qp_ex} UMR
 * builders ({@code core/src/test/c/fake_mlx5dv.c}): what reaches the builder, completion routing
 * ({@code IBV_WC_DRIVER1}), and the DMA-safety promises (regions held by a configured mkey, destroy refused while
 * named by an outstanding WR, the arena tie destroying the mkey first, SGEs over a reconfigured mkey refused).
 */
class IndirectMkeyHostTest {
    private static final int QP_INLINE = 512; // (512 + 4) / 16 = 32 list entries, 31 interleaved
    private static UmrFake umrFake;
    private static FakeProvider fake;
    private static MemorySegment umrRecord;

    private final AtomicInteger destroyed = new AtomicInteger();
    private CompletionQueue cq;
    private UmrQueuePair umr;
    private ProtectionDomain pd;
    private int nextKey = 0x4000;

    @BeforeAll
    static void build() {
        umrFake = new UmrFake();
        fake = umrFake.fake;
        umrRecord = umrFake.lastUmr().reinterpret(40 + 24 * 1024);
    }

    @BeforeEach
    void setUp() {
        pd = fake.protectionDomain();
        cq = fake.createCq(256);
        QueuePair qp = fake.createRtsQp(pd, cq, cq, 64, 16, 1, QP_INLINE,
                EnumSet.of(SendOperation.RDMA_WRITE, SendOperation.LOCAL_INV));
        umr = umrFake.umr(qp, QP_INLINE);
    }

    private IndirectMkey mkey(int maxEntries) {
        return mkey(pd, maxEntries);
    }

    private IndirectMkey mkey(ProtectionDomain in, int maxEntries) {
        return UmrFake.mkey(in, maxEntries, (nextKey++) << 8, destroyed::incrementAndGet);
    }

    private MemoryRegion region() {
        return fake.buffer(nextKey++);
    }

    private int pollAll(WorkCompletions wcs) {
        int n = cq.poll(wcs);
        for (int i = 0; i < n; i++) {
            assertThat(wcs.get(i).status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        }
        return n;
    }

    private static int rec(long offset) {
        return umrRecord.get(ValueLayout.JAVA_INT, offset);
    }

    @Test
    void interleavedReachesTheBuilderAndItsCompletionIsRouted() {
        MemoryRegion a = region();
        MemoryRegion b = region();
        IndirectMkey mk = mkey(8);
        MkeyLayout layout = MkeyLayout.interleaved(4, new MkeyLayout.Entry(a, 16, 64, 192),
                new MkeyLayout.Entry(b, 0, 32, 0));
        umr.configure(77L, SendFlag.SIGNALED_BIT, mk, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE), layout);

        assertThat(rec(8)).isEqualTo(1); // interleaved
        assertThat(rec(12)).isEqualTo(mk.lkey());
        assertThat(rec(16)).isEqualTo(Access.mask(EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE)));
        assertThat(rec(20)).isEqualTo(4);
        assertThat(rec(24)).isEqualTo(2);
        assertThat(rec(28) & SendFlag.INLINE_BIT).as("libmlx5 refuses a UMR without IBV_SEND_INLINE").isNotZero();
        assertThat(rec(28) & SendFlag.SIGNALED_BIT).isNotZero();
        long d = 40;
        assertThat(umrRecord.get(ValueLayout.JAVA_LONG, d)).isEqualTo(a.address() + 16);
        assertThat(umrRecord.get(ValueLayout.JAVA_INT, d + 8)).isEqualTo(64);
        assertThat(umrRecord.get(ValueLayout.JAVA_INT, d + 12)).isEqualTo(192);
        assertThat(umrRecord.get(ValueLayout.JAVA_INT, d + 16)).isEqualTo(a.lkey());
        assertThat(umrRecord.get(ValueLayout.JAVA_LONG, d + 24)).isEqualTo(b.address());
        assertThat(umrRecord.get(ValueLayout.JAVA_INT, d + 40)).isEqualTo(b.lkey());
        assertThat(mk.length()).isEqualTo(4 * (64 + 32));
        assertThat(mk.address()).isZero();
        assertThat(mk.layout()).isEqualTo(layout);

        WorkCompletions wcs = WorkCompletions.allocate(8);
        assertThat(pollAll(wcs)).isEqualTo(1);
        assertThat(wcs.get(0).wrId()).isEqualTo(77L);
        assertThat(wcs.get(0).opcode()).isEqualTo(WorkCompletionOpcode.DRIVER);
        assertThat(UmrHostSupport.outstandingSends(umr.queuePair())).isZero();
    }

    @Test
    void listReachesTheBuilderAndTheMkeyServesAsAnSgeKey() {
        MemoryRegion a = region();
        MemoryRegion b = region();
        IndirectMkey mk = mkey(4);
        umr.configure(1L, 0, mk, EnumSet.of(Access.LOCAL_WRITE),
                MkeyLayout.list(new MkeyLayout.Sge(a, 100, 1000), new MkeyLayout.Sge(b, 0, 24)));
        assertThat(rec(8)).isEqualTo(2);
        assertThat(rec(24)).isEqualTo(2);
        assertThat(umrRecord.get(ValueLayout.JAVA_LONG, 40)).isEqualTo(a.address() + 100);
        assertThat(umrRecord.get(ValueLayout.JAVA_INT, 48)).isEqualTo(1000);
        assertThat(umrRecord.get(ValueLayout.JAVA_INT, 52)).isEqualTo(a.lkey());
        assertThat(umrRecord.get(ValueLayout.JAVA_INT, 68)).isEqualTo(b.lkey());
        assertThat(mk.length()).isEqualTo(1024);

        // the mkey is a LocalKey: both post paths take it, range-checked against its configured length
        QueuePair qp = umr.queuePair();
        qp.sendRequests().rdmaWrite(2L, SendFlag.SIGNALED_BIT, 0x99, 0).sge(mk, 0, 1024).post();
        assertThatThrownBy(() -> qp.sendRequests().rdmaWrite(3L, 0, 0x99, 0).sge(mk, 1, 1024))
                .isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining(mk.toString());
        qp.sendRequests().clear();
        try (PostBatch batch = qp.startSend()) {
            batch.rdmaWrite(4L, SendFlag.SIGNALED_BIT, 0x99, 0).setSge(mk, 512, 512);
            batch.submit();
        }
        assertThat(UmrHostSupport.inFlight(pd, mk)).isEqualTo(3); // the UMR (unsignaled) and the two writes
        assertThatThrownBy(mk::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("mlx5dv_destroy_mkey").hasMessageContaining("outstanding");
        WorkCompletions wcs = WorkCompletions.allocate(8);
        assertThat(pollAll(wcs)).isEqualTo(2);
        assertThat(UmrHostSupport.inFlight(pd, mk)).isZero();
        mk.close();
        assertThat(destroyed).hasValue(1);
        assertThat(mk.isOpen()).isFalse();
        a.close(); // no longer held
        b.close();
    }

    @Test
    void aConfiguredMkeyKeepsItsRegionsRegisteredUntilInvalidatedAndRetired() {
        MemoryRegion a = region();
        IndirectMkey mk = mkey(4);
        umr.configure(5L, SendFlag.SIGNALED_BIT, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(a, 0, 4096)));
        WorkCompletions wcs = WorkCompletions.allocate(8);
        assertThat(pollAll(wcs)).isEqualTo(1);
        // configured and retired: still refused, the device translates the mkey into the region
        assertThatThrownBy(a::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_dereg_mr").hasMessageContaining(mk.toString());
        assertThat(a.isOpen()).isTrue();

        umr.invalidate(6L, SendFlag.SIGNALED_BIT, mk);
        assertThat(mk.length()).isZero();
        assertThat(mk.layout()).isNull();
        assertThatThrownBy(a::close).as("the invalidation is still outstanding").isInstanceOf(
                IllegalStateException.class).hasMessageContaining(mk.toString());
        assertThat(pollAll(wcs)).isEqualTo(1);
        assertThat(wcs.get(0).wrId()).isEqualTo(6L);
        assertThatThrownBy(a::close).as("retired, but its success not yet handed over").isInstanceOf(
                IllegalStateException.class).hasMessageContaining(mk.toString());
        assertThat(mk.completed(wcs.get(0))).isTrue();
        a.close();
        assertThat(a.isOpen()).isFalse();
        mk.close();
    }

    @Test
    void reconfigurationReleasesTheOldLayoutOnlyOnceItsWorkRequestsRetired() {
        MemoryRegion a = region();
        MemoryRegion b = region();
        IndirectMkey mk = mkey(4);
        umr.configure(1L, SendFlag.SIGNALED_BIT, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(a, 0, 64)));
        WorkCompletions wcs = WorkCompletions.allocate(8);
        pollAll(wcs);
        // an SGE staged over the old layout is refused once the mkey is reconfigured
        QueuePair qp = umr.queuePair();
        qp.sendRequests().rdmaWrite(9L, SendFlag.SIGNALED_BIT, 0x99, 0).sge(mk, 0, 64);
        umr.configure(2L, SendFlag.SIGNALED_BIT, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(b, 0, 128)));
        assertThatThrownBy(() -> qp.sendRequests().post()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(mk.toString()).hasMessageContaining("a UMR reconfigured or invalidated")
                .hasMessageNotContaining("ibv_rereg_mr");
        qp.sendRequests().clear();
        assertThatThrownBy(a::close).as("the reconfiguring UMR is outstanding").isInstanceOf(
                IllegalStateException.class);
        assertThatThrownBy(b::close).isInstanceOf(IllegalStateException.class);
        assertThat(pollAll(wcs)).isEqualTo(1);
        assertThat(mk.completed(wcs.get(0))).isTrue();
        a.close();
        assertThatThrownBy(b::close).isInstanceOf(IllegalStateException.class);
        mk.close();
        b.close();
    }

    /** The UMR from {@code a} to {@code b}, then what the device reported for it (nothing: status -1). */
    private IndirectMkey movedFromAToB(MemoryRegion a, MemoryRegion b, int status, WorkCompletions wcs) {
        IndirectMkey mk = mkey(4);
        umr.configure(1L, SendFlag.SIGNALED_BIT, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(a, 0, 64)));
        assertThat(pollAll(wcs)).isEqualTo(1);
        assertThat(mk.completed(wcs.get(0))).isTrue();
        if (status > 0) {
            fake.failNext(umr.queuePair(), status);
        }
        umr.configure(2L, status < 0 ? 0 : SendFlag.SIGNALED_BIT, mk, Set.of(),
                MkeyLayout.list(new MkeyLayout.Sge(b, 0, 64)));
        if (status < 0) { // QueuePair.modify(RESET) retires every WR without a completion: the fake has no RESET
            UmrHostSupport.retireAllSends(umr.queuePair());
        } else {
            assertThat(cq.poll(wcs)).isEqualTo(1);
            assertThat(wcs.get(0).statusValue()).isEqualTo(status);
            assertThat(mk.completed(wcs.get(0))).as("the mkey's newest UMR").isTrue();
        }
        assertThat(UmrHostSupport.inFlight(pd, mk)).isZero();
        return mk;
    }

    @Test
    void aUmrThatFailedFlushedOrWasResetKeepsTheOldLayoutRegistered() {
        WorkCompletions wcs = WorkCompletions.allocate(8);
        for (int status : new int[] {4 /* LOC_PROT_ERR */, 5 /* WR_FLUSH_ERR: the QP went to ERR */, -1 /* RESET */}) {
            MemoryRegion a = region();
            MemoryRegion b = region();
            IndirectMkey mk = movedFromAToB(a, b, status, wcs);
            assertThatThrownBy(a::close).as("status " + status + ": the device may still translate into a")
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining(mk.toString());
            // a later UMR that succeeds replaces whatever the device held
            umr.configure(3L, SendFlag.SIGNALED_BIT, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(b, 0, 8)));
            assertThat(pollAll(wcs)).isEqualTo(1);
            assertThatThrownBy(a::close).as("not handed over yet").isInstanceOf(IllegalStateException.class);
            assertThat(mk.completed(wcs.get(0))).isTrue();
            a.close();
            mk.close();
            b.close();
        }
    }

    @Test
    void anUnconfirmedUmrKeepsTheOldLayoutUntilTheMkeyIsDestroyed() {
        MemoryRegion a = region();
        MemoryRegion b = region();
        WorkCompletions wcs = WorkCompletions.allocate(8);
        IndirectMkey mk = movedFromAToB(a, b, 0, wcs);
        a.close(); // confirmed
        IndirectMkey unsignaled = mkey(4);
        MemoryRegion c = region();
        umr.configure(4L, 0, unsignaled, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(c, 0, 8)));
        umr.configure(5L, SendFlag.SIGNALED_BIT, unsignaled, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(b, 0, 8)));
        assertThat(pollAll(wcs)).isEqualTo(1);
        assertThat(unsignaled.completed(wcs.get(0))).isTrue();
        c.close(); // the newest UMR ran: the unsignaled one before it on the same QP too
        // a stale completion (an earlier wr_id) confirms nothing
        MemoryRegion d = region();
        umr.configure(6L, SendFlag.SIGNALED_BIT, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(d, 0, 8)));
        assertThat(pollAll(wcs)).isEqualTo(1);
        assertThat(mk.completed(wcs.get(0))).isTrue();
        umr.configure(7L, 0, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(region(), 0, 8)));
        UmrHostSupport.retireAllSends(umr.queuePair());
        assertThat(mk.completed(wcs.get(0))).isFalse();
        assertThatThrownBy(d::close).isInstanceOf(IllegalStateException.class).hasMessageContaining(mk.toString());
        mk.close(); // destroyed: nothing translates any more
        d.close();
        unsignaled.close();
        b.close();
    }

    @Test
    void aSecondUmrOfAnMkeyOnAnotherQpIsRefusedWhileTheFirstIsOutstanding() {
        MemoryRegion a = region();
        IndirectMkey mk = mkey(4);
        QueuePair qp2 = fake.createRtsQp(pd, cq, cq, 64, 16, 1, QP_INLINE, EnumSet.of(SendOperation.LOCAL_INV));
        UmrQueuePair other = umrFake.umr(qp2, QP_INLINE);
        umr.configure(1L, SendFlag.SIGNALED_BIT, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(a, 0, 64)));
        int calls = rec(32);
        assertThatThrownBy(() -> other.configure(2L, 0, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(a, 0, 8))))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("mlx5dv_wr_mr_list")
                .hasMessageContaining("another QP");
        assertThatThrownBy(() -> other.invalidate(3L, 0, mk)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_wr_local_inv");
        assertThat(rec(32)).isEqualTo(calls);
        umr.configure(4L, SendFlag.SIGNALED_BIT, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(a, 0, 8)));
        WorkCompletions wcs = WorkCompletions.allocate(8);
        assertThat(pollAll(wcs)).isEqualTo(2); // the same QP runs them in order
        other.invalidate(5L, SendFlag.SIGNALED_BIT, mk);
        assertThat(pollAll(wcs)).isEqualTo(1);
        assertThat(mk.completed(wcs.get(0))).isTrue();
        a.close();
        mk.close();
    }

    @Test
    void closingTheArenaOfARegionAnMkeyNoLongerHoldsLeavesTheMkeyAlone() {
        Arena arena = Arena.ofShared();
        MemoryRegion a = fake.register(arena.allocate(4096, 64), nextKey++);
        UmrHostSupport.tie(a, arena);
        MemoryRegion b = region();
        IndirectMkey mk = mkey(4);
        umr.configure(1L, 0, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(a, 0, 64)));
        umr.configure(2L, SendFlag.SIGNALED_BIT, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(b, 0, 64)));
        umr.queuePair().sendRequests().rdmaWrite(3L, SendFlag.SIGNALED_BIT, 0x99, 0).sge(mk, 0, 64).post();
        WorkCompletions one = WorkCompletions.allocate(1);
        assertThat(pollAll(one)).isEqualTo(1);
        assertThat(mk.completed(one.get(0))).isTrue(); // confirmed while the WRITE still names the mkey
        assertThat(pollAll(one)).isEqualTo(1); // a is unreachable now; its entry in a's holders is stale
        arena.close();
        assertThat(a.isOpen()).isFalse();
        assertThat(mk.isOpen()).as("peers still use its rkey over b").isTrue();
        assertThat(destroyed).hasValue(0);
        mk.close();
        b.close();
    }

    /**
     * The PD's cascade has marked the mkey closing but not yet run {@code mlx5dv_destroy_mkey} (held here on the
     * monitor of the mkey resource's children, which the cascade takes between the two) when a held region's arena
     * closes on a third thread: the tie must not deregister the region before that destroy ran.
     */
    @Test
    void theArenaTieWaitsForACascadeDestroyingTheMkeyOnAnotherThread() throws Exception {
        ProtectionDomain pd2 = fake.newClosablePd();
        Arena arena = Arena.ofShared();
        MemoryRegion a = fake.register(pd2, arena.allocate(4096, 64), nextKey++);
        UmrHostSupport.tie(a, arena);
        QueuePair qp2 = fake.createRtsQp(pd2, cq, cq, 64, 16, 1, QP_INLINE, EnumSet.of(SendOperation.LOCAL_INV));
        UmrQueuePair u2 = umrFake.umr(qp2, QP_INLINE);
        AtomicInteger mkeyDestroyed = new AtomicInteger();
        IndirectMkey mk = IndirectMkey.wrap(pd2, Arena.global().allocate(8, 4), 4, h -> {
            mkeyDestroyed.incrementAndGet();
            return 0;
        });
        u2.configure(1L, 0, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(a, 0, 64)));
        UmrHostSupport.retireAllSends(qp2);
        java.lang.reflect.Field f = dev.panverbs.core.internal.Resource.class.getDeclaredField("children");
        f.setAccessible(true);
        Object children = f.get(mk.resource);
        int[] seenByTie = {-1};
        Thread cascade = new Thread(pd2::close);
        Thread tie = new Thread(() -> {
            arena.close();
            seenByTie[0] = mkeyDestroyed.get();
        });
        synchronized (children) {
            cascade.start();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (cascade.getState() != Thread.State.BLOCKED && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(mk.isOpen()).as("the cascade marked it closing").isFalse();
            tie.start();
            tie.join(300); // the tie used to return here: the mkey closing, so its close() returned at once
        }
        cascade.join();
        tie.join();
        assertThat(seenByTie[0]).as("mlx5dv_destroy_mkey ran before the tie returned").isEqualTo(1);
        assertThat(a.isOpen()).isFalse();
    }

    @Test
    void closingTheArenaOfAHeldRegionDestroysTheMkeyFirst() {
        Arena arena = Arena.ofShared();
        MemoryRegion a = fake.register(arena.allocate(4096, 64), nextKey++);
        UmrHostSupport.tie(a, arena);
        IndirectMkey mk = mkey(4);
        umr.configure(1L, 0, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(a, 0, 4096)));
        // the UMR is still outstanding (unsignaled, nothing polled): the arena's close does not wait for it
        arena.close();
        assertThat(destroyed).hasValue(1);
        assertThat(mk.isOpen()).isFalse();
        assertThat(a.isOpen()).isFalse();
        assertThatThrownBy(() -> umr.queuePair().sendRequests().rdmaWrite(2L, 0, 1, 0).sge(mk, 0, 8))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> umr.configure(3L, 0, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(region(), 0,
                8)))).isInstanceOf(IllegalStateException.class).hasMessageContaining("mlx5dv_wr_mr_list");
    }

    @Test
    void misuseIsRefusedByNameBeforeTheProvider() {
        MemoryRegion a = region();
        IndirectMkey mk = mkey(4);
        int calls = rec(32);
        // more entries than the mkey takes
        MkeyLayout.Sge[] five = new MkeyLayout.Sge[5];
        java.util.Arrays.fill(five, new MkeyLayout.Sge(a, 0, 8));
        assertThatThrownBy(() -> umr.configure(1L, 0, mk, Set.of(), MkeyLayout.list(five)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 4");
        // more than the WQE's inline room (31 interleaved entries at max_inline_data 512)
        IndirectMkey big = mkey(64);
        MkeyLayout.Entry[] many = new MkeyLayout.Entry[32];
        java.util.Arrays.fill(many, new MkeyLayout.Entry(a, 0, 8, 0));
        assertThatThrownBy(() -> umr.configure(1L, 0, big, Set.of(), MkeyLayout.interleaved(1, many)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 31");
        // an interleaved entry whose repetitions leave its region (100 + 3 * 1024 + 1000 > 4096)
        assertThatThrownBy(() -> umr.configure(1L, 0, mk, Set.of(),
                MkeyLayout.interleaved(4, new MkeyLayout.Entry(a, 100, 1000, 24))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outside");
        // null arguments, named by the verb; sizes the provider would answer with a bare EINVAL
        MkeyLayout one = MkeyLayout.list(new MkeyLayout.Sge(a, 0, 8));
        assertThatThrownBy(() -> umr.configure(1L, 0, null, Set.of(), one)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("mlx5dv_wr_mr_list: mkey");
        assertThatThrownBy(() -> umr.configure(1L, 0, mk, null, one)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("mlx5dv_wr_mr_list: access");
        assertThatThrownBy(() -> umr.configure(1L, 0, mk, Set.of(), null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("layout");
        assertThatThrownBy(() -> umr.invalidate(1L, 0, null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("ibv_wr_local_inv: mkey");
        assertThatThrownBy(() -> UmrQueuePair.create(pd, cq, cq, -1, 0, 64, Set.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxSendWr -1");
        assertThatThrownBy(() -> UmrQueuePair.create(pd, cq, cq, 8, 0, -4, Set.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxInlineData -4");
        // an empty list entry: its KLM's byte_count 0 would not mean "nothing"
        assertThatThrownBy(() -> new MkeyLayout.Sge(a, 0, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("length > 0");
        // a stride the PRM's 16 bits cannot hold
        assertThatThrownBy(() -> new MkeyLayout.Entry(a, 0, 60000, 6000))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("65535");
        // rights a UMR cannot grant
        assertThatThrownBy(() -> umr.configure(1L, 0, mk, EnumSet.of(Access.MW_BIND),
                MkeyLayout.list(new MkeyLayout.Sge(a, 0, 8)))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("MW_BIND");
        // a region of another PD, an mkey of another PD
        ProtectionDomain other = fake.newPd();
        MemoryRegion foreign = fake.register(other, Arena.ofAuto().allocate(64), nextKey++);
        assertThatThrownBy(() -> umr.configure(1L, 0, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(foreign, 0,
                8)))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("protection domain");
        assertThatThrownBy(() -> umr.configure(1L, 0, mkey(other, 4), Set.of(),
                MkeyLayout.list(new MkeyLayout.Sge(a, 0, 8)))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PD");
        // a closed region
        MemoryRegion closed = region();
        closed.close();
        assertThatThrownBy(() -> umr.configure(1L, 0, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(closed, 0,
                8)))).isInstanceOf(IllegalStateException.class);
        // a batch open on the QP
        try (PostBatch batch = umr.queuePair().startSend()) {
            assertThatThrownBy(() -> umr.configure(1L, 0, mk, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(a, 0,
                    8)))).isInstanceOf(IllegalStateException.class);
        }
        assertThat(rec(32)).as("no builder was called").isEqualTo(calls);
        assertThat(UmrHostSupport.outstandingSends(umr.queuePair())).isZero();
        a.close(); // nothing held it
        mk.close();
        assertThatThrownBy(() -> umr.invalidate(1L, 0, mk)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_wr_local_inv");
    }

    @Test
    void aSecondThreadsUmrWhileOneIsInTheProviderIsRefused() throws Exception {
        MemoryRegion a = region();
        IndirectMkey first = mkey(4);
        IndirectMkey second = mkey(4);
        Throwable[] seen = new Throwable[1];
        fake.setPostHook(() -> { // inside the first UMR's ibv_wr_complete
            Thread t = new Thread(() -> {
                try {
                    umr.configure(2L, 0, second, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(a, 0, 8)));
                } catch (Throwable e) {
                    seen[0] = e;
                }
            });
            t.start();
            try {
                t.join();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            umr.configure(1L, SendFlag.SIGNALED_BIT, first, Set.of(), MkeyLayout.list(new MkeyLayout.Sge(a, 0, 16)));
        } finally {
            fake.clearPostHook();
        }
        assertThat(seen[0]).isInstanceOf(IllegalStateException.class).hasMessageContaining("mlx5dv_wr_mr_list");
        assertThat(second.layout()).isNull();
        assertThat(first.layout()).isNotNull();
        assertThat(rec(24)).as("the first UMR's entry count, untouched").isEqualTo(1);
        assertThat(umrRecord.get(ValueLayout.JAVA_INT, 48)).isEqualTo(16);
        WorkCompletions wcs = WorkCompletions.allocate(8);
        while (cq.poll(wcs) > 0) {
            Thread.onSpinWait();
        }
        first.close();
        second.close();
        a.close();
    }

    /**
     * A region's close against a UMR naming it on another thread ({@link SteeredRace}, steered to where they
     * overlap): never both, and both outcomes occur (the race was run, not just one side each round).
     */
    @Test
    void aCloseRacingAConfigurationNeverLetsBothSucceed() {
        WorkCompletions wcs = WorkCompletions.allocate(64);
        Arena arena = Arena.ofShared();
        int[] outcomes = SteeredRace.run("MR close vs UMR", SteeredRace.Steering.MULTIPLICATIVE, n -> {
            MemoryRegion r = fake.register(arena.allocate(4096, 64), nextKey++);
            IndirectMkey mk = mkey(4);
            return new SteeredRace.Round() {
                @Override
                public boolean post() {
                    try {
                        umr.configure(n, SendFlag.SIGNALED_BIT, mk, Set.of(),
                                MkeyLayout.list(new MkeyLayout.Sge(r, 0, 64)));
                        return true;
                    } catch (IllegalStateException refused) {
                        return false;
                    }
                }

                @Override
                public boolean close() {
                    try {
                        r.close();
                        return true;
                    } catch (IllegalStateException refused) {
                        return false;
                    }
                }

                @Override
                public void check(int round, boolean posted, boolean closed) {
                    assertThat(posted && closed).as("round " + round + ": a UMR over a deregistered region")
                            .isFalse();
                    while (cq.poll(wcs) > 0) {
                        Thread.onSpinWait();
                    }
                    mk.close();
                    if (!closed) {
                        r.close();
                    }
                }
            };
        });
        assertThat(outcomes[1]).as("rounds the UMR won").isPositive();
        assertThat(outcomes[2]).as("rounds the close won").isPositive();
    }
}
