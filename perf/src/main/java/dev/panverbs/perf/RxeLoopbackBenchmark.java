package dev.panverbs.perf;

import dev.panverbs.core.Access;
import dev.panverbs.core.AddressVector;
import dev.panverbs.core.CompletionField;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.Device;
import dev.panverbs.core.ExtendedCompletionQueue;
import dev.panverbs.core.FakeProvider;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.Mtu;
import dev.panverbs.core.PostBatch;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.SendOperation;
import dev.panverbs.core.SendRequests;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;
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
 * The same operations as {@link DataPathBenchmark} on a real device: two RC QPs of one context connected to each
 * other (loopback), each operation posting RDMA WRITEs and spinning on the CQ until their completion. Needs a device
 * ({@code $PANVERBS_TEST_DEVICE} or the first); in the Soft-RoCE guest see perf/README.md. The {@code c*}
 * benchmarks run the same work in C ({@code fake_provider.c}'s baselines work on any provider's objects).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 5)
@Measurement(iterations = 3, time = 5)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class RxeLoopbackBenchmark {
    private static final Set<Access> REMOTE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE);

    private Context ctx;
    private CompletionQueue cq;
    private ExtendedCompletionQueue cqEx;
    private QueuePair qp;
    private QueuePair qpEx;
    private MemoryRegion src;
    private MemoryRegion dst;
    private WorkCompletions wcs;
    private MemorySegment qpHandle;
    private MemorySegment cqHandle;
    private MethodHandle cPostSend;
    private long wrId;
    private long local;

    @Setup(Level.Trial)
    public void setup() {
        String name = System.getenv("PANVERBS_TEST_DEVICE");
        ctx = name != null ? Device.open(name) : Device.first().open();
        ProtectionDomain pd = ctx.allocPd();
        int gidIndex = ctx.queryGid(1, 1).isZero() ? 0 : 1;
        AddressVector path = AddressVector.builder(1).grh(ctx.queryGid(1, gidIndex).toBytes(), gidIndex, 64).build();
        cq = ctx.createCq(1024).build();
        cqEx = ctx.createCq(1024).wcFlags(EnumSet.of(CompletionField.BYTE_LEN)).buildEx();
        qp = connectedPair(pd, cq, path, EnumSet.noneOf(SendOperation.class));
        qpEx = connectedPair(pd, cqEx, path, EnumSet.of(SendOperation.RDMA_WRITE));
        src = pd.allocate(64 * 1024, REMOTE);
        dst = pd.allocate(64 * 1024, REMOTE);
        wcs = WorkCompletions.allocate(16);
        local = src.buffer().address();
        qpHandle = FakeProvider.handle(qp);
        cqHandle = FakeProvider.handle(cq);
        String lib = System.getProperty("panverbs.fake", "perf/target/libfakeprovider.so");
        SymbolLookup fake = SymbolLookup.libraryLookup(Path.of(lib).toAbsolutePath(), java.lang.foreign.Arena.global());
        ValueLayout.OfLong j = ValueLayout.JAVA_LONG;
        ValueLayout.OfInt i = ValueLayout.JAVA_INT;
        ValueLayout p = ValueLayout.ADDRESS;
        cPostSend = Linker.nativeLinker().downcallHandle(fake.find("fake_c_post_send").orElseThrow(),
                FunctionDescriptor.of(j, p, p, i, i, j, j, i, j, i));
    }

    /** a -> b connected, returns a (b is kept alive by the context and answers as responder). */
    private QueuePair connectedPair(ProtectionDomain pd, CompletionQueue cq, AddressVector path,
                                    Set<SendOperation> ops) {
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(64).sendOps(ops).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        for (QueuePair q : new QueuePair[] {a, b}) {
            q.toInit(1, EnumSet.of(Access.REMOTE_WRITE));
        }
        a.toRtr(path, Mtu.MTU_1024, b.qpNum(), 0);
        b.toRtr(path, Mtu.MTU_1024, a.qpNum(), 0);
        a.toRts(0);
        b.toRts(0);
        return a;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        ctx.close();
    }

    /** One 64-byte RDMA WRITE through SendRequests.post(), then CompletionQueue.poll until its completion. */
    @Benchmark
    public long classicPostSend1() {
        SendRequests wrs = qp.sendRequests();
        wrs.rdmaWrite(wrId++, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address()).sge(src, 0, 64);
        wrs.post();
        return await(1);
    }

    /** The same in C through the same provider slots. */
    @Benchmark
    public long cPostSend1() throws Throwable {
        long id = wrId++;
        return (long) cPostSend.invokeExact(qpHandle, cqHandle, 1, 0, id, local, src.lkey(), dst.address(), dst.rkey());
    }

    /** 16 WRITEs in one chain, the last signaled. */
    @Benchmark
    public long classicPostSend16() {
        SendRequests wrs = qp.sendRequests();
        for (int i = 0; i < 16; i++) {
            wrs.rdmaWrite(wrId++, i == 15 ? SendFlag.SIGNALED_BIT : 0, dst.rkey(), dst.address() + i * 64L)
                    .sge(src, i * 64L, 64);
        }
        wrs.post();
        return await(1);
    }

    /** The same in C. */
    @Benchmark
    public long cPostSend16() throws Throwable {
        long id = wrId;
        wrId += 16;
        return (long) cPostSend.invokeExact(qpHandle, cqHandle, 16, 0, id, local, src.lkey(), dst.address(), dst.rkey());
    }

    /** One WRITE through PostBatch (ibv_wr_*), then an extended poll pass until its completion. */
    @Benchmark
    public long extendedPostBatch1() {
        try (PostBatch b = qpEx.startSend()) {
            b.rdmaWrite(wrId++, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address()).setSge(src, 0, 64);
            b.submit();
        }
        while (true) {
            if (cqEx.startPoll()) {
                long id = cqEx.wrId() + cqEx.statusValue();
                cqEx.endPoll();
                return id;
            }
        }
    }

    private long await(int n) {
        long sum = 0;
        while (n > 0) {
            int got = cq.poll(wcs);
            for (int i = 0; i < got; i++) {
                sum += wcs.get(i).wrId() + wcs.get(i).statusValue();
            }
            n -= got;
        }
        return sum;
    }
}
