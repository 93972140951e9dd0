package dev.panverbs.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bed's one retry ({@code testbed/lib/tcg-fault}, {@code testbed/lib/run-its}): a crash report is classified as
 * the QEMU TCG fault only for SIGSEGV/SIGILL in C1/C2 code of java.base, and run-its reruns a module only when its
 * launcher failed in the guest and every crash during it is that fault. {@code run-its} runs here with a fake
 * {@code java} that plays the launcher (no guest, no device).
 */
class TcgFaultRetryTest {
    private static final Path REPO = Path.of("..").toAbsolutePath().normalize();
    private static final Path CLASSIFIER = REPO.resolve("testbed/lib/tcg-fault");
    private static final Path RUN_ITS = REPO.resolve("testbed/lib/run-its");

    /** The head of a real report of the fault (guest, perf/rxe-compare, C1 String.equals at entry + 0x20). */
    static final String TCG = """
            #
            # A fatal error has been detected by the Java Runtime Environment:
            #
            #  SIGSEGV (0xb) at pc=0x00007f88a04d33a0, pid=1644, tid=1668
            #
            # JRE version: OpenJDK Runtime Environment Temurin-25.0.3+9 (25.0.3+9) (build 25.0.3+9-LTS)
            # Problematic frame:
            # J 54 c1 java.lang.String.equals(Ljava/lang/Object;)Z java.base@25.0.3 (56 bytes) @ 0x00007f88a04d33a0 \
            [0x00007f88a04d3380+0x0000000000000020]
            #
            """;

    @TempDir
    Path dir;

    @BeforeEach
    void scripts() {
        assertThat(CLASSIFIER).isExecutable();
        assertThat(RUN_ITS).isExecutable();
    }

    private Path report(String name, String signal, String frame) throws IOException {
        Path f = dir.resolve(name);
        Files.writeString(f, TCG.replace("SIGSEGV (0xb)", signal).replaceAll("(?m)^# J 54 c1 .*$", "# " + frame));
        return f;
    }

    record Run(int rc, String out) { }

