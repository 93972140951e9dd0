package dev.panverbs.bindings.abi;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Compiles and runs throw-away C programs against the installed rdma-core headers, for host tests that
 * use gcc as the ABI oracle (layouts, constants, the mlx5dv.h inline helpers).
 *
 * <p>Sources and binaries go to {@code target/c-oracle/} of the module (or a temporary directory when
 * there is no {@code target/}), so a failing run can be reproduced by hand. Every program is compiled
 * with {@code gcc -std=gnu11}, as the rdma-core headers expect.
 *
 * <p>A missing gcc or missing headers is a test <em>failure</em> naming the packages, never a skip: CI
 * and every developer machine are expected to have them.
 */
public final class CToolchain {

    /** What to install when gcc or the headers are missing. */
    public static final String PACKAGES_HINT = "install gcc and the rdma-core headers: Debian/Ubuntu "
            + "'apt-get install gcc libibverbs-dev librdmacm-dev', RHEL/Fedora 'dnf install gcc rdma-core-devel'";

    private static final long TIMEOUT_SECONDS = 120;
    private static volatile CToolchain instance;

    private final String gcc;
    private final Path workDir;
    private final String gccVersion;

    private CToolchain(String gcc, Path workDir, String gccVersion) {
        this.gcc = gcc;
        this.workDir = workDir;
        this.gccVersion = gccVersion;
    }

    /**
     * The toolchain, checked once per JVM: gcc runs and {@code <infiniband/verbs.h>},
     * {@code <infiniband/mlx5dv.h>} and {@code <rdma/rdma_cma.h>} preprocess. Throws {@link AssertionError} naming the packages otherwise.
     */
    public static CToolchain get() {
        CToolchain t = instance;
        if (t == null) {
            synchronized (CToolchain.class) {
                t = instance;
                if (t == null) {
                    t = instance = probe();
                }
            }
        }
        return t;
    }

    private static CToolchain probe() {
        String gcc = System.getenv().getOrDefault("CC", "gcc");
        Result version;
        try {
            version = exec(List.of(gcc, "-dumpfullversion"), null);
        } catch (IOException e) {
            throw new AssertionError("C compiler '" + gcc + "' cannot be run (" + e.getMessage() + "); "
                    + PACKAGES_HINT, e);
        }
        if (version.exit != 0) {
            throw new AssertionError("'" + gcc + " -dumpfullversion' failed: " + version.output + "; " + PACKAGES_HINT);
        }
        Path dir = workDirectory();
        CToolchain t = new CToolchain(gcc, dir, version.output.strip());
        String probe = "#include <infiniband/verbs.h>\n#include <infiniband/mlx5dv.h>\n#include <rdma/rdma_cma.h>\n"
                + "int main(void) { return 0; }\n";
        try {
            t.compile("header-probe", probe, false);
        } catch (AssertionError e) {
            throw new AssertionError("rdma-core headers <infiniband/verbs.h>, <infiniband/mlx5dv.h>, <rdma/rdma_cma.h> "
                    + "not usable; "
                    + PACKAGES_HINT + "\n" + e.getMessage(), e);
        }
        return t;
    }

    private static Path workDirectory() {
        try {
            Path base = Path.of(System.getProperty("basedir", System.getProperty("user.dir")));
            Path target = base.resolve("target");
            Path dir = Files.isDirectory(target)
                    ? Files.createDirectories(target.resolve("c-oracle"))
                    : Files.createTempDirectory("panverbs-c-oracle");
            return dir;
        } catch (IOException e) {
            throw new AssertionError("cannot create a directory for generated C programs: " + e, e);
        }
    }

    /** Where generated sources and binaries are written. */
    public Path workDir() {
        return workDir;
    }

    /** gcc's full version, e.g. {@code 12.2.0}. */
    public String gccVersion() {
        return gccVersion;
    }

    /**
     * The rdma-core release the headers belong to (e.g. {@code 44.0}), read from pkg-config's libibverbs
     * version ({@code 1.14.44.0}: library ABI 1.14, rdma-core 44.0); {@code "unknown"} without pkg-config.
     */
    public String rdmaCoreVersion() {
        try {
            Result r = exec(List.of("pkg-config", "--modversion", "libibverbs"), null);
            String[] parts = r.output.strip().split("\\.");
            if (r.exit == 0 && parts.length >= 4) {
                return parts[2] + "." + parts[3];
            }
        } catch (IOException e) {
            // pkg-config is optional: only the log line loses the version
        }
        return "unknown";
    }

    /**
     * Compiles {@code source} into an executable {@code name}, with warnings off (generated programs compare
     * unsigned constants with 0 on purpose); extra flags go before the source file.
     */
    public Path compileExecutable(String name, String source, String... flags) {
        return compile(name, source, false, flags);
    }

    /**
     * Compiles {@code source} into a shared library {@code lib<name>.so} for {@code SymbolLookup.libraryLookup},
     * with {@code -Wall -Werror}: hand-written stubs must match the header's types exactly (assigning a stub
     * to a function-pointer slot of another type is an error).
     */
    public Path compileSharedLibrary(String name, String source, String... flags) {
        return compile(name, source, true, flags);
    }

    private Path compile(String name, String source, boolean shared, String... flags) {
        Path src = workDir.resolve(name + ".c");
        Path out = workDir.resolve(shared ? "lib" + name + ".so" : name);
        try {
            Files.writeString(src, source, StandardCharsets.UTF_8);
            List<String> cmd = new ArrayList<>(List.of(gcc, "-std=gnu11", "-O0"));
            cmd.addAll(shared ? List.of("-Wall", "-Werror", "-shared", "-fPIC") : List.of("-w"));
            cmd.addAll(List.of(flags));
            cmd.addAll(List.of("-o", out.toString(), src.toString()));
            Result r = exec(cmd, null);
            if (r.exit != 0) {
                throw new AssertionError("gcc failed to compile " + src + " (exit " + r.exit + "):\n"
                        + firstLines(r.output, 40));
            }
            return out;
        } catch (IOException e) {
            throw new AssertionError("cannot compile " + src + ": " + e + "; " + PACKAGES_HINT, e);
        }
    }

    /** Runs a compiled program and returns its standard output; a non-zero exit is an {@link AssertionError}. */
    public String run(Path executable) {
        try {
            Result r = exec(List.of(executable.toString()), null);
            if (r.exit != 0) {
                throw new AssertionError(executable + " exited with " + r.exit + ":\n" + firstLines(r.output, 40));
            }
            return r.output;
        } catch (IOException e) {
            throw new AssertionError("cannot run " + executable + ": " + e, e);
        }
    }

    private record Result(int exit, String output) {}

    private static Result exec(List<String> cmd, Path dir) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        if (dir != null) {
            pb.directory(dir.toFile());
        }
        Process p = pb.start();
        p.getOutputStream().close();
        byte[] out;
        try (InputStream in = p.getInputStream()) {
            out = in.readAllBytes();
        }
        try {
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + " timed out after " + TIMEOUT_SECONDS + " s");
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while running " + cmd.get(0), e);
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    private static String firstLines(String text, int n) {
        String[] lines = text.split("\n", n + 1);
        return lines.length <= n ? text : String.join("\n", List.of(lines).subList(0, n)) + "\n...";
    }
}
