package dev.panverbs.core.cm;

import static dev.panverbs.testing.Threads.onAnotherThread;
import static dev.panverbs.testing.Threads.startOnAnotherThread;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairCapabilities;
import dev.panverbs.core.VerbsException;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.core.cm.CmResources.Side;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * rdma_cm objects closed from another thread while they are in use, and peers that go away in the middle of the
 * handshake: every thread ends (an {@link IllegalStateException} naming the closed object and the verb, or the CM's
 * own error event), nothing runs on a destroyed {@code rdma_cm_id}, nothing waits longer than its bound.
 */
class CmConcurrentCloseIT {
    private static final Duration BOUND = Duration.ofSeconds(60); // TCG guest: generous, but a hang fails
    private static final Duration FOREVER = Duration.ofSeconds(Long.MAX_VALUE);

    private CmResources res;
    private EventChannel channel;

    @BeforeEach
    void open() throws Exception {
        res = new CmResources();
        channel = res.channel();
    }

    @AfterEach
    void close() {
        if (res != null) {
            res.close();
        }
    }

    private static Throwable outcome(CompletableFuture<Throwable> f) throws Exception {
        return f.get(BOUND.toSeconds(), TimeUnit.SECONDS);
    }

    private static void assertClosedNaming(Throwable t, String object) {
        assertThat(t).isInstanceOf(IllegalStateException.class).hasMessageContaining(object)
                .hasMessageMatching("(?s).*is (being )?closed.*cannot call .*");
    }

