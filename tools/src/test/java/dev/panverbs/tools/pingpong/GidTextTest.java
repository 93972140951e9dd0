package dev.panverbs.tools.pingpong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class GidTextTest {
    // expected strings printed by glibc 2.36 inet_ntop(AF_INET6) for these bytes
    @ParameterizedTest
    @CsvSource({
        "00000000000000000000000000000000, ::",
        "fe800000000000005054fffe12345600, fe80::5054:fffe:1234:5600",
        "00000000000000000000ffff0a00020f, ::ffff:10.0.2.15",
        "0000000000000000000000000a00020f, ::10.0.2.15",
        "00000000000000000000000000000001, ::1",
        "00000000000000000000000000000002, ::2",
        "20010db8000000000001000000000001, 2001:db8::1:0:0:1",
        "20010db8000100000000000000000001, 2001:db8:1::1",
        "00010000000000000000000000000000, 1::",
        "fe80000000000000025400fffe000001, fe80::254:ff:fe00:1",
        "000000000000000000000000ffff0001, ::255.255.0.1",
        "0000000000000000ffff000001020304, ::ffff:0:102:304",
        "00010002000300040005000600070008, 1:2:3:4:5:6:7:8",
        "20010db8000000010000000000000000, 2001:db8:0:1::",
    })
    void formatMatchesGlibcInetNtop(String hex, String expected) {
        assertThat(GidText.format(HexFormat.of().parseHex(hex))).isEqualTo(expected);
    }

    @Test
    void formatRejectsWrongLength() {
        assertThatThrownBy(() -> GidText.format(new byte[4])).hasMessageContaining("16 bytes");
    }
}
