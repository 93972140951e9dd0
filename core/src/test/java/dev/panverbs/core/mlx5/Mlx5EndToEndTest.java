package dev.panverbs.core.mlx5;

import static dev.panverbs.core.mlx5.Mlx5Model.LOCAL_WRITE;
import static dev.panverbs.core.mlx5.Mlx5Model.postRecv;
import static dev.panverbs.core.mlx5.Mlx5Model.qpFn;
import static dev.panverbs.core.mlx5.Mlx5Model.reg;
import static dev.panverbs.core.mlx5.Mlx5Model.rqFn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletionOpcode;
import dev.panverbs.core.WorkCompletionStatus;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Direct WQE posting and direct CQE polling end to end without hardware: the core's real {@link QueuePair},
 * {@link CompletionQueue} and {@link MemoryRegion} objects (over the fake provider), their send ring and CQ in plain
 * memory, and {@code src/test/c/mlx5_device_model.c}, a model of the HCA's send queue written from the PRM, which
 * after each doorbell parses the WQEs in the ring, executes them as copies between registered buffers (checking
 * keys, bounds and rights) and writes the CQEs. Proves: data lands where each opcode says (multi-SGE, inline, READ,
 * atomics, SEND into a posted receive), completions carry the caller's wr_id through the WQE counter and the
 * tracker, unsignaled WRs retire with the next signaled one, the ring and the 16-bit counter wrap, errors come back
 * with their status and flush the rest, a region a posted WQE references cannot be closed until its completion is
 * polled, a key closed after staging is refused before the doorbell, and post plus poll allocate nothing.
 */
class Mlx5EndToEndTest extends Mlx5Fixture {
    private static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private WorkCompletion pollOne() {
        assertThat(dcq.poll(wcs)).isEqualTo(1);
        return wcs.get(0);
    }

    private byte[] bytes(MemorySegment s, long off, int n) {
        return s.asSlice(off, n).toArray(ValueLayout.JAVA_BYTE);
    }

