package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.verbs.verbs_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Post, poll and retire on the host, on every build: the library's real objects over the fake provider
 * ({@link FakeProvider}). Completion routing by work queue, and the DMA-safety handshake between posting and
 * {@link MemoryRegion#close()} (references published before the doorbell, staged keys re-checked at post, freed
 * arenas refused). The same properties are checked on rxe by {@code DmaSafetyIT}.
 */
class DataPathHostTest {
    private static FakeProvider fake;

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
    }

    static List<long[]> drain(CompletionQueue cq) {
        WorkCompletions wcs = WorkCompletions.allocate(16);
        List<long[]> out = new ArrayList<>();
        int n;
        while ((n = cq.poll(wcs)) > 0) {
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = wcs.get(i);
                out.add(new long[] {wc.wrId(), wc.status().ordinal() == 0 ? 0 : wc.statusValue()});
            }
        }
        return out;
    }

    /** {@link #drain} that asserts every completion succeeded; their wr_ids in order. */
    static List<Long> drainOk(CompletionQueue cq) {
        List<long[]> got = drain(cq);
        assertThat(got).as("completions [wr_id, status]").allSatisfy(c -> assertThat(c[1]).isZero());
        return got.stream().map(c -> c[0]).toList();
    }

    /**
     * The batch's submit refuses {@code workRequest} for lack of {@code setter} (the per-transport address the
     * provider would otherwise take from a stale WQE slot), publishes nothing, and leaves the batch open.
     */
    static void assertSubmitRefusedWithout(PostBatch b, QueuePair qp, String workRequest, String setter) {
        assertThatThrownBy(b::submit).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_wr_complete").hasMessageContaining(workRequest)
                .hasMessageContaining(setter);
        assertThat(qp.sendQueue.tracker.outstanding()).as("nothing published").isZero();
        assertThat(b.isOpen()).as("the batch stays open").isTrue();
    }

    @Test
    void aSharedCqRoutesEveryCompletionToItsOwnQueueWhateverTheWrIds() {
        CompletionQueue cq = fake.createCq(256);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 16, 16, 0, EnumSet.noneOf(SendOperation.class));
        MemoryRegion sendBuf = fake.buffer(0x11);
        MemoryRegion recvBuf = fake.buffer(0x22);
        // one wr_id space for both queues: 1..4 each; receives first, then sends that consume them
        ReceiveRequests r = qp.receiveRequests();
        for (int i = 1; i <= 4; i++) {
            r.recv(i).sge(recvBuf, i * 64L, 64);
        }
        assertThat(r.post()).isEqualTo(4);
        SendRequests s = qp.sendRequests();
        for (int i = 1; i <= 4; i++) {
            s.send(i, i % 2 == 0 ? SendFlag.SIGNALED_BIT : 0).sge(sendBuf, 0, 64);
        }
        assertThat(s.post()).isEqualTo(4);
        assertThat(qp.sendQueue.tracker.outstanding()).isEqualTo(4);
        assertThat(qp.receiveQueue.tracker.outstanding()).isEqualTo(4);
        List<long[]> got = drain(cq);
        // 4 receive completions and the 2 signaled sends, each with the caller's wr_id back
        assertThat(got).extracting(c -> c[0]).containsExactly(1L, 2L, 2L, 3L, 4L, 4L);
        assertThat(qp.sendQueue.tracker.outstanding()).isZero();
        assertThat(qp.receiveQueue.tracker.outstanding()).isZero();
        sendBuf.close();
        recvBuf.close();
    }

    @Test
    void errorCompletionsWithMisleadingOpcodesStillReachTheirQueue() {
        CompletionQueue cq = fake.createCq(256);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 16, 16, 0, EnumSet.noneOf(SendOperation.class));
        MemoryRegion sendBuf = fake.buffer(0x33);
        MemoryRegion recvBuf = fake.buffer(0x44);
        qp.receiveRequests().recv(7).sge(recvBuf, 0, 64).post();
        qp.receiveRequests().recv(8).sge(recvBuf, 64, 64).post();
        // the unsignaled RDMA WRITE 7 fails: its CQE says opcode RECV (undefined on error) and wr_id 7, like a receive
        fake.failNext(qp, verbs_h.IBV_WC_REM_ACCESS_ERR());
        qp.sendRequests().rdmaWrite(7, 0, 0x99, 0x1000).sge(sendBuf, 0, 64).post();
        List<long[]> got = drain(cq);
        assertThat(got).hasSize(1);
        assertThat(got.get(0)[0]).isEqualTo(7);
        assertThat(qp.sendQueue.tracker.outstanding()).as("the send retired").isZero();
        assertThat(qp.receiveQueue.tracker.outstanding()).as("receive 7 still posted").isEqualTo(2);
        assertThatThrownBy(recvBuf::close).hasMessageContaining("still referenced by 2");
        sendBuf.close();
        // the QP enters ERR: the receives flush with opcode SEND (undefined) and still retire as receives
        fake.flushReceives(qp);
        assertThat(drain(cq)).extracting(c -> c[0]).containsExactly(7L, 8L);
        assertThat(qp.receiveQueue.tracker.outstanding()).isZero();
        recvBuf.close();
    }

    @Test
    void extendedPollingGivesBackTheCallersWrIdAndRetires() {
        ExtendedCompletionQueue cq = fake.createCqEx(64, EnumSet.of(CompletionField.BYTE_LEN));
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 8, 8, 0, EnumSet.of(SendOperation.RDMA_WRITE));
        MemoryRegion mr = fake.buffer(0x55);
        try (PostBatch b = qp.startSend()) {
            b.rdmaWrite(0xABCDEF, SendFlag.SIGNALED_BIT, 0x99, 0x1000).setSge(mr, 0, 64);
            b.submit();
        }
        assertThat(qp.sendQueue.tracker.outstanding()).isEqualTo(1);
        assertThat(cq.startPoll()).isTrue();
        assertThat(cq.wrId()).isEqualTo(0xABCDEF);
        cq.endPoll();
        assertThat(qp.sendQueue.tracker.outstanding()).isZero();
        mr.close();
    }

    @Test
    void aStagedWorkRequestNamingAClosedRegionIsRefusedAtPost() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 8, 8, 0, EnumSet.of(SendOperation.RDMA_WRITE));
        MemoryRegion keep = fake.buffer(0x70);
        MemoryRegion mr = fake.buffer(0x77);
        SendRequests s = qp.sendRequests();
        s.rdmaWrite(1, 0, 0x99, 0x1000).sge(keep, 0, 64);
        s.rdmaWrite(2, SendFlag.SIGNALED_BIT, 0x99, 0x1000).sge(mr, 0, 64);
        mr.close(); // nothing posted names it yet
        assertThatThrownBy(s::post).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("work request 1").hasMessageContaining(mr.toString())
                .hasMessageContaining("closed").hasMessageContaining("Nothing was posted");
        assertThat(qp.sendQueue.tracker.outstanding()).isZero();
        assertThat(s.pending()).isEqualTo(2);
        s.clear();
        // the same for a receive and for an ibv_wr_* batch (aborted)
        MemoryRegion r = fake.buffer(0x78);
        qp.receiveRequests().recv(3).sge(r, 0, 64);
        r.close();
        assertThatThrownBy(() -> qp.receiveRequests().post()).hasMessageContaining("closed");
        qp.receiveRequests().clear();
        MemoryRegion b2 = fake.buffer(0x79);
        PostBatch b = qp.startSend();
        b.rdmaWrite(4, SendFlag.SIGNALED_BIT, 0x99, 0x1000).setSge(b2, 0, 64);
        b2.close();
        assertThatThrownBy(b::submit).hasMessageContaining("ibv_wr_complete").hasMessageContaining("closed");
        assertThat(b.isOpen()).isFalse();
        assertThat(qp.sendQueue.tracker.outstanding()).isZero();
        assertThat(drain(cq)).isEmpty();
        keep.close();
    }

    /**
     * A batch's re-check names the WR of the key that went stale, whether the batch named one key (its per-SGE keys are
     * then not stored: every SGE's is the one) or several (stored from the second key on, the earlier SGEs' filled in),
     * through the list setter too, and a batch of a key other than the previous batch's.
     */
    @Test
    void aBatchsStaleKeyIsNamedByItsWorkRequestWithOneKeyOrSeveral() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 8, 8, 2, 64,
                EnumSet.of(SendOperation.RDMA_WRITE));
        MemoryRegion keep = fake.buffer(0x90);
        // one key, after a WR without data: WR 1
        MemoryRegion a = fake.buffer(0x91);
        assertStaleAt(qp, cq, a, 1, b -> {
            b.rdmaWrite(1, 0, 0x99, 0x1000).setSgeList(new LocalKey[0], new long[0], new int[0], 0);
            b.rdmaWrite(2, 0, 0x99, 0x1000).setSge(a, 0, 64);
            b.rdmaWrite(3, 0, 0x99, 0x1000).setSge(a, 64, 64);
        });
        // several keys, the stale one second: keep, keep, then c in WR 2
        MemoryRegion c = fake.buffer(0x92);
        assertStaleAt(qp, cq, c, 2, b -> {
            b.rdmaWrite(1, 0, 0x99, 0x1000).setSge(keep, 0, 64);
            b.rdmaWrite(2, 0, 0x99, 0x1000).setSge(keep, 64, 64);
            b.rdmaWrite(3, 0, 0x99, 0x1000).setSge(c, 0, 64);
        });
        // several keys, the stale one first (its SGEs were staged before the batch named a second key): WR 0
        MemoryRegion d = fake.buffer(0x93);
        assertStaleAt(qp, cq, d, 0, b -> {
            b.rdmaWrite(1, 0, 0x99, 0x1000).setSge(d, 0, 64);
            b.rdmaWrite(2, 0, 0x99, 0x1000).setSge(keep, 0, 64);
            b.rdmaWrite(3, 0, 0x99, 0x1000).setSge(d, 64, 64);
        });
        // a second key within one WR's list: the first SGE of WR 1 names it
        MemoryRegion e = fake.buffer(0x94);
        assertStaleAt(qp, cq, e, 1, b -> {
            b.rdmaWrite(1, 0, 0x99, 0x1000).setSge(keep, 0, 64);
            b.rdmaWrite(2, 0, 0x99, 0x1000).setSgeList(new LocalKey[] {e, keep}, new long[] {0, 128},
                    new int[] {64, 64}, 2);
        });
        MemoryRegion f = fake.buffer(0x95);
        assertStaleAt(qp, cq, f, 1, b -> {
            b.rdmaWrite(1, 0, 0x99, 0x1000).setSge(keep, 0, 64);
            b.rdmaWrite(2, 0, 0x99, 0x1000).setSgeList(new LocalKey[] {keep, f}, new long[] {0, 128},
                    new int[] {64, 64}, 2);
        });
        // a second data setter does not replace the first (libmlx5 would finish the WQE twice): refused
        try (PostBatch b = qp.startSend()) {
            b.rdmaWrite(1, SendFlag.SIGNALED_BIT | SendFlag.INLINE_BIT, 0x99, 0x1000).setSge(keep, 0, 64);
            b.setInlineData(Arena.ofAuto().allocate(8));
            assertThatThrownBy(b::submit).isInstanceOf(IllegalStateException.class).hasMessageContaining("data twice");
        }
        assertThat(drain(cq)).isEmpty();
        // the keys still staged from the multi-key batches above are not re-checked in a one-key batch
        try (PostBatch b = qp.startSend()) {
            b.rdmaWrite(1, SendFlag.SIGNALED_BIT, 0x99, 0x1000).setSge(keep, 0, 64);
            b.rdmaWrite(2, SendFlag.SIGNALED_BIT, 0x99, 0x1000).setSge(keep, 64, 64);
            b.submit();
        }
        assertThat(drain(cq)).hasSize(2);
        keep.close();
    }

    private static void assertStaleAt(QueuePair qp, CompletionQueue cq, MemoryRegion stale, int wr,
                                      java.util.function.Consumer<PostBatch> build) {
        PostBatch b = qp.startSend();
        build.accept(b);
        stale.close(); // nothing posted names it yet
        assertThatThrownBy(b::submit).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_wr_complete: work request " + wr + " of")
                .hasMessageContaining(stale.toString()).hasMessageContaining("closed");
        assertThat(b.isOpen()).isFalse();
        assertThat(qp.sendQueue.tracker.outstanding()).isZero();
        assertThat(drain(cq)).isEmpty();
    }

    @Test
    void memoryWhoseArenaWasClosedIsNeverPosted() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 8, 8, 0, EnumSet.noneOf(SendOperation.class));
        Arena arena = Arena.ofShared();
        MemoryRegion mr = fake.register(arena.allocate(4096, 64), 0x80); // no deregisterWith: the arena is not tied
        qp.sendRequests().rdmaWrite(1, SendFlag.SIGNALED_BIT, 0x99, 0x1000).sge(mr, 0, 64);
        arena.close();
        assertThatThrownBy(() -> qp.sendRequests().post()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(mr.toString()).hasMessageContaining("arena was closed while it was still registered")
                .hasMessageContaining("deregisterWith");
        qp.sendRequests().clear();
        assertThatThrownBy(() -> qp.receiveRequests().recv(2).sge(mr, 0, 64))
                .hasMessageContaining("arena was closed while it was still registered");
        assertThat(qp.sendQueue.tracker.outstanding()).isZero();
        assertThat(drain(cq)).isEmpty();
    }

    @Test
    void laterSgesOfAChainsKeyCheckTheirRangeAndTheKeyIsReCheckedAtPost() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 8, 8, 0, EnumSet.noneOf(SendOperation.class));
        Arena arena = Arena.ofShared();
        MemoryRegion mr = fake.register(arena.allocate(4096, 64), 0x92); // not tied: its arena can close first
        SendRequests wrs = qp.sendRequests();
        wrs.rdmaWrite(1, 0, 0x99, 0x1000).sge(mr, 0, 64);
        // the chain's key: validated at its first SGE, but each SGE's range is still checked
        assertThatThrownBy(() -> wrs.rdmaWrite(2, 0, 0x99, 0x1000).sge(mr, 4096 - 8, 64))
                .isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("lies outside " + mr);
        wrs.clear();
        ReceiveRequests rwrs = qp.receiveRequests();
        assertThatThrownBy(() -> rwrs.recv(1).sge(mr, 0, 64).recv(2).sge(mr, -1, 64))
                .isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("lies outside " + mr);
        rwrs.clear();
        // the key goes stale between two SGEs of one chain: the later SGE is not refused, the post is
        wrs.rdmaWrite(3, 0, 0x99, 0x1000).sge(mr, 0, 64);
        rwrs.recv(3).sge(mr, 0, 64);
        arena.close();
        wrs.rdmaWrite(4, SendFlag.SIGNALED_BIT, 0x99, 0x1000).sge(mr, 64, 64);
        rwrs.recv(4).sge(mr, 64, 64);
        assertThatThrownBy(wrs::post).isInstanceOf(IllegalStateException.class).hasMessageContaining(mr.toString())
                .hasMessageContaining("arena was closed while it was still registered");
        assertThatThrownBy(rwrs::post).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("arena was closed while it was still registered");
        assertThat(qp.sendQueue.tracker.outstanding()).isZero();
        assertThat(qp.receiveQueue.tracker.outstanding()).isZero();
        assertThat(drain(cq)).isEmpty();
        wrs.clear();
        rwrs.clear();
        mr.close();
        qp.close();
    }

    @Test
    void inFlightReferencesAreScopedToTheProtectionDomain() {
        ProtectionDomain other = fake.newPd();
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 8, 8, 0, EnumSet.noneOf(SendOperation.class));
        MemoryRegion mine = fake.buffer(0x90);
        MemoryRegion theirs = fake.register(other, Arena.ofShared().allocate(64), 0x91);
        assertThatThrownBy(() -> qp.sendRequests().send(1, 0).sge(theirs, 0, 8))
                .hasMessageContaining("another protection domain");
        qp.sendRequests().clear();
        qp.receiveRequests().recv(1).sge(mine, 0, 64).post();
        assertThat(fake.protectionDomain().workQueues).contains(qp.sendQueue, qp.receiveQueue);
        assertThat(other.workQueues).isEmpty();
        theirs.close();
        qp.close(); // destroying the QP forgets its outstanding WRs and leaves the PD's scan
        assertThat(fake.protectionDomain().workQueues).doesNotContain(qp.sendQueue, qp.receiveQueue);
        assertThat(cq.routes.size()).isZero();
        mine.close();
    }
}
