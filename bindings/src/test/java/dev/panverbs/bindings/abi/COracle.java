package dev.panverbs.bindings.abi;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Byte-for-byte comparison of Java code with C code run by gcc against the installed headers. Each case
 * is a pair: C statements, and the Java code that must have the same effect. Both start from the same
 * buffer (256 bytes of 0xAA, so untouched bytes show) and get a pointer {@code BASE} bytes into it (64-byte
 * aligned buffer, so {@code BASE} keeps 16-byte alignment for SSE stores). A <em>bytes</em> case compares
 * the buffer window {@code [0, BASE + length + 16)} (so writes outside the structure are caught too); a
 * <em>value</em> case compares a returned number.
 *
 * <p>All cases of one oracle compile into one C program ({@code target/c-oracle/<name>.c}), so a mismatch
 * can be reproduced by hand.
 */
public final class COracle {

    /** Offset of the structure in the buffer (C: {@code p = buf + BASE}). */
    public static final int BASE = 16;
    private static final int BUFFER = 256;
    private static final int CASES_PER_FUNCTION = 64;

    /** Java side of a bytes case: writes the structure at {@code base} of {@code buf}. */
    @FunctionalInterface
    public interface Writer {
        void write(MemorySegment buf, long base);
    }

    /** Java side of a value case: computes a value (compared as unsigned 64-bit) from the structure at {@code base}. */
    @FunctionalInterface
    public interface Reader {
        long read(MemorySegment buf, long base);
    }

    private record Case(String name, String c, String java) {}

    private final String name;
    private final String[] flags;
    private final StringBuilder prelude = new StringBuilder();
    private final List<Case> cases = new ArrayList<>();
    private final Set<String> names = new HashSet<>();
    private final Arena arena = Arena.ofAuto();

    /** An oracle whose program is {@code target/c-oracle/<name>.c}, compiled with extra gcc {@code flags}. */
    public COracle(String name, String... flags) {
        this.name = name;
        this.flags = flags;
    }

    /** C declarations placed before the cases (helpers, static input arrays). */
    public COracle prelude(String c) {
        prelude.append(c).append('\n');
        return this;
    }

    /** A bytes case: C {@code statements} (pointer {@code p}) vs {@code java}, over {@code length} bytes. */
    public void bytes(String caseName, int length, String statements, Writer java) {
        MemorySegment buf = fresh();
        java.write(buf, BASE);
        add(caseName, "reset(); { uint8_t *p = buf + BASE; " + statements + " } dump(\"" + caseName + "\", "
                + (BASE + length + 16) + ");", caseName + hex(buf, BASE + length + 16));
    }

    /** A value case: C {@code statements} then {@code expression} (pointer {@code p}) vs {@code java}. */
    public void value(String caseName, String statements, String expression, Reader java) {
        MemorySegment buf = fresh();
        long v = java.read(buf, BASE);
        add(caseName, "reset(); { uint8_t *p = buf + BASE; " + statements + " value(\"" + caseName
                + "\", (unsigned long long)(" + expression + ")); }", caseName + " =" + Long.toUnsignedString(v));
    }

    /** The program's name ({@code target/c-oracle/<name>.c}). */
    public String name() {
        return name;
    }

    public int size() {
        return cases.size();
    }

    /** Compiles and runs the C side; returns one message per case whose C and Java results differ. */
    public List<String> mismatches(CToolchain toolchain) {
        String out = toolchain.run(toolchain.compileExecutable(name, source(), flags));
        Map<String, String> c = new HashMap<>();
        for (String line : out.split("\n")) {
            if (!line.isBlank()) {
                int space = line.indexOf(' ');
                c.put(line.substring(0, space), line);
            }
        }
        List<String> mismatches = new ArrayList<>();
        for (Case k : cases) {
            String got = c.get(k.name);
            if (got == null) {
                mismatches.add(k.name + ": the C program printed nothing");
            } else if (!got.equals(k.java)) {
                mismatches.add(k.name + ":\n      C    " + got.substring(k.name.length()) + "\n      Java "
                        + k.java.substring(k.name.length()));
            }
        }
        return mismatches;
    }

    private void add(String caseName, String c, String java) {
        if (!caseName.matches("[A-Za-z0-9_]+") || !names.add(caseName)) {
            throw new IllegalArgumentException("case names must be unique identifiers: " + caseName);
        }
        cases.add(new Case(caseName, c, java));
    }

    private MemorySegment fresh() {
        MemorySegment buf = arena.allocate(BUFFER, 64);
        buf.fill((byte) 0xAA);
        return buf;
    }

    private static String hex(MemorySegment buf, int length) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < length; i++) {
            s.append(i % 4 == 0 ? " " : "").append(String.format("%02x", buf.get(JAVA_BYTE, i) & 0xFF));
        }
        return s.toString();
    }

    String source() {
        StringBuilder c = new StringBuilder(cases.size() * 200);
        c.append("""
                /* Generated by dev.panverbs.bindings.abi.COracle on every test run; do not edit. */
                #include <endian.h>
                #include <stdint.h>
                #include <stdio.h>
                #include <string.h>
                #include <infiniband/verbs.h>
                #include <infiniband/mlx5dv.h>

                #define BASE %d
                static uint8_t buf[%d] __attribute__((aligned(64)));
                static void reset(void) { memset(buf, 0xAA, sizeof buf); }
                static void dump(const char *name, int n) {
                    printf("%%s", name);
                    for (int i = 0; i < n; i++) printf("%%s%%02x", i %% 4 == 0 ? " " : "", buf[i]);
                    printf("\\n");
                }
                static void value(const char *name, unsigned long long v) { printf("%%s =%%llu\\n", name, v); }
                """.formatted(BASE, BUFFER));
        c.append(prelude);
        int functions = (cases.size() + CASES_PER_FUNCTION - 1) / CASES_PER_FUNCTION;
        for (int f = 0; f < functions; f++) {
            c.append("\nstatic void cases").append(f).append("(void) {\n");
            for (Case k : cases.subList(f * CASES_PER_FUNCTION, Math.min(cases.size(), (f + 1) * CASES_PER_FUNCTION))) {
                c.append("    ").append(k.c).append('\n');
            }
            c.append("}\n");
        }
        c.append("\nint main(void) {\n");
        for (int f = 0; f < functions; f++) {
            c.append("    cases").append(f).append("();\n");
        }
        c.append("    return 0;\n}\n");
        return c.toString();
    }
}
