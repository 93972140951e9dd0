package dev.panverbs.perf;

import dev.panverbs.bindings.ContextOps;
import dev.panverbs.bindings.CqExOps;
import dev.panverbs.bindings.QpExOps;
import dev.panverbs.core.PerfAccess;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The post and poll hot paths of both APIs against a fake provider (perf/src/main/c/fake_provider.c, built by
 * perf/run): fake {@code ibv_context.ops}, {@code ibv_qp_ex} and {@code ibv_cq_ex} whose slots point at C stubs that
 * return success. Measures panverbs' own cost (WR writing, checks, address-first critical downcalls, DMA tracking,
 * WC flyweight) and, with {@code -prof gc}, that it allocates nothing. {@link #baselineDowncall} is the bare FFM
 * call through the same slot.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class DataPathBenchmark {
    private Arena arena;
    private PerfAccess access;
    private ContextOps ops;
    private QpExOps qpx;
    private CqExOps cqx;
    private MemorySegment qp;
    private MemorySegment cq;
    private MemorySegment badWr;
    private MemorySegment pollAttr;
    private long wrId;
    private final Object region = new Object();

    @Setup(Level.Trial)
    public void setup() {
        arena = Arena.ofShared();
        String lib = System.getProperty("panverbs.fake", "perf/target/libfakeprovider.so");
        SymbolLookup fake = SymbolLookup.libraryLookup(Path.of(lib).toAbsolutePath(), arena);
        MemorySegment post = fake.find("fake_post").orElseThrow();
        MemorySegment ctx = arena.allocate(328, 8);
        // ibv_context.ops: poll_cq +96, req_notify_cq +104, post_srq_recv +168, post_send +208, post_recv +216
        ctx.set(ValueLayout.ADDRESS, 96, fake.find("fake_poll_cq").orElseThrow());
        ctx.set(ValueLayout.ADDRESS, 104, fake.find("fake_int").orElseThrow());
        ctx.set(ValueLayout.ADDRESS, 168, post);
        ctx.set(ValueLayout.ADDRESS, 208, post);
        ctx.set(ValueLayout.ADDRESS, 216, post);
        ops = ContextOps.of(ctx);
        qp = arena.allocate(352, 8); // an ibv_qp_ex, whose first 160 bytes are the ibv_qp
        qp.set(ValueLayout.ADDRESS, 0, ctx);
        MemorySegment v = fake.find("fake_void").orElseThrow();
        qp.set(ValueLayout.ADDRESS, 224, fake.find("fake_void_ij").orElseThrow()); // wr_rdma_write
        qp.set(ValueLayout.ADDRESS, 240, v);                                          // wr_send
        qp.set(ValueLayout.ADDRESS, 304, fake.find("fake_void_iji").orElseThrow()); // wr_set_sge
        qp.set(ValueLayout.ADDRESS, 320, v);                                          // wr_start
        qp.set(ValueLayout.ADDRESS, 328, fake.find("fake_int").orElseThrow());     // wr_complete
        qp.set(ValueLayout.ADDRESS, 336, v);                                          // wr_abort
        qpx = QpExOps.of(qp);
        cq = arena.allocate(288, 8); // an ibv_cq_ex
        cq.set(ValueLayout.ADDRESS, 0, ctx);
        cq.set(ValueLayout.ADDRESS, 144, fake.find("fake_start_poll").orElseThrow());
        cq.set(ValueLayout.ADDRESS, 152, fake.find("fake_next_poll").orElseThrow());
        cq.set(ValueLayout.ADDRESS, 160, v);
        cq.set(ValueLayout.ADDRESS, 168, fake.find("fake_read_u32").orElseThrow()); // read_opcode
        cq.set(ValueLayout.ADDRESS, 184, fake.find("fake_read_u32").orElseThrow()); // read_byte_len
        cqx = CqExOps.of(cq);
        badWr = arena.allocate(ValueLayout.ADDRESS);
        pollAttr = arena.allocate(8);
        access = new PerfAccess(256, arena);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    /** The bare call: ibv_post_send through the slot, nothing else. */
    @Benchmark
    public int baselineDowncall() {
        return ops.ibv_post_send(qp, MemorySegment.NULL, badWr);
    }

    /** Classic API, one WR: write it (opcode, flags, remote, SGE), post it, record it, retire it. */
    @Benchmark
    public int classicPostSend1() {
        long id = wrId++;
        access.sends().rdmaWrite(id, SendFlag.SIGNALED_BIT, 0x10000L, 0x1234);
        access.sge(0x20000L, 64, 0x42, region);
        int rc = access.postSend(ops, qp, badWr);
        access.retire(id);
        return rc;
    }

    /** Classic API, a chain of 16 WRs in one ibv_post_send (the cost per call; divide by 16 per WR). */
    @Benchmark
    public int classicPostSend16() {
        long first = wrId;
        for (int i = 0; i < 16; i++) {
            access.sends().rdmaWrite(wrId++, i == 15 ? SendFlag.SIGNALED_BIT : 0, 0x10000L + i * 64L, 0x1234);
            access.sge(0x20000L + i * 64L, 64, 0x42, region);
        }
        int rc = access.postSend(ops, qp, badWr);
        access.retire(first + 15);
        return rc;
    }

    /** Classic poll: ibv_poll_cq of 16 completions into the native array, read through the flyweight. */
    @Benchmark
    public long classicPoll16() {
        WorkCompletions wcs = access.completions();
        int n = ops.ibv_poll_cq(cq, wcs.capacity(), access.wcArray());
        access.polled(n);
        long sum = 0;
        for (int i = 0; i < n; i++) {
            WorkCompletion wc = wcs.get(i);
            sum += wc.wrId() + wc.statusValue() + wc.byteLen() + wc.qpNum();
        }
        return sum;
    }

    /** Extended API: wr_start, wr_id/wr_flags, wr_rdma_write, wr_set_sge, wr_complete (one WR per batch). */
    @Benchmark
    public int extendedPostBatch1() {
        qpx.ibv_wr_start();
        qpx.wr_id(wrId++);
        qpx.wr_flags(SendFlag.SIGNALED_BIT);
        qpx.ibv_wr_rdma_write(0x1234, 0x10000L);
        qpx.ibv_wr_set_sge(0x42, 0x20000L, 64);
        return qpx.ibv_wr_complete();
    }

    /** Extended poll: start_poll, 16 completions with a lazy byte_len read each, end_poll. */
    @Benchmark
    public long extendedPoll16() {
        long sum = 0;
        if (cqx.ibv_start_poll(pollAttr) == 0) {
            for (int i = 0; i < 16; i++) {
                sum += cqx.wr_id() + cqx.status() + cqx.ibv_wc_read_byte_len();
                if (i < 15 && cqx.ibv_next_poll() != 0) {
                    break;
                }
            }
            cqx.ibv_end_poll();
        }
        return sum;
    }
}
