package dev.panverbs.tools.pingpong;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The exchange connection kept open between two panverbs sides, and left alone with a C peer: each side facing
 * C sees exactly the C exchange and watches nothing. Times passed to {@link PeerLink#gone} are synthetic, so no
 * test waits out the check period or the grace.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class PeerLinkTest {
    private static final Duration SHORT = Duration.ofSeconds(5);
    private static final PingPongDestination CLIENT = new PingPongDestination(1, 0x11, 0x222222, new byte[16]);
    private static final PingPongDestination SERVER = new PingPongDestination(2, 0x33, 0x444444, new byte[16]);

    private static CompletableFuture<PingPongExchange.Exchanged> watchedServer(ServerSocket listener) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return PingPongExchange.server(listener, SERVER, r -> { }, SHORT, true);
            } catch (IOException e) {
                throw new CompletionException(e);
            }
        });
    }

    private long clock;

    /** Asks {@code link} as a waiting run would, a second of synthetic time apart; how many looks until gone. */
    private int looksUntilGone(PeerLink link, int maxLooks) throws InterruptedException {
        for (int i = 1; i <= maxLooks; i++) {
            clock += PeerLink.CHECK_NANOS;
            if (link.gone(clock, 0)) {
                return i;
            }
            Thread.sleep(10); // real time for a FIN to arrive
        }
        return -1;
    }

    @Test
    void twoPanverbsSidesKeepTheConnectionAndTheServerNoticesTheClientGo() throws Exception {
        ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        CompletableFuture<PingPongExchange.Exchanged> server = watchedServer(listener);
        PingPongExchange.Exchanged client = PingPongExchange.client("127.0.0.1", listener.getLocalPort(), CLIENT,
                SHORT, true);
        try (PeerLink s = server.get(10, TimeUnit.SECONDS).link()) {
            assertThat(client.remote()).isEqualTo(SERVER);
            assertThat(client.link().armed()).as("the client read the server's marker").isTrue();
            assertThat(looksUntilGone(s, 5)).as("the client is alive").isEqualTo(-1);
            assertThat(s.armed()).as("the server read the client's answer").isTrue();
            client.link().close(); // what a killed client's kernel does
            int looks = looksUntilGone(s, 200);
            assertThat(looks).as("gone only after the grace that follows the close").isGreaterThan(
                    (int) (PeerLink.GRACE_NANOS / PeerLink.CHECK_NANOS));
        }
    }

    @Test
    void theClientNoticesTheServerGo() throws Exception {
        ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        CompletableFuture<PingPongExchange.Exchanged> server = watchedServer(listener);
        try (PeerLink c = PingPongExchange.client("127.0.0.1", listener.getLocalPort(), CLIENT, SHORT, true)
                .link()) {
            server.get(10, TimeUnit.SECONDS).link().close();
            assertThat(looksUntilGone(c, 200)).isPositive();
        }
    }

    @Test
    void aClientFacingACServerSendsNothingAfterDoneAndWatchesNothing() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<byte[]> afterDone = CompletableFuture.supplyAsync(() -> {
                try (Socket c = listener.accept()) { // pp_server_exch_dest: read, answer, read "done", close
                    InputStream in = c.getInputStream();
                    in.readNBytes(52);
                    c.getOutputStream().write(SERVER.encode());
                    in.readNBytes(5);
                    c.shutdownOutput();
                    return in.readAllBytes(); // what the client sent after "done", up to its close
                } catch (IOException e) {
                    throw new CompletionException(e);
                }
            });
            PingPongExchange.Exchanged client = PingPongExchange.client("127.0.0.1", listener.getLocalPort(), CLIENT,
                    SHORT, true);
            assertThat(client.link()).isSameAs(PeerLink.NONE);
            assertThat(afterDone.get(10, TimeUnit.SECONDS)).as("bytes after \"done\"").isEmpty();
        }
    }

    @Test
    void aServerFacingACClientNeverArmsSoItsCloseEndsNothing() throws Exception {
        ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        CompletableFuture<PingPongExchange.Exchanged> server = watchedServer(listener);
        try (Socket c = new Socket("127.0.0.1", listener.getLocalPort())) { // pp_client_exch_dest
            c.getOutputStream().write(CLIENT.encode());
            assertThat(c.getInputStream().readNBytes(52)).isEqualTo(SERVER.encode());
            c.getOutputStream().write(PingPongExchange.DONE);
        }
        try (PeerLink s = server.get(10, TimeUnit.SECONDS).link()) {
            assertThat(looksUntilGone(s, 50)).isEqualTo(-1);
            assertThat(s.armed()).isFalse();
        }
    }

    @Test
    void aServerWhoseClientAnswersSomethingElseNeverArms() throws Exception {
        ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        CompletableFuture<PingPongExchange.Exchanged> server = watchedServer(listener);
        try (Socket c = new Socket("127.0.0.1", listener.getLocalPort())) {
            c.getOutputStream().write(CLIENT.encode());
            c.getInputStream().readNBytes(52);
            c.getOutputStream().write(PingPongExchange.DONE);
            assertThat(c.getInputStream().readNBytes(PeerLink.MARKER.length)).isEqualTo(PeerLink.MARKER);
            c.getOutputStream().write(new byte[] {'P', 'V', 'W', '9'});
        }
        try (PeerLink s = server.get(10, TimeUnit.SECONDS).link()) {
            assertThat(looksUntilGone(s, 50)).isEqualTo(-1);
            assertThat(s.armed()).isFalse();
        }
    }
}
