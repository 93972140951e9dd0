package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.core.Access;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.FakeProvider;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.SendOperation;
import dev.panverbs.core.UmrHostSupport;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The UMR WQEs that rdma-core 44's own builders ({@code mlx5_send_wr_mr_interleaved}, {@code mlx5_send_wr_mr_list}
 * of the installed {@code libmlx5.a}'s {@code qp.c.o}, linked in-process by {@link Mlx5InProcess#build} on a fake
 * QP) write when driven by the core's {@link UmrQueuePair#configure}, byte-compared with an independent expectation
 * written here from the PRM layouts as {@code mlx5dv.h} declares them: control segment (opcode UMR 0x25, WQE index,
 * DS count, fence/CQ-update/solicited bits, the mkey in {@code imm}), UMR control segment (inline flag, translation
 * octowords, mkey mask), mkey context segment (access bits, mkey tag, length) and the translation data (a repeat block
 * of 16-byte entries with their 16-bit stride and byte count, or 16-byte data segments), zero-padded to 64 bytes, each
 * 16-byte unit wrapping at the ring's end. Random layouts (1 .. max entries, repeat counts, strides, all four access
 * rights, fence/signaled/solicited), several laps of a 64-WQEBB ring; the whole ring, the doorbell record and libmlx5's
 * {@code mkey->length} are compared after every UMR.
 */
class UmrOracleTest {
    private static final int WQE_CNT = 64;
    private static final int MAX_INLINE = 512; // 31 interleaved entries, 32 SGEs per UMR WQE
    private static final int QPN = 0x1a2b3;
    private static final int ROUNDS = 3000;

    private static Path library;
    private static Path fakeLib;

    @BeforeAll
    static void build() {
        library = Mlx5InProcess.build(Path.of("src/test/c"), Path.of("target/mlx5-inproc"));
        fakeLib = FakeProvider.compile(Path.of("src/test/c/fake_provider.c"), Path.of("target/fake"));
    }

    @Test
    void randomUmrWqesMatchLibmlx5() throws Throwable {
        Linker linker = Linker.nativeLinker();
        SymbolLookup lib = SymbolLookup.libraryLookup(library, Arena.global());
        java.lang.foreign.AddressLayout a = ValueLayout.ADDRESS;
        ValueLayout.OfInt i = ValueLayout.JAVA_INT;
        Arena arena = Arena.ofShared();
        MemorySegment sq = arena.allocate(WQE_CNT * 64L, 4096).fill((byte) 0xEE);
        MemorySegment dbrec = arena.allocate(8, 8);
        MemorySegment bf = arena.allocate(512, 64);
        MemorySegment cqBuf = arena.allocate(64L * 64, 4096);
        MemorySegment cqDbrec = arena.allocate(8, 8);
        int rc = (int) linker.downcallHandle(lib.find("mlx5ip_setup").orElseThrow(),
                FunctionDescriptor.of(i, a, i, a, a, i, i, a, i, a))
                .invokeExact(sq, WQE_CNT, dbrec, bf, 256, QPN, cqBuf, 64, cqDbrec);
        assertThat(rc).isZero();
        MemorySegment out = arena.allocate(16, 8);
        rc = (int) linker.downcallHandle(lib.find("mlx5ip_umr_setup").orElseThrow(), FunctionDescriptor.of(i, i, a))
                .invokeExact(MAX_INLINE, out);
        assertThat(rc).isZero();
        MethodHandle newMkey = linker.downcallHandle(lib.find("mlx5ip_umr_mkey").orElseThrow(),
                FunctionDescriptor.of(a, i, ValueLayout.JAVA_SHORT));
        MethodHandle mkeyLength = linker.downcallHandle(lib.find("mlx5ip_umr_mkey_length").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG, a));
        MethodHandle state = linker.downcallHandle(lib.find("mlx5ip_umr_state").orElseThrow(),
                FunctionDescriptor.of(i, a));

        FakeProvider fp = new FakeProvider(fakeLib);
        CompletionQueue cq = fp.createCq(256);
        QueuePair qp = fp.createRtsQp(fp.protectionDomain(), cq, cq, WQE_CNT, 16, 1, MAX_INLINE,
                EnumSet.of(SendOperation.RDMA_WRITE, SendOperation.LOCAL_INV));
        UmrQueuePair umr = UmrQueuePair.wrap(qp, out.get(a, 0), out.get(a, 8), MAX_INLINE);
        assertThat(umr.maxInterleavedEntries()).isEqualTo(31);
        assertThat(umr.maxListEntries()).isEqualTo(32);
        List<MemoryRegion> regions = new ArrayList<>();
        for (int k = 0; k < 4; k++) { // 1 MiB each; the fake registers without touching the memory
            regions.add(fp.register(arena.allocate(1 << 20, 4096), 0x3000 + k * 0x11));
        }
        List<IndirectMkey> mkeys = new ArrayList<>();
        List<MemorySegment> mkeyStructs = new ArrayList<>();
        for (int k = 0; k < 6; k++) {
            int numDesc = 4 * (1 + k * 2); // 4, 12, 20, 28, 36, 44
            MemorySegment m = (MemorySegment) newMkey.invokeExact((0x500 + k) << 8, (short) numDesc);
            mkeyStructs.add(m);
            mkeys.add(IndirectMkey.wrap(fp.protectionDomain(), m, numDesc, h -> 0));
        }

