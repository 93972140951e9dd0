package dev.panverbs.tools.pingpong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

class CIntegerTest {
    @Test
    void parseAcceptsStrtolBaseZeroForms() {
        assertThat(CInteger.parse("100")).isEqualTo(100);
        assertThat(CInteger.parse("0x10")).isEqualTo(16);
        assertThat(CInteger.parse("0X1f")).isEqualTo(31);
        assertThat(CInteger.parse("010")).isEqualTo(8);
        assertThat(CInteger.parse("0")).isZero();
        assertThat(CInteger.parse("-1")).isEqualTo(-1);
        assertThat(CInteger.parse(" 7")).isEqualTo(7);
    }

    @Test
    void parseRejectsWhatStrtolWouldReadAsZero() {
        for (String bad : new String[] {"", "abc", "12abc", "0x", "09", "--1", "1.5"}) {
            assertThatThrownBy(() -> CInteger.parse(bad)).as(bad).isInstanceOf(TypeConversionException.class)
                    .hasMessageContaining("'" + bad + "' is not an integer");
        }
    }
}
