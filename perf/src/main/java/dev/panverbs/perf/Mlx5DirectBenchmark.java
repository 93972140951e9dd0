package dev.panverbs.perf;

import dev.panverbs.core.WorkCompletions;
import dev.panverbs.core.mlx5.Mlx5InProcess;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * mlx5 Direct WQE posting and direct CQE polling (issue 10's performance section): the Java
 * {@code DirectSendQueue}/{@code DirectCompletionQueue}, libmlx5 44's own {@code mlx5_post_send}, its
 * {@code ibv_wr_*} builders and {@code mlx5_poll_cq} (run in this JVM: core's {@code Mlx5InProcess}, a shared library
 * built from the installed {@code libmlx5.a}), and a hand-written C direct writer and CQE reader, all on the same fake
 * memory (send ring, doorbell record, BlueFlame register, CQ) and the same PRM device model, which executes each
 * chain and writes its CQEs. {@code Mlx5InProcessTest} proves the four leave the same bytes.
 *
 * <p>One op = a chain of 16 RDMA WRITEs of 64 bytes, one SGE each, then the model's doorbell, then polling:
 * {@code *16} signal the last WR and poll its one completion (the common shape: one CQE per 16 WRs),
 * {@code *16Poll16} signal all 16 and poll 16. The C rows are one downcall per op (post, model and poll inside);
 * the Java rows make one downcall per op too, the model's doorbell (the device). {@code *64} are the same op with
 * 64 WRs: {@code perf/run --compare-mlx5} ({@link Mlx5Compare}) takes the cost per WR as the slope between 16 and
 * 64 WRs per op, where the op's fixed costs (downcall, doorbell, fences, poll) cancel. {@code model16}/{@code model64}
 * are the model's own cost (re-executing the same WQEs, one downcall): their slope is the model's work per WR, which
 * every path's slope contains; {@code model16Poll16} serves the marginal cost per completion.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class Mlx5DirectBenchmark {
    static final int N = 16;
    /** The long chain: per WR = the slope between N and LONG WRs per op (fixed costs cancel). */
    static final int LONG = 64;
    private static final int WQES = 256;

    /** The fixture (one per fork: the model and libmlx5's fake objects are the library's globals). */
    @State(Scope.Thread)
    public static class Fixture {
        Mlx5InProcess f;
        WorkCompletions wcs;
        long wrId;

        @Setup(Level.Trial)
        public void setup() {
            Path lib = Mlx5InProcess.build(Path.of(System.getProperty("panverbs.mlx5.csrc", "core/src/test/c")),
                    Path.of(System.getProperty("panverbs.mlx5.out", "perf/target/mlx5-inproc")));
            f = new Mlx5InProcess(Path.of(System.getProperty("panverbs.fake", "perf/target/libfakeprovider.so")),
                    lib, WQES);
            wcs = WorkCompletions.allocate(N);
            prime();
        }

        void prime() {}
    }

    /** The fixture after one C chain with the last WR signaled, for the model baseline to replay. */
    @State(Scope.Thread)
    public static class LastSignaled extends Fixture {
        @Override
        void prime() {
            f.direct(N, false, 0);
        }
    }

    /** The same for the long chain. */
    @State(Scope.Thread)
    public static class LastSignaledLong extends Fixture {
        @Override
        void prime() {
            f.direct(LONG, false, 0);
        }
    }

    /** The same with every WR signaled. */
    @State(Scope.Thread)
    public static class AllSignaled extends Fixture {
        @Override
        void prime() {
            f.direct(N, true, 0);
        }
    }

    /**
     * The light device ({@code Mlx5InProcess.light}): the model consumes each WQE and writes the CQE of a signaled
     * one without executing it (no data moved, no key checked). Its per-WR work is ~1 ns where the full model's is
     * ~12.6 ns, so a posting path's per-WR slope is measured nearly alone instead of as the small difference of two
     * large, noisy slopes (the C writer's ~2 ns read anything from 1.3 to 13 ns that way).
     */
    @State(Scope.Thread)
    public static class Light extends Fixture {
        @Override
        void prime() {
            f.light(true);
        }
    }

    /** The light device after one C chain of 16 (the light model's own cost replays it). */
    @State(Scope.Thread)
    public static class LightLastSignaled extends Fixture {
        @Override
        void prime() {
            f.light(true);
            f.direct(N, false, 0);
        }
    }

    /** The same for the long chain. */
    @State(Scope.Thread)
    public static class LightLastSignaledLong extends Fixture {
        @Override
        void prime() {
            f.light(true);
            f.direct(LONG, false, 0);
        }
    }

    // ---- 16 WRs, the last signaled, one completion ----

    /** Java: DirectSendQueue (16 x rdmaWrite + sge, post) + model + DirectCompletionQueue.poll. */
    @Benchmark
    public long javaDirect16(Fixture s) {
        long id = s.wrId;
        s.wrId = id + N;
        return s.f.javaDirect(N, false, id, s.wcs);
    }

    /** C: 16 ibv_send_wr, libmlx5's mlx5_post_send + model + mlx5_poll_cq. */
    @Benchmark
    public long mlx5PostSend16(Fixture s) {
        long id = s.wrId;
        s.wrId = id + N;
        return s.f.postSend(N, false, id);
    }

    /** C: libmlx5's ibv_wr_start, 16 x (ibv_wr_rdma_write, ibv_wr_set_sge), ibv_wr_complete + model + mlx5_poll_cq. */
    @Benchmark
    public long mlx5Wr16(Fixture s) {
        long id = s.wrId;
        s.wrId = id + N;
        return s.f.wr(N, false, id);
    }

    /** C: the hand-written direct writer + model + hand-written CQE reader (the physical limit). */
    @Benchmark
    public long cDirect16(Fixture s) {
        long id = s.wrId;
        s.wrId = id + N;
        return s.f.direct(N, false, id);
    }

    /** C: the model alone re-executing the 16 WQEs (1 CQE), to subtract. */
    @Benchmark
    public long model16(LastSignaled s) {
        return s.f.modelOnly(N, false);
    }

    // ---- 64 WRs, the last signaled, one completion: the long point of the per-WR slope ----

    @Benchmark
    public long javaDirect64(Fixture s) {
        long id = s.wrId;
        s.wrId = id + LONG;
        return s.f.javaDirect(LONG, false, id, s.wcs);
    }

    @Benchmark
    public long mlx5PostSend64(Fixture s) {
        long id = s.wrId;
        s.wrId = id + LONG;
        return s.f.postSend(LONG, false, id);
    }

    @Benchmark
    public long mlx5Wr64(Fixture s) {
        long id = s.wrId;
        s.wrId = id + LONG;
        return s.f.wr(LONG, false, id);
    }

    @Benchmark
    public long cDirect64(Fixture s) {
        long id = s.wrId;
        s.wrId = id + LONG;
        return s.f.direct(LONG, false, id);
    }

    /** C: the model alone re-executing the 64 WQEs (1 CQE): its own per-WR slope. */
    @Benchmark
    public long model64(LastSignaledLong s) {
        return s.f.modelOnly(LONG, false);
    }

    // ---- the light device (no data moved): 16 and 64 WRs, the last signaled, one completion ----

    @Benchmark
    public long javaDirectLight16(Light s) {
        long id = s.wrId;
        s.wrId = id + N;
        return s.f.javaDirect(N, false, id, s.wcs);
    }

    @Benchmark
    public long javaDirectLight64(Light s) {
        long id = s.wrId;
        s.wrId = id + LONG;
        return s.f.javaDirect(LONG, false, id, s.wcs);
    }

    /** The same WRs as one {@code rdmaWriteBurst} (issue 10, ninth round). */
    @Benchmark
    public long javaBurstLight16(Light s) {
        long id = s.wrId;
        s.wrId = id + N;
        return s.f.javaDirectBurst(N, false, id, s.wcs);
    }

    @Benchmark
    public long javaBurstLight64(Light s) {
        long id = s.wrId;
        s.wrId = id + LONG;
        return s.f.javaDirectBurst(LONG, false, id, s.wcs);
    }

    @Benchmark
    public long mlx5PostSendLight16(Light s) {
        long id = s.wrId;
        s.wrId = id + N;
        return s.f.postSend(N, false, id);
    }

    @Benchmark
    public long mlx5PostSendLight64(Light s) {
        long id = s.wrId;
        s.wrId = id + LONG;
        return s.f.postSend(LONG, false, id);
    }

    @Benchmark
    public long mlx5WrLight16(Light s) {
        long id = s.wrId;
        s.wrId = id + N;
        return s.f.wr(N, false, id);
    }

    @Benchmark
    public long mlx5WrLight64(Light s) {
        long id = s.wrId;
        s.wrId = id + LONG;
        return s.f.wr(LONG, false, id);
    }

    @Benchmark
    public long cDirectLight16(Light s) {
        long id = s.wrId;
        s.wrId = id + N;
        return s.f.direct(N, false, id);
    }

    @Benchmark
    public long cDirectLight64(Light s) {
        long id = s.wrId;
        s.wrId = id + LONG;
        return s.f.direct(LONG, false, id);
    }

    /** The light model alone re-consuming the 16 WQEs (1 CQE). */
    @Benchmark
    public long modelLight16(LightLastSignaled s) {
        return s.f.modelOnly(N, false);
    }

    @Benchmark
    public long modelLight64(LightLastSignaledLong s) {
        return s.f.modelOnly(LONG, false);
    }

    // ---- 16 WRs, all signaled, 16 completions ----

    @Benchmark
    public long javaDirect16Poll16(Fixture s) {
        long id = s.wrId;
        s.wrId = id + N;
        return s.f.javaDirect(N, true, id, s.wcs);
    }

    @Benchmark
    public long mlx5PostSend16Poll16(Fixture s) {
        long id = s.wrId;
        s.wrId = id + N;
        return s.f.postSend(N, true, id);
    }

    @Benchmark
    public long mlx5Wr16Poll16(Fixture s) {
        long id = s.wrId;
        s.wrId = id + N;
        return s.f.wr(N, true, id);
    }

    @Benchmark
    public long cDirect16Poll16(Fixture s) {
        long id = s.wrId;
        s.wrId = id + N;
        return s.f.direct(N, true, id);
    }

    /** C: the model alone re-executing 16 signaled WQEs (16 CQEs), to subtract. */
    @Benchmark
    public long model16Poll16(AllSignaled s) {
        return s.f.modelOnly(N, true);
    }
}
