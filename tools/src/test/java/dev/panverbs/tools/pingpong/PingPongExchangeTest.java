package dev.panverbs.tools.pingpong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The TCP exchange against itself and against scripted peers that break the protocol; none may hang. */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class PingPongExchangeTest {
    private static final Duration SHORT = Duration.ofMillis(500);
    private static final PingPongDestination CLIENT = new PingPongDestination(1, 0x11, 0x222222, new byte[16]);
    private static final PingPongDestination SERVER = new PingPongDestination(2, 0x33, 0x444444, gid());

    private final List<AutoCloseable> closeables = new ArrayList<>();

    private static byte[] gid() {
        byte[] g = new byte[16];
        g[0] = (byte) 0xfe;
        g[1] = (byte) 0x80;
        g[15] = 7;
        return g;
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
    }

    private ServerSocket listen() throws IOException {
        ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        closeables.add(s);
        return s;
    }

    /** A scripted peer server: accepts one connection and runs {@code script} on it. */
    private int fakeServer(Script script) throws IOException {
        ServerSocket s = listen();
        Thread t = Thread.ofVirtual().start(() -> {
            try (Socket c = s.accept()) {
                script.run(c);
            } catch (IOException | InterruptedException e) {
                // the peer under test gave up, which is what these tests provoke
            }
        });
        closeables.add(t::join);
        return s.getLocalPort();
    }

    private interface Script {
        void run(Socket s) throws IOException, InterruptedException;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void clientAndServerExchangeAddressesAndConnectBeforeAnswering() throws Exception {
        ServerSocket listener = listen();
        List<String> order = new ArrayList<>();
        CompletableFuture<PingPongDestination> server = CompletableFuture.supplyAsync(() -> {
            try {
                return PingPongExchange.server(listener, SERVER, remote -> order.add("connect " + remote.qpn()), SHORT);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        PingPongDestination seenByClient = PingPongExchange.client("localhost", listener.getLocalPort(), CLIENT, SHORT);
        assertThat(seenByClient).isEqualTo(SERVER);
        assertThat(server.get(10, TimeUnit.SECONDS)).isEqualTo(CLIENT);
        assertThat(order).containsExactly("connect " + 0x11);
    }

    @Test
    void clientSendsExactlyTheCMessageThenDone() throws Exception {
        CompletableFuture<byte[]> received = new CompletableFuture<>();
        int port = fakeServer(s -> {
            InputStream in = s.getInputStream();
            byte[] msg = in.readNBytes(52);
            s.getOutputStream().write(SERVER.encode());
            byte[] done = in.readNBytes(6); // 5 bytes, then EOF
            received.complete(concat(msg, done));
        });
        PingPongExchange.client("127.0.0.1", port, CLIENT, SHORT);
        byte[] all = received.get(10, TimeUnit.SECONDS);
        assertThat(new String(all, StandardCharsets.US_ASCII))
                .isEqualTo("0001:000011:222222:" + "0".repeat(32) + "\0done\0");
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] r = new byte[a.length + b.length];
        System.arraycopy(a, 0, r, 0, a.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    @Test
    void clientNoServer() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        assertThatThrownBy(() -> PingPongExchange.client("127.0.0.1", port, CLIENT, SHORT))
                .isInstanceOf(IOException.class).hasMessageStartingWith("Couldn't connect to 127.0.0.1:" + port);
    }

    @Test
    void clientUnknownHost() {
        assertThatThrownBy(() -> PingPongExchange.client("no-such-host.invalid", 18515, CLIENT, SHORT))
                .isInstanceOf(IOException.class).hasMessageContaining("Couldn't resolve no-such-host.invalid");
    }

    @Test
    void clientServerClosesAtOnce() throws Exception {
        int port = fakeServer(s -> s.getInputStream().readNBytes(52));
        assertThatThrownBy(() -> PingPongExchange.client("127.0.0.1", port, CLIENT, SHORT))
                .isInstanceOf(PingPongProtocolException.class)
                .hasMessage("the peer closed the connection after 0 of 52 bytes of the server's address");
    }

    @Test
    void clientServerSendsShortMessageAndCloses() throws Exception {
        int port = fakeServer(s -> {
            s.getInputStream().readNBytes(52);
            s.getOutputStream().write(ascii("0002:000033"));
        });
        assertThatThrownBy(() -> PingPongExchange.client("127.0.0.1", port, CLIENT, SHORT))
                .isInstanceOf(PingPongProtocolException.class)
                .hasMessage("the peer closed the connection after 11 of 52 bytes of the server's address"
                        + " (\"0002:000033\")");
    }

    @Test
    void clientServerGoesSilent() throws Exception {
        CompletableFuture<Void> release = new CompletableFuture<>();
        int port = fakeServer(s -> {
            s.getOutputStream().write(ascii("0002:"));
            release.join();
        });
        try {
            assertThatThrownBy(() -> PingPongExchange.client("127.0.0.1", port, CLIENT, SHORT))
                    .isInstanceOf(PingPongProtocolException.class)
                    .hasMessage("timed out after 500 ms waiting for the server's address (5 of 52 bytes received:"
                            + " \"0002:\")");
        } finally {
            release.complete(null);
        }
    }

    /** The timeout bounds the whole message: a peer sending a byte every 100 ms cannot stretch it to 52 reads. */
    @Test
    void clientServerDribblesSlowerThanTheDeadline() throws Exception {
        CompletableFuture<Void> release = new CompletableFuture<>();
        int port = fakeServer(s -> {
            s.getInputStream().readNBytes(52);
            for (byte b : SERVER.encode()) {
                if (release.isDone()) {
                    return;
                }
                s.getOutputStream().write(b);
                Thread.sleep(100);
            }
            release.join();
        });
        try {
            assertThatThrownBy(() -> PingPongExchange.client("127.0.0.1", port, CLIENT, SHORT))
                    .isInstanceOf(PingPongProtocolException.class)
                    .hasMessageStartingWith("timed out after 500 ms waiting for the server's address (")
                    .hasMessageContaining(" of 52 bytes received: \"0002");
        } finally {
            release.complete(null);
        }
    }

    @Test
    void serverClientDribblesSlowerThanTheDeadline() throws Exception {
        ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        CompletableFuture<PingPongDestination> server = CompletableFuture.supplyAsync(() -> {
            try {
                return PingPongExchange.server(listener, SERVER, remote -> { }, SHORT);
            } catch (IOException e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        });
        try (Socket c = new Socket(InetAddress.getLoopbackAddress(), listener.getLocalPort())) {
            for (byte b : CLIENT.encode()) {
                if (server.isDone()) {
                    break;
                }
                c.getOutputStream().write(b);
                Thread.sleep(100);
            }
            assertThatThrownBy(server::join).hasCauseInstanceOf(PingPongProtocolException.class)
                    .hasMessageContaining("timed out after 500 ms waiting for the client's address (");
        }
    }

    @Test
    void clientServerSendsGarbage() throws Exception {
        int port = fakeServer(s -> {
            s.getOutputStream().write(ascii("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n" + "x".repeat(40)));
            s.getInputStream().readNBytes(52);
        });
        assertThatThrownBy(() -> PingPongExchange.client("127.0.0.1", port, CLIENT, SHORT))
                .isInstanceOf(PingPongProtocolException.class)
                .hasMessageStartingWith("malformed address message from the peer")
                .hasMessageContaining("SSH-2.0-OpenSSH");
    }

    @Test
    void serverClientSendsGarbage() throws Exception {
        ServerSocket listener = listen();
        CompletableFuture<Throwable> failure = serverFailure(listener);
        try (Socket c = new Socket("127.0.0.1", listener.getLocalPort())) {
            c.getOutputStream().write(ascii("GET / HTTP/1.0\r\n\r\n" + "y".repeat(34)));
            assertThat(failure.get(10, TimeUnit.SECONDS)).isInstanceOf(PingPongProtocolException.class)
                    .hasMessageStartingWith("malformed address message from the peer");
            assertThat(c.getInputStream().read()).as("the server answers nothing").isEqualTo(-1);
        }
    }

    @Test
    void serverClientClosesWithoutSendingDone() throws Exception {
        ServerSocket listener = listen();
        CompletableFuture<Throwable> failure = serverFailure(listener);
        try (Socket c = new Socket("127.0.0.1", listener.getLocalPort())) {
            c.getOutputStream().write(CLIENT.encode());
            assertThat(c.getInputStream().readNBytes(52)).isEqualTo(SERVER.encode());
        }
        assertThat(failure.get(10, TimeUnit.SECONDS)).isInstanceOf(PingPongProtocolException.class)
                .hasMessage("the peer closed the connection after 0 of 5 bytes of \"done\"");
    }

    @Test
    void serverClientSendsWrongDone() throws Exception {
        ServerSocket listener = listen();
        CompletableFuture<Throwable> failure = serverFailure(listener);
        try (Socket c = new Socket("127.0.0.1", listener.getLocalPort())) {
            c.getOutputStream().write(CLIENT.encode());
            c.getInputStream().readNBytes(52);
            c.getOutputStream().write(ascii("nope!"));
            assertThat(failure.get(10, TimeUnit.SECONDS)).isInstanceOf(PingPongProtocolException.class)
                    .hasMessage("expected \"done\\0\" from the client after the addresses, got \"nope!\"");
        }
    }

    @Test
    void serverClientGoesSilent() throws Exception {
        ServerSocket listener = listen();
        CompletableFuture<Throwable> failure = serverFailure(listener);
        try (Socket c = new Socket("127.0.0.1", listener.getLocalPort())) {
            assertThat(failure.get(10, TimeUnit.SECONDS)).isInstanceOf(PingPongProtocolException.class)
                    .hasMessage("timed out after 500 ms waiting for the client's address (0 of 52 bytes received)");
            assertThat(c.isConnected()).isTrue();
        }
    }

    @Test
    void serverConnectFailureAnswersNothing() throws Exception {
        ServerSocket listener = listen();
        CompletableFuture<Throwable> failure = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                PingPongExchange.server(listener, SERVER, remote -> {
                    throw new IllegalStateException("Failed to modify QP to RTR");
                }, SHORT);
                failure.complete(null);
            } catch (Throwable t) {
                failure.complete(t);
            }
        });
        try (Socket c = new Socket("127.0.0.1", listener.getLocalPort())) {
            c.getOutputStream().write(CLIENT.encode());
            assertThat(c.getInputStream().read()).isEqualTo(-1);
        }
        assertThat(failure.get(10, TimeUnit.SECONDS)).hasMessage("Failed to modify QP to RTR");
    }

    @Test
    void serverPortInUse() throws Exception {
        ServerSocket busy = new ServerSocket();
        closeables.add(busy);
        busy.bind(new InetSocketAddress(0));
        assertThatThrownBy(() -> PingPongExchange.server(busy.getLocalPort(), SERVER, r -> { }, SHORT))
                .isInstanceOf(IOException.class).hasMessageStartingWith("Couldn't listen to port " + busy.getLocalPort());
    }

    private static CompletableFuture<Throwable> serverFailure(ServerSocket listener) {
        CompletableFuture<Throwable> failure = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                PingPongExchange.server(listener, SERVER, r -> { }, SHORT);
                failure.complete(null);
            } catch (Throwable t) {
                failure.complete(t);
            }
        });
        return failure;
    }
}
