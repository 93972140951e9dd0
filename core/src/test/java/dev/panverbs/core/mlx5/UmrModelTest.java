package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.core.Access;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.FakeProvider;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.SendOperation;
import dev.panverbs.core.UmrHostSupport;
import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A UMR built by rdma-core 44's {@code mlx5_send_wr_mr_interleaved}/{@code _list} (in-process {@code qp.c.o}, driven by
 * {@link UmrQueuePair#configure}) executed by the PRM model of the HCA ({@code mlx5_device_model.c}, which parses the
 * UMR's mkey context and translations from the ring), then RDMA WRITEs through the mkey's rkey built by libmlx5's
 * {@code ibv_wr_rdma_write}: the bytes land where the layout says (interleaved strides across two regions, then a
 * reconfigured list), checked against offsets computed here from the layout, and nothing else is written.
 */
class UmrModelTest {
    private static final int WQE_CNT = 64;
    private static final int QPN = 0x4d5;
    private static final int MODEL_RIGHTS = 1 | 2; // the model's LOCAL_WRITE | REMOTE_WRITE
    private static final int KEY_A = 0x3a3a, KEY_B = 0x3b3b, KEY_SRC = 0x3c3c, MKEY = 0x777 << 8;
    private static final int SIZE = 64 * 1024;

    private static Path library;
    private static Path fakeLib;

    @BeforeAll
    static void build() {
        library = Mlx5InProcess.build(Path.of("src/test/c"), Path.of("target/mlx5-inproc"));
        fakeLib = FakeProvider.compile(Path.of("src/test/c/fake_provider.c"), Path.of("target/fake"));
    }

    @Test
    void anRdmaWriteThroughAConfiguredMkeyLandsWhereItsLayoutSays() throws Throwable {
        Linker linker = Linker.nativeLinker();
        SymbolLookup lib = SymbolLookup.libraryLookup(library, Arena.global());
        AddressLayout a = ValueLayout.ADDRESS;
        ValueLayout.OfInt i = ValueLayout.JAVA_INT;
        ValueLayout.OfLong l = ValueLayout.JAVA_LONG;
        Arena arena = Arena.ofShared();
        MemorySegment sq = arena.allocate(WQE_CNT * 64L, 4096);
        MemorySegment dbrec = arena.allocate(8, 8);
        MemorySegment bf = arena.allocate(512, 64);
        MemorySegment cqBuf = arena.allocate(64L * 64, 4096);
        MemorySegment rcqBuf = arena.allocate(64L * 64, 4096);
        for (int k = 0; k < 64; k++) {
            cqBuf.set(ValueLayout.JAVA_BYTE, k * 64L + 63, (byte) 0xF1); // MLX5_CQE_INVALID, owner 1 (libmlx5's init)
        }
        MemorySegment cqDbrec = arena.allocate(8, 8);
        MemorySegment bufA = arena.allocate(SIZE, 4096);
        MemorySegment bufB = arena.allocate(SIZE, 4096);
        MemorySegment src = arena.allocate(SIZE, 4096);
        for (int k = 0; k < SIZE; k++) {
            src.set(ValueLayout.JAVA_BYTE, k, (byte) (k % 251 + 1));
        }
        linker.downcallHandle(lib.find("model_reset").orElseThrow(), FunctionDescriptor.ofVoid()).invokeExact();
        MethodHandle reg = linker.downcallHandle(lib.find("model_reg").orElseThrow(),
                FunctionDescriptor.ofVoid(i, l, l, i));
        reg.invokeExact(KEY_A, bufA.address(), (long) SIZE, MODEL_RIGHTS);
        reg.invokeExact(KEY_B, bufB.address(), (long) SIZE, MODEL_RIGHTS);
        reg.invokeExact(KEY_SRC, src.address(), (long) SIZE, MODEL_RIGHTS);
        linker.downcallHandle(lib.find("model_qp").orElseThrow(), FunctionDescriptor.ofVoid(a, i, a, i, a, i, a, i,
                i)).invokeExact(sq, WQE_CNT, dbrec, QPN, cqBuf, 64, rcqBuf, 64, 0x999);
        int rc = (int) linker.downcallHandle(lib.find("mlx5ip_setup").orElseThrow(),
                FunctionDescriptor.of(i, a, i, a, a, i, i, a, i, a))
                .invokeExact(sq, WQE_CNT, dbrec, bf, 256, QPN, cqBuf, 64, cqDbrec);
        assertThat(rc).isZero();
        MemorySegment out = arena.allocate(16, 8);
        rc = (int) linker.downcallHandle(lib.find("mlx5ip_umr_setup").orElseThrow(), FunctionDescriptor.of(i, i, a))
                .invokeExact(256, out);
        assertThat(rc).isZero();
        MemorySegment mkeyStruct = (MemorySegment) linker.downcallHandle(lib.find("mlx5ip_umr_mkey").orElseThrow(),
                FunctionDescriptor.of(a, i, ValueLayout.JAVA_SHORT)).invokeExact(MKEY, (short) 8);
        MethodHandle doorbell = linker.downcallHandle(lib.find("model_doorbell").orElseThrow(),
                FunctionDescriptor.of(i));
        MethodHandle wr = linker.downcallHandle(lib.find("mlx5ip_wr").orElseThrow(),
                FunctionDescriptor.of(l, i, i, l, l, i, l, i));

        FakeProvider fp = new FakeProvider(fakeLib);
        CompletionQueue cq = fp.createCq(64);
        QueuePair qp = fp.createRtsQp(fp.protectionDomain(), cq, cq, WQE_CNT, 16, 1, 256,
                EnumSet.of(SendOperation.RDMA_WRITE, SendOperation.LOCAL_INV));
        UmrQueuePair umr = UmrQueuePair.wrap(qp, out.get(a, 0), out.get(a, 8), 256);
        MemoryRegion ra = fp.register(bufA, KEY_A);
        MemoryRegion rb = fp.register(bufB, KEY_B);
        IndirectMkey mkey = IndirectMkey.wrap(fp.protectionDomain(), mkeyStruct, 8, h -> 0);

        // 16 repetitions of 48 bytes of A (stride 128), 16 of B (stride 16), 64 of A further on (stride 64)
        MkeyLayout interleaved = MkeyLayout.interleaved(16, new MkeyLayout.Entry(ra, 100, 48, 80),
                new MkeyLayout.Entry(rb, 8, 16, 0), new MkeyLayout.Entry(ra, 8192, 64, 0));
        umr.configure(1, 0, mkey, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE), interleaved);
        UmrHostSupport.retireAllSends(qp);
        assertThat((int) doorbell.invokeExact()).as("the model executed the UMR").isEqualTo(1);
        writeThroughAndCheck(wr, mkey, interleaved, src, List.of(bufA, bufB));

        bufA.fill((byte) 0);
        bufB.fill((byte) 0);
        MkeyLayout list = MkeyLayout.list(new MkeyLayout.Sge(rb, 1000, 320), new MkeyLayout.Sge(ra, 64, 128),
                new MkeyLayout.Sge(rb, 40000, 576));
        umr.configure(2, 0, mkey, EnumSet.of(Access.REMOTE_WRITE), list);
        UmrHostSupport.retireAllSends(qp);
        assertThat((int) doorbell.invokeExact()).isEqualTo(1);
        writeThroughAndCheck(wr, mkey, list, src, List.of(bufA, bufB));
    }

    /** RDMA WRITEs of the mkey's whole length (64-byte WRs) from src, then every byte where the layout puts it. */
    private static void writeThroughAndCheck(MethodHandle wr, IndirectMkey mkey, MkeyLayout layout, MemorySegment src,
                                             List<MemorySegment> bufs) throws Throwable {
        long len = mkey.length();
        assertThat(len % 64).isZero();
        long sum = (long) wr.invokeExact((int) (len / 64), 0, 100L, src.address(), KEY_SRC, 0L, mkey.rkey());
        assertThat(sum).as("the last WRITE's completion: wr_id + SUCCESS + IBV_WC_RDMA_WRITE")
                .isEqualTo(100L + len / 64 - 1 + 0 + 1);
        long written = 0;
        for (long x = 0; x < len; x++) {
            long[] where = locate(layout, x);
            MemorySegment buf = bufs.get((int) where[0]);
            assertThat(buf.get(ValueLayout.JAVA_BYTE, where[1])).as("mkey byte %d", x)
                    .isEqualTo(src.get(ValueLayout.JAVA_BYTE, x));
            written++;
        }
        long nonZero = 0;
        for (MemorySegment b : bufs) {
            for (long k = 0; k < b.byteSize(); k++) {
                if (b.get(ValueLayout.JAVA_BYTE, k) != 0) {
                    nonZero++;
                }
            }
        }
        assertThat(nonZero).as("nothing written outside the layout").isEqualTo(written);
    }

    /** {region index (0: the first region, 1: the second), offset in it} of mkey byte x, from the layout alone. */
    private static long[] locate(MkeyLayout layout, long x) {
        if (layout instanceof MkeyLayout.Interleaved il) {
            long block = 0;
            for (MkeyLayout.Entry e : il.entries()) {
                block += e.bytesCount();
            }
            long rep = x / block;
            long within = x % block;
            for (MkeyLayout.Entry e : il.entries()) {
                if (within < e.bytesCount()) {
                    return new long[] {e.region() == il.entries().get(0).region() ? 0 : 1,
                            e.offset() + rep * (e.bytesCount() + e.bytesSkip()) + within};
                }
                within -= e.bytesCount();
            }
        } else {
            List<MkeyLayout.Sge> sges = ((MkeyLayout.SgeList) layout).sges();
            long within = x;
            for (MkeyLayout.Sge g : sges) {
                if (within < g.length()) {
                    return new long[] {g.region() == sges.get(1).region() ? 0 : 1, g.offset() + within};
                }
                within -= g.length();
            }
        }
        throw new AssertionError("byte " + x + " outside the layout");
    }
}
