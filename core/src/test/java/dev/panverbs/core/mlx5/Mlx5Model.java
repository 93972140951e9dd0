package dev.panverbs.core.mlx5;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * {@code src/test/c/mlx5_device_model.c} (the PRM model of the HCA's send queue, receive queue and CQs) built and
 * linked once per JVM: the downcalls of {@code Mlx5EndToEndTest} and {@code Mlx5MisuseTest}. One model per process
 * (its state is the library's globals): {@link #reset} before each use.
 */
final class Mlx5Model {
    static final int LOCAL_WRITE = 1, REMOTE_WRITE = 2, REMOTE_READ = 4, REMOTE_ATOMIC = 8;
    private static final Linker LINKER = Linker.nativeLinker();
    private static SymbolLookup model;
    static MethodHandle reset, reg, qpFn, failNext, postRecv, doorbell, rqFn;

    private Mlx5Model() {}

    static synchronized void load() throws IOException, InterruptedException {
        if (model != null) {
            return;
        }
        Path dir = Files.createDirectories(Path.of("target/mlx5-model"));
        Path lib = dir.resolve("libmlx5model.so").toAbsolutePath();
        Process p = new ProcessBuilder("gcc", "-std=gnu11", "-O1", "-Wall", "-Werror", "-shared", "-fPIC", "-o",
                lib.toString(), "src/test/c/mlx5_device_model.c").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new AssertionError("gcc failed on mlx5_device_model.c:\n" + out);
        }
        model = SymbolLookup.libraryLookup(lib, Arena.global());
        ValueLayout.OfInt i = ValueLayout.JAVA_INT;
        ValueLayout.OfLong l = ValueLayout.JAVA_LONG;
        ValueLayout a = ValueLayout.ADDRESS;
        reset = handle("model_reset", FunctionDescriptor.ofVoid());
        reg = handle("model_reg", FunctionDescriptor.ofVoid(i, l, l, i));
        qpFn = handle("model_qp", FunctionDescriptor.ofVoid(a, i, a, i, a, i, a, i, i));
        failNext = handle("model_fail_next", FunctionDescriptor.ofVoid(i));
        postRecv = handle("model_post_recv", FunctionDescriptor.ofVoid(l, l, i, i));
        doorbell = handle("model_doorbell", FunctionDescriptor.of(i));
        rqFn = handle("model_rq", FunctionDescriptor.ofVoid(a, i, i, a));
    }

    private static MethodHandle handle(String name, FunctionDescriptor fd) {
        return LINKER.downcallHandle(model.find(name).orElseThrow(), fd);
    }

    /** A CQ buffer of {@code n} CQEs as libmlx5 initialises it: every CQE INVALID with owner bit 1. */
    static MemorySegment invalidCqes(MemorySegment buf, int n) {
        for (int k = 0; k < n; k++) {
            buf.set(ValueLayout.JAVA_BYTE, k * 64L + 63, (byte) 0xF1);
        }
        return buf;
    }
}
