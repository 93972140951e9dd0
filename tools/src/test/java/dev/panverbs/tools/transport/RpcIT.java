package dev.panverbs.tools.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.Context;
import dev.panverbs.core.Device;
import dev.panverbs.core.GidEntry;
import dev.panverbs.core.GidType;
import dev.panverbs.testing.RdmaTestDevice;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The RPC transport on a real device (rxe0 loopback in the bed): data, back-pressure, errors, shutdown. */
class RpcIT {
    private static RpcOptions base;

    private final List<AutoCloseable> open = new ArrayList<>();
    private final Queue<String> disconnects = new ConcurrentLinkedQueue<>();

    @BeforeAll
    static void device() {
        String device = RdmaTestDevice.name();
        int gid = -1;
        try (Context ctx = Device.open(device)) {
            if (ctx.queryPort(1).grhRequired()) {
                for (GidEntry e : ctx.queryGidTable()) {
                    if (e.portNum() == 1 && e.type() == GidType.ROCE_V2 && e.gid().isIpv4Mapped()) {
                        gid = e.index();
                        break;
                    }
                }
            }
        }
        base = RpcOptions.DEFAULTS.withDevice(device).withGidIndex(gid).withTimeout(Duration.ofSeconds(120));
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private <T extends AutoCloseable> T track(T t) {
        open.add(t);
        return t;
    }

    /** Answers each request with its bytes reversed, prefixed by the request's length (4 bytes). */
    private final class ReverseHandler implements RpcHandler {
        final AtomicInteger requests = new AtomicInteger();
        final AtomicInteger messages = new AtomicInteger();
        final AtomicLong messageBytes = new AtomicLong();

        @Override
        public int handle(MemorySegment request, MemorySegment response) {
            requests.incrementAndGet();
            int n = (int) request.byteSize();
            if (n >= 4 && request.get(ValueLayout.JAVA_INT_UNALIGNED, 0) == 0xdead) {
                throw new IllegalArgumentException("request 0xdead refused");
            }
            response.set(ValueLayout.JAVA_INT_UNALIGNED, 0, n);
            for (int i = 0; i < n; i++) {
                response.set(ValueLayout.JAVA_BYTE, 4 + i, request.get(ValueLayout.JAVA_BYTE, n - 1 - i));
            }
            return 4 + n;
        }

        @Override
        public void onMessage(MemorySegment message) {
            messages.incrementAndGet();
            messageBytes.addAndGet(message.byteSize());
        }

        @Override
        public void onDisconnect(String peer, RpcException cause) {
            disconnects.add(cause == null ? "clean" : cause.toString());
        }
    }

    private static byte[] request(int thread, int i, int size) {
        byte[] b = new byte[size];
        ByteBuffer.wrap(b).putInt(thread).putInt(i);
        for (int k = 8; k < size; k++) {
            b[k] = (byte) (thread * 31 + i * 7 + k);
        }
        return b;
    }

    private static void verify(byte[] request, MemorySegment response) {
        assertThat(response.byteSize()).isEqualTo(4 + request.length);
        assertThat(response.get(ValueLayout.JAVA_INT_UNALIGNED, 0)).isEqualTo(request.length);
        for (int i = 0; i < request.length; i++) {
            if (response.get(ValueLayout.JAVA_BYTE, 4 + i) != request[request.length - 1 - i]) {
                throw new AssertionError("response byte " + i + " differs");
            }
        }
    }

    @Test
    void manyConcurrentCallsExhaustCreditsAndBackPressureThenComplete() throws Exception {
        ReverseHandler handler = new ReverseHandler();
        // 4 receive buffers: 3 usable credits against 16 slots and 6 threads, so callers must wait for credits
        RpcServer server = track(RpcServer.start(0, handler, base.withCredits(4).withMaxRequest(1024)
                .withMaxResponse(1100)));
        RpcClient client = track(RpcClient.connect("127.0.0.1", server.port(), base.withSlots(16)
                .withMaxRequest(1024).withMaxResponse(1100)));
        int threads = 6;
        int perThread = 40;
        AtomicInteger ok = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(threads * perThread);
        List<Thread> callers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            callers.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < perThread; i++) {
                    byte[] req = request(thread, i, 8 + (thread * 37 + i * 13) % 1000);
                    try {
                        client.call(MemorySegment.ofArray(req), new ResponseHandler() {
                            @Override
                            public void onResponse(MemorySegment response) {
                                try {
                                    verify(req, response);
                                    ok.incrementAndGet();
                                } catch (Throwable e) {
                                    failure.compareAndSet(null, e);
                                }
                                done.countDown();
                            }

                            @Override
                            public void onError(RpcException error) {
                                failure.compareAndSet(null, error);
                                done.countDown();
                            }
                        });
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                        done.countDown();
                    }
                }
            }));
        }
        assertThat(done.await(600, TimeUnit.SECONDS)).as("all responses within 600 s").isTrue();
        for (Thread t : callers) {
            t.join();
        }
        assertThat(failure.get()).isNull();
        assertThat(ok.get()).isEqualTo(threads * perThread);
        assertThat(handler.requests.get()).isEqualTo(threads * perThread);
        assertThat(client.creditWaits()).as("callers waited for credits (back-pressure)").isPositive();
        assertThat(client.availableCredits()).as("every credit came back").isEqualTo(3);
        client.close();
        awaitDisconnects(1);
        assertThat(disconnects).containsExactly("clean");
        assertThat(server.connections()).isZero();
    }

    @Test
    void oneWayMessagesGetCreditsBackExplicitly() throws Exception {
        ReverseHandler handler = new ReverseHandler();
        RpcServer server = track(RpcServer.start(0, handler, base.withCredits(5)));
        RpcClient client = track(RpcClient.connect("127.0.0.1", server.port(), base.withSlots(8)));
        // 4 usable credits, 100 one-way messages: without explicit CREDIT messages the 5th send would block forever
        for (int i = 0; i < 100; i++) {
            client.send(MemorySegment.ofArray(request(9, i, 64)));
        }
        byte[] req = request(1, 2, 16);
        CountDownLatch answered = new CountDownLatch(1);
        client.call(MemorySegment.ofArray(req), response -> {
            verify(req, response);
            answered.countDown();
        });
        assertThat(answered.await(120, TimeUnit.SECONDS)).isTrue();
        assertThat(handler.messages.get()).isEqualTo(100);
        assertThat(handler.messageBytes.get()).isEqualTo(6400);
        client.close();
        awaitDisconnects(1);
        assertThat(disconnects).containsExactly("clean");
    }

    @Test
    void handlerExceptionReachesTheCallerAndTheConnectionSurvives() throws Exception {
        RpcServer server = track(RpcServer.start(0, new ReverseHandler(), base));
        RpcClient client = track(RpcClient.connect("127.0.0.1", server.port(), base));
        AtomicReference<RpcException> error = new AtomicReference<>();
        CountDownLatch latch = new CountDownLatch(2);
        byte[] bad = ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(0xdead).putInt(1).array();
        client.call(MemorySegment.ofArray(bad), new ResponseHandler() {
            @Override
            public void onResponse(MemorySegment response) {
                latch.countDown();
            }

            @Override
            public void onError(RpcException e) {
                error.set(e);
                latch.countDown();
            }
        });
        byte[] good = request(2, 3, 100);
        client.call(MemorySegment.ofArray(good), response -> {
            verify(good, response);
            latch.countDown();
        });
        assertThat(latch.await(120, TimeUnit.SECONDS)).isTrue();
        assertThat(error.get()).isNotNull();
        assertThat(error.get().isRemote()).isTrue();
        assertThat(error.get()).hasMessageContaining("request 0xdead refused");
    }

    @Test
    void largeResponsesAndTryCallWithoutCredits() throws Exception {
        int size = 60_000;
        RpcHandler big = (request, response) -> {
            for (int i = 0; i < size; i++) {
                response.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + request.get(ValueLayout.JAVA_BYTE, 0)));
            }
            return size;
        };
        RpcServer server = track(RpcServer.start(0, big, base.withCredits(2).withMaxResponse(64 * 1024)));
        RpcClient client = track(RpcClient.connect("127.0.0.1", server.port(), base.withSlots(4)
                .withMaxResponse(64 * 1024)));
        CountDownLatch latch = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        assertThat(client.tryCall(MemorySegment.ofArray(new byte[] {5}), response -> {
            try {
                assertThat(response.byteSize()).isEqualTo(size);
                for (int i = 0; i < size; i++) {
                    if (response.get(ValueLayout.JAVA_BYTE, i) != (byte) (i * 13 + 5)) {
                        throw new AssertionError("byte " + i);
                    }
                }
            } catch (Throwable e) {
                failure.set(e);
            }
            latch.countDown();
        })).isTrue();
        // 2 credits: 1 usable, now in use; tryCall must refuse rather than wait, unless the response already came
        boolean second = client.tryCall(MemorySegment.ofArray(new byte[] {6}), response -> { });
        assertThat(latch.await(120, TimeUnit.SECONDS)).isTrue();
        assertThat(failure.get()).isNull();
        assertThat(second || client.creditWaits() == 0).isTrue();
        assertThatThrownBy(() -> client.call(MemorySegment.ofArray(new byte[5000]), r -> { }))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("exceeds maxRequest 4096");
    }

    @Test
    void callAfterCloseIsRefused() throws Exception {
        RpcServer server = track(RpcServer.start(0, new ReverseHandler(), base));
        RpcClient client = RpcClient.connect("127.0.0.1", server.port(), base);
        client.close();
        client.close();
        assertThatThrownBy(() -> client.call(MemorySegment.ofArray(new byte[1]), r -> { }))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("is closed");
        awaitDisconnects(1);
        assertThat(disconnects).containsExactly("clean");
    }

    @Test
    void clientAgainstANonRpcPortFailsClearly() throws Exception {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            Thread t = Thread.ofVirtual().start(() -> {
                try (java.net.Socket c = s.accept()) {
                    c.getOutputStream().write("SSH-2.0-OpenSSH_9.2\r\n".repeat(5).getBytes());
                    // read what the client sends until it gives up: closing with its handshake unread would reset
                    // the connection, and the client's write could fail with "Broken pipe" before it reads the banner
                    c.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
                } catch (java.io.IOException e) {
                    // the client gave up
                }
            });
            assertThatThrownBy(() -> RpcClient.connect("127.0.0.1", s.getLocalPort(), base))
                    .isInstanceOf(RpcProtocolException.class).hasMessageContaining("not a panverbs RPC endpoint");
            t.join();
        }
    }

    private void awaitDisconnects(int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (disconnects.size() < n && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
    }
}
