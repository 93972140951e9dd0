package dev.panverbs.core.mlx5;

import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.FakeProvider;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletions;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * libmlx5 (rdma-core 44.0) and the PRM device model in this JVM, next to a Java {@link DirectSendQueue} and
 * {@link DirectCompletionQueue} over the <em>same</em> fake memory: the fixture of perf's Mlx5DirectBenchmark and of
 * {@code Mlx5InProcessTest}, which proves that its four send paths do the same work. {@link #build} makes one shared
 * library of {@code src/test/c/mlx5_inproc.c}, {@code mlx5_device_model.c} and the {@code qp.c.o}/{@code cq.c.o}
 * members of the installed {@code libmlx5.a}, whose PIE-only {@code stderr} reference is renamed by objcopy to a
 * hidden symbol of the shim (see the C file); any archive other than rdma-core 44.0 is refused by name.
 *
 * <p>One fixture at a time per process: the model and the fake libmlx5 objects are the library's globals. Each op
 * posts {@code n} RDMA WRITEs of 64 bytes (one SGE; the last, or every, one signaled) from the local region to the
 * remote one, lets the model execute them (copies, CQEs) and polls the completions, returning the sum of
 * {@code wr_id + status + opcode} over them.
 */
public final class Mlx5InProcess {
    /** The wr_* op's failure value (C's UINT64_MAX). */
    private static final long FAILED = -1L;
    private static final String PREFIX = "rdmacore44_0_";
    private static final int LOCAL_WRITE = 1, REMOTE_WRITE = 2, REMOTE_READ = 4, REMOTE_ATOMIC = 8;
    private static final int BF_SIZE = 256;
    private static final int BUFFER = 64 * 1024;
    private static final int LKEY = 0x1111, RKEY = 0x2222;

    private final MethodHandle doorbell, postSend, wr, direct, modelOnly, light;
    private final QueuePair qp;
    private final DirectSendQueue dsq;
    private final DirectCompletionQueue dcq;
    private final MemoryRegion mrLocal;
    private final MemoryRegion mrRemote;
    final MemorySegment sq, dbrec, bf, cqBuf, cqDbrec, local, remote;

    /**
     * Builds the library into {@code outDir} from the C sources in {@code cDir} (core's {@code src/test/c}) and the
     * installed {@code libmlx5.a} ({@code -Dpanverbs.libmlx5.a}), unless an up-to-date one is there.
     */
    public static Path build(Path cDir, Path outDir) {
        return build(cDir, outDir, Mlx5Oracle.ARCHIVE);
    }

    /** The same from {@code archive} (a {@code libmlx5.a}); refuses one that is not rdma-core 44.0's by name. */
    static Path build(Path cDir, Path outDir, Path archiveFile) {
        Path archive = archiveFile.toAbsolutePath(); // ar runs in the build directory
        Path work = null;
        try {
            Files.createDirectories(outDir);
            Path lib = outDir.resolve("libmlx5inproc.so").toAbsolutePath();
            if (!Files.isRegularFile(archive)) {
                throw new IllegalStateException(archive + " is missing: install libibverbs-dev (Debian/Ubuntu), which "
                        + "ships libmlx5.a");
            }
            List<Path> inputs = List.of(cDir.resolve("mlx5_inproc.c"), cDir.resolve("mlx5_device_model.c"),
                    cDir.resolve("mlx5_rdmacore44.h"), archive);
            if (Files.exists(lib) && inputs.stream().allMatch(p -> newer(lib, p))) {
                return lib;
            }
            work = Files.createTempDirectory(outDir.toAbsolutePath(), "build");
            exec(work, "ar", "x", archive.toString(), "qp.c.o", "cq.c.o");
            String symbols = exec(work, "nm", "--defined-only", "qp.c.o");
            if (!symbols.contains(" T " + PREFIX + "mlx5_post_send")) {
                String other = symbols.lines().filter(l -> l.contains("mlx5_post_send")).findFirst().orElse("none");
                throw new IllegalStateException(archive + " is not rdma-core 44.0 (its mlx5_post_send symbol is '"
                        + other + "', expected " + PREFIX + "mlx5_post_send): the fake objects follow rdma-core "
                        + "44.0's private layouts (mlx5_rdmacore44.h); re-derive them for this version");
            }
            for (String o : List.of("qp", "cq")) { // the PIE-only stderr reference, bound inside the library
                exec(work, "objcopy", "--redefine-sym", "stderr=panverbs_mlx5_stderr", o + ".c.o", o + "44.o");
            }
            Files.writeString(work.resolve("exports.map"), "{ global: mlx5ip_*; model_*; local: *; };\n");
            Path tmp = work.resolve("libmlx5inproc.so");
            exec(work, "gcc", "-std=gnu11", "-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-o", tmp.toString(),
                    cDir.resolve("mlx5_inproc.c").toAbsolutePath().toString(),
                    cDir.resolve("mlx5_device_model.c").toAbsolutePath().toString(), "qp44.o", "cq44.o",
                    "-Wl,--version-script=exports.map", "-Wl,-z,defs");
            Files.move(tmp, lib, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return lib;
        } catch (IOException e) {
            throw new IllegalStateException("cannot build the in-process libmlx5 (needs gcc, binutils, "
                    + "libibverbs-dev): " + e, e);
        } finally {
            delete(work);
        }
    }

    private static void delete(Path dir) {
        if (dir == null) {
            return;
        }
        try (var s = Files.list(dir)) {
            for (Path p : s.toList()) {
                Files.delete(p);
            }
            Files.delete(dir);
        } catch (IOException e) {
            // a leftover build directory under target/ only
        }
    }

    private static boolean newer(Path lib, Path input) {
        try {
            return Files.getLastModifiedTime(lib).compareTo(Files.getLastModifiedTime(input)) > 0;
        } catch (IOException e) {
            return false;
        }
    }

    private static String exec(Path dir, String... cmd) throws IOException {
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", cmd) + " failed:\n" + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return out;
    }

    /**
     * A fresh fixture: a core RC QP and CQ over the fake provider at {@code fakeProvider}, a send ring of
     * {@code wqeCount} WQEBBs, a CQ of {@code wqeCount} CQEs, two 64 KiB regions, the model and libmlx5's fake QP/CQ
     * reset over that memory, and the Java direct queues over the same.
     */
    public Mlx5InProcess(Path fakeProvider, Path library, int wqeCount) {
        FakeProvider fp = new FakeProvider(fakeProvider);
        SymbolLookup lib = SymbolLookup.libraryLookup(library, Arena.global());
        Linker linker = Linker.nativeLinker();
        ValueLayout.OfInt i = ValueLayout.JAVA_INT;
        ValueLayout.OfLong l = ValueLayout.JAVA_LONG;
        ValueLayout a = ValueLayout.ADDRESS;
        Linker.Option critical = Linker.Option.critical(false);
        FunctionDescriptor op = FunctionDescriptor.of(l, i, i, l, l, i, l, i);
        doorbell = linker.downcallHandle(lib.find("model_doorbell").orElseThrow(), FunctionDescriptor.of(i), critical);
        postSend = linker.downcallHandle(lib.find("mlx5ip_post_send").orElseThrow(), op, critical);
        wr = linker.downcallHandle(lib.find("mlx5ip_wr").orElseThrow(), op, critical);
        direct = linker.downcallHandle(lib.find("mlx5ip_direct").orElseThrow(), op, critical);
        modelOnly = linker.downcallHandle(lib.find("mlx5ip_model_only").orElseThrow(),
                FunctionDescriptor.of(l, i, i), critical);
        light = linker.downcallHandle(lib.find("model_light").orElseThrow(), FunctionDescriptor.ofVoid(i));

        // one set of buffers per process, reset here, so every fixture writes the same addresses into its WQEs;
        // global scope, as the production views (mlx5dv pointers reinterpreted)
        Memory m = Memory.get(wqeCount);
        sq = m.sq.fill((byte) 0xEE);
        dbrec = m.dbrec.fill((byte) 0);
        bf = m.bf.fill((byte) 0);
        cqBuf = invalidCqes(m.cqBuf.fill((byte) 0), wqeCount);
        cqDbrec = m.cqDbrec.fill((byte) 0);
        MemorySegment uar = m.uar.fill((byte) 0);
        MemorySegment rcqBuf = invalidCqes(m.rcqBuf.fill((byte) 0), 64);
        local = m.local;
        for (int k = 0; k < BUFFER; k++) {
            local.set(ValueLayout.JAVA_BYTE, k, (byte) (k * 7 + 3));
        }
        remote = m.remote.fill((byte) 0);
        CompletionQueue cq = fp.createCq(wqeCount);
        qp = fp.createRtsQp(fp.protectionDomain(), cq, cq, wqeCount, 16, 1, 0, Set.of());
        mrLocal = fp.register(local, LKEY);
        mrRemote = fp.register(remote, RKEY);
        try {
            lib.find("model_reset").map(s -> linker.downcallHandle(s, FunctionDescriptor.ofVoid())).orElseThrow()
                    .invokeExact();
            MethodHandle reg = linker.downcallHandle(lib.find("model_reg").orElseThrow(),
                    FunctionDescriptor.ofVoid(i, l, l, i));
            reg.invokeExact(LKEY, local.address(), (long) BUFFER, LOCAL_WRITE);
            reg.invokeExact(RKEY, remote.address(), (long) BUFFER,
                    LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC);
            linker.downcallHandle(lib.find("model_qp").orElseThrow(), FunctionDescriptor.ofVoid(a, i, a, i, a, i, a,
                    i, i)).invokeExact(sq, wqeCount, dbrec, qp.qpNum(), cqBuf, wqeCount, rcqBuf, 64, 0x999);
            int rc = (int) linker.downcallHandle(lib.find("mlx5ip_setup").orElseThrow(),
                    FunctionDescriptor.of(i, a, i, a, a, i, i, a, i, a))
                    .invokeExact(sq, wqeCount, dbrec, bf, BF_SIZE, qp.qpNum(), cqBuf, wqeCount, cqDbrec);
            if (rc != 0) {
                throw new IllegalStateException("mlx5ip_setup: mlx5_qp_fill_wr_pfns failed");
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        dcq = DirectCompletionQueue.over(cq, new Mlx5CompletionQueueView(cqBuf, wqeCount, 64, cqDbrec, uar, 0x77));
        dsq = DirectSendQueue.over(qp, new Mlx5QueuePairView(sq, wqeCount, 64, dbrec, bf, BF_SIZE, qp.qpNum()), dcq,
                false, false);
    }

    /** The fixture's memory: allocated once per process and ring size. */
    private record Memory(MemorySegment sq, MemorySegment dbrec, MemorySegment bf, MemorySegment cqBuf,
                          MemorySegment cqDbrec, MemorySegment uar, MemorySegment rcqBuf, MemorySegment local,
                          MemorySegment remote) {
        private static final java.util.Map<Integer, Memory> BY_SIZE = new java.util.HashMap<>();

        static synchronized Memory get(int wqeCount) {
            return BY_SIZE.computeIfAbsent(wqeCount, n -> {
                Arena a = Arena.global();
                return new Memory(a.allocate((long) n * 64, 4096), a.allocate(8, 8), a.allocate(2 * BF_SIZE, 64),
                        a.allocate((long) n * 64, 4096), a.allocate(8, 8), a.allocate(8, 8), a.allocate(64 * 64, 64),
                        a.allocate(BUFFER, 4096), a.allocate(BUFFER, 4096));
            });
        }
    }

    private static MemorySegment invalidCqes(MemorySegment buf, int n) {
        for (int k = 0; k < n; k++) {
            buf.set(ValueLayout.JAVA_BYTE, k * 64L + 63, (byte) 0xF1); // MLX5_CQE_INVALID, owner 1, as libmlx5 inits
        }
        return buf;
    }

    public DirectSendQueue sendQueue() {
        return dsq;
    }

    public DirectCompletionQueue completionQueue() {
        return dcq;
    }

    public QueuePair queuePair() {
        return qp;
    }

    public MemoryRegion localRegion() {
        return mrLocal;
    }

    public MemoryRegion remoteRegion() {
        return mrRemote;
    }

    /** The send ring the WQEs are written to (tests of other modules read its bytes). */
    public MemorySegment sendRing() {
        return sq;
    }

    /** The doorbell record's send counter ({@code dbrec[1]}, big-endian): WQEBBs posted, 16 bits. */
    public int sendCounter() {
        return Integer.reverseBytes(dbrec.get(ValueLayout.JAVA_INT, 4)) & 0xffff;
    }

    /**
     * Java: {@code n} RDMA WRITEs through {@link DirectSendQueue} (the one-call form, one {@code post()}), the
     * model's doorbell (one downcall: the device), then {@link DirectCompletionQueue#poll} until the completions were
     * read.
     */
    public long javaDirect(int n, boolean allSignaled, long wrId, WorkCompletions wcs) {
        DirectSendQueue q = dsq;
        MemoryRegion mr = mrLocal;
        int rkey = RKEY;
        long raddr = remote.address();
        for (int k = 0; k < n; k++) {
            q.rdmaWrite(wrId + k, allSignaled || k == n - 1 ? SendFlag.SIGNALED_BIT : 0, rkey, raddr + k * 64L, mr,
                    k * 64L, 64);
        }
        return ringAndPoll(n, allSignaled, wcs);
    }

    /**
     * {@link #javaDirect} as one burst ({@code rdmaWriteBurst}): the same WRs (wr_ids, flags, addresses), the key,
     * range, guard and room checked once.
     */
    public long javaDirectBurst(int n, boolean allSignaled, long wrId, WorkCompletions wcs) {
        dsq.rdmaWriteBurst(wrId, n, allSignaled ? SendFlag.SIGNALED_BIT : 0, SendFlag.SIGNALED_BIT, RKEY,
                remote.address(), 64, mrLocal, 0, 64, 64);
        return ringAndPoll(n, allSignaled, wcs);
    }

    /** {@link #javaDirect} through the builder form: {@code rdmaWrite(...).sge(...)}. */
    public long javaDirectBuilder(int n, boolean allSignaled, long wrId, WorkCompletions wcs) {
        DirectSendQueue q = dsq;
        MemoryRegion mr = mrLocal;
        int rkey = RKEY;
        long raddr = remote.address();
        for (int k = 0; k < n; k++) {
            q.rdmaWrite(wrId + k, allSignaled || k == n - 1 ? SendFlag.SIGNALED_BIT : 0, rkey, raddr + k * 64L)
                    .sge(mr, k * 64L, 64);
        }
        return ringAndPoll(n, allSignaled, wcs);
    }

    private long ringAndPoll(int n, boolean allSignaled, WorkCompletions wcs) {
        if (dsq.post() != n || doorbell() != n) {
            throw new IllegalStateException("direct post of " + n);
        }
        long sum = 0;
        for (int want = allSignaled ? n : 1; want > 0; ) {
            int got = dcq.poll(wcs);
            if (got <= 0) {
                throw new IllegalStateException("no completion");
            }
            for (int k = 0; k < got; k++) {
                WorkCompletion wc = wcs.get(k);
                sum += wc.wrId() + wc.statusValue() + wc.opcode().value();
            }
            want -= got;
        }
        return sum;
    }

    /** The model's doorbell: executes the WQEs up to the doorbell record; returns how many. */
    public int doorbell() {
        try {
            return (int) doorbell.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** C: libmlx5's {@code mlx5_post_send} of the same chain, the model, {@code mlx5_poll_cq}; one downcall. */
    public long postSend(int n, boolean allSignaled, long wrId) {
        return call(postSend, n, allSignaled, wrId);
    }

    /** C: the same chain through libmlx5's {@code ibv_wr_*} builders, the model, {@code mlx5_poll_cq}. */
    public long wr(int n, boolean allSignaled, long wrId) {
        return call(wr, n, allSignaled, wrId);
    }

    /** C: the hand-written direct writer and CQE reader (no checks, no tracking), the model. */
    public long direct(int n, boolean allSignaled, long wrId) {
        return call(direct, n, allSignaled, wrId);
    }

    /** C: the model alone re-executing the last {@code n} WQEs (after a {@link #direct} of the same shape). */
    public long modelOnly(int n, boolean allSignaled) {
        try {
            long r = (long) modelOnly.invokeExact(n, allSignaled ? 1 : 0);
            if (r == FAILED) {
                throw new IllegalStateException("mlx5ip_model_only failed");
            }
            return r;
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Benchmarks only: the device model consumes WQEs and writes their CQEs without executing them (no data moved,
     * no key checked), so a posting path's per-WR slope is not buried under the model's ~12.6 ns of copies.
     */
    public void light(boolean on) {
        try {
            light.invokeExact(on ? 1 : 0);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private long call(MethodHandle h, int n, boolean allSignaled, long wrId) {
        long r;
        try {
            r = (long) h.invokeExact(n, allSignaled ? 1 : 0, wrId, local.address(), LKEY, remote.address(), RKEY);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (r == FAILED) {
            throw new IllegalStateException("in-process libmlx5 op failed (post, model or poll)");
        }
        return r;
    }
}
