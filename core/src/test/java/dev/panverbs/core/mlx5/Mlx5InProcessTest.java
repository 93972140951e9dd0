package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.FakeProvider;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The fixture of perf's Mlx5DirectBenchmark ({@link Mlx5InProcess}): libmlx5 44's {@code mlx5_post_send},
 * {@code ibv_wr_*} builders and {@code mlx5_poll_cq} running in this JVM (a shared library built from the installed
 * {@code libmlx5.a}), the hand-written C direct writer, and the Java {@link DirectSendQueue} /
 * {@link DirectCompletionQueue}, each on a fresh copy of the same fake memory and the same device model. Proves the
 * four rows of the benchmark do the same work: after every operation of the same script (16-WR chains with the last
 * or every WR signaled, single WRs; the ring and the CQ wrap several times) the send ring, doorbell record,
 * BlueFlame register, CQ buffer, CQ doorbell record and the remote region are byte for byte the same in all four,
 * the completions carry the same wr_ids (checked against the expected sum), and the data the model moved is the
 * local data. Also that the model-only baseline re-executes a chain without disturbing the next one, and that an
 * archive of another rdma-core release (another symbol prefix) or a missing one is refused by name before linking.
 */
class Mlx5InProcessTest {
    private static final int WQES = 64;
    private static Path library;
    private static Path fake;

    @BeforeAll
    static void build() {
        library = Mlx5InProcess.build(Path.of("src/test/c"), Path.of("target/mlx5-inproc"));
        fake = FakeProvider.compile(Path.of("src/test/c/fake_provider.c"), Path.of("target/fake"));
    }

    private enum Writer { JAVA, JAVA_BUILDER, JAVA_BURST, POST_SEND, WR, DIRECT }

    /** n, allSignaled, per step; 40 steps of up to 16 WQEBBs over a 64-WQEBB ring. */
    private static final int[][] SCRIPT = script();

    private static int[][] script() {
        int[][] s = new int[40][];
        for (int k = 0; k < s.length; k++) {
            s[k] = switch (k % 4) {
                case 0 -> new int[] {16, 0};
                case 1 -> new int[] {16, 1};
                case 2 -> new int[] {1, 0};
                default -> new int[] {7, 1};
            };
        }
        return s;
    }

    private static List<String> run(Writer w) {
        Mlx5InProcess f = new Mlx5InProcess(fake, library, WQES);
        WorkCompletions wcs = WorkCompletions.allocate(16);
        List<String> trace = new ArrayList<>();
        long wrId = 1000;
        for (int[] step : SCRIPT) {
            int n = step[0];
            boolean all = step[1] != 0;
            long sum = switch (w) {
                case JAVA -> f.javaDirect(n, all, wrId, wcs);
                case JAVA_BUILDER -> f.javaDirectBuilder(n, all, wrId, wcs);
                case JAVA_BURST -> f.javaDirectBurst(n, all, wrId, wcs);
                case POST_SEND -> f.postSend(n, all, wrId);
                case WR -> f.wr(n, all, wrId);
                case DIRECT -> f.direct(n, all, wrId);
            };
            long expected = 0;
            for (int k = all ? 0 : n - 1; k < n; k++) {
                expected += wrId + k + 1; // wr_id + IBV_WC_SUCCESS + IBV_WC_RDMA_WRITE
            }
            assertThat(sum).as("%s: completions of WRs %d..%d", w, wrId, wrId + n - 1).isEqualTo(expected);
            assertThat(bytes(f.remote, 0, n * 64)).as("%s: the model wrote the local data", w)
                    .isEqualTo(bytes(f.local, 0, n * 64));
            byte[] ring = f.sq.toArray(ValueLayout.JAVA_BYTE);
            if (w == Writer.WR) {
                // ibv_wr_rdma_write leaves ctrl.imm unwritten (the HCA ignores it for a WRITE without immediate):
                // every WQE here is one WQEBB, so that is bytes 12..15 of each; Java and the others write 0
                for (int k = 0; k < ring.length; k += 64) {
                    Arrays.fill(ring, k + 12, k + 16, (byte) (ring[k] == (byte) 0xEE ? 0xEE : 0));
                }
            }
            trace.add(HexFormat.of().formatHex(ring) + " " + hex(f.dbrec) + " " + hex(f.bf) + " " + hex(f.cqBuf)
                    + " " + hex(f.cqDbrec) + " " + Arrays.hashCode(bytes(f.remote, 0, 1024)));
            wrId += n;
        }
        return trace;
    }

    private static byte[] bytes(MemorySegment s, long off, int n) {
        return s.asSlice(off, n).toArray(ValueLayout.JAVA_BYTE);
    }

    private static String hex(MemorySegment s) {
        return HexFormat.of().formatHex(s.toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void libmlx5TheBuildersTheCWriterAndJavaLeaveTheSameBytesAfterEveryOperation() {
        List<String> java = run(Writer.JAVA);
        for (Writer w : List.of(Writer.JAVA_BUILDER, Writer.JAVA_BURST, Writer.POST_SEND, Writer.WR, Writer.DIRECT)) {
            List<String> other = run(w);
            for (int k = 0; k < java.size(); k++) {
                assertThat(other.get(k)).as("%s vs Java after step %d", w, k).isEqualTo(java.get(k));
            }
        }
    }

    @Test
    void theModelOnlyBaselineReplaysAChainAndLeavesTheQueueUsable() {
        Mlx5InProcess f = new Mlx5InProcess(fake, library, WQES);
        long id = 1;
        for (int round = 0; round < 20; round++) { // wraps the ring and the CQ
            boolean all = round % 2 == 1;
            f.direct(16, all, id);
            assertThat(f.modelOnly(16, all)).isZero();
            assertThat(f.modelOnly(16, all)).isZero();
            id += 16;
        }
        assertThat(f.direct(16, false, id)).isEqualTo(id + 15 + 1);
    }

    @Test
    void anArchiveOfAnotherRdmaCoreReleaseOrNoArchiveIsRefusedByName() throws Exception {
        Path dir = Files.createDirectories(Path.of("target/mlx5-inproc-other"));
        Path c = dir.resolve("other.c");
        Files.writeString(c, "int rdmacore45_0_mlx5_post_send(void) { return 0; }\n");
        for (String o : List.of("qp.c.o", "cq.c.o")) {
            Process p = new ProcessBuilder("gcc", "-c", "-o", dir.resolve(o).toString(), c.toString())
                    .redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            assertThat(p.waitFor()).isZero();
        }
        Path archive = dir.resolve("libmlx5.a");
        Files.deleteIfExists(archive);
        Process ar = new ProcessBuilder("ar", "rc", archive.toString(), dir.resolve("qp.c.o").toString(),
                dir.resolve("cq.c.o").toString()).redirectErrorStream(true).start();
        ar.getInputStream().readAllBytes();
        assertThat(ar.waitFor()).isZero();
        assertThatThrownBy(() -> Mlx5InProcess.build(Path.of("src/test/c"), dir.resolve("out"), archive))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("is not rdma-core 44.0")
                .hasMessageContaining("rdmacore45_0_mlx5_post_send");
        assertThat(dir.resolve("out/libmlx5inproc.so")).doesNotExist();
        assertThatThrownBy(() -> Mlx5InProcess.build(Path.of("src/test/c"), dir.resolve("out"),
                dir.resolve("missing.a"))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("install libibverbs-dev");
    }
}
