package dev.panverbs.core.cm;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.panverbs.testing.RdmaTestDevice;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The fixture of the rdma_cm ITs (as {@code CoreResources} is the verbs ITs'): the device policy (skip loudly, or
 * fail in the bed), the IP address of the device's netdev ({@code PANVERBS_ADDR}, set by testbed/test; the IT is
 * skipped without it), event channels that one {@link #close()} in {@code @AfterEach} closes with the IDs, QPs and
 * regions made through them, and a fresh port per {@link #nextAddress()} across every IT of the JVM.
 */
final class CmResources implements AutoCloseable {
    private static final AtomicInteger PORT = new AtomicInteger(20_000 + (int) (ProcessHandle.current().pid() % 10_000));

    final InetAddress local;
    private final List<EventChannel> channels = new ArrayList<>();

    CmResources() throws UnknownHostException {
        RdmaTestDevice.name();
        String addr = System.getenv("PANVERBS_ADDR");
        assumeTrue(addr != null, "rdma_cm ITs need PANVERBS_ADDR, the IP address of the device's netdev "
                + "(testbed/test sets it)");
        local = InetAddress.getByName(addr);
    }

    /** A new event channel, closed by {@link #close()}. */
    EventChannel channel() {
        EventChannel c = EventChannel.create();
        channels.add(c);
        return c;
    }

    /** The device's address with a port no other rdma_cm IT of this JVM uses. */
    InetSocketAddress nextAddress() {
        return new InetSocketAddress(local, PORT.incrementAndGet());
    }

    /** Closes the channels, last first (each closes its IDs and what was made through their contexts). */
    @Override
    public void close() {
        for (int k = channels.size() - 1; k >= 0; k--) {
            channels.get(k).close();
        }
    }
}
