package dev.panverbs.core.mlx5;

import static dev.panverbs.core.mlx5.Mlx5Model.LOCAL_WRITE;
import static dev.panverbs.testing.Threads.startOnAnotherThread;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/**
 * The mlx5 direct queues misused as a careless caller would, over the core's real objects (fake provider) and the
 * PRM device model on plain memory ({@link Mlx5Fixture}): keys closed, of another PD or out of range, sizes
 * negative or huge, inline data beyond {@code max_inline_data}, more SGEs than {@code max_send_sge}, a full ring, a
 * second thread touching an open chain or receive WRs being built, a second direct queue over the same QP, queues used
 * after their QP or CQ closed, and regions closed while WRs naming them are in flight ({@link Mlx5CqeMisuseTest} has
 * the CQEs). Each must be a Java exception that names the operation, with nothing written where the device would read
 * it, and the queue must stay usable afterwards.
 */
class Mlx5MisuseTest extends Mlx5Fixture {
    private static final String SEND_VERB = "mlx5 Direct WQE post";
    private static final String RECV_VERB = "mlx5 direct receive post";

    @Test
    void aClosedRegionIsRefusedByEveryFormNamingTheVerbAndTheRegion() throws Throwable {
        MemoryRegion mr = fp.register(arena.allocate(256, 64), 0x3333);
        mr.close();
        mr.close(); // a second close is a no-op
        int rk = mrRemote.rkey();
        long ra = remote.address();
        for (ThrowingCallable c : new ThrowingCallable[] {
            () -> dsq.rdmaWrite(1, SIG, rk, ra, mr, 0, 8),
            () -> dsq.send(1, SIG, mr, 0, 8),
            () -> dsq.rdmaRead(1, SIG, rk, ra, mr, 0, 8)}) {
            assertThatThrownBy(c).isInstanceOf(IllegalStateException.class).hasMessageContaining("SGE")
                    .hasMessageContaining("closed (deregistered)");
            assertThat(dsq.pending()).as("a refused one-call WR starts nothing").isZero();
        }
        dsq.rdmaWrite(2, SIG, rk, ra);
        assertThatThrownBy(() -> dsq.sge(mr, 0, 8)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed (deregistered)");
        dsq.clear();
        assertThat(ring()).isZero();
        stillUsable(3);
    }

    @Test
    void aRegionOfAnotherProtectionDomainIsRefusedOnSendAndReceive() throws Throwable {
        ProtectionDomain other = fp.newPd();
        MemoryRegion foreign = fp.register(other, arena.allocate(256, 64), 0x5555);
        assertThatThrownBy(() -> dsq.rdmaWrite(1, SIG, mrRemote.rkey(), remote.address(), foreign, 0, 8))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("another protection domain")
                .hasMessageContaining("register the memory in the QP's PD");
        dsq.send(2, SIG);
        assertThatThrownBy(() -> dsq.sge(foreign, 0, 8)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("another protection domain");
        dsq.clear();
        DirectReceiveQueue drq = receiveQueue();
        drq.recv(3);
        assertThatThrownBy(() -> drq.sge(foreign, 0, 8)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("another protection domain");
        foreign.close(); // (the fake provider's extra PD cannot be deallocated: it stays)
        stillUsable(4);
    }

    @Test
    void offsetsAndLengthsOutOfRangeNegativeOrHugeAreRefusedBeforeAnythingIsWritten() throws Throwable {
        byte[] before = ringBytes();
        long[][] bad = {{-1, 8}, {0, -1}, {8192, 1}, {8191, 2}, {Long.MAX_VALUE, 8}, {Long.MIN_VALUE, 8},
            {0, Integer.MAX_VALUE}, {0, Integer.MIN_VALUE}, {Long.MAX_VALUE - 4, 8}};
        int rk = mrRemote.rkey();
        for (long[] b : bad) {
            assertThatThrownBy(() -> dsq.rdmaWrite(1, SIG, rk, remote.address(), mrLocal, b[0], (int) b[1]))
                    .as("offset %d length %d", b[0], b[1]).isInstanceOf(IndexOutOfBoundsException.class)
                    .hasMessageContaining("lies outside").hasMessageContaining("LOC_PROT_ERR");
            assertThat(dsq.pending()).isZero();
        }
        assertThat(ringBytes()).as("a refused one-call WR writes nothing into the ring").isEqualTo(before);
        dsq.rdmaWrite(2, SIG, rk, remote.address());
        for (long[] b : bad) {
            assertThatThrownBy(() -> dsq.sge(mrLocal, b[0], (int) b[1])).isInstanceOf(IndexOutOfBoundsException.class);
        }
        dsq.clear();
        DirectReceiveQueue drq = receiveQueue();
        drq.recv(3);
        for (long[] b : bad) {
            assertThatThrownBy(() -> drq.sge(mrRemote, b[0], (int) b[1])).isInstanceOf(IndexOutOfBoundsException.class);
        }
        drq.clear();
        assertThat(ring()).isZero();
        stillUsable(4);
    }

    @Test
    void inlineDataBeyondMaxInlineOrOfTheWrongKindIsRefusedNamingTheLimit() throws Throwable {
        MemorySegment big = arena.allocate(65);
        dsq.rdmaWrite(1, SIG, mrRemote.rkey(), remote.address());
        assertThatThrownBy(() -> dsq.inline(big)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(SEND_VERB).hasMessageContaining("max_inline_data=64");
        dsq.inline(arena.allocate(40));
        assertThatThrownBy(() -> dsq.inline(arena.allocate(25))).as("the total counts")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("65 inline bytes");
        assertThatThrownBy(() -> dsq.sge(mrLocal, 0, 8)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("inline data");
        assertThatThrownBy(() -> dsq.inline(MemorySegment.ofArray(new byte[8])))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("native segment");
        Arena gone = Arena.ofConfined();
        MemorySegment freed = gone.allocate(8);
        gone.close();
        assertThatThrownBy(() -> dsq.inline(freed)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(SEND_VERB).hasMessageContaining("arena");
        dsq.rdmaRead(2, SIG, mrRemote.rkey(), remote.address());
        assertThatThrownBy(() -> dsq.inline(arena.allocate(8))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("RDMA WRITE and SEND");
        dsq.send(3, SIG).sge(mrLocal, 0, 8);
        assertThatThrownBy(() -> dsq.inline(arena.allocate(8))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("names SGEs");
        assertThatThrownBy(() -> dsq.send(4, SendFlag.INLINE_BIT)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("inline()");
        dsq.clear();
        assertThat(ring()).isZero();
        stillUsable(5);
    }

    /**
     * Inline data of a confined arena of another thread: refused by name with the fix, and nothing of it counted in
     * the WR (a later inline of the same WR carries its own bytes only, not ring garbage for the refused ones).
     */
    @Test
    void inlineDataOfAConfinedSegmentOfAnotherThreadIsRefusedAndCountsForNothing() throws Throwable {
        remote.asSlice(0, 64).fill((byte) 0);
        try (Arena confined = Arena.ofConfined()) {
            MemorySegment mine = confined.allocate(16).fill((byte) 0x5A);
            MemorySegment good = arena.allocate(8).fill((byte) 0x3C);
            Throwable t = onAnotherThreadDirect(() -> {
                dsq.rdmaWrite(1, SIG, mrRemote.rkey(), remote.address());
                Throwable refused = null;
                try {
                    dsq.inline(mine);
                } catch (WrongThreadException e) {
                    refused = e;
                }
                dsq.inline(good);
                dsq.post();
                if (refused != null) {
                    throw (WrongThreadException) refused;
                }
            });
            assertThat(t).isInstanceOf(WrongThreadException.class).hasMessageContaining(SEND_VERB)
                    .hasMessageContaining("owner thread").hasMessageContaining("Arena.ofShared()");
        }
        assertThat(ring()).isEqualTo(1);
        assertThat(dcq.poll(wcs)).isEqualTo(1);
        assertThat(wcs.get(0).ok()).isTrue();
        assertThat(remote.asSlice(0, 8).toArray(ValueLayout.JAVA_BYTE)).containsOnly((byte) 0x3C);
        assertThat(remote.asSlice(8, 56).toArray(ValueLayout.JAVA_BYTE)).as("nothing beyond the 8 inline bytes")
                .containsOnly((byte) 0);
    }

    private static Throwable onAnotherThreadDirect(Runnable r) {
        return dev.panverbs.testing.Threads.onAnotherThread(r);
    }

    @Test
    void moreSgesThanTheQueueTakesAndMisshapedOrMisalignedAtomicsAreRefused() throws Throwable {
        dsq.rdmaWrite(1, SIG, mrRemote.rkey(), remote.address());
        for (int k = 0; k < 4; k++) {
            dsq.sge(mrLocal, 8L * k, 8);
        }
        assertThatThrownBy(() -> dsq.sge(mrLocal, 64, 8)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(SEND_VERB).hasMessageContaining("max_send_sge=4");
        for (long off : new long[] {1, 4, 7}) {
            assertThatThrownBy(() -> dsq.atomicFetchAdd(9, SIG, mrRemote.rkey(), remote.address() + off, 1))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(SEND_VERB)
                    .hasMessageContaining("not 8-byte aligned");
            assertThatThrownBy(() -> dsq.atomicCmpSwp(9, SIG, mrRemote.rkey(), remote.address() + off, 0, 1))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not 8-byte aligned");
        }
        assertThat(dsq.pending()).as("a misaligned atomic starts nothing").isEqualTo(1);
        dsq.atomicFetchAdd(2, SIG, mrRemote.rkey(), remote.address(), 1);
        assertThatThrownBy(() -> dsq.sge(mrLocal, 0, 16)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("one 8-byte SGE");
        dsq.sge(mrLocal, 0, 8);
        assertThatThrownBy(() -> dsq.sge(mrLocal, 8, 8)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("one 8-byte SGE");
        dsq.clear();
        DirectReceiveQueue drq = receiveQueue(); // max_recv_sge 1 on the fake QP
        drq.recv(3).sge(mrRemote, 0, 8);
        assertThatThrownBy(() -> drq.sge(mrRemote, 8, 8)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(RECV_VERB).hasMessageContaining("max_recv_sge");
        assertThatThrownBy(() -> new DirectReceiveQueueHolder(drq).sgeBeforeRecv())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("before recv()");
        drq.clear();
        stillUsable(4);
    }

    @Test
    void aRingFullOfUnpolledWorkRefusesTheNextWrUntilItsCompletionsArePolled() throws Throwable {
        for (int k = 0; k < 16; k++) {
            dsq.rdmaWrite(100 + k, k == 15 ? SIG : 0, mrRemote.rkey(), remote.address() + 8L * k, mrLocal, 8L * k, 8);
            assertThat(dsq.post()).isEqualTo(1); // posted one by one: all outstanding, none polled
        }
        assertThat(dsq.room()).isZero();
        byte[] before = ringBytes();
        assertThatThrownBy(() -> dsq.send(116, SIG)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(SEND_VERB).hasMessageContaining("full").hasMessageContaining("poll");
        assertThat(ringBytes()).as("nothing written over the outstanding WQEs").isEqualTo(before);
        assertThat(ring()).isEqualTo(16);
        assertThatThrownBy(() -> dsq.send(116, SIG)).as("executed but not polled")
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("full");
        assertThat(dcq.poll(wcs)).isEqualTo(1);
        assertThat(dsq.room()).isEqualTo(16);
        stillUsable(117);
        // the receive queue: WRs beyond max_recv_wr are refused when started, and a post takes what has room
        DirectReceiveQueue drq = receiveQueue();
        for (int k = 0; k < 16; k++) {
            drq.recv(k).sge(mrRemote, 0, 8);
        }
        assertThatThrownBy(() -> drq.recv(16)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(RECV_VERB).hasMessageContaining("max_recv_wr");
        assertThat(drq.post()).isEqualTo(16);
        drq.recv(17).sge(mrRemote, 0, 8);
        assertThat(drq.post()).as("no room: nothing posted, the WR stays pending").isZero();
        drq.clear();
    }

    @Test
    void aSecondThreadCannotTakeOrDropAnOpenChain() throws Throwable {
        int rk = mrRemote.rkey();
        long ra = remote.address();
        dsq.rdmaWrite(1, SIG, rk, ra).sge(mrLocal, 0, 8);
        for (ThrowingCallable c : new ThrowingCallable[] {
            () -> dsq.rdmaWrite(2, SIG, rk, ra),
            () -> dsq.rdmaWrite(2, SIG, rk, ra, mrLocal, 0, 8),
            () -> dsq.sge(mrLocal, 8, 8),
            () -> dsq.inline(arena.allocate(8)),
            dsq::post,
            dsq::clear}) {
            Throwable t = thrownOnAnotherThread(c);
            assertThat(t).isInstanceOf(IllegalStateException.class).hasMessageContaining(SEND_VERB)
                    .hasMessageContaining("another thread");
            assertThat(dsq.pending()).as("the owner's chain is intact").isEqualTo(1);
        }
        assertThat(dsq.post()).isEqualTo(1);
        assertThat(ring()).isEqualTo(1);
        assertThat(dcq.poll(wcs)).isEqualTo(1);
        assertThat(wcs.get(0).wrId()).isEqualTo(1);
        assertThat(local.asSlice(0, 8).mismatch(remote.asSlice(0, 8))).isEqualTo(-1);
        // the guard was released: another thread may post now, and close does not wait for anyone
        CompletableFuture.runAsync(() -> {
            dsq.rdmaWrite(3, SIG, rk, ra, mrLocal, 0, 8);
            dsq.post();
        }).get(30, TimeUnit.SECONDS);
        assertThat(ring()).isEqualTo(1);
        assertThat(dcq.poll(wcs)).isEqualTo(1);
        CompletableFuture.runAsync(qp::close).get(30, TimeUnit.SECONDS);
    }

    @Test
    void aSecondThreadCannotTouchReceiveWrsBeingBuiltAndTheirKeysStayTheirs() throws Throwable {
        CompletionQueue rcq = fp.createCq(64);
        QueuePair b = fp.createRtsQp(fp.protectionDomain(), rcq, rcq, 8, 16, 1, 0, Set.of());
        MemorySegment rq = arena.allocate(16 * 32, 64).fill((byte) 0xEE);
        MemorySegment bDb = arena.allocate(8, 8);
        DirectCompletionQueue drcq = DirectCompletionQueue.over(rcq, new Mlx5CompletionQueueView(rcqBuf, 64, 64,
                arena.allocate(8, 8), arena.allocate(8, 8), 0x78));
        DirectReceiveQueue drq = DirectReceiveQueue.over(b, new Mlx5ReceiveQueueView(rq, 16, 32, bDb, b.qpNum()),
                drcq);
        Mlx5Model.qpFn.invokeExact(sq, 64, dbrec, qp.qpNum(), cqBuf, 64, rcqBuf, 64, b.qpNum());
        Mlx5Model.rqFn.invokeExact(rq, 16, 32, bDb);
        MemorySegment landing = arena.allocate(256, 64);
        MemoryRegion mrA = fp.register(landing, 0x3333);
        Mlx5Model.reg.invokeExact(0x3333, landing.address(), 256L, LOCAL_WRITE);
        drq.recv(100).sge(mrA, 0, 256);
        drq.recv(101); // open: its SGE comes after the other thread's attempts
        for (ThrowingCallable c : new ThrowingCallable[] {
            () -> drq.recv(200),
            () -> drq.sge(mrRemote, 0, 64),
            drq::post,
            drq::clear}) {
            Throwable t = thrownOnAnotherThread(c);
            assertThat(t).isInstanceOf(IllegalStateException.class).hasMessageContaining(RECV_VERB)
                    .hasMessageContaining("another thread").hasMessageContaining("Nothing was changed");
        }
        assertThat(rq.toArray(ValueLayout.JAVA_BYTE)).as("nothing written").containsOnly((byte) 0xEE);
        drq.sge(mrRemote, 1024, 64);
        assertThat(drq.post()).as("the owner's two WRs, as built").isEqualTo(2);
        assertThatThrownBy(mrA::close).as("a posted receive may write it").isInstanceOf(IllegalStateException.class);
        assertThat(mrA.isOpen()).isTrue();
        dsq.send(7, SIG).sge(mrLocal, 0, 200);
        dsq.send(8, SIG).sge(mrLocal, 300, 64);
        dsq.post();
        assertThat(ring()).isEqualTo(2);
        assertThat(dcq.poll(wcs)).isEqualTo(2);
        WorkCompletions r = WorkCompletions.allocate(4);
        assertThat(drcq.poll(r)).isEqualTo(2);
        assertThat(r.get(0).wrId()).isEqualTo(100);
        assertThat(r.get(0).byteLen()).isEqualTo(200);
        assertThat(r.get(1).wrId()).isEqualTo(101);
        assertThat(r.get(1).byteLen()).isEqualTo(64);
        assertThat(landing.asSlice(0, 200).mismatch(local.asSlice(0, 200))).isEqualTo(-1);
        assertThat(remote.asSlice(1024, 64).mismatch(local.asSlice(300, 64))).isEqualTo(-1);
        mrA.close(); // its receive completed and retired its key
        // nothing pending: another thread may start, post and own receive WRs now, and this one is refused meanwhile
        CompletableFuture.runAsync(() -> drq.recv(102).sge(mrRemote, 0, 8)).get(30, TimeUnit.SECONDS);
        assertThatThrownBy(() -> drq.recv(103)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("another thread");
        assertThat(CompletableFuture.supplyAsync(drq::post).get(30, TimeUnit.SECONDS)).isEqualTo(1);
        drq.recv(103).sge(mrRemote, 8, 8);
        drq.clear();
        b.close();
    }

    @Test
    void aStaleSecondDirectQueueOverTheSameQpWritesNothingOverRungWqes() throws Throwable {
        DirectSendQueue second = DirectSendQueue.over(qp, view(), dcq, true, false);
        second.rdmaWrite(1, SIG, mrRemote.rkey(), remote.address(), mrLocal, 0, 64).post(); // rung, not executed
        byte[] rung = ringBytes();
        assertThatThrownBy(() -> dsq.rdmaWrite(2, SIG, mrRemote.rkey(), remote.address() + 64, mrLocal, 64, 64))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(SEND_VERB)
                .hasMessageContaining("doorbell record");
        assertThatThrownBy(() -> dsq.send(2, SIG)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("doorbell record");
        assertThat(ringBytes()).as("the stale queue wrote nothing over the rung WQE").isEqualTo(rung);
        assertThat(ring()).isEqualTo(1);
        assertThat(dcq.poll(wcs)).isEqualTo(1);
        assertThat(wcs.get(0).wrId()).isEqualTo(1);
        assertThat(remote.asSlice(0, 64).mismatch(local.asSlice(0, 64))).isEqualTo(-1);
        // while WRs are outstanding another direct queue cannot even be opened
        second.rdmaWrite(3, SIG, mrRemote.rkey(), remote.address(), mrLocal, 0, 8).post();
        assertThatThrownBy(() -> DirectSendQueue.over(qp, view(), dcq, true, false))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("outstanding");
        ring();
        assertThat(dcq.poll(wcs)).isEqualTo(1);
    }

    @Test
    void queuesOfAClosedQpRefuseEveryCallNamingTheVerb() throws Throwable {
        DirectReceiveQueue drq = receiveQueue();
        drq.recv(1).sge(mrRemote, 0, 8);
        qp.close();
        qp.close(); // idempotent
        assertThatThrownBy(() -> dsq.rdmaWrite(1, SIG, mrRemote.rkey(), remote.address(), mrLocal, 0, 8))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(SEND_VERB)
                .hasMessageContaining("closed");
        assertThatThrownBy(drq::post).isInstanceOf(IllegalStateException.class).hasMessageContaining(RECV_VERB)
                .hasMessageContaining("closed");
        assertThat(dsq.post()).as("nothing pending").isZero();
        dsq.clear();
        drq.clear();
        // (a closed CQ's poll and arm refusal is not probed here: the fake provider's CQs cannot be destroyed)
        assertThat(ring()).isZero();
    }

    /**
     * The QP closed on another thread while a thread posts, rings and polls through its direct queues: that thread
     * ends with the close named (or the CQ refusing a CQE of the destroyed QP), the close returns, and every WR the
     * QP held is retired (its region closes).
     */
    @Test
    void aQpClosedWhileAnotherThreadPostsThroughItsDirectQueueEndsThatThread() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CompletableFuture<Throwable> user = startOnAnotherThread(() -> {
            for (long i = 0; ; i++) {
                dsq.rdmaWrite(i, SIG, mrRemote.rkey(), remote.address() + 512, mrLocal, 512, 32).post();
                try {
                    ring();
                } catch (Throwable t) {
                    throw new AssertionError(t);
                }
                dcq.poll(wcs);
                running.countDown();
            }
        });
        assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();
        qp.close();
        assertThat(user.get(30, TimeUnit.SECONDS)).isInstanceOf(IllegalStateException.class)
                .hasMessageMatching("(?s).*(" + SEND_VERB + ".*closed|closed.*" + SEND_VERB + "|a CQE names).*");
        mrLocal.close(); // nothing outstanding names it any more
        assertThat(mrLocal.isOpen()).isFalse();
    }

    @Test
    void directQueuesOverTheWrongCqAreRefused() {
        CompletionQueue other = fp.createCq(16);
        DirectCompletionQueue otherDcq = DirectCompletionQueue.over(other, new Mlx5CompletionQueueView(
                Mlx5Model.invalidCqes(arena.allocate(16 * 64, 64), 16), 16, 64, arena.allocate(8, 8),
                arena.allocate(8, 8), 3));
        assertThatThrownBy(() -> DirectSendQueue.over(qp, view(), otherDcq, true, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not the send CQ");
        assertThatThrownBy(() -> DirectReceiveQueue.over(qp, rqView(), otherDcq))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not the receive CQ");
        assertThatThrownBy(() -> DirectCompletionQueue.over(other, new Mlx5CompletionQueueView(
                arena.allocate(16 * 128, 64), 16, 128, arena.allocate(8, 8), arena.allocate(8, 8), 3)))
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("64-byte CQEs");
    }

    @Test
    void anXrcInitiatorHasNoDirectQueues() {
        CompletionQueue xcq = fp.createCq(16);
        QueuePair ini = fp.createXrcInitiator(xcq, 8, Set.of());
        DirectCompletionQueue xdcq = DirectCompletionQueue.over(xcq, new Mlx5CompletionQueueView(
                Mlx5Model.invalidCqes(arena.allocate(16 * 64, 64), 16), 16, 64, arena.allocate(8, 8),
                arena.allocate(8, 8), 4));
        assertThatThrownBy(() -> DirectSendQueue.over(ini, new Mlx5QueuePairView(arena.allocate(16 * 64, 64), 16, 64,
                arena.allocate(8, 8), arena.allocate(512, 64), 256, ini.qpNum()), xdcq, true, false))
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("RC")
                .hasMessageContaining("XRC_SEND");
        assertThatThrownBy(() -> DirectReceiveQueue.over(ini, new Mlx5ReceiveQueueView(arena.allocate(16 * 32, 64),
                16, 32, arena.allocate(8, 8), ini.qpNum()), xdcq)).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("XRC initiator").hasMessageContaining("no receive queue");
        ini.close();
    }

    @Test
    void aRegionCannotCloseWhileAnyWrNamingItIsInFlightOnEitherQueue() throws Throwable {
        MemorySegment seg = arena.allocate(256, 64);
        MemoryRegion mr = fp.register(seg, 0x3333);
        Mlx5Model.reg.invokeExact(0x3333, seg.address(), 256L, LOCAL_WRITE);
        // unsignaled WRs stay in flight until a later signaled one completes
        dsq.rdmaWrite(1, 0, mrRemote.rkey(), remote.address(), mr, 0, 8)
                .atomicFetchAdd(2, 0, mrRemote.rkey(), remote.address() + 1024, 1).sge(mr, 8, 8).post();
        assertThatThrownBy(mr::close).isInstanceOf(IllegalStateException.class);
        assertThat(mr.isOpen()).isTrue();
        assertThat(ring()).isEqualTo(2);
        assertThatThrownBy(mr::close).as("executed, no completion polled").isInstanceOf(IllegalStateException.class);
        assertThat(dcq.poll(wcs)).isZero();
        dsq.send(3, SIG); // no SGE: names no region
        Mlx5Model.postRecv.invokeExact(9L, remote.address() + 4096, 64, 0x2222);
        dsq.post();
        ring();
        assertThat(dcq.poll(wcs)).isEqualTo(1);
        mr.close(); // the signaled completion retired the two before it
        // a receive WR in flight on a direct receive queue
        DirectReceiveQueue drq = receiveQueue();
        MemoryRegion landing = fp.register(arena.allocate(256, 64), 0x4444);
        drq.recv(5).sge(landing, 0, 256);
        drq.post();
        assertThatThrownBy(landing::close).isInstanceOf(IllegalStateException.class);
        assertThat(landing.isOpen()).isTrue();
    }

    /** sge() on a fresh queue, before any recv(). */
    private record DirectReceiveQueueHolder(DirectReceiveQueue q) {
        void sgeBeforeRecv() {
            q.clear();
            q.sge(null, 0, 0);
        }
    }
}
