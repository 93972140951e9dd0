package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.WorkCompletion;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link DirectSendQueue}'s bursts over the PRM device model: the same WQE bytes as their one-call WRs (which
 * {@code Mlx5SendOracleTest} proves against libmlx5, as it proves {@link WqeBurst#write}), the data moved, a
 * completion per signaled WR with its own wr_id, the key pinned until the last WR is polled, and every refusal
 * (range, overflow, key closed, another PD, no LOCAL_WRITE, no room, another thread, a closed QP) before anything is
 * written.
 */
class Mlx5BurstTest extends Mlx5Fixture {
    private byte[] bytes(MemorySegment s, long off, int n) {
        return s.asSlice(off, n).toArray(ValueLayout.JAVA_BYTE);
    }

    /** The WQEBBs of the pending chain, from {@code start} (a producer counter), {@code n} of them. */
    private byte[] wqebbs(int start, int n) {
        byte[] b = new byte[n * 64];
        for (int j = 0; j < n; j++) {
            MemorySegment.copy(sq, ValueLayout.JAVA_BYTE, (long) ((start + j) & 63) * 64, b, j * 64, 64);
        }
        return b;
    }

    @Test
    void aBurstWritesTheBytesOfItsOneCallWrsAndCompletesEachSignaledWrWithItsWrId() throws Throwable {
        int rk = mrRemote.rkey();
        long ra = remote.address();
        long wrId = 0;
        for (int round = 0; round < 8000; round++) { // ~68,000 WRs over 64 WQEBBs: the ring and the 16-bit index wrap
            int n = 1 + round % 16;
            boolean allSignaled = round % 3 == 0;
            int flags = allSignaled ? SIG : round % 5 == 0 ? dev.panverbs.core.SendFlag.SOLICITED_BIT : 0;
            long lstride = round % 4 == 0 ? 0 : 64 * (round % 4);
            int len = 1 + round % 64;
            int start = dsq.writer.curPost;
            dsq.rdmaWriteBurst(wrId, n, flags, SIG, rk, ra, 64, mrLocal, 100, lstride, len);
            assertThat(dsq.pending()).isEqualTo(n);
            byte[] burst = wqebbs(start, n);
            dsq.clear();
            for (int j = 0; j < n; j++) {
                dsq.rdmaWrite(wrId + j, j == n - 1 ? SIG : flags, rk, ra + 64L * j, mrLocal, 100 + j * lstride, len);
            }
            assertThat(wqebbs(start, n)).as("round " + round).isEqualTo(burst);
            dsq.clear();
            dsq.rdmaWriteBurst(wrId, n, flags, SIG, rk, ra, 64, mrLocal, 100, lstride, len);
            assertThat(dsq.post()).isEqualTo(n);
            assertThat(ring()).isEqualTo(n);
            int want = allSignaled ? n : 1;
            int got = 0;
            while (got < want) {
                int k = dcq.poll(wcs);
                assertThat(k).isPositive();
                for (int c = 0; c < k; c++) {
                    WorkCompletion wc = wcs.get(c);
                    assertThat(wc.ok()).isTrue();
                    assertThat(wc.wrId()).isEqualTo(allSignaled ? wrId + got + c : wrId + n - 1);
                }
                got += k;
            }
            assertThat(got).isEqualTo(want);
            assertThat(bytes(remote, 64L * (n - 1), len)).isEqualTo(bytes(local, 100 + (n - 1) * lstride, len));
            wrId += n;
        }
        assertThat(Integer.toUnsignedLong(dsq.writer.curPost)).isGreaterThan(0xFFFFL);
        mrLocal.close(); // every WR retired
    }

    /**
     * A builder WR of two WQEBBs before each burst moves the WQE ring's index away from the tracker position, so the
     * bursts cross the provider wr_id ring's end and the record ring's end at different WRs (the record loop's runs).
     */
    @Test
    void burstsCrossTheWqeRingAndTheRecordRingAtDifferentWrs() throws Throwable {
        int rk = mrRemote.rkey();
        long ra = remote.address();
        long wrId = 0;
        for (int round = 0; round < 600; round++) {
            int n = 1 + round % 15;
            dsq.rdmaWrite(wrId, SIG, rk, ra).sge(mrLocal, 0, 8).sge(mrLocal, 64, 8).sge(mrLocal, 128, 8); // 2 WQEBBs
            dsq.rdmaWriteBurst(wrId + 1, n, SIG, SIG, rk, ra + 64, 64, mrLocal, 256, 64, 16);
            assertThat(dsq.post()).isEqualTo(n + 1);
            assertThat(ring()).isEqualTo(n + 1);
            for (int got = 0; got < n + 1; ) {
                int k = dcq.poll(wcs);
                assertThat(k).isPositive();
                for (int c = 0; c < k; c++) {
                    assertThat(wcs.get(c).ok()).isTrue();
                    assertThat(wcs.get(c).wrId()).as("round %d", round).isEqualTo(wrId + got + c);
                }
                got += k;
            }
            wrId += n + 1;
        }
        mrLocal.close(); // every WR retired
    }

    @Test
    void aWrIdStrideGivesEachWrItsWrIdAndZeroGivesAllTheSame() throws Throwable {
        int rk = mrRemote.rkey();
        long ra = remote.address();
        for (long stride : new long[] {0, 1, 3, -2}) {
            dsq.rdmaWriteBurst(100, stride, 5, SIG, SIG, rk, ra, 64, mrLocal, 0, 64, 32)
                    .rdmaReadBurst(200, stride, 3, SIG, SIG, rk, ra + 1024, 8, mrLocal, 2048, 8, 8);
            assertThat(dsq.post()).isEqualTo(8);
            assertThat(ring()).isEqualTo(8);
            long[] got = new long[8];
            for (int n = 0; n < 8; ) {
                int k = dcq.poll(wcs);
                assertThat(k).isPositive();
                for (int c = 0; c < k; c++) {
                    assertThat(wcs.get(c).ok()).isTrue();
                    got[n + c] = wcs.get(c).wrId();
                }
                n += k;
            }
            assertThat(got).containsExactly(100, 100 + stride, 100 + 2 * stride, 100 + 3 * stride, 100 + 4 * stride,
                    200, 200 + stride, 200 + 2 * stride);
        }
    }

    @Test
    void burstsMixWithOneCallAndBuilderWrsAndPinTheKeyUntilTheirLastWrIsPolled() throws Throwable {
        int rk = mrRemote.rkey();
        long ra = remote.address();
        postRecvs(2);
        dsq.rdmaWrite(1, 0, rk, ra, mrLocal, 0, 64)
                .rdmaWriteBurst(2, 4, 0, 0, rk, ra + 64, 64, mrLocal, 64, 64, 64)
                .rdmaWrite(6, 0, rk, ra + 320).sge(mrLocal, 320, 32).sge(mrLocal, 352, 32)
                .sendBurst(7, 2, 0, 0, mrLocal, 1000, 8, 8)
                .rdmaReadBurst(9, 3, 0, SIG, rk, ra + 2000, 16, mrLocal, 4000, 16, 16);
        assertThat(dsq.pending()).isEqualTo(11);
        assertThat(dsq.post()).isEqualTo(11);
        assertThatThrownBy(mrLocal::close).isInstanceOf(IllegalStateException.class);
        assertThat(ring()).isEqualTo(11);
        assertThatThrownBy(mrLocal::close).as("executed, not polled").isInstanceOf(IllegalStateException.class);
        assertThat(dcq.poll(wcs)).isEqualTo(1);
        assertThat(wcs.get(0).wrId()).isEqualTo(11);
        assertThat(bytes(remote, 0, 384)).isEqualTo(bytes(local, 0, 384));
        assertThat(bytes(local, 4000, 48)).isEqualTo(bytes(remote, 2000, 48));
        mrLocal.close();
    }

    private void postRecvs(int n) throws Throwable {
        for (int k = 0; k < n; k++) {
            Mlx5Model.postRecv.invokeExact((long) (900 + k), remote.address() + 6000 + 64L * k, 64, 0x2222);
        }
    }

    @Test
    void aBurstOutOfRangeOverflowingOrEmptyIsRefusedBeforeAnythingIsWritten() throws Throwable {
        int rk = mrRemote.rkey();
        long ra = remote.address();
        byte[] ring = ringBytes();
        // the first SGE in range, the last beyond the key: 8192 bytes, 4 x 64 from 8192 - 4 * 64 + 1
        assertThatThrownBy(() -> dsq.rdmaWriteBurst(1, 4, 0, SIG, rk, ra, 64, mrLocal, 8192 - 256 + 1, 64, 64))
                .isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("lies outside " + mrLocal);
        assertThatThrownBy(() -> dsq.rdmaWriteBurst(1, 4, 0, SIG, rk, ra, 64, mrLocal, 256, -128, 64))
                .isInstanceOf(IndexOutOfBoundsException.class); // a negative stride: the last SGE at -128
        assertThatThrownBy(() -> dsq.rdmaWriteBurst(1, 3, 0, SIG, rk, ra, 64, mrLocal, 0, Long.MAX_VALUE / 2 + 1, 8))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("overflows");
        assertThatThrownBy(() -> dsq.rdmaWriteBurst(1, 0, 0, SIG, rk, ra, 64, mrLocal, 0, 64, 8))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1");
        assertThatThrownBy(() -> dsq.rdmaWriteBurst(1, 2, dev.panverbs.core.SendFlag.INLINE_BIT, SIG, rk, ra, 64,
                mrLocal, 0, 64, 8)).isInstanceOf(IllegalArgumentException.class);
        assertThat(dsq.pending()).isZero();
        assertThat(ringBytes()).as("nothing written").isEqualTo(ring);
        stillUsable(5);
    }

    @Test
    void aBurstOverAKeyClosedOfAnotherPdOrWithoutLocalWriteIsRefused() throws Throwable {
        int rk = mrRemote.rkey();
        long ra = remote.address();
        ProtectionDomain otherPd = fp.newPd();
        MemoryRegion foreign = fp.register(otherPd, arena.allocate(256, 64), 0x5555);
        assertThatThrownBy(() -> dsq.rdmaWriteBurst(1, 2, 0, SIG, rk, ra, 64, foreign, 0, 64, 64))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("another protection domain");
        MemoryRegion closed = fp.register(arena.allocate(256, 64), 0x3333);
        closed.close();
        assertThatThrownBy(() -> dsq.sendBurst(1, 2, 0, SIG, closed, 0, 64, 64))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        MemoryRegion readOnly = fp.register(qp.protectionDomain(), arena.allocate(256, 64), 0x4444,
                Set.of(dev.panverbs.core.Access.REMOTE_READ));
        assertThatThrownBy(() -> dsq.rdmaReadBurst(1, 2, 0, SIG, rk, ra, 64, readOnly, 0, 64, 64))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("LOCAL_WRITE");
        assertThat(dsq.pending()).isZero();
        // the key closed after the burst (from another thread: the records are not published yet): the post refuses
        MemoryRegion mr = fp.register(arena.allocate(1024, 64), 0x6666);
        int before = dbrec.get(ValueLayout.JAVA_INT, 4);
        dsq.rdmaWriteBurst(10, 4, 0, SIG, rk, ra, 64, mr, 0, 64, 64);
        assertThat(thrownOnAnotherThread(mr::close)).isNull();
        assertThatThrownBy(dsq::post).isInstanceOf(IllegalStateException.class).hasMessageContaining(mr.toString());
        assertThat(dbrec.get(ValueLayout.JAVA_INT, 4)).as("no doorbell record update").isEqualTo(before);
        assertThat(ring()).isZero();
        foreign.close();
        readOnly.close();
        stillUsable(20);
    }

    @Test
    void aBurstWithoutRoomIsRefusedWholeAnotherThreadsOrAClosedQueuePairsToo() throws Throwable {
        int rk = mrRemote.rkey();
        long ra = remote.address();
        assertThatThrownBy(() -> dsq.rdmaWriteBurst(1, 17, 0, SIG, rk, ra, 64, mrLocal, 0, 64, 64))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("no room for a burst of 17");
        assertThat(dsq.pending()).isZero();
        stillUsable(2); // the guard the refused burst took to open its chain was released
        dsq.rdmaWriteBurst(10, 10, 0, 0, rk, ra, 64, mrLocal, 0, 64, 64);
        assertThatThrownBy(() -> dsq.rdmaWriteBurst(20, 7, 0, SIG, rk, ra, 64, mrLocal, 0, 64, 64))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("10 WRs pending");
        assertThat(dsq.pending()).as("the chain as it was").isEqualTo(10);
        assertThat(thrownOnAnotherThread(() -> dsq.rdmaWriteBurst(30, 2, 0, SIG, rk, ra, 64, mrLocal, 0, 64, 64)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("another thread");
        dsq.rdmaWriteBurst(20, 6, 0, SIG, rk, ra + 640, 64, mrLocal, 640, 64, 64); // exactly the room
        assertThat(dsq.room()).isZero();
        assertThat(dsq.post()).isEqualTo(16);
        assertThat(ring()).isEqualTo(16);
        assertThat(dcq.poll(wcs)).isEqualTo(1);
        assertThat(wcs.get(0).wrId()).isEqualTo(25);
        assertThat(bytes(remote, 0, 1024)).isEqualTo(bytes(local, 0, 1024));
        dsq.rdmaWriteBurst(40, 2, 0, 0, rk, ra, 64, mrLocal, 0, 64, 64);
        qp.close(); // on this thread: takes the chain's guard, unmaps the ring
        assertThatThrownBy(() -> dsq.rdmaWriteBurst(42, 2, 0, SIG, rk, ra, 64, mrLocal, 0, 64, 64))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(dsq.pending()).as("the chain was dropped").isZero();
        assertThat(ring()).isZero();
    }

    @Test
    void burstsAllocateNothing() throws Throwable {
        Object mx = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
        java.lang.reflect.Method allocatedBytes = Class.forName("com.sun.management.ThreadMXBean")
                .getMethod("getCurrentThreadAllocatedBytes");
        int rk = mrRemote.rkey();
        long ra = remote.address();
        for (int warm = 0; warm < 2; warm++) {
            long before = (Long) allocatedBytes.invoke(mx);
            for (int i = 0; i < 20_000; i++) {
                dsq.rdmaWriteBurst(i * 16L, 16, 0, SIG, rk, ra, 64, mrLocal, 0, 64, 64).post();
                int n = (int) Mlx5Model.doorbell.invokeExact();
                n += dcq.poll(wcs);
                if (n != 17) {
                    throw new AssertionError("iteration " + i);
                }
            }
            long allocated = (Long) allocatedBytes.invoke(mx) - before;
            if (warm == 1) {
                assertThat(allocated).as("bytes allocated by 20,000 bursts and polls").isLessThan(20_000);
            }
        }
    }
}
