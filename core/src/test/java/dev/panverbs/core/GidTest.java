package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

/** GIDs, IPv4-mapped RoCE v2 GIDs and the GID-index helper, without a device. */
class GidTest {

    @Test
    void ipv4MapsToRoceV2Gid() {
        Gid g = Gid.of(InetAddress.ofLiteral("10.0.2.15"));
        assertThat(g.toString()).isEqualTo("0000:0000:0000:0000:0000:ffff:0a00:020f");
        assertThat(g.isIpv4Mapped()).isTrue();
        assertThat(g.toInetAddress()).isEqualTo(InetAddress.ofLiteral("10.0.2.15"));
        assertThat(Gid.parse("10.0.2.15")).isEqualTo(g);
        assertThat(Gid.parse("::ffff:10.0.2.15")).isEqualTo(g);
    }

    @Test
    void parseAndFormatRoundTrip() {
        String text = "fe80:0000:0000:0000:5054:00ff:fe12:3456";
        Gid g = Gid.parse(text);
        assertThat(g.toString()).isEqualTo(text);
        assertThat(g.subnetPrefix()).isEqualTo(0xfe80_0000_0000_0000L);
        assertThat(g.interfaceId()).isEqualTo(0x5054_00ff_fe12_3456L);
        assertThat(g.isIpv4Mapped()).isFalse();
        assertThat(Gid.ZERO.isZero()).isTrue();
        assertThat(Gid.of(g.toBytes())).isEqualTo(g).hasSameHashCodeAs(g);
        assertThatThrownBy(() -> Gid.parse("rxe0")).hasMessageContaining("not a GID: 'rxe0'");
        // the ibv_devinfo form with a non-hex digit, or its colons misplaced: named, not a bare NumberFormatException
        String bad = "fe80:0000:0000:0000:5054:00ff:fe12:345g";
        assertThatThrownBy(() -> Gid.parse(bad)).isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a GID: '" + bad + "'");
        assertThatThrownBy(() -> Gid.parse("fe800:000:0000:0000:5054:00ff:fe12:3456"))
                .hasMessageContaining("not a GID");
        assertThatThrownBy(() -> Gid.of(new byte[4])).hasMessageContaining("16 bytes");
    }

    @Test
    void findRoceV2IndexPicksTheV2EntryOfTheAddress() {
        Gid link = Gid.parse("fe80:0000:0000:0000:5054:00ff:fe12:3456");
        Gid v4 = Gid.of(InetAddress.ofLiteral("192.168.100.1"));
        List<GidEntry> table = List.of(
                new GidEntry(link, 0, 1, GidType.ROCE_V1, 3),
                new GidEntry(link, 1, 1, GidType.ROCE_V2, 3),
                new GidEntry(v4, 2, 1, GidType.ROCE_V1, 3),
                new GidEntry(v4, 3, 1, GidType.ROCE_V2, 3));
        assertThat(GidEntry.findRoceV2(table, 1, InetAddress.ofLiteral("192.168.100.1")))
                .hasValueSatisfying(e -> assertThat(e.index()).isEqualTo(3));
        assertThat(GidEntry.findRoceV2(table, 2, InetAddress.ofLiteral("192.168.100.1"))).isEmpty();
        assertThat(GidEntry.findRoceV2(table, 1, InetAddress.ofLiteral("192.168.100.2"))).isEmpty();
        assertThat(GidEntry.findRoceV2(table, 1, InetAddress.ofLiteral("fe80::5054:ff:fe12:3456")))
                .hasValueSatisfying(e -> assertThat(e.index()).isEqualTo(1));
    }
}
