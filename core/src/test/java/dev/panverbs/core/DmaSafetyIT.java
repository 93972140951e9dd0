package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The three DMA-safety holes of issue 8, closed, on a real device: (1) a region closed on another thread while a
 * post is inside the provider, (2) a staged work request whose region was closed before the post, (3) memory whose
 * arena was closed while still registered. Plus completion routing for a QP whose send and receive queues share one
 * CQ and one {@code wr_id} space, including flushes. The host twins run on the fake provider ({@code DataPathHostTest},
 * {@code PostHandshakeUpcallTest}).
 */
class DmaSafetyIT extends DataPathResources {

    @Test
    void aRegionIsNeverDeregisteredUnderAPostOnAnotherThread() throws Exception {
        CompletionQueue cq = ctx.createCq(256).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(64).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(64).build();
        connect(a, b);
        MemoryRegion src = pd.allocate(4096, ALL_REMOTE);
        MemoryRegion dst = pd.allocate(4096, ALL_REMOTE);
        String srcName = src.toString(); // "(closed)" is appended once it is
        RetryingCloser closer = new RetryingCloser(src::close, () -> true); // deregisters src while it is used
        List<WorkCompletionStatus> statuses = new ArrayList<>();
        long posts = 0;
        long deadline = System.nanoTime() + 20_000_000_000L;
        try {
            while (!closer.over() && System.nanoTime() < deadline) {
                try {
                    a.sendRequests().rdmaWrite(posts, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address())
                            .sge(src, 0, 4096).post();
                } catch (IllegalStateException refused) { // closed (or closing) between two posts: never posted
                    assertThat(refused).hasMessageContaining(srcName);
                    a.sendRequests().clear();
                    continue;
                }
                posts++;
                if (posts == 1) { // after the first post: a closer that won before it would prove nothing
                    closer.start();
                }
                statuses.add(pollOne(cq).status()); // keeps one WR in flight at most, as a ping-pong would
            }
        } finally {
            closer.stop();
        }
        assertThat(closer.failure()).isNull();
        assertThat(posts).as("posts before the close won").isPositive();
        // before the fix the close could slip in while ibv_post_send ran, and the WR then failed with a
        // protection error (or, with the memory reused, wrote elsewhere)
        assertThat(statuses).as("every posted WR ran against registered memory").containsOnly(
                WorkCompletionStatus.SUCCESS);
        assertThat(src.isClosed() || closer.refusals() > 0).isTrue();
    }

    @Test
    void aStagedWorkRequestCountsAsAUse() {
        CompletionQueue cq = ctx.createCq(64).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(a, b);
        MemoryRegion dst = pd.allocate(4096, ALL_REMOTE);
        MemoryRegion src = pd.allocate(4096, ALL_REMOTE);
        a.sendRequests().rdmaWrite(1, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address()).sge(src, 0, 64);
        String srcName = src.toString();
        src.close(); // nothing posted names it: allowed, and its memory is freed
        assertThatThrownBy(() -> a.sendRequests().post()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(srcName).hasMessageContaining("closed (deregistered) since the SGE")
                .hasMessageContaining("Nothing was posted");
        a.sendRequests().clear();
        MemoryRegion other = pd.allocate(4096, ALL_REMOTE); // may reuse the freed lkey: the refusal mattered
        a.sendRequests().rdmaWrite(2, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address()).sge(other, 0, 64).post();
        WorkCompletion wc = pollOne(cq);
        assertThat(wc.wrId()).isEqualTo(2);
        assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);

        QueuePair c = pd.createQp(QueuePairType.RC, cq, cq).sendOps(EnumSet.of(SendOperation.RDMA_WRITE)).build();
        QueuePair d = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(c, d);
        MemoryRegion staged = pd.allocate(4096, ALL_REMOTE);
        String stagedName = staged.toString();
        PostBatch batch = c.startSend();
        batch.rdmaWrite(3, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address()).setSge(staged, 0, 64);
        staged.close();
        assertThatThrownBy(batch::submit).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_wr_complete").hasMessageContaining(stagedName);
        assertThat(batch.isOpen()).isFalse(); // aborted: the send queue lock is free again
        try (PostBatch again = c.startSend()) {
            again.rdmaWrite(4, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address()).setSge(other, 0, 64);
            again.submit();
        }
        assertThat(pollOne(cq).wrId()).isEqualTo(4);
    }

