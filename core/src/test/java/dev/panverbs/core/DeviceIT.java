package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.testing.RdmaTestDevice;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Device list, open, device/port/GID queries on the test device. */
class DeviceIT {

    private String name;
    private Context ctx;

    @BeforeEach
    void open() {
        name = RdmaTestDevice.name();
        ctx = Device.open(name);
    }

    @AfterEach
    void close() {
        ctx.close();
    }

    @Test
    void listContainsTheDeviceAndOpensByName() {
        List<Device> devices = Device.list();
        assertThat(devices).extracting(Device::name).contains(name);
        Device d = Device.byName(name);
        assertThat(d.nodeType()).isEqualTo(NodeType.CA);
        assertThat(d.transportType()).isEqualTo(TransportType.IB);
        assertThat(ctx.device()).isEqualTo(d);
        assertThat(ctx.numCompVectors()).isPositive();
        try (Context second = d.open()) {
            assertThat(second).isNotSameAs(ctx);
        }
        assertThat(Device.first()).isEqualTo(devices.getFirst());
    }

    @Test
    void openUnknownDeviceListsThePresentOnes() {
        assertThatThrownBy(() -> Device.open("nosuchdev9"))
                .isInstanceOf(VerbsException.class)
                .hasMessageContaining("ENODEV").hasMessageContaining("present: [").hasMessageContaining(name);
    }

    @Test
    void queryDeviceReportsSaneLimits() {
        DeviceAttributes a = ctx.queryDevice();
        assertThat(a.physPortCnt()).isGreaterThanOrEqualTo(1);
        assertThat(a.maxQp()).isPositive();
        assertThat(a.maxCq()).isPositive();
        assertThat(a.maxMr()).isPositive();
        assertThat(a.maxSge()).isPositive();
        assertThat(a.maxCqe()).isPositive();
        assertThat(a.maxMrSize()).isNotZero(); // unsigned: rxe reports 2^64 - 1
        assertThat(a.limits().maxPd()).isPositive();
        assertThat(a.fwVer()).isNotNull();
        if (name.startsWith("rxe")) {
            // Soft-RoCE: no ODP, atomics emulated by the CPU (HCA), software MWs (type 1 + 2B)
            assertThat(a.supportsOdp()).isFalse();
            assertThat(a.supportsSrq()).isTrue();
        }
    }

    @Test
    void queryPortReportsActiveRoceOrIbPort() {
        PortAttributes p = ctx.queryPort(1);
        assertThat(p.portNum()).isEqualTo(1);
        assertThat(p.state()).isEqualTo(PortState.ACTIVE);
        assertThat(p.gidTblLen()).isPositive();
        assertThat(p.activeMtu().bytes()).isLessThanOrEqualTo(p.maxMtu().bytes());
        if (name.startsWith("rxe")) {
            assertThat(p.linkLayer()).isEqualTo(LinkLayer.ETHERNET);
            assertThat(p.grhRequired()).isTrue();
            assertThat(p.lid()).isZero();
        }
    }

    @Test
    void queryPortZeroIsRejectedAndPortBeyondCountFailsWithEinval() {
        assertThatThrownBy(() -> ctx.queryPort(0)).isInstanceOf(IllegalArgumentException.class);
        int beyond = ctx.queryDevice().physPortCnt() + 1;
        assertThatThrownBy(() -> ctx.queryPort(beyond))
                .isInstanceOf(VerbsException.class)
                .satisfies(e -> assertThat(((VerbsException) e).errnoName()).isEqualTo("EINVAL"));
    }

    @Test
    void gidTableHasRoceV2GidOfTheNetdevAddress() throws SocketException {
        List<GidEntry> table = ctx.queryGidTable();
        assertThat(table).isNotEmpty();
        GidEntry first = table.getFirst();
        assertThat(ctx.queryGid(first.portNum(), first.index())).isEqualTo(first.gid());
        assertThat(ctx.queryGidEntry(first.portNum(), first.index())).contains(first);
        if (ctx.queryPort(1).linkLayer() != LinkLayer.ETHERNET) {
            return;
        }
        // the netdev under rxe0 (d0 in the single guest) has an IPv4 address: its RoCE v2 GID must be listed
        GidEntry v2 = table.stream().filter(e -> e.type() == GidType.ROCE_V2 && e.gid().isIpv4Mapped()).findFirst()
                .orElseThrow(() -> new AssertionError("no IPv4 RoCE v2 GID in " + table));
        NetworkInterface netdev = NetworkInterface.getByIndex(v2.ndevIfindex());
        assertThat(netdev).as("netdev of ifindex " + v2.ndevIfindex()).isNotNull();
        InetAddress ip = netdev.inetAddresses().filter(a -> a instanceof Inet4Address).findFirst().orElseThrow();
        assertThat(v2.gid()).isEqualTo(Gid.of(ip));
        assertThat(ctx.roceV2GidIndex(1, ip)).isEqualTo(v2.index());
        assertThatThrownBy(() -> ctx.roceV2GidIndex(1, InetAddress.ofLiteral("203.0.113.77")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no RoCE v2 GID for 203.0.113.77")
                .hasMessageContaining(ip.getHostAddress());
    }

    @Test
    void unusedGidSlotIsEmpty() {
        PortAttributes p = ctx.queryPort(1);
        List<GidEntry> table = ctx.queryGidTable();
        int unused = -1;
        for (int i = p.gidTblLen() - 1; i >= 0; i--) {
            int idx = i;
            if (table.stream().noneMatch(e -> e.index() == idx)) {
                unused = i;
                break;
            }
        }
        if (unused >= 0) {
            assertThat(ctx.queryGidEntry(1, unused)).isEmpty();
            assertThat(ctx.queryGid(1, unused)).isEqualTo(Gid.ZERO);
        }
    }
}
