package dev.panverbs.tools.cm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * udaddy against rdma-core's udaddy on one device (rxe0 in the bed, over its own IP address), both directions: the
 * SIDR resolution, the client's datagrams (SEND with its QP number as immediate) and the server's replies through
 * the address handle it builds from the first receive ({@code ibv_create_ah_from_wc}). Both sides must print every
 * step of udaddy's run up to "data transfers complete" and exit 0; the Java side also checks each receive's length
 * and immediate data. With one connection and defaults, and with two connections, 512-byte messages and a TOS.
 */
class UdaddyIT {

    private static String addr;

    @TempDir
    Path dir;

    @BeforeAll
    static void device() {
        addr = RpingIT.deviceAddress("udaddy");
    }

    static RpingIT.Side java(List<String> args) {
        return RpingIT.java("udaddy", Udaddy::execute, args);
    }

    static RpingIT.Side c(List<String> args, Path log) throws IOException {
        return RpingIT.c("udaddy", args, log);
    }

    static final List<String> SERVER_LINES = List.of("udaddy: starting server", "receiving data transfers",
            "sending replies", "data transfers complete", "test complete", "return status 0");
    static final List<String> CLIENT_LINES = List.of("udaddy: starting client", "udaddy: connecting",
            "initiating data transfers", "receiving data transfers", "data transfers complete", "test complete",
            "return status 0");

    static void assertExchanged(RpingIT.Side server, RpingIT.Side client) throws Exception {
        int c = client.await();
        String clientOut = client.output().call();
        assertThat(c).as("%s exit; output:%n%s", client.name(), clientOut).isZero();
        int s = server.await();
        String serverOut = server.output().call();
        assertThat(s).as("%s exit; output:%n%s", server.name(), serverOut).isZero();
        assertThat(clientOut.lines().toList()).as(client.name()).containsSubsequence(CLIENT_LINES);
        assertThat(serverOut.lines().toList()).as(server.name()).containsSubsequence(SERVER_LINES);
    }

    private static void settle(int port) throws InterruptedException {
        CmListeners.await(port); // the server must listen before the client connects (no retry in the tools)
    }

    private static List<String> with(List<String> base, String... more) {
        List<String> all = new ArrayList<>(base);
        all.addAll(List.of(more));
        return all;
    }

    @Test
    void javaClientAgainstRdmaCoreServer() throws Exception {
        RpingIT.Side server = c(List.of(), dir.resolve("c-server.log"));
        settle(Udaddy.PORT);
        assertExchanged(server, java(List.of("-s", addr)));
    }

    @Test
    void rdmaCoreClientAgainstJavaServer() throws Exception {
        RpingIT.Side server = java(List.of());
        settle(Udaddy.PORT);
        assertExchanged(server, c(List.of("-s", addr), dir.resolve("c-client.log")));
    }

    @Test
    void twoConnectionsBiggerMessagesAndATosJavaClient() throws Exception {
        List<String> opts = List.of("-c", "2", "-C", "5", "-S", "512");
        RpingIT.Side server = c(opts, dir.resolve("c-server.log"));
        settle(Udaddy.PORT);
        assertExchanged(server, java(with(opts, "-s", addr, "-t", "0x20", "-b", addr)));
    }

    @Test
    void twoConnectionsRdmaCoreClientAgainstJavaServer() throws Exception {
        List<String> opts = List.of("-c", "2", "-C", "5", "-S", "512");
        RpingIT.Side server = java(opts);
        settle(Udaddy.PORT);
        assertExchanged(server, c(with(opts, "-s", addr, "-t", "0x20"), dir.resolve("c-client.log")));
    }

    @Test
    void javaAgainstJava() throws Exception {
        RpingIT.Side server = java(List.of("-C", "3"));
        settle(Udaddy.PORT);
        assertExchanged(server, java(List.of("-s", addr, "-C", "3")));
    }

    @Test
    void noServerEndsWithTheCmsErrorEventNotAHang() throws Exception {
        RpingIT.Side client = java(List.of("-s", addr));
        int status = client.await();
        String output = client.output().call();
        assertThat(output).containsPattern("udaddy: event: RDMA_CM_EVENT_(UNREACHABLE|REJECTED), error: -?\\d+")
                .contains("test complete").doesNotContain("return status 0");
        // udaddy's main returns the event's status: the shell sees its low byte, as with rdma-core's udaddy
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("return status (-?\\d+)").matcher(output);
        assertThat(m.find()).as(output).isTrue();
        assertThat(status).as(output).isEqualTo(Integer.parseInt(m.group(1)) & 0xFF).isNotZero();
    }
}