    @Test
    void memoryOfAClosedArenaIsNeverPostedAndTyingIsTheDefaultGivenTheArena() {
        CompletionQueue cq = ctx.createCq(64).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(a, b);
        MemoryRegion dst = pd.allocate(4096, ALL_REMOTE);
        Arena arena = Arena.ofShared();
        MemoryRegion untied = pd.regMr(arena.allocate(4096, 4096), ALL_REMOTE);
        a.sendRequests().rdmaWrite(1, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address()).sge(untied, 0, 64);
        b.receiveRequests().recv(2).sge(untied, 64, 64);
        arena.close(); // still registered: the pinned pages stay, but the JVM may hand the addresses out again
        assertThatThrownBy(() -> a.sendRequests().post()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(untied.toString())
                .hasMessageContaining("arena was closed while it was still registered")
                .hasMessageContaining("deregisterWith");
        assertThatThrownBy(() -> b.receiveRequests().post())
                .hasMessageContaining("arena was closed while it was still registered");
        a.sendRequests().clear();
        b.receiveRequests().clear();
        assertThatThrownBy(() -> a.sendRequests().send(3, 0).sge(untied, 0, 8))
                .hasMessageContaining("arena was closed while it was still registered");
        a.sendRequests().clear();
        untied.close(); // deregistering is still possible, and right

        Arena tiedArena = Arena.ofShared();
        MemorySegment memory = tiedArena.allocate(4096, 4096);
        MemoryRegion tied = pd.regMr(tiedArena, memory, ALL_REMOTE);
        assertThat(tied.isClosed()).isFalse();
        tiedArena.close();
        assertThat(tied.isClosed()).as("closing the arena deregistered it first").isTrue();
        assertThatThrownBy(() -> pd.regMr(Arena.ofShared(), Arena.ofShared().allocate(64), ALL_REMOTE))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void sendAndReceiveOfOneQpShareACqAndWrIdsAndEachCompletionFindsItsQueue() {
        CompletionQueue cq = ctx.createCq(64).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(8).maxRecvWr(8).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(8).maxRecvWr(8).build();
        connect(a, b);
        MemoryRegion mr = pd.allocate(8192, ALL_REMOTE);
        for (QueuePair q : new QueuePair[] {a, b}) { // receives 1..3 on both
            for (int i = 1; i <= 3; i++) {
                q.receiveRequests().recv(i).sge(mr, (q == a ? 0 : 4096) + i * 256L, 256);
            }
            assertThat(q.receiveRequests().post()).isEqualTo(3);
        }
        for (int i = 1; i <= 2; i++) { // sends 1..2 each way: the same wr_ids as the receives
            a.sendRequests().send(i, SendFlag.SIGNALED_BIT).sge(mr, 2048, 64).post();
            b.sendRequests().send(i, SendFlag.SIGNALED_BIT).sge(mr, 6144, 64).post();
        }
        List<Long> ids = new ArrayList<>();
        for (int n = 0; n < 8; n++) {
            WorkCompletion wc = pollOne(cq);
            assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
            ids.add(wc.wrId());
        }
        assertThat(ids).containsExactlyInAnyOrder(1L, 1L, 1L, 1L, 2L, 2L, 2L, 2L);
        for (QueuePair q : new QueuePair[] {a, b}) {
            assertThat(q.sendQueue.tracker.outstanding()).isZero();
            assertThat(q.receiveQueue.tracker.outstanding()).as("receive 3 still posted").isEqualTo(1);
        }
        assertThatThrownBy(mr::close).hasMessageContaining("still referenced by 2");
        a.toErr(); // flushes: error completions, whose opcode is undefined, still reach the receive queues
        b.toErr();
        List<Long> flushed = new ArrayList<>();
        for (int n = 0; n < 2; n++) {
            WorkCompletion wc = pollOne(cq);
            assertThat(wc.status()).isEqualTo(WorkCompletionStatus.WR_FLUSH_ERR);
            flushed.add(wc.wrId());
        }
        assertThat(flushed).containsExactly(3L, 3L);
        assertThat(a.receiveQueue.tracker.outstanding()).isZero();
        assertThat(b.receiveQueue.tracker.outstanding()).isZero();
        mr.close();
    }
}
