package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Key messages against the bytes the real perftest 6.06 sent (fake libibverbs, and rxe in a QEMU guest). */
class KeyMessageTest {
    /** Recorded from ib_write_bw 6.06 over a TCP proxy (IB link, no -x): 58 characters and a NUL. */
    static final String NO_GID = "0001:0001:2b0500:3faae9:00001105:00007f5300337000:00000000";
    /** Recorded from ib_write_bw 6.06 on rxe0 (RoCE, GID index 1 = ::ffff:10.77.0.1). */
    static final String WITH_GID = "0000:0001:000012:000d6f:00000000:000055757bd41000:"
            + "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:4d:00:01:00000000:";

    static byte[] wire(String text) {
        byte[] t = text.getBytes(StandardCharsets.US_ASCII);
        return Arrays.copyOf(t, t.length + 1);
    }

    static final byte[] RXE_GID = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 10, 77, 0, 1};

    @Test
    void encodeWithoutGidIsPerftestsBytes() {
        KeyMessage k = new KeyMessage(1, 1, 0x2b0500, 0x3faae9, 0x1105, 0x00007f5300337000L, null, 0);
        assertThat(k.encode()).hasSize(59).isEqualTo(wire(NO_GID));
    }

    @Test
    void encodeWithGidIsPerftestsBytes() {
        KeyMessage k = new KeyMessage(0, 1, 0x12, 0xd6f, 0, 0x000055757bd41000L, RXE_GID, 0);
        assertThat(k.encode()).hasSize(108).isEqualTo(wire(WITH_GID));
    }

    @Test
    void decodeRecordedMessages() {
        KeyMessage a = KeyMessage.decode(wire(NO_GID), false);
        assertThat(a).isEqualTo(new KeyMessage(1, 1, 0x2b0500, 0x3faae9, 0x1105, 0x7f5300337000L, null, 0));
        KeyMessage b = KeyMessage.decode(wire(WITH_GID), true);
        assertThat(b.gid()).isEqualTo(RXE_GID);
        assertThat(b.qpn()).isEqualTo(0x12);
        assertThat(b.psn()).isEqualTo(0xd6f);
        assertThat(b.vaddr()).isEqualTo(0x55757bd41000L);
    }

    @Test
    void fullWidthValuesRoundTrip() {
        byte[] gid = new byte[16];
        Arrays.fill(gid, (byte) 0xfe);
        KeyMessage k = new KeyMessage(0xffff, 0x80, 0xffffff, 0xffffff, 0xffffffff, -1L, gid, 0xffffffff);
        assertThat(KeyMessage.decode(k.encode(), true)).isEqualTo(k);
        assertThat(new String(k.encode(), StandardCharsets.US_ASCII))
                .startsWith("ffff:0080:ffffff:ffffff:ffffffff:ffffffffffffffff:fe:");
    }

    @Test
    void fieldsWiderThanTheirColumnsAreRefused() {
        assertThatThrownBy(() -> new KeyMessage(0, 1, 0x1000000, 0, 0, 0, null, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new KeyMessage(0x10000, 1, 0, 0, 0, 0, null, 0))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void truncatedOversizedAndUnterminatedAreMalformed() {
        assertThatThrownBy(() -> KeyMessage.decode(Arrays.copyOf(wire(NO_GID), 40), false))
                .hasMessageContaining("it has 59 bytes, got 40");
        assertThatThrownBy(() -> KeyMessage.decode(Arrays.copyOf(wire(NO_GID), 80), false))
                .hasMessageContaining("it has 59 bytes, got 80");
        byte[] noNul = wire(NO_GID);
        noNul[58] = 'x';
        assertThatThrownBy(() -> KeyMessage.decode(noNul, false)).hasMessageContaining("not a perftest key message: it is not NUL terminated");
    }

    @Test
    void gidMessageReadAsShortFormNamesTheMismatch() {
        byte[] first59 = Arrays.copyOf(wire(WITH_GID), 59);
        first59[58] = 0; // even with a NUL where the short form has one
        assertThatThrownBy(() -> KeyMessage.decode(first59, false))
                .hasMessageContaining("with a GID (108 bytes").hasMessageContaining("-x");
    }

    @Test
    void randomBytesNeverDecode() {
        Random r = new Random(42);
        for (int i = 0; i < 2000; i++) {
            byte[] m = new byte[r.nextBoolean() ? 59 : 108];
            r.nextBytes(m);
            boolean gid = m.length == 108;
            assertThatThrownBy(() -> KeyMessage.decode(m, gid)).isInstanceOf(KeyMessage.MalformedException.class);
        }
    }

    @Test
    void nonHexDigitIsNamed() {
        byte[] m = wire(NO_GID);
        m[12] = 'g';
        assertThatThrownBy(() -> KeyMessage.decode(m, false)).hasMessageContaining("byte 12 should be a hex digit")
                .hasMessageContaining("received \"0001:0001:2bg500");
    }
}
