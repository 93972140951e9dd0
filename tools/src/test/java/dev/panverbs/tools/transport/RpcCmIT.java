package dev.panverbs.tools.transport;

import static dev.panverbs.testing.Threads.startOnAnotherThread;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.panverbs.core.cm.CmEventType;
import dev.panverbs.core.cm.CmId;
import dev.panverbs.core.cm.CmTimeoutException;
import dev.panverbs.core.cm.ConnectionParameters;
import dev.panverbs.core.cm.ConnectionRejectedException;
import dev.panverbs.core.cm.EventChannel;
import dev.panverbs.core.cm.PortSpace;
import dev.panverbs.testing.RdmaTestDevice;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The RPC transport connected through rdma_cm instead of its TCP exchange, on a real device (rxe in the bed): the
 * handshake as the CM's private data, both QPs moved with rdma_cm's attributes, calls with their responses checked
 * byte for byte under back-pressure (more concurrent calls than credits), one-way messages, the in-band shutdown and
 * the CM disconnect; a server that is not there is the CM's rejection; clients that send garbage or go away in the
 * middle of the handshake leave no connection behind.
 */
class RpcCmIT {
    private static InetAddress local;
    private static final AtomicInteger PORTS = new AtomicInteger(7500);
    private static final RpcOptions BASE = RpcOptions.DEFAULTS.withTimeout(Duration.ofSeconds(120));

    @BeforeAll
    static void device() throws Exception {
        RdmaTestDevice.name();
        String addr = System.getenv("PANVERBS_ADDR");
        assumeTrue(addr != null, "rdma_cm ITs need PANVERBS_ADDR (testbed/test sets it)");
        local = InetAddress.getByName(addr);
    }

    /** Echoes each request, each byte plus one; counts one-way messages. */
    private static final class Echo implements RpcHandler {
        final AtomicInteger messages = new AtomicInteger();
        final Queue<String> disconnects = new ConcurrentLinkedQueue<>();

        @Override
        public int handle(MemorySegment request, MemorySegment response) {
            for (long i = 0; i < request.byteSize(); i++) {
                response.set(ValueLayout.JAVA_BYTE, i, (byte) (request.get(ValueLayout.JAVA_BYTE, i) + 1));
            }
            return (int) request.byteSize();
        }

        @Override
        public void onMessage(MemorySegment message) {
            messages.incrementAndGet();
        }

        @Override
        public void onDisconnect(String peer, RpcException cause) {
            disconnects.add(cause == null ? "clean" : cause.toString());
        }
    }

