package dev.panverbs.perf;

import dev.panverbs.bindings.ibverbs.ContextOps;
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
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
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
 * critical downcall per operation, ~2-3 ns of it); {@code downcall*} are the bare FFM costs. Run with
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
    private MethodHandle nop;
    private MethodHandle nopCritical;
    private MethodHandle cPostSend;
    private MethodHandle cPostBatch1;
    private MethodHandle cExtendedPoll16;

    @Setup(Level.Trial)
    public void setup() {
        String lib = System.getProperty("panverbs.fake", "perf/target/libfakeprovider.so");
        FakeProvider fake = new FakeProvider(Path.of(lib));
        cq = fake.createCq(1024);
        qp = fake.createRtsQp(cq, 512, 0, EnumSet.noneOf(SendOperation.class));
        cqEx = fake.createCqEx(1024, EnumSet.of(CompletionField.BYTE_LEN));
        qpEx = fake.createRtsQp(cqEx, 512, 0, EnumSet.of(SendOperation.RDMA_WRITE));
        mr = fake.register(Arena.global().allocate(64 * 1024, 4096), 0x42);
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
        ValueLayout.OfLong j = ValueLayout.JAVA_LONG;
        ValueLayout.OfInt i = ValueLayout.JAVA_INT;
        ValueLayout p = ValueLayout.ADDRESS;
        nop = fake.downcall("fake_nop", FunctionDescriptor.ofVoid(), false);
        nopCritical = fake.downcall("fake_nop", FunctionDescriptor.ofVoid(), true);
        cPostSend = fake.downcall("fake_c_post_send", FunctionDescriptor.of(j, p, p, i, i, j, j, i, j, i), true);
        cPostBatch1 = fake.downcall("fake_c_post_batch1", FunctionDescriptor.of(j, p, p, j, j, i, j, i), true);
        cExtendedPoll16 = fake.downcall("fake_c_extended_poll16", FunctionDescriptor.of(j, p, p, j, j, i, j, i), true);
        System.err.println("provider slots linked " + (Boolean.getBoolean("dev.panverbs.bindings.noCritical")
                ? "WITHOUT" : "with") + " Linker.Option.critical(false)");
    }

    // ---- bare FFM costs ----

    /** An empty C function through a plain downcall handle: the JDK's transition cost on this machine. */
    @Benchmark
    public void downcallEmpty() throws Throwable {
        nop.invokeExact();
    }

    /** The same with {@code Linker.Option.critical(false)}. */
    @Benchmark
    public void downcallEmptyCritical() throws Throwable {
        nopCritical.invokeExact();
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
        return (long) cPostSend.invokeExact(qpHandle, cqHandle, 1, 0, id, local, lkey, REMOTE, RKEY);
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
        return (long) cPostSend.invokeExact(qpHandle, cqHandle, 16, 0, id, local, lkey, REMOTE, RKEY);
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
        return (long) cPostSend.invokeExact(qpHandle, cqHandle, 16, 1, id, local, lkey, REMOTE, RKEY);
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

    /** C: the same through the same slots. */
    @Benchmark
    public long cPostBatch1() throws Throwable {
        long id = wrId++;
        return (long) cPostBatch1.invokeExact(qpExHandle, cqExHandle, id, local, lkey, REMOTE, RKEY);
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
        return (long) cExtendedPoll16.invokeExact(qpExHandle, cqExHandle, id, local, lkey, REMOTE, RKEY);
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
}
