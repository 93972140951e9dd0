package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Expected strings are glibc 2.36 printf output for the same values (checked with a C program). */
class CFormatTest {
    @Test
    void fixedRoundsTheBinaryValueHalfToEven() {
        assertThat(CFormat.fixed(0.125, 2)).isEqualTo("0.12");   // exact tie: even
        assertThat(CFormat.fixed(0.375, 2)).isEqualTo("0.38");
        assertThat(CFormat.fixed(2.675, 2)).isEqualTo("2.67");   // 2.67499999... in binary
        assertThat(CFormat.fixed(90.57, 2)).isEqualTo("90.57");
        assertThat(CFormat.fixed(0.0013344, 6)).isEqualTo("0.001334");
        assertThat(CFormat.fixed(1e20, 2)).isEqualTo("100000000000000000000.00");
        assertThat(CFormat.fixed(-0.0, 2)).isEqualTo("-0.00");
        assertThat(CFormat.fixed(Double.NaN, 2)).isEqualTo("nan");
        assertThat(CFormat.fixed(Double.POSITIVE_INFINITY, 2)).isEqualTo("inf");
    }

    @Test
    void leftPadding() {
        assertThat(CFormat.fixedLeft(0.0, 7, 2)).isEqualTo("0.00   ");
        assertThat(CFormat.fixedLeft(12345.678, 7, 2)).isEqualTo("12345.68");
        assertThat(CFormat.luLeft(65536, 7)).isEqualTo("65536  ");
        assertThat(CFormat.lu(-1)).isEqualTo("18446744073709551615");
    }

    @Test
    void alternateHexLikeC() {
        assertThat(CFormat.hexAlt(0, 4)).isEqualTo("0000");
        assertThat(CFormat.hexAlt(1, 4)).isEqualTo("0x01");
        assertThat(CFormat.hexAlt(0x12, 6)).isEqualTo("0x0012");
        assertThat(CFormat.hexAlt(0x2b0500, 6)).isEqualTo("0x2b0500");
        assertThat(CFormat.hexAlt(0xea53a, 6)).isEqualTo("0xea53a");
        assertThat(CFormat.hexAlt(0x254, 8)).isEqualTo("0x000254");
        assertThat(CFormat.hexAlt(0x55e79d788000L, 16)).isEqualTo("0x0055e79d788000");
        assertThat(CFormat.hexAlt(0, 16)).isEqualTo("0000000000000000");
    }

    @Test
    void generalFormat() {
        assertThat(CFormat.g(1.5)).isEqualTo("1.5");
        assertThat(CFormat.g(12.3456789)).isEqualTo("12.3457");
        assertThat(CFormat.g(0.0001234)).isEqualTo("0.0001234");
        assertThat(CFormat.g(0.00001234)).isEqualTo("1.234e-05");
        assertThat(CFormat.g(1234567.0)).isEqualTo("1.23457e+06");
        assertThat(CFormat.g(100000.0)).isEqualTo("100000");
        assertThat(CFormat.g(999999.5)).isEqualTo("1e+06");
        assertThat(CFormat.g(3.0)).isEqualTo("3");
        assertThat(CFormat.g(0.0)).isEqualTo("0");
    }
}
