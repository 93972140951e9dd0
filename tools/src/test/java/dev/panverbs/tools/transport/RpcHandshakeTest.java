package dev.panverbs.tools.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class RpcHandshakeTest {
    private static final byte[] GID = new byte[16];

    static {
        GID[10] = (byte) 0xff;
        GID[11] = (byte) 0xff;
        GID[12] = 10;
        GID[15] = 1;
    }

    private static RpcHandshake client() {
        return new RpcHandshake(RpcHandshake.CLIENT, 0, 3, 0x1234, 0xabcdef, GID, 0, 0, 4096, 64, 4160, 0x77,
                0x7f00_1234_5000L);
    }

    private static byte[] bytes(RpcHandshake h) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        h.write(out);
        return out.toByteArray();
    }

    @Test
    void roundTripsWithTheDocumentedSize() throws IOException {
        byte[] wire = bytes(client());
        assertThat(wire).hasSize(RpcHandshake.SIZE);
        assertThat(Arrays.copyOf(wire, 5)).isEqualTo("PVRPC".getBytes());
        assertThat(RpcHandshake.read(new ByteArrayInputStream(wire), RpcHandshake.CLIENT)).isEqualTo(client());
    }

    @Test
    void readRejectsForeignPeer() {
        byte[] junk = "GET / HTTP/1.1\r\nHost: x\r\n\r\n".repeat(4).getBytes();
        assertThatThrownBy(() -> RpcHandshake.read(new ByteArrayInputStream(junk), RpcHandshake.CLIENT))
                .isInstanceOf(RpcProtocolException.class).hasMessageContaining("not a panverbs RPC endpoint");
    }

    @Test
    void readRejectsTruncated() throws IOException {
        byte[] wire = Arrays.copyOf(bytes(client()), 30);
        assertThatThrownBy(() -> RpcHandshake.read(new ByteArrayInputStream(wire), RpcHandshake.CLIENT))
                .isInstanceOf(RpcProtocolException.class).hasMessageContaining("closed the connection");
    }

    @Test
    void readRejectsWrongRole() throws IOException {
        byte[] wire = bytes(client());
        assertThatThrownBy(() -> RpcHandshake.read(new ByteArrayInputStream(wire), RpcHandshake.SERVER))
                .isInstanceOf(RpcProtocolException.class).hasMessageContaining("expected a server handshake");
    }

    @Test
    void readRejectsSlotsThatDoNotFitTheStride() throws IOException {
        RpcHandshake bad = new RpcHandshake(RpcHandshake.CLIENT, 0, 3, 1, 1, GID, 0, 0, 4096, 64, 4096, 1, 4096);
        byte[] wire = bytes(bad);
        assertThatThrownBy(() -> RpcHandshake.read(new ByteArrayInputStream(wire), RpcHandshake.CLIENT))
                .isInstanceOf(RpcProtocolException.class).hasMessageContaining("does not fit the slot stride 4096");
    }

    @Test
    void readRejectsServerWithTooFewCredits() throws IOException {
        RpcHandshake bad = new RpcHandshake(RpcHandshake.SERVER, 0, 3, 1, 1, GID, 1, 4096, 0, 0, 0, 0, 0);
        byte[] wire = bytes(bad);
        assertThatThrownBy(() -> RpcHandshake.read(new ByteArrayInputStream(wire), RpcHandshake.SERVER))
                .isInstanceOf(RpcProtocolException.class).hasMessageContaining("server credits 1 outside 2..65535");
    }

    @Test
    void readRejectsUnknownMtu() throws IOException {
        RpcHandshake bad = new RpcHandshake(RpcHandshake.SERVER, 0, 6, 1, 1, GID, 8, 4096, 0, 0, 0, 0, 0);
        byte[] wire = bytes(bad);
        assertThatThrownBy(() -> RpcHandshake.read(new ByteArrayInputStream(wire), RpcHandshake.SERVER))
                .isInstanceOf(RpcProtocolException.class).hasMessageContaining("MTU code 6");
    }

    @Test
    void rejectCarriesTheServersReason() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RpcHandshake.writeReject(out, "client asks for 70000 slots");
        assertThatThrownBy(() -> RpcHandshake.read(new ByteArrayInputStream(out.toByteArray()), RpcHandshake.SERVER))
                .isInstanceOf(RpcException.class)
                .hasMessage("the server rejected the connection: client asks for 70000 slots");
    }

    /** A peer on a loopback socket that writes {@code wire} one byte every {@code pauseMillis}, then waits. */
    private static RpcHandshake readFromDribblingPeer(byte[] wire, long pauseMillis, Duration timeout)
            throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             Socket peer = new Socket(InetAddress.getLoopbackAddress(), listener.getLocalPort());
             Socket socket = listener.accept()) {
            Thread writer = Thread.ofVirtual().start(() -> {
                try {
                    for (byte b : wire) {
                        peer.getOutputStream().write(b);
                        Thread.sleep(pauseMillis);
                    }
                } catch (IOException | InterruptedException e) {
                    // the reader gave up and closed: what the test provokes
                }
            });
            try {
                return RpcHandshake.read(socket, RpcHandshake.CLIENT, timeout);
            } finally {
                writer.interrupt();
            }
        }
    }

    @Test
    void socketReadBoundsTheWholeHandshakeNotEachRead() {
        // 72 bytes at 50 ms each take 3.6 s; every single read is far under the 500 ms timeout
        assertThatThrownBy(() -> readFromDribblingPeer(bytes(client()), 50, Duration.ofMillis(500)))
                .isInstanceOf(RpcProtocolException.class)
                .hasMessageContaining("timed out waiting for the peer's handshake");
    }

    @Test
    void socketReadOfAPromptPeerSucceeds() throws Exception {
        assertThat(readFromDribblingPeer(bytes(client()), 0, Duration.ofSeconds(10))).isEqualTo(client());
    }

    @Test
    void socketReadOfAPeerThatClosesAfterPartOfTheHandshake() {
        assertThatThrownBy(() -> {
            try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                 Socket peer = new Socket(InetAddress.getLoopbackAddress(), listener.getLocalPort());
                 Socket socket = listener.accept()) {
                peer.getOutputStream().write(Arrays.copyOf(bytes(client()), 30));
                peer.close();
                RpcHandshake.read(socket, RpcHandshake.CLIENT, Duration.ofSeconds(10));
            }
        }).isInstanceOf(RpcProtocolException.class).hasMessage("the peer closed the connection during the handshake");
    }
}
