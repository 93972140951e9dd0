package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ProtocolException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The TCP endpoint exchange against real sockets, with well-behaved and malicious plain-socket peers. */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class ConnectionExchangeTest {

    private static final Duration TIMEOUT = Duration.ofMillis(500);
    private static final QueuePairEndpoint RC_A = new QueuePairEndpoint(QueuePairType.RC, 0,
            Gid.of(InetAddress.ofLiteral("192.168.7.1")), 0x11, 0xabcdef, 0, 0x1234, 0x7f00_0000_1000L, 65536,
            Mtu.MTU_1024);
    private static final QueuePairEndpoint RC_B = QueuePairEndpoint.of(QueuePairType.RC, 7,
            Gid.parse("fe80:0000:0000:0000:0202:c9ff:fe00:0001"), 0xffffff, 0, Mtu.MTU_4096);

    private ServerSocket server;

    @BeforeEach
    void listen() throws IOException {
        server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    }

    @AfterEach
    void stop() throws IOException {
        server.close();
    }

    /** A raw peer that accepts, writes {@code bytes}, then keeps the socket open for {@code holdMillis}. */
    private CompletableFuture<Void> rawPeer(byte[] bytes, long holdMillis) {
        return CompletableFuture.runAsync(() -> {
            try (Socket s = server.accept()) {
                OutputStream o = s.getOutputStream();
                o.write(bytes);
                o.flush();
                Thread.sleep(holdMillis);
            } catch (IOException | InterruptedException e) {
                throw new RuntimeException(e);
            }
        });
    }

    private QueuePairEndpoint exchangeWithRawPeer(byte[] bytes, long holdMillis) throws Exception {
        CompletableFuture<Void> peer = rawPeer(bytes, holdMillis);
        try (ConnectionExchange ex = ConnectionExchange.connect("127.0.0.1", server.getLocalPort(), TIMEOUT)) {
            return ex.exchange(RC_A);
        } finally {
            peer.get(5, TimeUnit.SECONDS);
        }
    }

    private static byte[] header(int magic, int version, int kind, int length) {
        return ByteBuffer.allocate(12).putInt(magic).putShort((short) version).putShort((short) kind).putInt(length)
                .array();
    }

    @Test
    void exchangeRoundTripBothDirectionsThenBarrier() throws Exception {
        CompletableFuture<QueuePairEndpoint> serverSide = CompletableFuture.supplyAsync(() -> {
            try (ConnectionExchange ex = ConnectionExchange.accept(server, Duration.ofSeconds(5))) {
                QueuePairEndpoint peer = ex.exchange(RC_B);
                ex.barrier();
                return peer;
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        try (ConnectionExchange ex = ConnectionExchange.connect("127.0.0.1", server.getLocalPort(), Duration.ofSeconds(5))) {
            assertThat(ex.exchange(RC_A)).isEqualTo(RC_B);
            ex.barrier();
        }
        assertThat(serverSide.get(5, TimeUnit.SECONDS)).isEqualTo(RC_A);
        assertThat(RC_A.pathMtu(RC_B)).isEqualTo(Mtu.MTU_1024);
    }

    @Test
    void encodeHasDocumentedLayout() {
        byte[] m = ConnectionExchange.encode(RC_A);
        assertThat(m).hasSize(12 + 56);
        ByteBuffer b = ByteBuffer.wrap(m);
        assertThat(b.getInt(0)).isEqualTo(0x50564558);
        assertThat(new String(m, 0, 4, StandardCharsets.US_ASCII)).isEqualTo("PVEX");
        assertThat(b.getShort(4)).isEqualTo((short) 1);
        assertThat(b.getShort(6)).isEqualTo((short) 1);
        assertThat(b.getInt(8)).isEqualTo(56);
        assertThat(m[12]).isEqualTo((byte) 2); // IBV_QPT_RC
        assertThat(m[13]).isEqualTo((byte) 3); // IBV_MTU_1024
        assertThat(b.getInt(16)).isEqualTo(0x11);
        assertThat(b.getInt(20)).isEqualTo(0xabcdef);
        assertThat(b.getInt(28)).isEqualTo(0x1234);
        assertThat(b.getLong(36)).isEqualTo(0x7f00_0000_1000L);
        assertThat(b.getLong(44)).isEqualTo(65536);
        assertThat(m[52 + 10]).isEqualTo((byte) 0xff); // ::ffff:192.168.7.1
        assertThat(m[52 + 12]).isEqualTo((byte) 192);
    }

    @Test
    void httpPeerIsRejectedByMagic() {
        assertThatThrownBy(() -> exchangeWithRawPeer("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII), 200))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("not a panverbs exchange peer: magic 0x47455420");
    }

    @Test
    void wrongVersionIsRejected() {
        assertThatThrownBy(() -> exchangeWithRawPeer(header(0x50564558, 2, 1, 56), 200))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("exchange version 2, this side speaks 1");
    }

    @Test
    void oversizedLengthIsRejectedWithoutReading() {
        assertThatThrownBy(() -> exchangeWithRawPeer(header(0x50564558, 1, 1, Integer.MAX_VALUE), 200))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("oversized message: payload length 2147483647 exceeds 4096");
        assertThatThrownBy(() -> exchangeWithRawPeer(header(0x50564558, 1, 1, -1), 200))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("oversized message: payload length 4294967295");
    }

    @Test
    void wrongLengthForKindIsRejected() {
        assertThatThrownBy(() -> exchangeWithRawPeer(header(0x50564558, 1, 1, 40), 200))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("length mismatch: a version 1 endpoint has 56 payload bytes, the peer announced 40");
    }

    @Test
    void unknownKindAndOutOfOrderAreRejected() {
        assertThatThrownBy(() -> exchangeWithRawPeer(header(0x50564558, 1, 9, 0), 200))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("unknown message kind 9");
        assertThatThrownBy(() -> exchangeWithRawPeer(header(0x50564558, 1, 2, 0), 200))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("out of order");
    }

    @Test
    void truncatedHeaderIsEof() {
        assertThatThrownBy(() -> exchangeWithRawPeer(new byte[] {0x50, 0x56, 0x45, 0x58, 0}, 0))
                .isInstanceOf(EOFException.class)
                .hasMessageContaining("truncated message: the peer closed the connection after 5 of 12 bytes of the endpoint header");
    }

    @Test
    void truncatedPayloadIsEof() {
        byte[] full = ConnectionExchange.encode(RC_B);
        byte[] cut = java.util.Arrays.copyOf(full, 12 + 20);
        assertThatThrownBy(() -> exchangeWithRawPeer(cut, 0))
                .isInstanceOf(EOFException.class)
                .hasMessageContaining("after 20 of 56 bytes of the endpoint payload");
    }

    @Test
    void silentPeerTimesOutInsteadOfHanging() {
        long start = System.nanoTime();
        assertThatThrownBy(() -> exchangeWithRawPeer(new byte[0], 1500))
                .isInstanceOf(SocketTimeoutException.class)
                .hasMessageContaining("the peer sent 0 of 12 bytes of the endpoint header and then nothing for PT0.5S");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void stallingMidPayloadTimesOut() {
        byte[] full = ConnectionExchange.encode(RC_B);
        assertThatThrownBy(() -> exchangeWithRawPeer(java.util.Arrays.copyOf(full, 30), 1500))
                .isInstanceOf(SocketTimeoutException.class)
                .hasMessageContaining("18 of 56 bytes of the endpoint payload");
    }

    @Test
    void tricklingPeerIsCutOffAtTheTimeoutNotPerByte() throws Exception {
        byte[] full = ConnectionExchange.encode(RC_B);
        CompletableFuture<Void> peer = CompletableFuture.runAsync(() -> {
            try (Socket s = server.accept()) {
                OutputStream o = s.getOutputStream();
                for (byte b : full) { // one byte per 100 ms: each gap well inside the 500 ms read timeout
                    o.write(b);
                    o.flush();
                    Thread.sleep(100);
                }
            } catch (IOException e) {
                // the exchange hung up on us, as it should
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        long start = System.nanoTime();
        try (ConnectionExchange ex = ConnectionExchange.connect("127.0.0.1", server.getLocalPort(), TIMEOUT)) {
            assertThatThrownBy(() -> ex.exchange(RC_A)).isInstanceOf(SocketTimeoutException.class)
                    .hasMessageContaining("bytes of the endpoint header within PT0.5S");
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("68 bytes would take 6.8 s")
                .isLessThan(Duration.ofSeconds(3));
        peer.get(15, TimeUnit.SECONDS);
    }

    @Test
    void nonPositiveTimeoutsAreRefusedAndHugeOnesDoNotOverflow() throws Exception {
        assertThatThrownBy(() -> ConnectionExchange.connect("127.0.0.1", server.getLocalPort(), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timeout must be positive");
        assertThatThrownBy(() -> ConnectionExchange.accept(server, Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        CompletableFuture<Void> peer = rawPeer(ConnectionExchange.encode(RC_B), 200);
        try (ConnectionExchange ex = ConnectionExchange.connect("127.0.0.1", server.getLocalPort(),
                Duration.ofSeconds(Long.MAX_VALUE))) {
            assertThat(ex.exchange(RC_A)).isEqualTo(RC_B);
        }
        peer.get(5, TimeUnit.SECONDS);
        assertThat(dev.panverbs.core.internal.Units.clampedMillis(Duration.ofSeconds(Long.MAX_VALUE)))
                .isEqualTo(Integer.MAX_VALUE);
        assertThat(dev.panverbs.core.internal.Units.clampedMillis(Duration.ofMillis(-5))).isZero();
        assertThat(dev.panverbs.core.internal.Units.clampedMillis(Duration.ofMillis(1500))).isEqualTo(1500);
    }

    @Test
    void invalidFieldsAreRejected() {
        byte[] badMtu = ConnectionExchange.encode(RC_B);
        badMtu[13] = 9;
        assertThatThrownBy(() -> exchangeWithRawPeer(badMtu, 200))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("MTU code 9");
        byte[] badQpn = ConnectionExchange.encode(RC_B);
        ByteBuffer.wrap(badQpn).putInt(16, 0x01000000);
        assertThatThrownBy(() -> exchangeWithRawPeer(badQpn, 200))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("qpn must fit 24 bits");
        byte[] badType = ConnectionExchange.encode(RC_B);
        badType[12] = 77;
        assertThatThrownBy(() -> exchangeWithRawPeer(badType, 200))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("QP type 77");
    }

    @Test
    void transportMismatchIsRejected() {
        QueuePairEndpoint ud = QueuePairEndpoint.of(QueuePairType.UD, 0, Gid.ZERO, 5, 6, Mtu.MTU_1024).withQkey(0x11111111);
        assertThatThrownBy(() -> exchangeWithRawPeer(ConnectionExchange.encode(ud), 200))
                .isInstanceOf(ProtocolException.class)
                .hasMessageContaining("transport mismatch: this side is RC, the peer is UD");
    }

    @Test
    void connectWithoutListenerTimesOut() throws IOException {
        int port = server.getLocalPort();
        server.close();
        assertThatThrownBy(() -> ConnectionExchange.connect("127.0.0.1", port, Duration.ofMillis(300)))
                .isInstanceOf(SocketTimeoutException.class)
                .hasMessageContaining("no peer accepted on 127.0.0.1:" + port);
    }

    @Test
    void acceptWithoutPeerTimesOut() {
        assertThatThrownBy(() -> ConnectionExchange.accept(server, Duration.ofMillis(200)))
                .isInstanceOf(SocketTimeoutException.class)
                .hasMessageContaining("no peer connected");
    }

    @Test
    void endpointRejectsOutOfRangeValues() {
        assertThatThrownBy(() -> QueuePairEndpoint.of(QueuePairType.RC, 0, Gid.ZERO, 1, 0x1000000, Mtu.MTU_256))
                .hasMessageContaining("psn must fit 24 bits");
        assertThatThrownBy(() -> QueuePairEndpoint.of(QueuePairType.XRC_SEND, 0, Gid.ZERO, 1, 1, Mtu.MTU_256))
                .hasMessageContaining("only RC, UC and UD");
    }

    @Test
    void aPeersDriverQueuePairTypeIsRefusedAsSuchNotTakenForADcInitiator() {
        ByteBuffer p = ByteBuffer.allocate(56);
        p.put((byte) dev.panverbs.bindings.verbs.verbs_h.IBV_QPT_DRIVER()).put((byte) 3); // a DCT, an EFA SRD QP...
        p.rewind();
        assertThatThrownBy(() -> ConnectionExchange.decodeEndpoint(p)).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("QP type 255").hasMessageNotContaining("DC_INITIATOR");
    }
}
