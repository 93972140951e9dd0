package dev.panverbs.tools.pingpong;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CFormatTest {
    // expected strings printed by glibc printf("%.2f") for these doubles
    @ParameterizedTest
    @CsvSource({
        "0.125, 0.12",
        "1.005, 1.00",
        "2.675, 2.67",
        "0.005, 0.01",
        "0.015, 0.01",
        "1234.5678, 1234.57",
        "0.0, 0.00",
        "1e-9, 0.00",
        "99.995, 100.00",
        "0.375, 0.38",
    })
    void fixed2MatchesGlibcPrintf(double value, String expected) {
        assertThat(CFormat.fixed2(value)).isEqualTo(expected);
    }
}
