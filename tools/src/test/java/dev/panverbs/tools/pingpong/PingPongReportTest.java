package dev.panverbs.tools.pingpong;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class PingPongReportTest {
    private static final PingPongDestination DEST = new PingPongDestination(0, 0x11, 0xabcdef,
            HexFormat.of().parseHex("00000000000000000000ffff0a4d0001"));

    @Test
    void localAddressRcLine() {
        assertThat(PingPongReport.localAddressRc(DEST))
                .isEqualTo("  local address:  LID 0x0000, QPN 0x000011, PSN 0xabcdef, GID ::ffff:10.77.0.1");
    }

    @Test
    void localAddressUdLineHasTheColonOfTheCTool() {
        assertThat(PingPongReport.localAddressUd(DEST))
                .isEqualTo("  local address:  LID 0x0000, QPN 0x000011, PSN 0xabcdef: GID ::ffff:10.77.0.1");
    }

    @Test
    void remoteAddressLine() {
        assertThat(PingPongReport.remoteAddress(new PingPongDestination(0x1a, 0x123456, 1, new byte[16])))
                .isEqualTo("  remote address: LID 0x001a, QPN 0x123456, PSN 0x000001, GID ::");
    }

    // reference values computed by the C expressions of rc_pingpong.c with gcc on this host
    @Test
    void resultLinesFollowTheCArithmetic() {
        float usec = 1234567f;
        assertThat(PingPongReport.bandwidthLine(4096, 1000, usec))
                .isEqualTo("8192000 bytes in 1.23 seconds = 53.08 Mbit/sec");
        assertThat(PingPongReport.latencyLine(1000, usec))
                .isEqualTo("1000 iters in 1.23 seconds = 1234.57 usec/iter");
        assertThat(PingPongReport.latencyLine(3, 1000f)).isEqualTo("3 iters in 0.00 seconds = 333.33 usec/iter");
    }

    @Test
    void elapsedMicrosTruncatesToWholeMicroseconds() {
        assertThat(PingPongReport.elapsedMicros(1_000, 2_501_999)).isEqualTo(2500f);
    }

    @Test
    void invalidPageLine() {
        assertThat(PingPongReport.invalidPage(3)).isEqualTo("invalid data in page 3");
    }
}
