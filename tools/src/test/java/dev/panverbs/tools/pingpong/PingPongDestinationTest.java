package dev.panverbs.tools.pingpong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class PingPongDestinationTest {
    private static final byte[] GID = HexFormat.of().parseHex("fe80000000000000505400fffe123456");
    // the 52 bytes rdma-core's sprintf("%04x:%06x:%06x:%s") + gid_to_wire_gid produce for this address
    private static final String C_MESSAGE = "0012:003456:abcdef:fe800000000000005054" + "00fffe123456";

    private static byte[] wire(String text) {
        return Arrays.copyOf(text.getBytes(StandardCharsets.US_ASCII), PingPongDestination.WIRE_SIZE);
    }

    @Test
    void encodeIsByteExactWithTheCTools() {
        byte[] msg = new PingPongDestination(0x12, 0x3456, 0xabcdef, GID).encode();
        assertThat(msg).hasSize(52).isEqualTo(wire(C_MESSAGE));
        assertThat(msg[51]).isZero();
    }

    @Test
    void decodeRoundTrips() throws Exception {
        PingPongDestination d = PingPongDestination.decode(wire(C_MESSAGE));
        assertThat(d.lid()).isEqualTo(0x12);
        assertThat(d.qpn()).isEqualTo(0x3456);
        assertThat(d.psn()).isEqualTo(0xabcdef);
        assertThat(d.gid()).isEqualTo(GID);
        assertThat(d.hasGid()).isTrue();
        assertThat(PingPongDestination.decode(d.encode())).isEqualTo(d);
    }

    @Test
    void decodeAcceptsUpperCaseHex() throws Exception {
        assertThat(PingPongDestination.decode(wire(C_MESSAGE.toUpperCase())).psn()).isEqualTo(0xabcdef);
    }

    @Test
    void zeroGidMeansNoGrh() throws Exception {
        PingPongDestination d = PingPongDestination.decode(wire("0001:000002:000003:" + "0".repeat(32)));
        assertThat(d.hasGid()).isFalse();
        // the C tools test only the interface id (low 64 bits)
        byte[] prefixOnly = new byte[16];
        prefixOnly[0] = (byte) 0xfe;
        assertThat(new PingPongDestination(1, 2, 3, prefixOnly).hasGid()).isFalse();
    }

    @Test
    void decodeShortMessage() {
        assertThatThrownBy(() -> PingPongDestination.decode("0012:0034".getBytes(StandardCharsets.US_ASCII)))
                .isInstanceOf(PingPongProtocolException.class)
                .hasMessageContaining("expected 52 bytes, got 9").hasMessageContaining("\"0012:0034\"");
    }

    @Test
    void decodeGarbage() {
        byte[] garbage = wire("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n!!!");
        assertThatThrownBy(() -> PingPongDestination.decode(garbage))
                .isInstanceOf(PingPongProtocolException.class)
                .hasMessageContaining("expected ':' at offsets 4, 11 and 18")
                .hasMessageContaining("HTTP/1.1 400 Bad Request\\x0d\\x0a");
    }

    @Test
    void decodeNonHexField() {
        assertThatThrownBy(() -> PingPongDestination.decode(wire("0012:00345g:abcdef:" + "0".repeat(32))))
                .isInstanceOf(PingPongProtocolException.class).hasMessageContaining("QPN has a non-hex character");
        assertThatThrownBy(() -> PingPongDestination.decode(wire("0012:003456:abcdef:" + "0".repeat(31) + "x")))
                .isInstanceOf(PingPongProtocolException.class).hasMessageContaining("GID has a non-hex character");
    }

    @Test
    void decodeMissingNul() {
        byte[] msg = wire(C_MESSAGE);
        msg[51] = 'x';
        assertThatThrownBy(() -> PingPongDestination.decode(msg))
                .isInstanceOf(PingPongProtocolException.class).hasMessageContaining("terminating NUL");
    }

    @Test
    void constructorRejectsOutOfRangeFields() {
        assertThatThrownBy(() -> new PingPongDestination(0x10000, 0, 0, new byte[16])).hasMessageContaining("LID");
        assertThatThrownBy(() -> new PingPongDestination(0, 0x1000000, 0, new byte[16])).hasMessageContaining("QPN");
        assertThatThrownBy(() -> new PingPongDestination(0, 0, -1, new byte[16])).hasMessageContaining("PSN");
        assertThatThrownBy(() -> new PingPongDestination(0, 0, 0, new byte[15])).hasMessageContaining("16 bytes");
    }

    /** Whatever 0..120 bytes a peer sends: a destination or a PingPongProtocolException quoting them, nothing else. */
    @Test
    void randomBytesGiveADestinationOrAProtocolException() {
        java.util.Random r = new java.util.Random(52);
        for (int i = 0; i < 2000; i++) {
            byte[] m = new byte[i % 10 == 0 ? r.nextInt(121) : PingPongDestination.WIRE_SIZE];
            r.nextBytes(m);
            if (i % 3 == 0 && m.length > 0) { // mostly hex text, so that decoding gets past the first checks
                byte[] valid = new PingPongDestination(r.nextInt(0x10000), r.nextInt(0x1000000),
                        r.nextInt(0x1000000), new byte[16]).encode();
                System.arraycopy(valid, 0, m, 0, Math.min(valid.length, m.length));
                m[r.nextInt(m.length)] = (byte) r.nextInt(256);
            }
            try {
                assertThat(PingPongDestination.decode(m)).isNotNull();
            } catch (PingPongProtocolException e) {
                assertThat(e).hasMessageStartingWith("malformed address message from the peer");
            }
        }
    }
}
