package dev.panverbs.perf;

import dev.panverbs.bindings.ibverbs.ContextOps;
import dev.panverbs.bindings.ibverbs.CqExOps;
import dev.panverbs.bindings.ibverbs.QpExOps;
import dev.panverbs.core.CompletionField;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.ExtendedCompletionQueue;
import dev.panverbs.core.FakeProvider;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.PostBatch;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.SendOperation;
import dev.panverbs.core.SendRequests;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.EnumSet;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * The hot paths of both APIs on the library's real objects -- {@link SendRequests#post()}, {@link PostBatch},
 * {@link CompletionQueue#poll}, {@link ExtendedCompletionQueue#startPoll()}/{@code nextPoll}/{@code endPoll} --
 * over the fake provider ({@link FakeProvider}; core/src/test/c/fake_provider.c, built by perf/run), whose slots
 * write WQEs and CQEs into memory rings as a user-space provider does, minus the hardware. Each operation posts and
 * then polls what it posted, so the QP's outstanding-WR ring stays in steady state, as in a real loop.
 *
 * <p>Baselines in the same class: {@code c*} do the same work in C through the same function pointers (one
 * critical downcall per operation, ~2-3 ns of it); {@code raw*} do it from Java through the same provider slots and
 * handles as the library, with no checks and no tracking (the WRs written into global-arena memory as C writes them),
 * which separates the cost of the FFM transitions ({@code raw} / {@code c}) from the library's own
 * ({@code panverbs} / {@code raw}); {@code downcall*} are the bare FFM costs. {@code perf/run --compare} prints the
 * three side by side. Run with
 * {@code -prof gc}: every Java benchmark must show ~0 B/op. {@link DataPathNoCriticalBenchmark} repeats them with
 * the provider slots linked without {@code Linker.Option.critical}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 3)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class DataPathBenchmark {
    private static final long REMOTE = 0x7f00_0000_0000L;
    private static final int RKEY = 0x1234;

    private QueuePair qp;
    private CompletionQueue cq;
    private QueuePair qpEx;
    /** An RC QP with 64 bytes of max_inline_data, for {@link #extendedPostInline1}. */
    private QueuePair qpInline;
    /** 2 bytes of a shared arena's memory, as perftest's region (ProtectionDomain.allocate): ib_write_lat's inline data. */
    private MemorySegment sharedInline;
    private ExtendedCompletionQueue cqEx;
    private MemoryRegion mr;
    private WorkCompletions wcs;
    private ContextOps ops;
    private MemorySegment qpHandle;
    private MemorySegment cqHandle;
    private MemorySegment qpExHandle;
    private MemorySegment cqExHandle;
    private MemorySegment unsignaledWr;
    private MemorySegment badWr;
    private long local;
    private int lkey;
    private long wrId;
    // raw FFM baselines: the same slots, no library
    private QpExOps rawQpEx;
    private CqExOps rawCqEx;
    private MemorySegment rawWrs;
    private MemorySegment rawWcs;
    private MemorySegment rawPollAttr;

    @Setup(Level.Trial)
    public void setup() {
        String lib = System.getProperty("panverbs.fake", "perf/target/libfakeprovider.so");
        FakeProvider fake = new FakeProvider(Path.of(lib));
        cq = fake.createCq(1024);
        qp = fake.createRtsQp(cq, 512, 0, EnumSet.noneOf(SendOperation.class));
        cqEx = fake.createCqEx(1024, EnumSet.of(CompletionField.BYTE_LEN));
        qpEx = fake.createRtsQp(cqEx, 512, 0, EnumSet.of(SendOperation.RDMA_WRITE));
        mr = fake.register(Arena.global().allocate(64 * 1024, 4096), 0x42);
        qpInline = fake.createRtsQp(cqEx, 512, 64, EnumSet.of(SendOperation.RDMA_WRITE));
        sharedInline = Arena.ofShared().allocate(4096, 4096).asSlice(62, 2);
        wcs = WorkCompletions.allocate(16);
        local = mr.buffer().address();
        lkey = mr.lkey();
        qpHandle = FakeProvider.handle(qp);
        cqHandle = FakeProvider.handle(cq);
        qpExHandle = FakeProvider.handle(qpEx);
        cqExHandle = FakeProvider.handle(cqEx);
        ops = ContextOps.of(qpHandle.reinterpret(8).get(ValueLayout.ADDRESS, 0)); // ibv_qp.context
        // one unsignaled RDMA WRITE (struct ibv_send_wr, 128 bytes) with its SGE, for the bare slot call
        unsignaledWr = Arena.global().allocate(128 + 16, 8);
        unsignaledWr.set(ValueLayout.JAVA_LONG, 16, unsignaledWr.address() + 128); // sg_list
        unsignaledWr.set(ValueLayout.JAVA_INT, 24, 1);                             // num_sge
        unsignaledWr.set(ValueLayout.JAVA_LONG, 128, local);                        // sge.addr
        unsignaledWr.set(ValueLayout.JAVA_INT, 136, 64);                            // sge.length
        unsignaledWr.set(ValueLayout.JAVA_INT, 140, lkey);                          // sge.lkey
        badWr = Arena.global().allocate(ValueLayout.ADDRESS);
        rawWrs = Arena.global().allocate(16 * RAW_WR + 16 * RAW_SGE, 8);
        rawWcs = Arena.global().allocate(16 * RAW_WC, 8);
        rawPollAttr = Arena.global().allocate(8, 8);
        rawQpEx = QpExOps.of(qpExHandle);
        rawCqEx = CqExOps.of(cqExHandle);
        System.err.println("provider slots linked " + (Boolean.getBoolean("dev.panverbs.bindings.noCritical")
                ? "WITHOUT" : "with") + " Linker.Option.critical(false)");
    }

    // ---- bare FFM costs ----

    /** An empty C function through a plain downcall handle: the JDK's transition cost on this machine. */
    @Benchmark
    public void downcallEmpty() throws Throwable {
        CBaselines.NOP.invokeExact();
    }

    /** The same with {@code Linker.Option.critical(false)}. */
    @Benchmark
    public void downcallEmptyCritical() throws Throwable {
        CBaselines.NOP_CRITICAL.invokeExact();
    }

    /** {@code ops.post_send} of one prebuilt unsignaled WR through the bound slot: no Java-side work at all. */
    @Benchmark
    public int downcallPostSendSlot() {
        return ops.ibv_post_send(qpHandle, unsignaledWr, badWr);
    }

    // ---- classic API: SendRequests.post() + CompletionQueue.poll ----

    /** One RDMA WRITE: write the WR (checked SGE), ibv_post_send, poll its completion (retires the WR). */
    @Benchmark
    public long classicPostSend1() {
        SendRequests wrs = qp.sendRequests();
        wrs.rdmaWrite(wrId++, SendFlag.SIGNALED_BIT, RKEY, REMOTE).sge(mr, 0, 64);
        wrs.post();
        return drain(1);
    }

    /** C: the same through the same slots. */
    @Benchmark
    public long cPostSend1() throws Throwable {
        long id = wrId++;
        return (long) CBaselines.POST_SEND.invokeExact(qpHandle, cqHandle, 1, 0, id, local, lkey, REMOTE, RKEY);
    }

    /** A chain of 16 RDMA WRITEs (the last signaled) in one ibv_post_send, then the one completion. */
    @Benchmark
    public long classicPostSend16() {
        SendRequests wrs = qp.sendRequests();
        for (int i = 0; i < 16; i++) {
            wrs.rdmaWrite(wrId++, i == 15 ? SendFlag.SIGNALED_BIT : 0, RKEY, REMOTE + i * 64L).sge(mr, i * 64L, 64);
        }
        wrs.post();
        return drain(1);
    }

    /** C: the same through the same slots. */
    @Benchmark
    public long cPostSend16() throws Throwable {
        long id = wrId;
        wrId += 16;
        return (long) CBaselines.POST_SEND.invokeExact(qpHandle, cqHandle, 16, 0, id, local, lkey, REMOTE, RKEY);
    }

    /** 16 signaled RDMA WRITEs in one ibv_post_send, then one ibv_poll_cq of the 16 completions, each read. */
    @Benchmark
    public long classicPostSend16Poll16() {
        SendRequests wrs = qp.sendRequests();
        for (int i = 0; i < 16; i++) {
            wrs.rdmaWrite(wrId++, SendFlag.SIGNALED_BIT, RKEY, REMOTE + i * 64L).sge(mr, i * 64L, 64);
        }
        wrs.post();
        return drain(16);
    }

    /** C: the same through the same slots. */
    @Benchmark
    public long cPostSend16Poll16() throws Throwable {
        long id = wrId;
        wrId += 16;
        return (long) CBaselines.POST_SEND.invokeExact(qpHandle, cqHandle, 16, 1, id, local, lkey, REMOTE, RKEY);
    }

    // ---- extended API: PostBatch (ibv_wr_*) + ExtendedCompletionQueue (ibv_start_poll ...) ----

    /** ibv_wr_start, ibv_wr_rdma_write, ibv_wr_set_sge, ibv_wr_complete; then start_poll/end_poll of its CQE. */
    @Benchmark
    public long extendedPostBatch1() {
        try (PostBatch b = qpEx.startSend()) {
            b.rdmaWrite(wrId++, SendFlag.SIGNALED_BIT, RKEY, REMOTE).setSge(mr, 0, 64);
            b.submit();
        }
        long sum = 0;
        if (cqEx.startPoll()) {
            sum = cqEx.wrId() + cqEx.statusValue();
            cqEx.endPoll();
        }
        return sum;
    }

    /**
     * ib_write_lat's post: one signaled inline RDMA WRITE of 2 bytes of a shared arena's memory (ibv_wr_start,
     * ibv_wr_rdma_write, ibv_wr_set_inline_data, ibv_wr_complete), then start_poll/end_poll of its CQE.
     */
    @Benchmark
    public long extendedPostInline1() {
        try (PostBatch b = qpInline.startSend()) {
            b.rdmaWrite(wrId++, SendFlag.SIGNALED_BIT | SendFlag.INLINE_BIT, RKEY, REMOTE).setInlineData(sharedInline);
            b.submit();
        }
        long sum = 0;
        if (cqEx.startPoll()) {
            sum = cqEx.wrId() + cqEx.statusValue();
            cqEx.endPoll();
        }
        return sum;
    }

    /** C: the same through the same slots. */
    @Benchmark
    public long cPostBatch1() throws Throwable {
        long id = wrId++;
        return (long) CBaselines.POST_BATCH1.invokeExact(qpExHandle, cqExHandle, id, local, lkey, REMOTE, RKEY);
    }

    /** 16 signaled WRITEs (one ibv_post_send), then one extended poll pass reading wr_id, status, byte_len. */
    @Benchmark
    public long extendedPoll16() {
        SendRequests wrs = qpEx.sendRequests();
        for (int i = 0; i < 16; i++) {
            wrs.rdmaWrite(wrId++, SendFlag.SIGNALED_BIT, RKEY, REMOTE + i * 64L).sge(mr, i * 64L, 64);
        }
        wrs.post();
        long sum = 0;
        if (cqEx.startPoll()) {
            do {
                sum += cqEx.wrId() + cqEx.statusValue() + cqEx.readByteLen();
            } while (cqEx.nextPoll());
            cqEx.endPoll();
        }
        return sum;
    }

    /** C: the same through the same slots. */
    @Benchmark
    public long cExtendedPoll16() throws Throwable {
        long id = wrId;
        wrId += 16;
        // the ibv_qp_ex starts with its ibv_qp
        return (long) CBaselines.EXTENDED_POLL16.invokeExact(qpExHandle, cqExHandle, id, local, lkey, REMOTE, RKEY);
    }

    /** Polls the {@code expected} completions (as the C baseline does), reading each through the flyweight. */
    private long drain(int expected) {
        long sum = 0;
        while (expected > 0) {
            int n = cq.poll(wcs);
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = wcs.get(i);
                sum += wc.wrId() + wc.statusValue() + wc.byteLen();
            }
            expected -= n;
        }
        return sum;
    }

    // ---- raw FFM: the same provider slots and handles, written and read as C does, no checks, no tracking ----

    private static final long RAW_WR = 128;  // sizeof(struct ibv_send_wr)
    private static final long RAW_SGE = 16;  // sizeof(struct ibv_sge)
    private static final long RAW_WC = 48;   // sizeof(struct ibv_wc)
    private static final ValueLayout.OfLong J = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt I = ValueLayout.JAVA_INT_UNALIGNED;

    /** Writes {@code n} RDMA WRITEs of 64 bytes (the last signaled, or all) as C's baseline does, from WR 0. */
    private void rawChain(int n, boolean allSignaled) {
        MemorySegment w = rawWrs;
        long base = w.address();
        long sges = 16 * RAW_WR;
        for (int i = 0; i < n; i++) {
            long o = i * RAW_WR;
            long s = sges + i * RAW_SGE;
            w.set(J, s, local + i * 64L);            // sge.addr
            w.set(I, s + 8, 64);                      // sge.length
            w.set(I, s + 12, lkey);                   // sge.lkey
            w.set(J, o, wrId++);                      // wr_id
            w.set(J, o + 8, i + 1 < n ? base + o + RAW_WR : 0L); // next
            w.set(J, o + 16, base + s);               // sg_list
            w.set(I, o + 24, 1);                      // num_sge
            w.set(I, o + 28, 0);                      // opcode IBV_WR_RDMA_WRITE
            w.set(I, o + 32, allSignaled || i == n - 1 ? SendFlag.SIGNALED_BIT : 0); // send_flags
            w.set(J, o + 40, REMOTE + i * 64L);       // wr.rdma.remote_addr
            w.set(I, o + 48, RKEY);                   // wr.rdma.rkey
        }
    }

    /** ibv_poll_cq until {@code expected} completions were read (wr_id, status, byte_len), as C's baseline does. */
    private long rawDrain(int expected) {
        long sum = 0;
        MemorySegment wc = rawWcs;
        while (expected > 0) {
            int n = ops.ibv_poll_cq(cqHandle, Math.min(expected, 16), wc);
            for (int i = 0; i < n; i++) {
                long o = i * RAW_WC;
                sum += wc.get(J, o) + wc.get(I, o + 8) + wc.get(I, o + 20); // wr_id, status, byte_len
            }
            expected -= n;
        }
        return sum;
    }

    /** Raw FFM twin of {@link #classicPostSend1}. */
    @Benchmark
    public long rawPostSend1() {
        rawChain(1, false);
        if (ops.ibv_post_send(qpHandle, rawWrs, badWr) != 0) {
            throw new IllegalStateException("post_send");
        }
        return rawDrain(1);
    }

    /** Raw FFM twin of {@link #classicPostSend16}. */
    @Benchmark
    public long rawPostSend16() {
        rawChain(16, false);
        if (ops.ibv_post_send(qpHandle, rawWrs, badWr) != 0) {
            throw new IllegalStateException("post_send");
        }
        return rawDrain(1);
    }

    /** Raw FFM twin of {@link #classicPostSend16Poll16}. */
    @Benchmark
    public long rawPostSend16Poll16() {
        rawChain(16, true);
        if (ops.ibv_post_send(qpHandle, rawWrs, badWr) != 0) {
            throw new IllegalStateException("post_send");
        }
        return rawDrain(16);
    }

    /** Raw FFM twin of {@link #extendedPostBatch1}: the same six slot calls. */
    @Benchmark
    public long rawPostBatch1() {
        QpExOps q = rawQpEx;
        q.ibv_wr_start();
        q.wr_id(wrId++);
        q.wr_flags(SendFlag.SIGNALED_BIT);
        q.ibv_wr_rdma_write(RKEY, REMOTE);
        q.ibv_wr_set_sge(lkey, local, 64);
        if (q.ibv_wr_complete() != 0) {
            throw new IllegalStateException("wr_complete");
        }
        CqExOps c = rawCqEx;
        long sum = 0;
        if (c.ibv_start_poll(rawPollAttr) == 0) {
            sum = c.wr_id() + c.status();
            c.ibv_end_poll();
        }
        return sum;
    }

    /** Raw FFM twin of {@link #extendedPoll16}. */
    @Benchmark
    public long rawExtendedPoll16() {
        rawChain(16, true);
        if (ops.ibv_post_send(qpExHandle, rawWrs, badWr) != 0) {
            throw new IllegalStateException("post_send");
        }
        CqExOps c = rawCqEx;
        long sum = 0;
        if (c.ibv_start_poll(rawPollAttr) == 0) {
            do {
                sum += c.wr_id() + c.status() + c.ibv_wc_read_byte_len();
            } while (c.ibv_next_poll() == 0);
            c.ibv_end_poll();
        }
        return sum;
    }
}