    @Test
    void callsAndMessagesOverAConnectionRdmaCmSetUp() throws Exception {
        Echo echo = new Echo();
        InetSocketAddress at = new InetSocketAddress(local, PORTS.incrementAndGet());
        RpcServer server = RpcServer.startCm(at, echo, BASE.withCredits(4).withMaxRequest(512));
        try (server) {
            assertThat(server.port()).isEqualTo(at.getPort());
            RpcClient client = RpcClient.connectCm(local.getHostAddress(), at.getPort(),
                    BASE.withSlots(8).withMaxRequest(512).withMaxResponse(512));
            int calls = 40;
            CountDownLatch done = new CountDownLatch(calls);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            for (int i = 0; i < calls; i++) {
                byte[] request = new byte[16 + i * 11];
                for (int k = 0; k < request.length; k++) {
                    request[k] = (byte) (i * 7 + k);
                }
                client.call(MemorySegment.ofArray(request), new ResponseHandler() {
                    @Override
                    public void onResponse(MemorySegment response) {
                        try {
                            assertThat(response.byteSize()).isEqualTo(request.length);
                            for (int k = 0; k < request.length; k++) {
                                if (response.get(ValueLayout.JAVA_BYTE, k) != (byte) (request[k] + 1)) {
                                    throw new AssertionError("response byte " + k + " differs");
                                }
                            }
                        } catch (Throwable t) {
                            failure.compareAndSet(null, t);
                        }
                        done.countDown();
                    }

                    @Override
                    public void onError(RpcException error) {
                        failure.compareAndSet(null, error);
                        done.countDown();
                    }
                });
            }
            for (int i = 0; i < 10; i++) {
                client.send(MemorySegment.ofArray(new byte[] {(byte) i}));
            }
            assertThat(done.await(120, TimeUnit.SECONDS)).isTrue();
            assertThat(failure.get()).isNull();
            client.close(); // SHUTDOWN in-band, then the CM's disconnect
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (server.connections() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(server.connections()).isZero();
            assertThat(server.accepted()).isEqualTo(1);
            assertThat(echo.messages.get()).isEqualTo(10);
            assertThat(echo.disconnects).containsExactly("clean");
        }
        assertThat(server.port()).as("after close").isEqualTo(at.getPort());
    }

    @Test
    void noServerIsTheCmsRejection() {
        assertThatThrownBy(() -> RpcClient.connectCm(local.getHostAddress(), PORTS.incrementAndGet(), BASE))
                .isInstanceOf(ConnectionRejectedException.class)
                .satisfies(e -> assertThat(((ConnectionRejectedException) e).reason())
                        .isEqualTo(ConnectionRejectedException.REASON_NO_LISTENER));
    }

    /**
     * A client whose private data is not a handshake is rejected with the reason; one that goes away after the
     * server's reply (destroying its ID: the server's ID gets REJECTED, never ESTABLISHED or DISCONNECTED) leaves no
     * connection behind; the server goes on serving.
     */
    @Test
    void clientsThatSendGarbageOrVanishMidHandshakeLeaveNoConnectionBehind() throws Exception {
        Duration step = Duration.ofSeconds(60);
        Echo echo = new Echo();
        InetSocketAddress at = new InetSocketAddress(local, PORTS.incrementAndGet());
        try (RpcServer server = RpcServer.startCm(at, echo, BASE); EventChannel events = EventChannel.create()) {
            CmId garbage = events.createId(PortSpace.TCP);
            garbage.resolve(at, step);
            byte[] noise = new byte[CmHandshake.CLIENT_SIZE];
            new Random(7).nextBytes(noise);
            garbage.connect(ConnectionParameters.defaults().withQpNum(0x1234).withPrivateData(noise));
            assertThatThrownBy(() -> garbage.await(CmEventType.CONNECT_RESPONSE, step))
                    .isInstanceOfSatisfying(ConnectionRejectedException.class, e -> assertThat(
                            CmHandshake.rejectReason(e.privateData())).contains("not a panverbs RPC endpoint"));

            CmId vanishing = events.createId(PortSpace.TCP);
            vanishing.resolve(at, step);
            RpcHandshake hello = new RpcHandshake(RpcHandshake.CLIENT, 0, 0, 0x1235, 0, new byte[16], 0, 0, 64, 1,
                    128, 1, 0x1000);
            vanishing.connect(ConnectionParameters.defaults().withQpNum(0x1235)
                    .withPrivateData(CmHandshake.client(hello)));
            vanishing.await(CmEventType.CONNECT_RESPONSE, step); // the server accepted: its connection is set up
            assertThat(server.connections()).isEqualTo(1);
            vanishing.close(); // no RTU: the CM rejects on the client's behalf
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while ((server.connections() > 0 || echo.disconnects.size() < 2) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(server.connections()).as("connections after the client vanished").isZero();
            assertThat(echo.disconnects).anyMatch(d -> d.contains("went away during the rdma_cm handshake"));

            RpcClient.connectCm(local.getHostAddress(), at.getPort(), BASE).close();
            assertThat(server.accepted()).isEqualTo(2);
        }
    }

    /**
     * Servers that misbehave in the rdma_cm handshake: one that accepts with private data that is not a handshake
     * (a protocol error naming it), one that takes the request and never answers (the client's timeout ends the
     * connect). Neither leaves the client hanging.
     */
    @Test
    void aServerThatAnswersGarbageOrNeverAnswersFailsTheConnect() throws Exception {
        Duration step = Duration.ofSeconds(60);
        InetSocketAddress at = new InetSocketAddress(local, PORTS.incrementAndGet());
        try (EventChannel events = EventChannel.create()) {
            CmId listener = events.createId(PortSpace.TCP);
            listener.bindAddress(at);
            listener.listen(4);
            CompletableFuture<Throwable> fooled = startOnAnotherThread(() ->
                    RpcClient.connectCm(local.getHostAddress(), at.getPort(), BASE).close());
            CmId request = listener.await(CmEventType.CONNECT_REQUEST, step).id();
            byte[] noise = new byte[CmHandshake.SERVER_SIZE];
            new Random(11).nextBytes(noise);
            request.accept(ConnectionParameters.defaults().withQpNum(0x4321).withPrivateData(noise));
            assertThat(fooled.get(step.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(RpcProtocolException.class)
                    .hasMessageContaining("not a panverbs RPC endpoint");

            long start = System.nanoTime();
            CompletableFuture<Throwable> patient = startOnAnotherThread(() -> RpcClient.connectCm(
                    local.getHostAddress(), at.getPort(), BASE.withTimeout(Duration.ofSeconds(5))).close());
            listener.await(CmEventType.CONNECT_REQUEST, step); // taken, never answered
            assertThat(patient.get(step.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(CmTimeoutException.class)
                    .hasMessageContaining("CONNECT_RESPONSE");
            System.out.printf("rpc over rdma_cm: a silent server ended the connect in %d ms%n",
                    (System.nanoTime() - start) / 1_000_000);
        }
    }
}