        Random rnd = new Random(0x5eed_0044L);
        MemorySegment fm = arena.allocate(4, 4);
        MemorySegment expected = arena.allocate(sq.byteSize());
        int interleavedSeen = 0;
        int wraps = 0;
        for (int round = 0; round < ROUNDS; round++) {
            int curPost = (int) state.invokeExact(fm);
            int fmCache = fm.get(i, 0);
            int mk = rnd.nextInt(mkeys.size());
            IndirectMkey mkey = mkeys.get(mk);
            boolean interleaved = rnd.nextBoolean();
            int max = Math.min(mkey.maxEntries(), interleaved ? 31 : 32);
            int n = 1 + rnd.nextInt(max);
            if (rnd.nextInt(8) == 0) {
                n = max; // the limits themselves
            }
            MkeyLayout layout;
            if (interleaved) {
                int repeat = 1 + (rnd.nextInt(4) == 0 ? rnd.nextInt(4000) : rnd.nextInt(16));
                List<MkeyLayout.Entry> entries = new ArrayList<>();
                for (int e = 0; e < n; e++) {
                    int count = 1 + rnd.nextInt(Math.min(rnd.nextBoolean() ? 64 : 4096, (1 << 20) / repeat));
                    int maxStride = Math.min(0xFFFF, (int) Math.min(Integer.MAX_VALUE, ((1 << 20) - count)
                            / Math.max(repeat - 1, 1)));
                    int skip = rnd.nextInt(Math.max(Math.min(maxStride - count, 2048), 0) + 1);
                    long span = (repeat - 1L) * (count + skip) + count;
                    long offset = rnd.nextInt((int) Math.max((1 << 20) - span, 0) + 1);
                    entries.add(new MkeyLayout.Entry(regions.get(rnd.nextInt(4)), offset, count, skip));
                }
                layout = new MkeyLayout.Interleaved(repeat, entries);
                interleavedSeen++;
            } else {
                List<MkeyLayout.Sge> sges = new ArrayList<>();
                for (int e = 0; e < n; e++) {
                    int len = 1 + rnd.nextInt(rnd.nextBoolean() ? 64 : 65535); // MkeyLayout.Sge refuses 0
                    sges.add(new MkeyLayout.Sge(regions.get(rnd.nextInt(4)), rnd.nextInt((1 << 20) - len + 1), len));
                }
                layout = new MkeyLayout.SgeList(sges);
            }
            Set<Access> access = EnumSet.noneOf(Access.class);
            for (Access r : List.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC)) {
                if (rnd.nextBoolean()) {
                    access.add(r);
                }
            }
            int flags = (rnd.nextBoolean() ? SendFlag.SIGNALED_BIT : 0) | (rnd.nextInt(4) == 0 ? SendFlag.SOLICITED_BIT
                    : 0) | (rnd.nextInt(4) == 0 ? SendFlag.FENCE_BIT : 0);

            MemorySegment.copy(sq, 0, expected, 0, sq.byteSize());
            int wqebbs = expect(expected, curPost, fmCache, flags, mkey.lkey(), access, layout);
            if ((curPost & (WQE_CNT - 1)) + wqebbs > WQE_CNT) {
                wraps++;
            }
            umr.configure(round, flags, mkey, access, layout);
            UmrHostSupport.retireAllSends(qp);

