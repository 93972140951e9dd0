package dev.panverbs.tools.perftest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.core.FakeProvider;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.core.mlx5.DirectCompletionQueue;
import dev.panverbs.core.mlx5.DirectSendQueue;
import dev.panverbs.core.mlx5.Mlx5InProcess;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code --direct_wqe}'s poster ({@link DirectWqe.Poster}, what {@code BwRunner} and {@code LatencyRunner} call
 * through {@code CoreQp.post}) on the host, without an mlx5 device: core's direct queues over core's PRM device model
 * (the test-only C model that executes the WQEs: {@code Mlx5InProcess}). Post lists ({@code -l}, signaled every
 * {@code cq_mod}-th WR, addresses laid out as {@code BwRunner} lays them, wrapping in the cycle buffer) go out as
 * bursts; each list's WQEs equal those of the same WRs posted one call at a time (whose bytes core's
 * {@code Mlx5SendOracleTest} proves against libmlx5's {@code mlx5_post_send}) but for the WQE index, every signaled
 * WR completes with the list's wr_id, and the data arrives (WRITE: the remote buffer; READ: the local one).
 */
class DirectWqePosterTest {
    private static final int RING = 256;
    private static Path fake;
    private static Path lib;

    @BeforeAll
    static void build() {
        Path c = Path.of("../core/src/test/c");
        fake = FakeProvider.compile(c.resolve("fake_provider.c"), Path.of("target/fake"));
        lib = Mlx5InProcess.build(c, Path.of("target/mlx5-inproc"));
    }

    @Test
    void postListsGoOutAsBurstsWithTheBytesDataAndCompletionsOfTheirOneCallWrs() {
        for (PerftestTest.Verb verb : new PerftestTest.Verb[] {PerftestTest.Verb.WRITE, PerftestTest.Verb.READ}) {
            run(verb, 0x5eedL + verb.ordinal());
        }
    }

    private static void run(PerftestTest.Verb verb, long seed) {
        Mlx5InProcess f = new Mlx5InProcess(fake, lib, RING);
        DirectSendQueue dsq = f.sendQueue();
        DirectCompletionQueue dcq = f.completionQueue();
        MemoryRegion local = f.localRegion();
        MemoryRegion remote = f.remoteRegion();
        WorkCompletions wcs = WorkCompletions.allocate(64);
        DirectWqe.Poster burst = new DirectWqe.Poster(dsq, verb, local, new InlineSlices(local.buffer()));
        SplittableRandom rnd = new SplittableRandom(seed);
        int bursts = 0;
        for (int round = 0; round < 600; round++) {
            int count = 1 + rnd.nextInt(32);
            int cqMod = 1 + rnd.nextInt(count + 1);
            int size = 1 + rnd.nextInt(256);
            long inc = (size + 63) & ~63L; // BufferLayout.inc: the size rounded up to a cache line
            int slots = 1 + rnd.nextInt(40); // how many fit in the cycle buffer: lists longer than that wrap
            boolean step = rnd.nextInt(4) != 0; // false: every WR of the list at one address (a size > half a cycle)
            long[] la = new long[count];
            long[] ra = new long[count];
            long mask = 0;
            long lbase = local.address() + rnd.nextInt(4) * 4096L;
            long rbase = remote.address() + rnd.nextInt(4) * 4096L;
            for (int j = 0; j < count; j++) { // BwRunner.runSender's layout of a post list
                boolean s = j > 0 && step;
                la[j] = j == 0 ? lbase : la[j - 1] + (s ? inc : 0);
                ra[j] = j == 0 ? rbase : ra[j - 1] + (s ? inc : 0);
                if (s && j % slots == 0) {
                    la[j] = lbase;
                    ra[j] = rbase;
                }
                if ((j + 1) % cqMod == 0) {
                    mask |= 1L << j;
                }
            }
            long wrId = rnd.nextInt(8);
            fill(f, verb, round);
            burst.configure(size, remote.rkey(), false);
            int before = f.sendCounter();
            assertThat(burst.post(count, la, ra, mask, wrId)).isZero();
            assertThat(f.sendCounter()).isEqualTo((before + count) & 0xffff);
            byte[][] got = wqebbs(f.sendRing(), before, count);
            complete(f, dcq, wcs, Long.bitCount(mask), wrId);
            for (int j = 0; j < count; j++) { // the data of the last WR to each address (a wrapped list rewrites)
                if (lastAt(la, ra, j)) {
                    MemorySegment from = verb == PerftestTest.Verb.WRITE ? seg(local, la[j]) : seg(remote, ra[j]);
                    MemorySegment to = verb == PerftestTest.Verb.WRITE ? seg(remote, ra[j]) : seg(local, la[j]);
                    assertThat(to.asSlice(0, size).toArray(ValueLayout.JAVA_BYTE)).as("round %d WR %d", round, j)
                            .isEqualTo(from.asSlice(0, size).toArray(ValueLayout.JAVA_BYTE));
                }
            }
            // the same WRs one call at a time: the same WQEs but for the WQE index (bytes 1-2 of the control segment)
            int at = f.sendCounter();
            for (int j = 0; j < count; j++) {
                int flags = ((mask >>> j) & 1) != 0 ? SendFlag.SIGNALED_BIT : 0;
                long off = la[j] - local.address();
                if (verb == PerftestTest.Verb.WRITE) {
                    dsq.rdmaWrite(wrId, flags, remote.rkey(), ra[j], local, off, size);
                } else {
                    dsq.rdmaRead(wrId, flags, remote.rkey(), ra[j], local, off, size);
                }
            }
            dsq.post();
            byte[][] want = wqebbs(f.sendRing(), at, count);
            complete(f, dcq, wcs, Long.bitCount(mask), wrId);
            for (int j = 0; j < count; j++) {
                assertThat(index(got[j])).isEqualTo((before + j) & 0xffff);
                assertThat(index(want[j])).isEqualTo((at + j) & 0xffff);
                got[j][1] = want[j][1];
                got[j][2] = want[j][2];
                assertThat(got[j]).as("round %d WR %d of %d, cq_mod %d", round, j, count, cqMod).isEqualTo(want[j]);
            }
            bursts += count > 1 && cqMod > 1 ? 1 : 0;
        }
        assertThat(bursts).isGreaterThan(100);
        assertThat(dsq.pending()).isZero();
    }

