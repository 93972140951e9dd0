package dev.panverbs.tools.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The rdma_cm route's handshake: it fits the CM's private data, round-trips, and a malformed one is refused. */
class CmHandshakeTest {

    private static final RpcHandshake CLIENT = new RpcHandshake(RpcHandshake.CLIENT, 0, 0, 0x123, 0, new byte[16],
            0, 0, 4096, 64, 4104, 0xabcdef, 0x7f00_1234_5000L);
    private static final RpcHandshake SERVER = new RpcHandshake(RpcHandshake.SERVER, 0, 0, 0x456, 0, new byte[16],
            64, 4096, 0, 0, 0, 0, 0);

    @Test
    void bothHandshakesFitAndRoundTrip() {
        byte[] c = CmHandshake.client(CLIENT);
        assertThat(c).hasSize(CmHandshake.CLIENT_SIZE).hasSizeLessThanOrEqualTo(56); // a REQ's private data
        RpcHandshake client = CmHandshake.readClient(c, 0x777);
        assertThat(client.qpn()).as("the CM's QP number").isEqualTo(0x777);
        assertThat(client.maxResponse()).isEqualTo(4096);
        assertThat(client.slots()).isEqualTo(64);
        assertThat(client.slotStride()).isEqualTo(4104);
        assertThat(client.responseRkey()).isEqualTo(0xabcdef);
        assertThat(client.responseAddress()).isEqualTo(0x7f00_1234_5000L);

        byte[] s = CmHandshake.server(SERVER);
        assertThat(s).hasSize(CmHandshake.SERVER_SIZE);
        RpcHandshake server = CmHandshake.readServer(s, 0x888);
        assertThat(server.credits()).isEqualTo(64);
        assertThat(server.maxRequest()).isEqualTo(4096);
        assertThat(server.qpn()).isEqualTo(0x888);
    }

    @Test
    void malformedPrivateDataIsAProtocolError() {
        byte[] c = CmHandshake.client(CLIENT);
        assertThatThrownBy(() -> CmHandshake.readClient(new byte[56], 1)).isInstanceOf(RpcProtocolException.class)
                .hasMessageContaining("not a panverbs RPC endpoint");
        assertThatThrownBy(() -> CmHandshake.readServer(c, 1)).isInstanceOf(RpcProtocolException.class)
                .hasMessageContaining("expected handshake role");
        assertThatThrownBy(() -> CmHandshake.readClient(Arrays.copyOf(c, 20), 1))
                .isInstanceOf(RpcProtocolException.class).hasMessageContaining("fewer than");
        byte[] tooMany = CmHandshake.client(new RpcHandshake(RpcHandshake.CLIENT, 0, 0, 1, 0, new byte[16], 0, 0,
                4096, 0, 4104, 1, 1));
        assertThatThrownBy(() -> CmHandshake.readClient(tooMany, 1)).isInstanceOf(RpcProtocolException.class)
                .hasMessageContaining("client slots 0");
        assertThatThrownBy(() -> CmHandshake.readClient(c, 1 << 24)).isInstanceOf(RpcProtocolException.class)
                .hasMessageContaining("exceeds 24 bits");
    }

    @Test
    void rejectCarriesItsReasonWithinTheRejectLimit() {
        byte[] r = CmHandshake.reject("no room");
        assertThat(CmHandshake.rejectReason(r)).isEqualTo("no room");
        byte[] longOne = CmHandshake.reject("x".repeat(500));
        assertThat(longOne).hasSize(CmHandshake.MAX_REJECT);
        assertThat(CmHandshake.rejectReason(longOne)).hasSize(CmHandshake.MAX_REJECT - 14);
        assertThat(CmHandshake.rejectReason(new byte[0])).isNull(); // an ordinary CM rejection
        assertThat(CmHandshake.rejectReason(CmHandshake.client(CLIENT))).isNull();
    }
}