    private static Run run(Map<String, String> env, String... cmd) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().keySet().removeIf(k -> k.startsWith("PANVERBS_"));
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Run(p.exitValue(), out);
    }

    private Run classify(Path... files) throws Exception {
        String[] cmd = new String[files.length + 1];
        cmd[0] = CLASSIFIER.toString();
        for (int i = 0; i < files.length; i++) {
            cmd[i + 1] = files[i].toString();
        }
        return run(Map.of(), cmd);
    }

    @Test
    void compiledJavaBaseCodeUnderSigsegvOrSigillIsTheFault() throws Exception {
        Path segv = report("segv.log", "SIGSEGV (0xb)", "J 54 c1 java.lang.String.equals(Ljava/lang/Object;)Z "
                + "java.base@25.0.3 (56 bytes) @ 0x00007f88a04d33a0 [0x00007f88a04d3380+0x0000000000000020]");
        Path ill = report("ill.log", "SIGILL (0x4)", "J 2109 c2 jdk.internal.foreign.abi.SharedUtils.checkNative("
                + "Ljava/lang/foreign/MemorySegment;)V java.base@25.0.3 (38 bytes) @ 0x1 [0x1+0x0000000000000002]");
        Run r = classify(segv, ill);
        assertThat(r.rc()).as(r.out()).isZero();
        assertThat(r.out()).contains("tcg-fault " + segv + ": SIGSEGV in J 54 c1 java.lang.String.equals")
                .contains("tcg-fault " + ill + ": SIGILL in J 2109 c2");
    }

    /**
     * The second shape: libjvm code on a compiler thread compiling a JDK method, libjvm frames only (a real report's
     * lines, guest, perf/rxe-compare 2026-11-25: Method::unlink_code while C2 installed StringUTF16::compress).
     */
    private Path compilerThreadReport(String name, String task, String extraFrame) throws IOException {
        String vm = "V  [libjvm.so+0xdeb042]  Method::unlink_code(nmethod*)+0x82";
        Path f = dir.resolve(name);
        Files.writeString(f, TCG.replaceAll("(?m)^# J 54 c1 .*$", "# " + vm) + """

                Current thread (0x00007f7a7c192b50):  JavaThread "C2 CompilerThread0" daemon [_thread_in_vm, id=1819]

                Current CompileTask:
                C2:17554 2257       4       %s (47 bytes)

                Native frames: (J=compiled Java code, j=interpreted, Vv=VM code, C=native code)
                %s
                V  [libjvm.so+0xe2e06d]  nmethod::make_not_entrant(nmethod::InvalidationReason)+0x17d
                %sV  [libjvm.so+0x745688]  CompileBroker::compiler_thread_loop()+0x518

                siginfo: si_signo: 11 (SIGSEGV), si_code: 128 (SI_KERNEL), si_addr: 0x0000000000000000
                """.formatted(task, vm, extraFrame));
        return f;
    }

    @Test
    void libjvmCodeOnACompilerThreadCompilingJdkCodeIsTheFault() throws Exception {
        Path jdk = compilerThreadReport("c2.log", "java.lang.StringUTF16::compress", "");
        Run r = classify(jdk);
        assertThat(r.rc()).as(r.out()).isZero();
        assertThat(r.out()).contains("tcg-fault " + jdk + ": SIGSEGV in V  [libjvm.so+0xdeb042]  Method::unlink_code")
                .contains("C2 CompilerThread0 compiling java.lang.StringUTF16::compress");
        // compiling panverbs' code, or a frame outside libjvm on the stack: not the fault
        Path panverbs = compilerThreadReport("pv.log", "dev.panverbs.core.WorkRequests::startWr", "");
        Path nativeFrame = compilerThreadReport("c.log", "java.lang.StringUTF16::compress",
                "C  [libibverbs.so.1+0x1a2b]  ibv_cmd_post_send+0x4b\n");
        for (Path other : List.of(panverbs, nativeFrame)) {
            Run o = classify(other);
            assertThat(o.rc()).as(o.out()).isEqualTo(1);
            assertThat(o.out()).contains("other " + other + ": ");
        }
    }

    @Test
    void anyOtherCrashIsNot() throws Exception {
        String jdk = "J 54 c1 java.lang.String.equals(Ljava/lang/Object;)Z java.base@25.0.3 (56 bytes) @ 0x1 [0x1+0x20]";
        List<Path> others = List.of(
                report("native.log", "SIGSEGV (0xb)", "C  [libibverbs.so.1+0x1a2b]  ibv_cmd_post_send+0x4b"),
                report("panverbs.log", "SIGSEGV (0xb)", "J 811 c2 dev.panverbs.core.WorkRequests.startWr(JI)J "
                        + "(120 bytes) @ 0x1 [0x1+0x44]"),
                report("interpreted.log", "SIGSEGV (0xb)", "j  java.lang.String.equals(Ljava/lang/Object;)Z+1 java.base"),
                report("vm.log", "SIGSEGV (0xb)", "V  [libjvm.so+0x5a1b2c]  Unsafe_GetLong+0x5c"),
                report("native-wrapper.log", "SIGSEGV (0xb)", "J 77  jdk.internal.misc.Unsafe.copyMemory0(Ljava/lang/"
                        + "Object;JLjava/lang/Object;JJ)V java.base@25.0.3 (0 bytes) @ 0x1 [0x1+0x55]"),
                report("sigbus.log", "SIGBUS (0x7)", jdk),
                report("abort.log", "SIGABRT (0x6)", jdk));
        Path segv = report("segv.log", "SIGSEGV (0xb)", jdk);
        for (Path other : others) {
            Run r = classify(segv, other);
            assertThat(r.rc()).as(r.out()).isEqualTo(1);
            assertThat(r.out()).contains("tcg-fault " + segv).contains("other " + other + ": ");
        }
        Files.writeString(dir.resolve("empty.log"), "");
        assertThat(classify(dir.resolve("empty.log")).rc()).isEqualTo(1);
        assertThat(classify(dir.resolve("missing.log")).rc()).isEqualTo(1);
        assertThat(run(Map.of(), CLASSIFIER.toString()).rc()).isEqualTo(2);
    }

    // ---- run-its with a fake launcher JVM ----

    /**
     * A fake {@code java} for run-its: invocation n (counted in a file) does what line n of the plan says: "pass",
     * "fail", "tcg" (writes a report of the fault, exits 1) or "native" (a report of a libibverbs crash, exits 1).
     * Each writes a JUnit XML report into --reports-dir naming its invocation.
     */
    private Path fakeJava(String... plan) throws IOException {
        Files.write(dir.resolve("plan"), List.of(plan));
        Files.writeString(dir.resolve("tcg.txt"), TCG);
        Files.writeString(dir.resolve("native.txt"), TCG.replaceAll("(?m)^# J 54 c1 .*$",
                "# C  [libibverbs.so.1+0x1a2b]  ibv_cmd_post_send+0x4b"));
        Path java = dir.resolve("java");
        Files.writeString(java, """
                #!/bin/bash
                d=%s
                n=$(( $(cat "$d/count" 2>/dev/null || echo 0) + 1 )); echo $n > "$d/count"
                for a in "$@"; do [[ $prev == --reports-dir ]] && out=$a; prev=$a; done
                mkdir -p "$out"; echo "<testsuite name=\\"run$n\\" tests=\\"1\\">" > "$out/TEST-junit-jupiter.xml"
                case $(sed -n "${n}p" "$d/plan") in
                    pass) exit 0 ;;
                    fail) exit 1 ;;
                    tcg) cp "$d/tcg.txt" "$PANVERBS_JVM_ERROR_DIR/hs_err_pid$((100 + n)).log"
                         echo replay > "$PANVERBS_JVM_ERROR_DIR/replay_pid$((100 + n)).log"; exit 1 ;;
                    native) cp "$d/native.txt" "$PANVERBS_JVM_ERROR_DIR/hs_err_pid$((100 + n)).log"; exit 1 ;;
                esac
                exit 3
                """.formatted(dir));
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path module = dir.resolve("repo/mod/target");
        Files.createDirectories(module);
        Files.writeString(module.resolve("test-classpath.txt"), "");
        return java;
    }

    private Run runIts(Path java, Map<String, String> env) throws Exception {
        return run(env, RUN_ITS.toString(), dir.resolve("repo").toString(), java.toString(), "none.jar",
                dir.resolve("reports").toString(), ".*IT", "single", "mod");
    }

    private Map<String, String> guest() {
        return Map.of("PANVERBS_TESTBED", "guest", "PANVERBS_JVM_ERROR_DIR", dir.resolve("jvm-errors").toString());
    }

    private int invocations() throws IOException {
        return Integer.parseInt(Files.readString(dir.resolve("count")).strip());
    }

    @Test
    void aModuleFailedByTheFaultRunsOnceMoreAndOnlyTheSecondRunCounts() throws Exception {
        Run r = runIts(fakeJava("tcg", "pass"), guest());
        assertThat(r.rc()).as(r.out()).isZero();
        assertThat(invocations()).isEqualTo(2);
        assertThat(r.out()).contains("=== mod: RETRY").contains("SIGSEGV in J 54 c1 java.lang.String.equals");
        assertThat(Files.readString(dir.resolve("reports/mod/TEST-junit-jupiter.xml"))).contains("run2");
        assertThat(Files.readString(dir.resolve("reports-tcg-retried/mod/TEST-junit-jupiter.xml"))).contains("run1");
        assertThat(dir.resolve("jvm-errors/hs_err_pid101.log")).doesNotExist();
        assertThat(dir.resolve("jvm-errors-tcg-retried/hs_err_pid101.log")).exists();
        assertThat(dir.resolve("jvm-errors-tcg-retried/replay_pid101.log")).exists();
    }

    @Test
    void theRetryIsTakenOnceAndItsFailureCounts() throws Exception {
        Run r = runIts(fakeJava("tcg", "tcg", "pass"), guest());
        assertThat(r.rc()).as(r.out()).isEqualTo(1);
        assertThat(invocations()).isEqualTo(2);
        assertThat(dir.resolve("jvm-errors/hs_err_pid102.log")).exists(); // the second crash stays: the run fails
    }

    @Test
    void ordinaryFailuresAndOtherCrashesAreNotRetried() throws Exception {
        Run failed = runIts(fakeJava("fail", "pass"), guest());
        assertThat(failed.rc()).isEqualTo(1);
        assertThat(invocations()).isEqualTo(1);
        assertThat(failed.out()).doesNotContain("RETRY");

        Files.delete(dir.resolve("count"));
        Run nativeCrash = runIts(fakeJava("native", "pass"), guest());
        assertThat(nativeCrash.rc()).isEqualTo(1);
        assertThat(invocations()).isEqualTo(1);
        assertThat(nativeCrash.out()).contains("no retry").contains("libibverbs");
        assertThat(dir.resolve("jvm-errors/hs_err_pid101.log")).exists();
    }

    @Test
    void noRetryOutsideTheMultiThreadedTcgGuest() throws Exception {
        Path java = fakeJava("tcg", "pass");
        String errors = dir.resolve("jvm-errors").toString();
        for (Map<String, String> env : List.of(
                Map.of("PANVERBS_TESTBED", "host", "PANVERBS_JVM_ERROR_DIR", errors),
                Map.of("PANVERBS_TESTBED", "guest", "PANVERBS_JVM_ERROR_DIR", errors,
                        "PANVERBS_TESTBED_ACCEL", "tcg,thread=single"),
                Map.of("PANVERBS_TESTBED", "guest", "PANVERBS_JVM_ERROR_DIR", errors, "PANVERBS_TESTBED_ACCEL", "kvm"))) {
            Files.deleteIfExists(dir.resolve("count"));
            Run r = runIts(java, env);
            assertThat(r.rc()).as(env.toString()).isEqualTo(1);
            assertThat(invocations()).as(env.toString()).isEqualTo(1);
        }
    }
}
