package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.testing.RdmaTestDevice;
import java.io.IOException;
import java.net.NetworkInterface;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Async events from a real port state change: the netdev under the RoCE port is taken down and up again
 * with {@code ip link} (in the guest, rxe0 sits on the dummy netdev d0). Needs root and an Ethernet port.
 */
class AsyncEventIT {

    @Test
    void portDownAndUpRaisePortErrAndPortActive() throws Exception {
        try (Context ctx = Device.open(RdmaTestDevice.name())) {
            assertThat(ctx.getAsyncEvent(Duration.ZERO)).as("no stale event").isEmpty();
            Assumptions.assumeTrue(ctx.queryPort(1).linkLayer() == LinkLayer.ETHERNET,
                    "port state is changed through the netdev of a RoCE port");
            int ifindex = ctx.queryGidTable().stream().filter(e -> e.portNum() == 1 && e.ndevIfindex() > 0)
                    .findFirst().orElseThrow().ndevIfindex();
            String netdev = NetworkInterface.getByIndex(ifindex).getName();
            try {
                ip("link", "set", netdev, "down");
                AsyncEvent down = awaitEvent(ctx, AsyncEventType.PORT_ERR);
                assertThat(down.portNum()).isEqualTo(1);
                assertThat(down.element()).isNull();
                assertThat(down.toString()).isEqualTo("PORT_ERR on port 1");
            } finally {
                ip("link", "set", netdev, "up");
            }
            AsyncEvent up = awaitEvent(ctx, AsyncEventType.PORT_ACTIVE);
            assertThat(up.portNum()).isEqualTo(1);
            assertThat(ctx.queryPort(1).state()).isEqualTo(PortState.ACTIVE);
        }
    }

    @Test
    void asyncWaitIsInterruptedByClose() throws Exception {
        Context ctx = Device.open(RdmaTestDevice.name());
        Thread closer = Thread.ofPlatform().start(() -> {
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ctx.close();
        });
        long start = System.nanoTime();
        try {
            ctx.getAsyncEvent(Duration.ofSeconds(60));
            throw new AssertionError("a closed context must not return an event");
        } catch (IllegalStateException e) {
            assertThat(e).hasMessageContaining("cannot call ibv_get_async_event");
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
        closer.join();
    }

    private static AsyncEvent awaitEvent(Context ctx, AsyncEventType type) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            Optional<AsyncEvent> e = ctx.getAsyncEvent(Duration.ofSeconds(5));
            if (e.isPresent() && e.get().type() == type) {
                return e.get();
            }
        }
        throw new AssertionError("no " + type + " event within 60 s");
    }

    private static void ip(String... args) throws IOException, InterruptedException {
        String[] cmd = new String[args.length + 1];
        cmd[0] = "ip";
        System.arraycopy(args, 0, cmd, 1, args.length);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        int rc = p.waitFor();
        Assumptions.assumeTrue(rc == 0 || !out.contains("Operation not permitted"),
                "changing the link needs root (CAP_NET_ADMIN): " + out);
        assertThat(rc).as(String.join(" ", cmd) + ": " + out).isZero();
    }
}