    /** Whether WR {@code j} is the list's last to write its destination (a wrapped list writes one twice). */
    private static boolean lastAt(long[] la, long[] ra, int j) {
        for (int k = j + 1; k < la.length; k++) {
            if (la[k] == la[j] || ra[k] == ra[j]) {
                return false;
            }
        }
        return true;
    }

    private static MemorySegment seg(MemoryRegion mr, long address) {
        return mr.buffer().asSlice(address - mr.address());
    }

    /** A fresh pattern in the source buffer and zeros in the destination, so each round's data is its own. */
    private static void fill(Mlx5InProcess f, PerftestTest.Verb verb, int round) {
        MemorySegment src = (verb == PerftestTest.Verb.WRITE ? f.localRegion() : f.remoteRegion()).buffer();
        MemorySegment dst = (verb == PerftestTest.Verb.WRITE ? f.remoteRegion() : f.localRegion()).buffer();
        for (long k = 0; k < 5 * 4096; k++) {
            src.set(ValueLayout.JAVA_BYTE, k, (byte) (k * 13 + round));
        }
        dst.asSlice(0, 5 * 4096).fill((byte) 0);
    }

    /** The model executes the posted WQEs; every signaled WR completes, successfully, with the list's wr_id. */
    private static void complete(Mlx5InProcess f, DirectCompletionQueue dcq, WorkCompletions wcs, int signaled,
                                 long wrId) {
        f.doorbell();
        int got = 0;
        while (got < signaled) {
            int k = dcq.poll(wcs);
            assertThat(k).as("completions").isPositive();
            for (int c = 0; c < k; c++) {
                WorkCompletion wc = wcs.get(c);
                assertThat(wc.ok()).as(wc.toString()).isTrue();
                assertThat(wc.wrId()).isEqualTo(wrId);
            }
            got += k;
        }
        assertThat(got).isEqualTo(signaled);
        assertThat(dcq.poll(wcs)).isZero();
    }

    private static byte[][] wqebbs(MemorySegment ring, int start, int n) {
        byte[][] b = new byte[n][];
        for (int j = 0; j < n; j++) {
            b[j] = ring.asSlice((long) ((start + j) & (RING - 1)) * 64, 64).toArray(ValueLayout.JAVA_BYTE);
        }
        return b;
    }

    private static int index(byte[] wqebb) {
        return (wqebb[1] & 0xff) << 8 | (wqebb[2] & 0xff);
    }
}
