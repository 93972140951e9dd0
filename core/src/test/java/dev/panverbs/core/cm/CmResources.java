package dev.panverbs.core.cm;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.panverbs.core.Access;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairCapabilities;
import dev.panverbs.testing.RdmaTestDevice;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.EnumSet;
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

    /** One side's verbs objects, made through an ID's adopted context; the channel's close takes them all. */
    record Side(ProtectionDomain pd, CompletionQueue cq, QueuePair qp, MemoryRegion mr) {
        /**
         * A PD, a CQ of {@code 2 * depth} entries, the ID's own QP ({@code rdma_create_qp}) with {@code depth} send
         * and receive WRs, and a 4 KiB region with local write access.
         */
        static Side on(CmId id, int depth) {
            Context ctx = id.context();
            ProtectionDomain pd = ctx.allocPd();
            CompletionQueue cq = ctx.createCq(2 * depth).build();
            QueuePair qp = id.createQp(pd, cq, cq, new QueuePairCapabilities(depth, depth, 1, 1, 0));
            return new Side(pd, cq, qp, pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE)));
        }
    }

    /** Closes the channels, last first (each closes its IDs and what was made through their contexts). */
    @Override
    public void close() {
        for (int k = channels.size() - 1; k >= 0; k--) {
            channels.get(k).close();
        }
    }
}