    /**
     * A thread reading the ID and calling its verbs in a loop while another closes it: every read before the close
     * sees the ID's own values (none of a freed, reused {@code rdma_cm_id}), and the loop ends with the closed ID named.
     */
    @Test
    void anIdClosedWhileAnotherThreadUsesItEndsThatThreadByName() throws Exception {
        for (int round = 0; round < 20; round++) {
            CmId id = channel.createId(PortSpace.TCP);
            InetSocketAddress at = res.nextAddress();
            id.bindAddress(at);
            Context ctx = id.context();
            int port = id.portNum();
            int tos = round % 2 == 0 ? 0 : 32;
            CountDownLatch running = new CountDownLatch(1);
            CompletableFuture<Throwable> user = startOnAnotherThread(() -> {
                while (true) {
                    assertThat(id.localAddress()).isEqualTo(at);
                    assertThat(id.portNum()).isEqualTo(port);
                    assertThat(id.context()).isSameAs(ctx);
                    id.setTypeOfService(tos);
                    running.countDown();
                }
            });
            assertThat(running.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
            Thread.sleep(round % 5);
            id.close();
            assertClosedNaming(outcome(user), id.toString());
            // IDs made meanwhile reuse the freed memory: a late read of the old one would see their addresses
            channel.createId(PortSpace.TCP).bindAddress(res.nextAddress());
        }
    }

    /** Closing an ID whose resolution is in flight (an address nobody has) ends the thread awaiting it at once. */
    @Test
    void anIdClosedDuringAResolutionEndsItsWaiterAndStopsTheResolution() throws Exception {
        CmId id = channel.createId(PortSpace.TCP);
        byte[] ip = res.local.getAddress();
        ip[3] = (byte) (ip[3] == (byte) 254 ? 253 : 254); // nobody in the bed's /24 has it
        InetSocketAddress nobody = new InetSocketAddress(InetAddress.getByAddress(ip), 7471);
        CompletableFuture<Throwable> waiter = startOnAnotherThread(() -> id.resolve(nobody, Duration.ofSeconds(30)));
        Thread.sleep(200);
        long start = System.nanoTime();
        id.close();
        Throwable t = outcome(waiter);
        long ms = (System.nanoTime() - start) / 1_000_000;
        // either the waiter was woken (closed ID), or the resolution had already ended on its own (NOARP netdev)
        if (!(t instanceof CmEventException) && !(t instanceof CmTimeoutException) && t != null) {
            assertClosedNaming(t, id.toString());
        }
        assertThat(ms).as("ms until the waiter ended").isLessThan(20_000);
        assertThat(channel.poll()).as("no event of the destroyed ID").isNull();
    }

    @Test
    void aChannelClosedWhileAnotherThreadAwaitsItsNextEventEndsThatThread() throws Exception {
        CmId listener = channel.createId(PortSpace.TCP);
        listener.bindAddress(res.nextAddress());
        listener.listen(4);
        CompletableFuture<Throwable> waiter = startOnAnotherThread(() -> channel.await(FOREVER));
        Thread.sleep(300);
        channel.close();
        Throwable t = outcome(waiter);
        assertClosedNaming(t, channel.toString());
        assertThat(t).hasMessageContaining("rdma_get_cm_event");
        assertThat(listener.isClosed()).isTrue();
    }

    /** {@code rdma_get_recv_comp} asleep on the ID's CQ channel when the event channel (and so the CQ) closes. */
    @Test
    void aChannelClosedWhileAThreadWaitsForACompletionOfItsIdsQpEndsThatThread() throws Exception {
        CmId id = channel.createId(PortSpace.TCP);
        id.bindAddress(res.nextAddress());
        Context ctx = id.context();
        ProtectionDomain pd = ctx.allocPd();
        CompletionQueue send = ctx.createCq(8).channel(ctx.createCompChannel()).build();
        CompletionQueue recv = ctx.createCq(8).channel(ctx.createCompChannel()).build();
        QueuePair qp = id.createQp(pd, send, recv, new QueuePairCapabilities(4, 4, 1, 1, 0));
        WorkCompletions wcs = WorkCompletions.allocate(1);
        CompletableFuture<Throwable> waiter = startOnAnotherThread(() -> {
            int n = CmVerbs.getRecvComp(id, wcs, Duration.ofSeconds(120)); // nothing is ever received
            throw new AssertionError("getRecvComp returned " + n + " instead of ending with the close");
        });
        Thread.sleep(300);
        channel.close();
        assertThat(outcome(waiter)).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(qp.isClosed()).isTrue();
        assertThat(recv.isClosed()).isTrue();
    }

    /** The PD cascade (closing the ID's QP) and the ID's own close racing on two threads: both end, nothing leaks. */
    @Test
    void theIdAndThePdOfItsQpClosedTogetherOnTwoThreads() throws Exception {
        for (int round = 0; round < 10; round++) {
            CmId id = channel.createId(PortSpace.TCP);
            id.bindAddress(res.nextAddress());
            Side side = Side.on(id, 4);
            CountDownLatch go = new CountDownLatch(1);
            CompletableFuture<Throwable> pdCloser = startOnAnotherThread(() -> {
                awaitQuietly(go);
                side.pd().close();
            });
            CompletableFuture<Throwable> idCloser = startOnAnotherThread(() -> {
                awaitQuietly(go);
                id.close();
            });
            go.countDown();
            assertThat(outcome(pdCloser)).isNull();
            assertThat(outcome(idCloser)).isNull();
            assertThat(side.qp().isClosed()).isTrue();
            assertThat(id.isClosed()).isTrue();
            assertThat(id.queuePair()).isEmpty();
            id.close(); // idempotent
        }
    }

    @Test
    void aClosedIdsQpAndRegionsRefuseByNameAndAWrongThreadSegmentIsRefused() {
        CmId id = channel.createId(PortSpace.TCP);
        id.bindAddress(res.nextAddress());
        Side side = Side.on(id, 4);
        try (Arena confined = Arena.ofConfined()) {
            MemorySegment mine = confined.allocate(4096, 4096);
            assertThat(onAnotherThread(() -> CmVerbs.regMsgs(id, mine))).isInstanceOf(WrongThreadException.class)
                    .hasMessageContaining("ibv_reg_mr").hasMessageContaining("owner thread");
        }
        id.close();
        assertThat(side.qp().isClosed()).isTrue();
        assertThatThrownBy(() -> CmVerbs.postSend(id, 1, side.mr(), 0, 8, 0))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("rdma_post_send")
                .hasMessageContaining("has no QP");
        assertThatThrownBy(() -> id.createQp(side.pd(), side.cq(), side.cq(), new QueuePairCapabilities(4, 4, 1, 1, 0)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("rdma_create_qp");
        assertThatThrownBy(() -> side.qp().sendRequests().send(1, 0).sge(side.mr(), 0, 8).post())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    /**
     * DMA safety through the ID: a region named by a receive posted on the ID's QP cannot be deregistered while the
     * QP lives; the ID closed on another thread destroys the QP first, after which the region closes. The adopted
     * context closed by hand takes the ID's QP with it, and the ID closes cleanly after.
     */
    @Test
    void aRegionNamedByAPostedReceiveOfTheIdsQpClosesOnlyOnceTheIdHasClosedIt() throws Exception {
        CmId id = channel.createId(PortSpace.TCP);
        id.bindAddress(res.nextAddress());
        Side side = Side.on(id, 4);
        CmVerbs.postRecv(id, 1, side.mr(), 0, 64);
        assertThatThrownBy(side.mr()::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("outstanding");
        assertThat(side.mr().isOpen()).isTrue();
        assertThat(onAnotherThread(id::close)).isNull();
        assertThat(side.qp().isClosed()).isTrue();
        side.mr().close();
        assertThat(side.mr().isOpen()).isFalse();

        CmId other = channel.createId(PortSpace.TCP);
        other.bindAddress(res.nextAddress());
        Side second = Side.on(other, 4);
        CmVerbs.postRecv(other, 2, second.mr(), 0, 64);
        other.context().close(); // non-owning: its children (the QP first), not librdmacm's device
        assertThat(second.qp().isClosed()).isTrue();
        assertThat(second.mr().isOpen()).isFalse();
        assertThat(other.queuePair()).isEmpty();
        assertThatThrownBy(() -> other.context().allocPd()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        other.close();
        assertThat(other.isClosed()).isTrue();
    }

    /** The passive side destroys the request's ID without answering: the active connect ends with the CM's error. */
    @Test
    void aPassiveSideThatVanishesMidHandshakeEndsTheActiveConnect() throws Exception {
        Handshake h = requestArrived();
        CmId active = h.active();
        CmId passive = h.passive();
        passive.close();
        assertThatThrownBy(() -> passive.accept(ConnectionParameters.defaults()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("rdma_accept");
        long start = System.nanoTime();
        Throwable t = onAnotherThread(() -> active.await(CmEventType.ESTABLISHED, Duration.ofSeconds(20)));
        System.out.printf("rdma_cm: passive vanished -> %s after %d ms%n", t, (System.nanoTime() - start) / 1_000_000);
        assertThat(t).isInstanceOfAny(CmEventException.class, CmTimeoutException.class);
        active.close();
    }

    /** The active side destroys its ID after its request arrived: the passive accept ends, by error or bound. */
    @Test
    void anActiveSideThatVanishesMidHandshakeEndsThePassiveAccept() throws Exception {
        Handshake h = requestArrived();
        CmId active = h.active();
        CmId passive = h.passive();
        active.close();
        long start = System.nanoTime();
        Throwable t = onAnotherThread(() -> {
            Side.on(passive, 4); // rdma_create_qp: the QP's move to INIT may already find the connection gone
            passive.accept(ConnectionParameters.defaults());
            passive.await(CmEventType.ESTABLISHED, Duration.ofSeconds(20));
        });
        System.out.printf("rdma_cm: active vanished -> %s after %d ms%n", t, (System.nanoTime() - start) / 1_000_000);
        assertThat(t).isInstanceOf(VerbsException.class); // REJECTED/CONNECT_ERROR, EINVAL, or the bound
        if (t.getMessage().startsWith("rdma_create_qp")) {
            assertThat(t).hasMessageContaining("EINVAL").hasMessageContaining("connection is gone");
        }
        passive.close();
        assertThat(passive.queuePair()).isEmpty();
    }

    /** An active ID (with a QP) whose connect request the passive side has taken but not answered. */
    private record Handshake(CmId active, CmId passive) {}

    private Handshake requestArrived() {
        CmId listener = channel.createId(PortSpace.TCP);
        InetSocketAddress at = res.nextAddress();
        listener.bindAddress(at);
        listener.listen(4);
        CmId active = res.channel().createId(PortSpace.TCP);
        active.resolve(at, BOUND);
        Side.on(active, 4);
        active.connect(ConnectionParameters.defaults());
        return new Handshake(active, listener.await(CmEventType.CONNECT_REQUEST, BOUND).id());
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
