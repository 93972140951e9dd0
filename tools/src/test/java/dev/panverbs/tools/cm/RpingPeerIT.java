package dev.panverbs.tools.cm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.panverbs.core.Access;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairCapabilities;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.core.cm.CmEvent;
import dev.panverbs.core.cm.CmEventType;
import dev.panverbs.core.cm.CmId;
import dev.panverbs.core.cm.ConnectionParameters;
import dev.panverbs.core.cm.EventChannel;
import dev.panverbs.core.cm.PortSpace;
import dev.panverbs.testing.RdmaTestDevice;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * rping against a misbehaving rdma_cm peer written with the core API: it connects and then sends nothing, a
 * message of the wrong size, or an advertisement larger than the server's buffer. Each time the Java side must end
 * with exit status 1 and a message saying what was wrong, within its {@code --peer-timeout}, never hang.
 */
class RpingPeerIT {
    private static final AtomicInteger PORTS = new AtomicInteger(7400);
    private static final Duration SETUP = Duration.ofSeconds(60);
    private static String addr;

    @BeforeAll
    static void device() {
        RdmaTestDevice.name();
        addr = System.getenv("PANVERBS_ADDR");
        assumeTrue(addr != null, "rping ITs need PANVERBS_ADDR (testbed/test sets it)");
    }

    /** A raw RC connection on one rdma_cm ID: its QP, CQ and a 64-byte buffer. */
    private record Raw(CmId id, QueuePair qp, CompletionQueue cq, MemoryRegion mr) {
        static Raw on(CmId id, List<AutoCloseable> owned) {
            ProtectionDomain pd = id.context().allocPd();
            owned.add(pd);
            CompletionQueue cq = id.context().createCq(8).build();
            owned.add(cq);
            MemoryRegion mr = pd.allocate(64, EnumSet.of(Access.LOCAL_WRITE));
            owned.add(mr);
            QueuePair qp = id.createQp(pd, cq, cq, new QueuePairCapabilities(4, 4, 1, 1, 0));
            return new Raw(id, qp, cq, mr);
        }

        void send(byte[] message) {
            java.lang.foreign.MemorySegment.copy(message, 0, mr.buffer(), ValueLayout.JAVA_BYTE, 0, message.length);
            qp.sendRequests().send(1, SendFlag.SIGNALED_BIT).sge(mr, 0, message.length).post();
            WorkCompletions wcs = WorkCompletions.allocate(1);
            long deadline = System.nanoTime() + SETUP.toNanos();
            while (cq.poll(wcs) == 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
        }
    }

    /** Runs the Java rping server, connects a raw client that runs {@code script}, returns the server's side. */
    private static RpingIT.Side serverAgainst(Consumer<Raw> script) throws Exception {
        int port = PORTS.getAndIncrement();
        RpingIT.Side server = RpingIT.java(List.of("-s", "-a", addr, "-p", Integer.toString(port), "-S", "100",
                "--peer-timeout", "5"));
        CmListeners.await(port);
        List<AutoCloseable> owned = new java.util.ArrayList<>();
        try (EventChannel ch = EventChannel.create(); CmId id = ch.createId(PortSpace.TCP)) {
            id.resolveAddress(null, new InetSocketAddress(InetAddress.getByName(addr), port), SETUP);
            id.await(CmEventType.ADDR_RESOLVED, SETUP);
            id.resolveRoute(SETUP);
            id.await(CmEventType.ROUTE_RESOLVED, SETUP);
            Raw raw = Raw.on(id, owned);
            id.connect(ConnectionParameters.defaults(), SETUP);
            script.accept(raw);
            server.await(); // the connection stays up until the server gave up
            id.disconnect();
        } finally {
            for (int i = owned.size() - 1; i >= 0; i--) {
                owned.get(i).close();
            }
        }
        return server;
    }

    private static byte[] advertisement(long address, int rkey, int length) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(16).order(ByteOrder.BIG_ENDIAN);
        return b.putLong(address).putInt(rkey).putInt(length).array();
    }

    @Test
    void serverGivesUpOnAClientThatConnectsAndSendsNothing() throws Exception {
        RpingIT.Side server = serverAgainst(raw -> { });
        assertThat(server.await()).as(server.output().call()).isEqualTo(Rping.FAILED);
        assertThat(server.output().call()).contains("no RECV completion for 5 s: the client is connected but sends "
                + "nothing");
    }

    @Test
    void serverRefusesAnAdvertisementLargerThanItsBuffer() throws Exception {
        RpingIT.Side server = serverAgainst(raw -> raw.send(advertisement(raw.mr().address(), raw.mr().rkey(),
                1_000_000)));
        assertThat(server.await()).as(server.output().call()).isEqualTo(Rping.FAILED);
        assertThat(server.output().call()).contains("server: peer advertised 1000000 bytes; this side's buffer is 100");
    }

    @Test
    void serverRefusesANegativeAdvertisedLength() throws Exception {
        RpingIT.Side server = serverAgainst(raw -> raw.send(advertisement(raw.mr().address(), raw.mr().rkey(), -1)));
        assertThat(server.await()).as(server.output().call()).isEqualTo(Rping.FAILED);
        assertThat(server.output().call()).contains("server: peer advertised -1 bytes");
    }

    @Test
    void serverRefusesAMessageOfTheWrongSize() throws Exception {
        RpingIT.Side server = serverAgainst(raw -> raw.send(new byte[8]));
        assertThat(server.await()).as(server.output().call()).isEqualTo(Rping.FAILED);
        assertThat(server.output().call()).contains("Received bogus data, size 8")
                .contains("rping: a receive of 8 bytes; rping sends 16");
    }

    @Test
    void clientGivesUpOnAServerThatAcceptsAndSendsNothing() throws Exception {
        int port = PORTS.getAndIncrement();
        List<AutoCloseable> owned = new java.util.ArrayList<>();
        try (EventChannel ch = EventChannel.create(); CmId listener = ch.createId(PortSpace.TCP)) {
            listener.bindAddress(new InetSocketAddress(InetAddress.getByName(addr), port));
            listener.listen(1);
            RpingIT.Side client = RpingIT.java(List.of("-c", "-a", addr, "-p", Integer.toString(port), "-S", "100",
                    "-C", "1", "--peer-timeout", "5"));
            CmEvent request = listener.await(CmEventType.CONNECT_REQUEST, SETUP);
            Raw.on(request.id(), owned);
            request.id().accept(ConnectionParameters.defaults());
            assertThat(client.await()).as(client.output().call()).isEqualTo(Rping.FAILED);
            assertThat(client.output().call()).contains("no RECV completion for 5 s: the server is connected but "
                    + "sends nothing");
            request.id().close();
        } finally {
            for (int i = owned.size() - 1; i >= 0; i--) {
                owned.get(i).close();
            }
        }
    }
}
