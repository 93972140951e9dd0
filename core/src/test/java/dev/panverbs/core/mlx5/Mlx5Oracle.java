package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Builds and runs {@code src/test/c/mlx5_oracle.c} linked with libmlx5's own {@code qp.c.o} and {@code cq.c.o},
 * taken from the installed {@code libmlx5.a} (Debian/Ubuntu {@code libibverbs-dev}): libmlx5's
 * {@code mlx5_post_send}, {@code ibv_wr_*} builders, {@code mlx5_poll_cq} and {@code mlx5_arm_cq} on fake objects in
 * plain memory. The objects' PC32 relocations against {@code stderr} keep them out of a shared library, so the
 * oracle is an executable that reads a script on stdin (see the C file's header) and prints what libmlx5 wrote.
 *
 * <p>The fake objects follow rdma-core 44.0's private layouts, so any other archive is refused here with the
 * version its symbol prefix names; a missing archive, gcc or ar is a failure naming the package.
 */
final class Mlx5Oracle {
    static final Path ARCHIVE = Path.of(System.getProperty("panverbs.libmlx5.a",
            "/usr/lib/x86_64-linux-gnu/libmlx5.a"));
    private static final String PREFIX = "rdmacore44_0_";
    private static final Path DIR = Path.of("target/mlx5-oracle");
    private static Path executable;

    private Mlx5Oracle() {}

    /** The oracle executable, built once per JVM (and again when the C source is newer). */
    static synchronized Path executable() {
        if (executable != null) {
            return executable;
        }
        try {
            Files.createDirectories(DIR);
            Path source = Path.of("src/test/c/mlx5_oracle.c").toAbsolutePath();
            Path exe = DIR.resolve("mlx5_oracle").toAbsolutePath();
            if (!Files.isRegularFile(ARCHIVE)) {
                throw new AssertionError(ARCHIVE + " is missing: install libibverbs-dev (Debian/Ubuntu), which ships "
                        + "libmlx5.a; the mlx5 Direct WQE tests compare Java with its code");
            }
            run(DIR, "ar", "x", ARCHIVE.toString(), "qp.c.o", "cq.c.o");
            String symbols = run(DIR, "nm", "--defined-only", "qp.c.o");
            if (!symbols.contains(" T " + PREFIX + "mlx5_post_send")) {
                String other = symbols.lines().filter(l -> l.contains("mlx5_post_send")).findFirst().orElse("none");
                throw new AssertionError(ARCHIVE + " is not rdma-core 44.0 (its mlx5_post_send symbol is '" + other
                        + "', expected " + PREFIX + "mlx5_post_send): the oracle's fake objects follow rdma-core "
                        + "44.0's private layouts (providers/mlx5/mlx5.h); re-derive them for this version");
            }
            run(DIR, "gcc", "-std=gnu11", "-O1", "-Wall", "-Werror", "-o", exe.toString(), source.toString(),
                    "qp.c.o", "cq.c.o");
            executable = exe;
            return exe;
        } catch (IOException e) {
            throw new AssertionError("cannot build the mlx5 oracle: " + e + " (needs gcc, binutils, libibverbs-dev)",
                    e);
        }
    }

    /** Runs the oracle on {@code script} and returns its output lines. */
    static List<String> run(CharSequence script) {
        Path exe = executable();
        try {
            Path in = Files.createTempFile(DIR.toAbsolutePath(), "script", ".txt");
            Path out = Files.createTempFile(DIR.toAbsolutePath(), "out", ".txt");
            Files.writeString(in, script, StandardCharsets.US_ASCII);
            Process p = new ProcessBuilder(exe.toString()).redirectInput(in.toFile()).redirectOutput(out.toFile())
                    .redirectError(ProcessBuilder.Redirect.PIPE).start();
            String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(300, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("mlx5 oracle timed out on " + in);
            }
            if (p.exitValue() != 0) {
                throw new AssertionError("mlx5 oracle exited " + p.exitValue() + " on " + in + ": " + err);
            }
            List<String> lines = new ArrayList<>(Files.readAllLines(out, StandardCharsets.US_ASCII));
            Files.delete(in);
            Files.delete(out);
            return lines;
        } catch (IOException e) {
            throw new AssertionError("cannot run the mlx5 oracle: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static String run(Path dir, String... cmd) throws IOException {
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new AssertionError(String.join(" ", cmd) + " failed:\n" + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        return out;
    }

    /** The bytes of the oracle's pattern buffer (inline payloads are offsets into it), as pattern() fills it. */
    static byte[] pattern() {
        byte[] b = new byte[1 << 16];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (i * 131 + (i >> 8) * 7 + 1);
        }
        return b;
    }

    static byte[] unhex(String s) {
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(s, 2 * i, 2 * i + 2, 16);
        }
        return b;
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder(b.length * 2);
        for (byte x : b) {
            sb.append(Character.forDigit((x >> 4) & 15, 16)).append(Character.forDigit(x & 15, 16));
        }
        return sb.toString();
    }

    static long fnv(byte[] b) {
        long h = 0xcbf29ce484222325L;
        for (byte x : b) {
            h ^= x & 0xFF;
            h *= 0x100000001b3L;
        }
        return h;
    }

    /** What {@link #checkChain} saw: the chain's WQEBBs, and whether the BlueFlame register got a copy of it. */
    record Checked(int wqebbs, boolean blueFlameCopy) {}

    /**
     * Checks libmlx5's report of one chain (its R, S, H, D and B lines from {@code out}) against the Java writer
     * {@code w} after the same chain: rc and the refused WR, cur_post, head and BlueFlame offset, the chain's WQEBBs
     * from {@code old} (cur_post before it) in ring {@code sq}, the whole ring's hash, the doorbell record and the
     * BlueFlame register {@code bf} (zeroed before the chain; {@code oldBf}: its offset then). {@code noImm}: WQEs
     * whose ctrl.imm {@code ibv_wr_<op>} leaves unwritten (the HCA ignores it): those 4 bytes are taken from
     * libmlx5's ring, and from its BlueFlame copy for a chain of one WR, so the comparison covers the rest.
     */
    static Checked checkChain(Iterator<String> out, WqeWriter w, MemorySegment sq, MemorySegment dbrec,
                              MemorySegment bf, int old, int oldBf, long rc, long bad, List<Integer> noImm,
                              int chainLength, Function<String, Supplier<String>> where) {
        int mask = (int) (sq.byteSize() / 64) - 1;
        String[] r = out.next().split(" ");
        assertThat(r[0]).isEqualTo("R");
        assertThat(new long[] {rc, bad, Integer.toUnsignedLong(w.curPost), Integer.toUnsignedLong(w.head),
                w.bfOffset()}).as(where.apply("rc bad cur_post head bf_off"))
                .containsExactly(Long.parseLong(r[1]), Long.parseLong(r[2]), Long.parseLong(r[3]),
                        Long.parseLong(r[4]), Long.parseLong(r[5]));
        String[] sLine = out.next().split(" ", 4);
        int nbb = Integer.parseInt(sLine[2]);
        String theirBbs = sLine.length > 3 ? sLine[3] : "";
        byte[] theirs = unhex(theirBbs);
        for (int idx : noImm) {
            int at = ((idx - old) & mask) * 64 + 12;
            MemorySegment.copy(theirs, at, sq, ValueLayout.JAVA_BYTE, (long) idx * 64 + 12, 4);
        }
        byte[] javaBbs = new byte[nbb * 64];
        for (int i = 0; i < nbb; i++) {
            long off = (long) ((old + i) & mask) * 64;
            MemorySegment.copy(sq, ValueLayout.JAVA_BYTE, off, javaBbs, i * 64, 64);
        }
        assertThat(hex(javaBbs)).as(where.apply("WQEBBs from " + sLine[1])).isEqualTo(theirBbs);
        assertThat(Long.toHexString(fnv(sq.toArray(ValueLayout.JAVA_BYTE)))).as(where.apply("whole ring"))
                .isEqualTo(Long.toHexString(Long.parseUnsignedLong(out.next().substring(2), 16)));
        assertThat("D " + hex(dbrec.toArray(ValueLayout.JAVA_BYTE))).as(where.apply("dbrec")).isEqualTo(out.next());
        String theirBf = out.next();
        if (noImm.size() == 1 && chainLength == 1) { // the same 4 bytes in a BlueFlame copy
            MemorySegment.copy(unhex(theirBf.substring(2)), oldBf + 12, bf, ValueLayout.JAVA_BYTE, oldBf + 12, 4);
        }
        String bfHex = hex(bf.toArray(ValueLayout.JAVA_BYTE));
        assertThat("B " + bfHex).as(where.apply("BlueFlame register")).isEqualTo(theirBf);
        return new Checked(nbb, bfHex.substring(16).replace("0", "").length() > 0);
    }
}