    @Test
    void everyOpcodeMovesTheRightBytes() throws Throwable {
        // RDMA WRITE, two SGEs
        dsq.rdmaWrite(1, SIG, mrRemote.rkey(), remote.address()).sge(mrLocal, 0, 100).sge(mrLocal, 200, 50);
        assertThat(dsq.post()).isEqualTo(1);
        assertThat(ring()).isEqualTo(1);
        WorkCompletion wc = pollOne();
        assertThat(wc.ok()).isTrue();
        assertThat(wc.wrId()).isEqualTo(1);
        assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.RDMA_WRITE);
        assertThat(bytes(remote, 0, 100)).isEqualTo(bytes(local, 0, 100));
        assertThat(bytes(remote, 100, 50)).isEqualTo(bytes(local, 200, 50));
        // RDMA READ back into the local buffer elsewhere
        dsq.rdmaRead(2, SIG, mrRemote.rkey(), remote.address() + 10).sge(mrLocal, 4000, 64);
        dsq.post();
        ring();
        wc = pollOne();
        assertThat(wc.wrId()).isEqualTo(2);
        assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.RDMA_READ);
        assertThat(wc.byteLen()).isEqualTo(64);
        assertThat(bytes(local, 4000, 64)).isEqualTo(bytes(remote, 10, 64));
        // atomics: CAS 5 -> 9, then FAA +3; the original values land in the local 8-byte SGEs
        remote.set(BE64, 2048, 5);
        dsq.atomicCmpSwp(3, SIG, mrRemote.rkey(), remote.address() + 2048, 5, 9).sge(mrLocal, 8, 8);
        dsq.atomicFetchAdd(4, SIG, mrRemote.rkey(), remote.address() + 2048, 3).sge(mrLocal, 16, 8);
        assertThat(dsq.post()).isEqualTo(2);
        assertThat(ring()).isEqualTo(2);
        assertThat(dcq.poll(wcs)).isEqualTo(2);
        assertThat(wcs.get(0).opcode()).isEqualTo(WorkCompletionOpcode.COMP_SWAP);
        assertThat(wcs.get(1).opcode()).isEqualTo(WorkCompletionOpcode.FETCH_ADD);
        assertThat(wcs.get(1).wrId()).isEqualTo(4);
        assertThat(local.get(BE64, 8)).isEqualTo(5);
        assertThat(local.get(BE64, 16)).isEqualTo(9);
        assertThat(remote.get(BE64, 2048)).isEqualTo(12);
        // SEND with immediate into a posted receive, and an inline RDMA WRITE with immediate
        postRecv.invokeExact(77L, remote.address() + 3000, 256, 0x2222);
        postRecv.invokeExact(78L, remote.address() + 3500, 256, 0x2222);
        dsq.sendWithImm(5, SIG, 0xCAFE).sge(mrLocal, 300, 120);
        MemorySegment inl = arena.allocate(40).fill((byte) 0x5A);
        dsq.rdmaWriteWithImm(6, SIG | SendFlag.SOLICITED_BIT, mrRemote.rkey(), remote.address() + 5000, 7)
                .inline(inl);
        dsq.post();
        ring();
        assertThat(dcq.poll(wcs)).isEqualTo(2);
        assertThat(wcs.get(0).opcode()).isEqualTo(WorkCompletionOpcode.SEND);
        assertThat(wcs.get(0).hasImm()).isTrue();
        assertThat(wcs.get(1).wrId()).isEqualTo(6);
        assertThat(bytes(remote, 3000, 120)).isEqualTo(bytes(local, 300, 120));
        assertThat(bytes(remote, 5000, 40)).isEqualTo(bytes(inl, 0, 40));
        mrLocal.close(); // nothing outstanding: the tracker released every reference
    }

    @Test
    void unsignaledWorkRetiresWithTheNextSignaledAndTheRingWraps() throws Throwable {
        int posted = 0;
        for (int round = 0; round < 23_000; round++) { // 23,000 x 3 WRs over 64 WQEBBs: the ring and the 16-bit index wrap
            long base = round * 3L;
            int off = (round * 24) % 4096;
            dsq.rdmaWrite(base, 0, mrRemote.rkey(), remote.address() + off).sge(mrLocal, off, 8);
            dsq.send(base + 1, 0).sge(mrLocal, off, 0);
            dsq.rdmaWrite(base + 2, SIG, mrRemote.rkey(), remote.address() + off + 8).sge(mrLocal, off + 8, 16)
                    .sge(mrLocal, 0, 0).sge(mrLocal, off + 100, 4);
            postRecv.invokeExact((long) round, remote.address() + 7000, 64, 0x2222);
            assertThat(dsq.post()).isEqualTo(3);
            posted += 3;
            assertThat(ring()).isEqualTo(3);
            WorkCompletion wc = pollOne();
            assertThat(wc.wrId()).isEqualTo(base + 2);
            assertThat(bytes(remote, off + 8, 16)).isEqualTo(bytes(local, off + 8, 16));
        }
        assertThat(posted).isEqualTo(69_000);
        assertThat(Integer.toUnsignedLong(dsq.writer.curPost)).isGreaterThan(0xFFFFL); // the WQE counter wrapped
        mrLocal.close(); // every WR retired, the unsignaled ones with the signaled one after them
        mrRemote.close();
    }

    @Test
    void theOneCallFormMovesTheSameBytesMixedWithTheBuilderForm() throws Throwable {
        postRecv.invokeExact(90L, remote.address() + 6000, 256, 0x2222);
        int rk = mrRemote.rkey();
        dsq.rdmaWrite(1, 0, rk, remote.address(), mrLocal, 0, 100)
                .rdmaWrite(2, 0, rk, remote.address() + 100).sge(mrLocal, 200, 50).sge(mrLocal, 300, 10)
                .send(3, 0, mrLocal, 1000, 64)
                .rdmaWrite(4, 0, rk, remote.address() + 4000, mrLocal, 0, 0) // no SGE: a zero-byte write
                .rdmaRead(5, SIG, rk, remote.address() + 10, mrLocal, 4000, 64);
        assertThat(dsq.post()).isEqualTo(5);
        assertThat(ring()).isEqualTo(5);
        WorkCompletion wc = pollOne();
        assertThat(wc.wrId()).isEqualTo(5);
        assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.RDMA_READ);
        assertThat(bytes(remote, 0, 100)).isEqualTo(bytes(local, 0, 100));
        assertThat(bytes(remote, 100, 50)).isEqualTo(bytes(local, 200, 50));
        assertThat(bytes(remote, 150, 10)).isEqualTo(bytes(local, 300, 10));
        assertThat(bytes(remote, 6000, 64)).isEqualTo(bytes(local, 1000, 64));
        assertThat(bytes(local, 4000, 64)).isEqualTo(bytes(remote, 10, 64));
        mrLocal.close(); // the completion retired every reference
    }

    @Test
    void theOneCallFormChecksItsSgeBeforeStartingAndCannotBeExtended() throws Throwable {
        int rk = mrRemote.rkey();
        assertThatThrownBy(() -> dsq.rdmaWrite(1, SIG, rk, remote.address(), mrLocal, 8000, 400))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertThat(dsq.pending()).as("a refused SGE starts nothing").isZero();
        assertThatThrownBy(() -> dsq.send(1, SendFlag.INLINE_BIT, mrLocal, 0, 8))
                .isInstanceOf(IllegalArgumentException.class);
        MemoryRegion readOnly = fp.register(qp.protectionDomain(), arena.allocate(64, 64), 0x4444,
                Set.of(dev.panverbs.core.Access.REMOTE_READ));
        assertThatThrownBy(() -> dsq.rdmaRead(1, SIG, rk, remote.address(), readOnly, 0, 8))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("LOCAL_WRITE");
        assertThat(dsq.pending()).isZero();
        dsq.rdmaWrite(2, SIG, rk, remote.address(), mrLocal, 0, 8);
        assertThatThrownBy(() -> dsq.sge(mrLocal, 8, 8)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("one-call");
        assertThatThrownBy(() -> dsq.inline(local.asSlice(0, 8))).isInstanceOf(IllegalStateException.class);
        assertThat(dsq.pending()).isEqualTo(1);
        // a key closed after a one-call WR named it: refused at the post, nothing rung
        MemoryRegion mr = fp.register(arena.allocate(256, 64), 0x3333);
        dsq.rdmaWrite(3, SIG, rk, remote.address(), mr, 0, 64);
        mr.close();
        assertThatThrownBy(dsq::post).isInstanceOf(IllegalStateException.class);
        assertThat(ring()).isZero();
        readOnly.close();
        // the queue stays usable; the region of an in-flight one-call WR cannot be closed until it is polled
        dsq.rdmaWrite(4, SIG, rk, remote.address(), mrLocal, 0, 64).post();
        assertThatThrownBy(mrLocal::close).isInstanceOf(IllegalStateException.class);
        ring();
        assertThat(pollOne().wrId()).isEqualTo(4);
        mrLocal.close();
    }

    @Test
    void aRegionReferencedByAPostedWqeCannotBeClosedUntilItsCompletionIsPolled() throws Throwable {
        dsq.rdmaWrite(10, SIG, mrRemote.rkey(), remote.address()).sge(mrLocal, 0, 64);
        dsq.post(); // rung: the NIC may read the region from now on
        assertThatThrownBy(mrLocal::close).isInstanceOf(IllegalStateException.class);
        assertThat(mrLocal.isOpen()).isTrue();
        ring();
        assertThatThrownBy(mrLocal::close).as("executed but not polled").isInstanceOf(IllegalStateException.class);
        assertThat(pollOne().wrId()).isEqualTo(10);
        mrLocal.close();
        assertThat(mrLocal.isOpen()).isFalse();
    }

    @Test
    void aKeyClosedAfterStagingIsRefusedBeforeTheDoorbell() throws Throwable {
        MemorySegment other = arena.allocate(256, 64);
        MemoryRegion mr = fp.register(other, 0x3333);
        dsq.rdmaWrite(20, SIG, mrRemote.rkey(), remote.address()).sge(mr, 0, 64);
        mr.close();
        int before = dbrec.get(ValueLayout.JAVA_INT, 4);
        assertThatThrownBy(dsq::post).isInstanceOf(IllegalStateException.class);
        assertThat(dbrec.get(ValueLayout.JAVA_INT, 4)).as("no doorbell record update").isEqualTo(before);
        assertThat(ring()).isZero();
    }

    @Test
    void laterSgesOfAChainsKeyCheckTheirRangeAndAKeyClosedBetweenTwoWrsIsRefusedAtPost() throws Throwable {
        int rk = mrRemote.rkey();
        long ra = remote.address();
        int before = dbrec.get(ValueLayout.JAVA_INT, 4);
        // the chain's key is validated once, at its first SGE; every later SGE's range is still checked, both forms
        dsq.rdmaWrite(40, 0, rk, ra, mrLocal, 0, 64);
        assertThatThrownBy(() -> dsq.rdmaWrite(41, 0, rk, ra, mrLocal, 8192 - 8, 64))
                .isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("lies outside " + mrLocal);
        assertThatThrownBy(() -> dsq.rdmaWrite(41, 0, rk, ra).sge(mrLocal, -1, 64))
                .isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("lies outside " + mrLocal);
        assertThatThrownBy(() -> dsq.sge(mrLocal, 0, 8193)).isInstanceOf(IndexOutOfBoundsException.class);
        dsq.clear();
        // the key's arena closes between two WRs of one chain (its snapshot stays the same): the post refuses
        Arena a = Arena.ofShared();
        MemoryRegion mr = fp.register(a.allocate(256, 64), 0x3333);
        dsq.rdmaWrite(42, 0, rk, ra, mr, 0, 64);
        a.close();
        dsq.rdmaWrite(43, SIG, rk, ra, mr, 64, 64).rdmaWrite(44, SIG, rk, ra).sge(mr, 128, 64);
        assertThatThrownBy(dsq::post).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(mr.toString()).hasMessageContaining("arena was closed");
        // the key is closed between two WRs of one chain: the later WR is refused, and so is the post
        MemoryRegion mr2 = fp.register(arena.allocate(256, 64), 0x4444);
        dsq.rdmaWrite(45, 0, rk, ra, mr2, 0, 64).rdmaWrite(46, 0, rk, ra, mrLocal, 0, 64);
        mr2.close();
        assertThatThrownBy(() -> dsq.rdmaWrite(47, SIG, rk, ra, mr2, 64, 64))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed (deregistered)");
        assertThatThrownBy(dsq::post).isInstanceOf(IllegalStateException.class).hasMessageContaining(mr2.toString());
        // the same key named by consecutive one-call WRs is checked in full once (its cached snapshot then): closed in
        // between, the later WR is taken and the post refuses the chain (it re-checks every snapshot after its fence)
        MemoryRegion mr3 = fp.register(arena.allocate(256, 64), 0x5555);
        dsq.rdmaWrite(49, 0, rk, ra, mr3, 0, 64);
        mr3.close();
        dsq.rdmaWrite(50, SIG, rk, ra, mr3, 64, 64);
        assertThatThrownBy(dsq::post).isInstanceOf(IllegalStateException.class).hasMessageContaining(mr3.toString());
        assertThat(dbrec.get(ValueLayout.JAVA_INT, 4)).as("no doorbell record update").isEqualTo(before);
        assertThat(ring()).isZero();
        mr.close();
        // the queue stays usable
        dsq.rdmaWrite(48, SIG, rk, ra, mrLocal, 0, 64).post();
        assertThat(ring()).isEqualTo(1);
        assertThat(pollOne().wrId()).isEqualTo(48);
    }

    @Test
    void anErrorCompletesWithItsStatusAndFlushesTheRest() throws Throwable {
        dsq.rdmaWrite(30, SIG, 0xBAD, remote.address()).sge(mrLocal, 0, 64); // unknown rkey
        dsq.rdmaWrite(31, 0, mrRemote.rkey(), remote.address()).sge(mrLocal, 0, 64);
        dsq.post();
        assertThat(ring()).isEqualTo(2);
        assertThat(dcq.poll(wcs)).isEqualTo(2);
        assertThat(wcs.get(0).wrId()).isEqualTo(30);
        assertThat(wcs.get(0).status()).isEqualTo(WorkCompletionStatus.REM_ACCESS_ERR);
        assertThat(wcs.get(0).vendorErr()).isEqualTo(0x42);
        assertThat(wcs.get(1).wrId()).isEqualTo(31);
        assertThat(wcs.get(1).status()).isEqualTo(WorkCompletionStatus.WR_FLUSH_ERR);
        mrLocal.close();
    }

    @Test
    void directReceivesTakeTheSendsAndCompleteThroughTheirDirectCq() throws Throwable {
        CompletionQueue rcq = fp.createCq(64);
        QueuePair b = fp.createRtsQp(fp.protectionDomain(), rcq, rcq, 8, 16, 1, 0, Set.of());
        MemorySegment rcqBuf = Mlx5Model.invalidCqes(arena.allocate(64 * 64, 64), 64);
        MemorySegment rq = arena.allocate(16 * 32, 64).fill((byte) 0xEE);
        MemorySegment bDb = arena.allocate(8, 8);
        DirectCompletionQueue drcq = DirectCompletionQueue.over(rcq, new Mlx5CompletionQueueView(rcqBuf, 64, 64,
                arena.allocate(8, 8), arena.allocate(8, 8), 0x78));
        DirectReceiveQueue drq = DirectReceiveQueue.over(b, new Mlx5ReceiveQueueView(rq, 16, 32, bDb, b.qpNum()),
                drcq);
        qpFn.invokeExact(sq, 64, dbrec, qp.qpNum(), cqBuf, 64, rcqBuf, 64, b.qpNum());
        rqFn.invokeExact(rq, 16, 32, bDb);

        drq.recv(100).sge(mrRemote, 0, 512);
        drq.recv(101).sge(mrRemote, 1024, 512);
        assertThat(drq.post()).isEqualTo(2);
        dsq.sendWithImm(7, SIG, 0xABCD).sge(mrLocal, 0, 300);
        dsq.send(8, SIG).sge(mrLocal, 500, 100);
        dsq.post();
        assertThat(ring()).isEqualTo(2);
        assertThat(dcq.poll(wcs)).isEqualTo(2);
        WorkCompletions r = WorkCompletions.allocate(4);
        assertThat(drcq.poll(r)).isEqualTo(2);
        assertThat(r.get(0).wrId()).isEqualTo(100);
        assertThat(r.get(0).opcode()).isEqualTo(WorkCompletionOpcode.RECV);
        assertThat(r.get(0).byteLen()).isEqualTo(300);
        assertThat(r.get(0).hasImm()).isTrue();
        assertThat(r.get(0).immData()).isEqualTo(0xABCD);
        assertThat(r.get(0).qpNum()).isEqualTo(b.qpNum());
        assertThat(r.get(1).wrId()).isEqualTo(101);
        assertThat(r.get(1).byteLen()).isEqualTo(100);
        assertThat(bytes(remote, 0, 300)).isEqualTo(bytes(local, 0, 300));
        assertThat(bytes(remote, 1024, 100)).isEqualTo(bytes(local, 500, 100));

        // a region a posted receive may be written into cannot close until that receive completed
        MemorySegment landing = arena.allocate(256, 64);
        MemoryRegion mrX = fp.register(landing, 0x4444);
        reg.invokeExact(0x4444, landing.address(), 256L, LOCAL_WRITE);
        drq.recv(102).sge(mrX, 0, 256);
        drq.post();
        assertThatThrownBy(mrX::close).isInstanceOf(IllegalStateException.class);
        dsq.send(9, SIG).sge(mrLocal, 0, 64);
        dsq.post();
        ring();
        assertThat(dcq.poll(wcs)).isEqualTo(1);
        assertThat(drcq.poll(r)).isEqualTo(1);
        assertThat(r.get(0).wrId()).isEqualTo(102);
        assertThat(bytes(landing, 0, 64)).isEqualTo(bytes(local, 0, 64));
        mrX.close();

        // nothing posted: the sender gets RNR_RETRY_EXC_ERR
        dsq.send(10, SIG).sge(mrLocal, 0, 8);
        dsq.post();
        ring();
        assertThat(pollOne().status()).isEqualTo(WorkCompletionStatus.RNR_RETRY_EXC_ERR);
        b.close();
    }

    @Test
    void aClosedQueuePairRefusesDirectPostsInsteadOfWritingItsFreedRing() throws Throwable {
        dsq.rdmaWrite(50, SIG, mrRemote.rkey(), remote.address()).sge(mrLocal, 0, 8);
        qp.close();
        int before = dbrec.get(ValueLayout.JAVA_INT, 4);
        assertThatThrownBy(dsq::post).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(dbrec.get(ValueLayout.JAVA_INT, 4)).isEqualTo(before);
        assertThat(ring()).isZero();
    }

    @Test
    void aDoorbellRecordRestartedUnderTheQueueIsRefused() throws Throwable {
        // what libmlx5 does to the record when the QP goes through RESET: the queue's counters no longer hold
        dsq.rdmaWrite(60, SIG, mrRemote.rkey(), remote.address()).sge(mrLocal, 0, 8);
        dsq.post();
        ring();
        pollOne();
        dbrec.set(ValueLayout.JAVA_INT, 4, 0);
        byte[] ringBefore = sq.toArray(ValueLayout.JAVA_BYTE);
        // refused when the chain starts, before a WQE is written at the stale producer index
        assertThatThrownBy(() -> dsq.rdmaWrite(61, SIG, mrRemote.rkey(), remote.address()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("RESET");
        assertThat(sq.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(ringBefore);
        assertThat(dsq.pending()).isZero();
        assertThat(dbrec.get(ValueLayout.JAVA_INT, 4)).as("nothing written to the record").isZero();
    }

    @Test
    void aSqSigAllQueuePairIsRefused() {
        CompletionQueue cq = fp.createCq(16);
        QueuePair sigAll = fp.createRtsQp(fp.protectionDomain(), cq, cq, 8, 8, 1, 0, Set.of(), true);
        MemorySegment sq = arena.allocate(16 * 64, 64);
        MemorySegment cqBuf = Mlx5Model.invalidCqes(arena.allocate(16 * 64, 64), 16);
        DirectCompletionQueue d = DirectCompletionQueue.over(cq, new Mlx5CompletionQueueView(cqBuf, 16, 64,
                arena.allocate(8, 8), arena.allocate(8, 8), 1));
        assertThatThrownBy(() -> DirectSendQueue.over(sigAll, new Mlx5QueuePairView(sq, 16, 64, arena.allocate(8, 8),
                arena.allocate(512, 64), 256, sigAll.qpNum()), d, true, false))
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("sq_sig_all")
                .hasMessageContaining("scatter-to-CQE");
        sigAll.close();
    }

    @Test
    void queuePairsSharingABlueFlameRegisterShareItsLock() throws Throwable {
        // a second direct QP over the same BlueFlame register (libmlx5's shared bfreg): single-WR posts take the
        // BlueFlame path, serialised on the register's lock; the first QP's WQE executes
        CompletionQueue cq2 = fp.createCq(16);
        QueuePair qp2 = fp.createRtsQp(fp.protectionDomain(), cq2, cq2, 8, 8, 1, 64, Set.of(), false);
        MemorySegment cqBuf = Mlx5Model.invalidCqes(arena.allocate(16 * 64, 64), 16);
        DirectCompletionQueue dcq2 = DirectCompletionQueue.over(cq2, new Mlx5CompletionQueueView(cqBuf, 16, 64,
                arena.allocate(8, 8), arena.allocate(8, 8), 2));
        DirectSendQueue other = DirectSendQueue.over(qp2, new Mlx5QueuePairView(arena.allocate(16 * 64, 64), 16, 64,
                arena.allocate(8, 8), dsq.writer.bfRegister(), 256, qp2.qpNum()), dcq2, true, false);
        assertThat(other.writer.bfLock()).isSameAs(dsq.writer.bfLock());
        dsq.rdmaWrite(40, SIG, mrRemote.rkey(), remote.address() + 64).sge(mrLocal, 64, 32);
        dsq.post();
        assertThat(ring()).isEqualTo(1);
        assertThat(pollOne().wrId()).isEqualTo(40);
        qp2.close();
    }

    @Test
    void aWrBeyondTheQueuesRoomIsRefusedWhenStartedAndTheRestPosts() throws Throwable {
        assertThat(dsq.room()).isEqualTo(16);
        for (int k = 0; k < 16; k++) {
            dsq.rdmaWrite(100 + k, k == 15 ? SIG : 0, mrRemote.rkey(), remote.address() + 64L * k)
                    .sge(mrLocal, 64L * k, 64);
        }
        assertThat(dsq.room()).isZero();
        assertThatThrownBy(() -> dsq.rdmaWrite(116, SIG, mrRemote.rkey(), remote.address()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("full");
        assertThat(dsq.post()).isEqualTo(16);
        assertThat(ring()).isEqualTo(16);
        assertThat(pollOne().wrId()).isEqualTo(115);
        assertThat(dsq.room()).isEqualTo(16);
        assertThat(bytes(remote, 0, 1024)).isEqualTo(bytes(local, 0, 1024));
    }

    @Test
    void aChainOfOneCallWrsChecksItsRoomAndItsGuardOnEveryWr() throws Throwable {
        // one-call WRs after the chain's first take a fast path (one compare for the chain's state): the room, the
        // builder form in between, another thread and a close on this thread must still stop the WR they concern
        int rk = mrRemote.rkey();
        long ra = remote.address();
        for (int k = 0; k < 16; k++) {
            if (k == 5) {
                dsq.rdmaWrite(100 + k, 0, rk, ra + 64L * k).sge(mrLocal, 64L * k, 64); // a builder WR in between
            } else {
                dsq.rdmaWrite(100 + k, k == 15 ? SIG : 0, rk, ra + 64L * k, mrLocal, 64L * k, 64);
            }
        }
        assertThatThrownBy(() -> dsq.rdmaWrite(116, SIG, rk, ra, mrLocal, 0, 8))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("full");
        Throwable other = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                dsq.rdmaWrite(117, SIG, rk, ra, mrLocal, 0, 8);
                return null;
            } catch (Throwable t) {
                return t;
            }
        }).get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(other).isInstanceOf(IllegalStateException.class).hasMessageContaining("another thread");
        assertThat(dsq.pending()).isEqualTo(16);
        assertThat(dsq.post()).isEqualTo(16);
        assertThat(ring()).isEqualTo(16);
        assertThat(pollOne().wrId()).isEqualTo(115);
        assertThat(bytes(remote, 0, 1024)).isEqualTo(bytes(local, 0, 1024));
        dsq.rdmaWrite(118, 0, rk, ra, mrLocal, 0, 8).rdmaWrite(119, 0, rk, ra, mrLocal, 0, 8);
        qp.close(); // on this thread: takes the chain's guard, unmaps the ring
        assertThatThrownBy(() -> dsq.rdmaWrite(120, SIG, rk, ra, mrLocal, 0, 8))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(dsq.pending()).as("the chain was dropped").isZero();
        assertThat(ring()).isZero();
    }

    @Test
    void aOneCallWrsProviderWrIdWrapsWithThePositionBits() throws Throwable {
        // the one-call WR adds its index to a per-chain base; the base is valid up to the 48-bit position wrap, where
        // next() must cap the fast path (2^48 WRs: the chain's tail is moved there for this test, then put back)
        int rk = mrRemote.rkey();
        long ra = remote.address();
        dsq.rdmaWrite(1, 0, rk, ra, mrLocal, 0, 8); // opens the chain: next() at WR 0
        long realTail = dsq.chainTail;
        long fakeTail = dsq.positionMask - 1; // WR 1 at position 2^48 - 1, WR 2 at 2^48: position bits 0
        dsq.chainTail = fakeTail;
        dsq.fast = 0; // WR 1 takes next(), which sets the base from the moved tail
        try {
            for (int i = 1; i < 5; i++) {
                dsq.rdmaWrite(1 + i, 0, rk, ra, mrLocal, 0, 8);
                int idx = (dsq.writer.curPost - 1) & dsq.writer.wqeMask;
                assertThat(dsq.sq[idx]).as("WR %d's provider wr_id", i)
                        .isEqualTo(dsq.token | ((fakeTail + i) & dsq.positionMask));
            }
        } finally {
            dsq.chainTail = realTail;
            dsq.clear();
        }
        assertThat(ring()).isZero();
    }

    @Test
    void anOpenChainHoldsTheProducerGuardUntilItsPostOrClear() throws Throwable {
        dsq.rdmaWrite(70, SIG, mrRemote.rkey(), remote.address()).sge(mrLocal, 0, 8);
        // the WQE is in the ring beyond the producer index: the device sees nothing before the doorbell record
        assertThat(ring()).isZero();
        qp.sendRequests().send(71, SIG).sge(mrLocal, 0, 8);
        assertThatThrownBy(() -> qp.sendRequests().post()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("DirectSendQueue chain").hasMessageContaining("post or clear the chain");
        qp.sendRequests().clear();
        dsq.clear();
        assertThat(dsq.pending()).isZero();
        assertThat(ring()).as("a cleared chain is never rung").isZero();
        dsq.rdmaWrite(72, SIG, mrRemote.rkey(), remote.address()).sge(mrLocal, 8, 8);
        assertThat(dsq.post()).isEqualTo(1);
        assertThat(ring()).isEqualTo(1);
        assertThat(pollOne().wrId()).isEqualTo(72);
    }

    @Test
    void aClassicChainStagedBeforeADirectChainKeepsItsRecordWhenBothPost() throws Throwable {
        // the direct chain writes its records into the tracker's slots at the tail, where the classic chain was
        // staged first: the classic WR must move after them with its own wr_id and key reference
        MemoryRegion mrOther = fp.register(arena.allocate(64, 64), 0x3333);
        qp.sendRequests().send(90, SIG).sge(mrOther, 0, 8);
        dsq.rdmaWrite(91, 0, mrRemote.rkey(), remote.address(), mrLocal, 0, 64);
        dsq.rdmaWrite(92, SIG, mrRemote.rkey(), remote.address() + 64, mrLocal, 64, 64);
        assertThat(dsq.post()).isEqualTo(2);
        assertThat(qp.sendRequests().post()).isEqualTo(1); // the fake provider takes it; no CQE will name it
        assertThat(ring()).isEqualTo(2);
        assertThat(pollOne().wrId()).isEqualTo(92);
        mrLocal.close(); // the direct WRs completed: nothing references it
        assertThatThrownBy(mrOther::close).as("the classic WR is outstanding and references it")
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("outstanding");
    }

    @Test
    void aQueuePairClosedWhileAChainIsOpenRefusesItsNextWrite() throws Throwable {
        dsq.rdmaWrite(80, SIG, mrRemote.rkey(), remote.address());
        qp.close(); // on this thread: takes the chain's guard, unmaps the ring
        assertThatThrownBy(() -> dsq.sge(mrLocal, 0, 8)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThat(dsq.pending()).as("the chain was dropped").isZero();
        assertThatThrownBy(() -> dsq.rdmaWrite(81, SIG, mrRemote.rkey(), remote.address()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(ring()).isZero();
    }

    @Test
    void postAndPollAllocateNothing() throws Throwable {
        // com.sun.management.ThreadMXBean.getCurrentThreadAllocatedBytes, reflectively: core does not read
        // java.management, and the tests compile inside it
        Object mx = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        java.lang.reflect.Method allocatedBytes = Class.forName("com.sun.management.ThreadMXBean")
                .getMethod("getCurrentThreadAllocatedBytes");
        int key = mrRemote.rkey();
        long raddr = remote.address();
        for (int warm = 0; warm < 2; warm++) {
            long before = (Long) allocatedBytes.invoke(mx);
            for (int i = 0; i < 20_000; i++) {
                dsq.rdmaWrite(i, SIG, key, raddr).sge(mrLocal, 0, 32).post();
                int n = (int) Mlx5Model.doorbell.invokeExact();
                n += dcq.poll(wcs);
                if (n != 2) {
                    throw new AssertionError("iteration " + i);
                }
            }
            long allocated = (Long) allocatedBytes.invoke(mx) - before;
            if (warm == 1) {
                assertThat(allocated).as("bytes allocated by 20,000 posts and polls").isLessThan(20_000);
            }
        }
    }
}
