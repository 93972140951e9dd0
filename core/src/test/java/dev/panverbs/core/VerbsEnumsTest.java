package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.verbs.verbs_h;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * Enum values come from the generated constants; a few are pinned to the rdma-core 44 ABI values from
 * verbs.h, so a regeneration that changed them would fail here.
 */
class VerbsEnumsTest {

    @Test
    void accessFlagsMatchVerbsH() {
        assertThat(Access.LOCAL_WRITE.value()).isEqualTo(verbs_h.IBV_ACCESS_LOCAL_WRITE()).isEqualTo(1);
        assertThat(Access.REMOTE_WRITE.value()).isEqualTo(verbs_h.IBV_ACCESS_REMOTE_WRITE()).isEqualTo(2);
        assertThat(Access.REMOTE_READ.value()).isEqualTo(verbs_h.IBV_ACCESS_REMOTE_READ()).isEqualTo(4);
        assertThat(Access.REMOTE_ATOMIC.value()).isEqualTo(verbs_h.IBV_ACCESS_REMOTE_ATOMIC()).isEqualTo(8);
        assertThat(Access.MW_BIND.value()).isEqualTo(16);
        assertThat(Access.ZERO_BASED.value()).isEqualTo(32);
        assertThat(Access.ON_DEMAND.value()).isEqualTo(verbs_h.IBV_ACCESS_ON_DEMAND()).isEqualTo(64);
        assertThat(Access.HUGETLB.value()).isEqualTo(128);
        assertThat(Access.RELAXED_ORDERING.value()).isEqualTo(verbs_h.IBV_ACCESS_OPTIONAL_FIRST()).isEqualTo(1 << 20);
        assertThat(Access.mask(EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ))).isEqualTo(5);
        assertThat(Access.fromMask(0xf)).containsExactly(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
                Access.REMOTE_ATOMIC);
    }

    @Test
    void portEnumsMatchVerbsH() {
        assertThat(PortState.ACTIVE.value()).isEqualTo(verbs_h.IBV_PORT_ACTIVE()).isEqualTo(4);
        assertThat(PortState.of(1)).isEqualTo(PortState.DOWN);
        assertThat(LinkLayer.ETHERNET.value()).isEqualTo(verbs_h.IBV_LINK_LAYER_ETHERNET()).isEqualTo(2);
        assertThat(LinkLayer.of(1)).isEqualTo(LinkLayer.INFINIBAND);
        assertThat(PortCapability.IP_BASED_GIDS.value()).isEqualTo(1 << 26);
        assertThat(PortCapability.fromMask((1 << 26) | (1 << 16))).containsExactly(PortCapability.CM_SUP,
                PortCapability.IP_BASED_GIDS);
        assertThatThrownBy(() -> PortState.of(42)).hasMessageContaining("unknown ibv_port_state 42");
    }

    @Test
    void gidAndEventEnumsMatchVerbsH() {
        assertThat(GidType.ROCE_V2.value()).isEqualTo(verbs_h.IBV_GID_TYPE_ROCE_V2()).isEqualTo(2);
        assertThat(AsyncEventType.CQ_ERR.value()).isZero();
        assertThat(AsyncEventType.PORT_ACTIVE.value()).isEqualTo(verbs_h.IBV_EVENT_PORT_ACTIVE()).isEqualTo(9);
        assertThat(AsyncEventType.PORT_ERR.value()).isEqualTo(10);
        assertThat(AsyncEventType.SRQ_LIMIT_REACHED.value()).isEqualTo(15);
        assertThat(AsyncEventType.WQ_FATAL.value()).isEqualTo(19);
        assertThat(AsyncEventType.of(10).element()).isEqualTo(AsyncEventType.Element.PORT);
        assertThat(AsyncEventType.QP_FATAL.element()).isEqualTo(AsyncEventType.Element.QP);
    }

    @Test
    void deviceEnumsMatchVerbsH() {
        assertThat(DeviceCapability.XRC.value()).isEqualTo(1L << 20);
        assertThat(DeviceCapability.MEM_WINDOW_TYPE_2B.value()).isEqualTo(1L << 24);
        assertThat(DeviceCapability.RAW_SCATTER_FCS.value()).isEqualTo(1L << 34);
        assertThat(DeviceCapability.fromMask((1L << 34) | (1L << 17))).containsExactly(DeviceCapability.MEM_WINDOW,
                DeviceCapability.RAW_SCATTER_FCS);
        assertThat(AtomicCapability.GLOB.value()).isEqualTo(verbs_h.IBV_ATOMIC_GLOB()).isEqualTo(2);
        assertThat(NodeType.CA.value()).isEqualTo(verbs_h.IBV_NODE_CA()).isEqualTo(1);
        assertThat(NodeType.of(-5)).isEqualTo(NodeType.UNKNOWN);
        assertThat(TransportType.IB.value()).isZero();
        assertThat(OdpCapabilities.Operation.SRQ_RECV.value()).isEqualTo(32);
        OdpCapabilities odp = OdpCapabilities.of(3, 0b1011, 0, 2, 0);
        assertThat(odp.supported()).isTrue();
        assertThat(odp.implicit()).isTrue();
        assertThat(odp.rc()).containsExactlyInAnyOrder(OdpCapabilities.Operation.SEND, OdpCapabilities.Operation.RECV,
                OdpCapabilities.Operation.READ);
        assertThat(odp.ud()).containsExactly(OdpCapabilities.Operation.RECV);
    }
}