            long mismatch = sq.mismatch(expected);
            assertThat(mismatch).as("round %d: %s layout of %d entries at WQEBB %d: first differing byte",
                    round, interleaved ? "interleaved" : "list", n, curPost & (WQE_CNT - 1)).isEqualTo(-1);
            int after = (int) state.invokeExact(fm);
            assertThat(after).isEqualTo(curPost + wqebbs);
            assertThat(Integer.reverseBytes(dbrec.get(i, 4))).isEqualTo(after & 0xFFFF);
            assertThat(fm.get(i, 0)).as("the next WQE's initiator small fence").isEqualTo(0x20);
            assertThat((long) mkeyLength.invokeExact(mkeyStructs.get(mk))).isEqualTo(layout.byteLength())
                    .isEqualTo(mkey.length());
        }
        assertThat(interleavedSeen).isBetween(ROUNDS / 3, 2 * ROUNDS / 3);
        assertThat(wraps).as("WQEs wrapping at the ring's end").isGreaterThan(ROUNDS / 20);
        System.out.println("UMR oracle: " + ROUNDS + " random UMR WQEs (" + interleavedSeen + " interleaved, "
                + wraps + " wrapping at the ring's end) byte-identical to rdma-core 44's mlx5_send_wr_mr_*");
    }

    /**
     * Writes the UMR WQE the PRM layouts call for into {@code ring} at {@code curPost} and returns its size in WQEBBs.
     * Independent of libmlx5's code: derived from the segment layouts of mlx5dv.h and the rules of mlx5dv_wr_post(3).
     */
    static int expect(MemorySegment ring, int curPost, int fmCache, int flags, int mkeyLkey, Set<Access> access,
                      MkeyLayout layout) {
        boolean interleaved = layout instanceof MkeyLayout.Interleaved;
        int n = layout.entryCount();
        int dataUnits = interleaved ? align4(n + 1) : align4(n); // 16-byte units, padded to 64 bytes
        int ds = 1 + 3 + 4 + dataUnits;
        byte[] w = new byte[ds * 16];
        MemorySegment s = MemorySegment.ofArray(w);
        ValueLayout.OfInt be32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
        ValueLayout.OfShort be16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
        ValueLayout.OfLong be64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
        // control segment
        s.set(be32, 0, ((curPost & 0xFFFF) << 8) | 0x25); // MLX5_OPCODE_UMR
        s.set(be32, 4, (QPN << 8) | ds);
        int fence = (flags & SendFlag.FENCE_BIT) != 0 ? 0x80 : fmCache;
        w[11] = (byte) (fence | ((flags & SendFlag.SIGNALED_BIT) != 0 ? 0x08 : 0)
                | ((flags & SendFlag.SOLICITED_BIT) != 0 ? 0x02 : 0));
        s.set(be32, 12, mkeyLkey);
        // UMR control segment: inline translations, their octowords, what the UMR changes in the mkey
        w[16] = (byte) 0x80;
        int xlat = interleaved ? (n + 1) * 16 : n * 16;
        s.set(be16, 20, (short) (align64(xlat) / 16));
        long mask = (1L << 29) | (1L << 13) | (1L << 18) | (1L << 19) | (1L << 20) | (1L << 21) | 1L;
        s.set(be64, 24, mask);
        // mkey context segment
        int acc = (access.contains(Access.REMOTE_ATOMIC) ? 0x40 : 0) | (access.contains(Access.REMOTE_WRITE) ? 0x20
                : 0) | (access.contains(Access.REMOTE_READ) ? 0x10 : 0) | (access.contains(Access.LOCAL_WRITE) ? 0x08
                : 0);
        w[64 + 2] = (byte) acc;
        s.set(be32, 64 + 4, 0xFFFFFF00 | (mkeyLkey & 0xFF));
        s.set(be64, 64 + 24, layout.byteLength());
        // translations
        int d = 128;
        if (layout instanceof MkeyLayout.Interleaved il) {
            long perRepeat = 0;
            for (MkeyLayout.Entry e : il.entries()) {
                perRepeat += e.bytesCount();
            }
            s.set(be32, d, (int) perRepeat);
            s.set(be32, d + 4, 0x400); // the repeat block's op
            s.set(be32, d + 8, il.repeatCount());
            s.set(be16, d + 14, (short) n);
            for (int k = 0; k < n; k++) {
                MkeyLayout.Entry e = il.entries().get(k);
                int o = d + 16 * (k + 1);
                s.set(be16, o, (short) (e.bytesCount() + e.bytesSkip()));
                s.set(be16, o + 2, (short) e.bytesCount());
                s.set(be32, o + 4, e.region().lkey());
                s.set(be64, o + 8, e.region().address() + e.offset());
            }
        } else {
            List<MkeyLayout.Sge> sges = ((MkeyLayout.SgeList) layout).sges();
            for (int k = 0; k < n; k++) {
                MkeyLayout.Sge g = sges.get(k);
                int o = d + 16 * k;
                s.set(be32, o, g.length());
                s.set(be32, o + 4, g.region().lkey());
                s.set(be64, o + 8, g.region().address() + g.offset());
            }
        }
        long ringBytes = WQE_CNT * 64L;
        long base = (curPost & (WQE_CNT - 1)) * 64L;
        for (int u = 0; u < ds; u++) { // every 16-byte unit wraps to the ring's start at its end
            MemorySegment.copy(s, u * 16L, ring, (base + u * 16L) % ringBytes, 16);
        }
        return (ds + 3) / 4;
    }

    private static int align4(int x) {
        return (x + 3) & ~3;
    }

    private static int align64(int x) {
        return (x + 63) & ~63;
    }
}
