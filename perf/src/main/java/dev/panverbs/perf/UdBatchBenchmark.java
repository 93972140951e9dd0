package dev.panverbs.perf;

import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.CompletionField;
import dev.panverbs.core.ExtendedCompletionQueue;
import dev.panverbs.core.FakeProvider;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.PostBatch;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.SendOperation;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
 * A UD QP's {@code ibv_wr_*} batch ({@link PostBatch#setUdAddr}, {@code ibv_wr_set_ud_addr}, per WR) against the same
 * batch of SENDs on an RC QP, over the fake provider ({@link DataPathBenchmark}'s): the difference per WR is what
 * addressing a WR costs (the AH's checks, its tracking, the guard against its destroy during the provider's copy, the
 * downcall). The fake executes both as RC SENDs on the QP itself; with no receive posted each completes with an
 * error, so every WR yields a completion and each batch polls its 16.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 3)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class UdBatchBenchmark {
    private ExtendedCompletionQueue cq;
    private QueuePair ud;
    private QueuePair rc;
    private AddressHandle ah;
    private MemoryRegion mr;
    private long wrId;

    @Setup(Level.Trial)
    public void setup() {
        FakeProvider fake = new FakeProvider(Path.of(System.getProperty("panverbs.fake",
                "perf/target/libfakeprovider.so")));
        cq = fake.createCqEx(1024, EnumSet.noneOf(CompletionField.class));
        ud = fake.createUdQp(cq, 512, EnumSet.of(SendOperation.SEND));
        rc = fake.createRtsQp(cq, 512, 0, EnumSet.of(SendOperation.SEND));
        ah = FakeProvider.fakeAh(fake.protectionDomain(), new AtomicInteger());
        mr = fake.register(Arena.global().allocate(64 * 1024, 4096), 0x42);
    }

    /** 16 UD SENDs to one AH in one batch ({@code setUdAddr} + {@code setSge} each), then their 16 completions. */
    @Benchmark
    public long udPostBatch16() {
        try (PostBatch b = ud.startSend()) {
            for (int i = 0; i < 16; i++) {
                b.send(wrId++, SendFlag.SIGNALED_BIT).setUdAddr(ah, 0x99, 0x1111).setSge(mr, i * 64L, 64);
            }
            b.submit();
        }
        return poll16();
    }

    /** The same 16 SENDs on an RC QP: no address per WR. */
    @Benchmark
    public long rcPostBatch16() {
        try (PostBatch b = rc.startSend()) {
            for (int i = 0; i < 16; i++) {
                b.send(wrId++, SendFlag.SIGNALED_BIT).setSge(mr, i * 64L, 64);
            }
            b.submit();
        }
        return poll16();
    }

    private long poll16() {
        long sum = 0;
        if (cq.startPoll()) {
            do {
                sum += cq.wrId() + cq.statusValue();
            } while (cq.nextPoll());
            cq.endPoll();
        }
        return sum;
    }
}
