package dev.panverbs.bindings.abi;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The C oracle can fail: Java that differs from C, or writes outside the structure, is reported by case name. */
class COracleTest {

    @Test
    void differencesAreReportedByCaseName() {
        COracle o = new COracle("c-oracle-selftest");
        o.bytes("same", 4, "p[0] = 1;", (b, off) -> b.set(JAVA_BYTE, off, (byte) 1));
        o.bytes("endianness", 4, "*(uint32_t *)p = htobe32(0x01020304);",
                (b, off) -> b.set(JAVA_INT_UNALIGNED, off, 0x01020304)); // native order: wrong on purpose
        o.bytes("outside", 4, "p[0] = 1;", (b, off) -> b.set(JAVA_BYTE, off + 5, (byte) 1));
        o.value("value", "", "42", (b, off) -> 43);

        List<String> mismatches = o.mismatches(CToolchain.get());

        assertThat(mismatches).hasSize(3);
        assertThat(mismatches.get(0)).startsWith("endianness:").contains("01020304").contains("04030201");
        assertThat(mismatches.get(1)).startsWith("outside:");
        assertThat(mismatches.get(2)).isEqualTo("value:\n      C     =42\n      Java  =43");
    }
}
