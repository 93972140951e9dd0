package dev.panverbs.core.cm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.QueuePairState;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletionStatus;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.core.cm.CmResources.Side;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * rdma_cm on a real device (rxe in the bed), both sides in this JVM on two event channels, driven from one thread
 * (every rdma_cm step is asynchronous): connect/accept with private data both ways and a SEND over the connection;
 * a rejection with private data; a port nobody listens on; a listener that never answers (the caller's timeout,
 * then a prompt close); a disconnect while receives are outstanding (flushed, DISCONNECTED on both sides); closing
 * a channel that still holds a retrieved but unaccepted connection request and queued events (no rdma_destroy_id
 * hang); the QP owned by its ID and the context adopted without ownership.
 */
class CmConnectionIT {

    private static final Duration STEP = Duration.ofSeconds(20); // TCG guest: generous, bounded

    private CmResources res;
    private EventChannel server;
    private EventChannel client;

    @BeforeEach
    void channels() throws Exception {
        res = new CmResources();
        server = res.channel();
        client = res.channel();
    }

    @AfterEach
    void close() {
        if (res != null) {
            res.close(); // the client's channel first, then the server's
        }
    }

    private static Side side(CmId id) {
        return Side.on(id, 8);
    }

    private InetSocketAddress listen(CmId listener) {
        InetSocketAddress at = res.nextAddress();
        listener.bindAddress(at);
        listener.listen(4);
        return at;
    }

    @Test
    void connectAcceptWithPrivateDataSendAndDisconnect() {
        CmId listener = server.createId(PortSpace.TCP);
        InetSocketAddress at = listen(listener);
        CmId active = client.createId(PortSpace.TCP);
        active.resolve(at, STEP);
        assertThat(active.peerAddress()).isEqualTo(at);
        Side a = side(active);
        assertThat(a.qp().state()).isEqualTo(QueuePairState.INIT); // rdma_create_qp moved it
        assertThat(active.context().toString()).contains("not owned");

        byte[] hello = "hello from the client".getBytes(StandardCharsets.US_ASCII);
        active.connect(ConnectionParameters.defaults().withPrivateData(hello));
        CmEvent request = listener.await(CmEventType.CONNECT_REQUEST, STEP);
        assertThat(request.listenId()).isSameAs(listener);
        assertThat(Arrays.copyOf(request.privateData(), hello.length)).isEqualTo(hello);
        CmId passive = request.id();
        assertThat(passive.peerAddress().getAddress()).isEqualTo(res.local);
        Side p = side(passive);
        p.qp().receiveRequests().recv(1).sge(p.mr(), 0, 4096).post();
        byte[] welcome = "welcome".getBytes(StandardCharsets.US_ASCII);
        passive.accept(ConnectionParameters.defaults().withPrivateData(welcome));

        CmEvent established = active.await(CmEventType.ESTABLISHED, STEP);
        assertThat(Arrays.copyOf(established.privateData(), welcome.length)).isEqualTo(welcome);
        passive.await(CmEventType.ESTABLISHED, STEP);
        assertThat(a.qp().state()).isEqualTo(QueuePairState.RTS);

        a.mr().buffer().fill((byte) 0x5a);
        a.qp().sendRequests().send(2, SendFlag.SIGNALED_BIT).sge(a.mr(), 0, 64).post();
        WorkCompletion recv = pollOne(p.cq());
        assertThat(recv.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(recv.byteLen()).isEqualTo(64);
        assertThat(p.mr().buffer().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 63)).isEqualTo((byte) 0x5a);
        assertThat(pollOne(a.cq()).status()).isEqualTo(WorkCompletionStatus.SUCCESS);

        active.disconnect(); // DREQ; the active side's DISCONNECTED follows the peer's DREP
        passive.await(CmEventType.DISCONNECTED, STEP);
        passive.disconnect(); // the DREP, as rping's server does on DISCONNECTED
        active.await(CmEventType.DISCONNECTED, STEP);

        active.close(); // the ID owns its QP: destroyed first; the adopted context's other children stay
        assertThat(a.qp().isClosed()).isTrue();
        assertThat(a.pd().isClosed()).isFalse();
        client.close(); // the channel closes the adopted context's children, never the device
        assertThat(a.pd().isClosed()).isTrue();
        assertThat(a.mr().isClosed()).isTrue();
    }

    @Test
    void aRejectionReachesTheClientWithItsPrivateData() {
        CmId listener = server.createId(PortSpace.TCP);
        InetSocketAddress at = listen(listener);
        CmId active = client.createId(PortSpace.TCP);
        active.resolve(at, STEP);
        side(active);
        active.connect(ConnectionParameters.defaults());
        CmId passive = listener.await(CmEventType.CONNECT_REQUEST, STEP).id();
        byte[] no = "go away".getBytes(StandardCharsets.US_ASCII);
        passive.reject(no);
        assertThatThrownBy(() -> active.await(CmEventType.ESTABLISHED, STEP))
                .isInstanceOfSatisfying(ConnectionRejectedException.class, e -> {
                    assertThat(e.reason()).isEqualTo(ConnectionRejectedException.REASON_CONSUMER);
                    assertThat(Arrays.copyOf(e.privateData(), no.length)).isEqualTo(no);
                })
                .hasMessageContaining("rejected");
        passive.close();
    }

    @Test
    void aPortNobodyListensOnIsRejectedByThePeersCm() {
        CmId active = client.createId(PortSpace.TCP);
        active.resolve(res.nextAddress(), STEP);
        side(active);
        assertThatThrownBy(() -> active.connect(ConnectionParameters.defaults(), STEP))
                .isInstanceOfSatisfying(ConnectionRejectedException.class,
                        e -> assertThat(e.reason()).isEqualTo(ConnectionRejectedException.REASON_NO_LISTENER));
    }

    @Test
    void aPeerThatNeverAnswersEndsInTheCallersTimeoutAndTheIdClosesPromptly() {
        CmId listener = server.createId(PortSpace.TCP);
        InetSocketAddress at = listen(listener);
        CmId active = client.createId(PortSpace.TCP);
        active.resolve(at, STEP);
        side(active);
        assertThatThrownBy(() -> active.connect(ConnectionParameters.defaults(), Duration.ofSeconds(3)))
                .isInstanceOfSatisfying(CmTimeoutException.class,
                        e -> assertThat(e.expected()).isEqualTo(CmEventType.ESTABLISHED));
        long start = System.nanoTime();
        active.close(); // the CM stops retrying; rdma_destroy_id returns
        client.close();
        assertThat(active.isClosed()).isTrue();
        // the server retrieved the request (copied and acked) but never answered: its channel closes the new ID
        CmEvent request = server.await(Duration.ofSeconds(5));
        assertThat(request.type()).isEqualTo(CmEventType.CONNECT_REQUEST);
        server.close();
        assertThat(request.id().isClosed()).isTrue();
        assertThat(listener.isClosed()).isTrue();
        System.out.printf("rdma_cm: abandoned connect torn down in %d ms%n", (System.nanoTime() - start) / 1_000_000);
    }

    @Test
    void anUnreachableAddressFailsWithTheStepsOwnTimeouts() throws Exception {
        byte[] ip = res.local.getAddress();
        ip[3] = (byte) (ip[3] == (byte) 254 ? 253 : 254); // nobody in the bed's /24 has it
        CmId active = client.createId(PortSpace.TCP);
        InetSocketAddress nobody = new InetSocketAddress(InetAddress.getByAddress(ip), 7471);
        long start = System.nanoTime();
        Throwable failure = null;
        try {
            active.resolve(nobody, Duration.ofSeconds(2));
            side(active); // a NOARP netdev (the bed's dummy d0) resolves any neighbour: the connect then times out
            active.connect(ConnectionParameters.defaults(), Duration.ofSeconds(4));
        } catch (CmEventException | CmTimeoutException e) {
            failure = e;
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertThat(failure).as("reaching " + nobody).isNotNull();
        if (failure instanceof CmEventException e) {
            assertThat(e.event().type()).isIn(CmEventType.ADDR_ERROR, CmEventType.ROUTE_ERROR, CmEventType.UNREACHABLE);
        }
        if (failure instanceof CmTimeoutException t) { // the caller's own bound ended the wait, not a hang
            assertThat(t.expected()).isIn(CmEventType.ADDR_RESOLVED, CmEventType.ROUTE_RESOLVED,
                    CmEventType.ESTABLISHED);
        }
        active.close(); // the abandoned attempt is torn down at once (the CM stops retrying)
        assertThat(active.isClosed()).isTrue();
        System.out.printf("rdma_cm: unreachable %s -> %s after %d ms%n", nobody, failure, ms);
    }

    @Test
    void aDisconnectDuringTrafficFlushesTheOutstandingReceives() {
        CmId listener = server.createId(PortSpace.TCP);
        InetSocketAddress at = listen(listener);
        CmId active = client.createId(PortSpace.TCP);
        active.resolve(at, STEP);
        Side a = side(active);
        active.connect(ConnectionParameters.defaults());
        CmId passive = listener.await(CmEventType.CONNECT_REQUEST, STEP).id();
        Side p = side(passive);
        for (int i = 0; i < 4; i++) {
            p.qp().receiveRequests().recv(100 + i).sge(p.mr(), i * 1024L, 1024).post();
        }
        passive.accept(ConnectionParameters.defaults());
        active.await(CmEventType.ESTABLISHED, STEP);
        passive.await(CmEventType.ESTABLISHED, STEP);
        a.qp().sendRequests().send(1, SendFlag.SIGNALED_BIT).sge(a.mr(), 0, 512).post();
        assertThat(pollOne(a.cq()).status()).isEqualTo(WorkCompletionStatus.SUCCESS);

        active.disconnect(); // the peer goes away with three receives still posted on the passive side
        passive.await(CmEventType.DISCONNECTED, STEP);
        passive.disconnect(); // what rping does on DISCONNECTED: its own QP to ERR, and the DREP
        active.await(CmEventType.DISCONNECTED, STEP);
        List<WorkCompletionStatus> statuses = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            statuses.add(pollOne(p.cq()).status());
        }
        assertThat(statuses).containsExactly(WorkCompletionStatus.SUCCESS, WorkCompletionStatus.WR_FLUSH_ERR,
                WorkCompletionStatus.WR_FLUSH_ERR, WorkCompletionStatus.WR_FLUSH_ERR);
        // rdma_disconnect moved the active QP to ERR: a later send is flushed, not lost or hung
        a.qp().sendRequests().send(2, SendFlag.SIGNALED_BIT).sge(a.mr(), 0, 8).post();
        assertThat(pollOne(a.cq()).status()).isEqualTo(WorkCompletionStatus.WR_FLUSH_ERR);
        passive.close();
        assertThat(p.qp().isClosed()).isTrue();
        assertThat(p.mr().isClosed()).isFalse(); // the region outlives the QP; the channel's close takes it
    }

    @Test
    void closingAChannelWithRetrievedAndQueuedEventsDoesNotHang() {
        CmId listener = server.createId(PortSpace.TCP);
        InetSocketAddress at = listen(listener);
        List<CmId> actives = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            CmId active = client.createId(PortSpace.TCP);
            active.resolve(at, STEP);
            side(active);
            active.connect(ConnectionParameters.defaults());
            actives.add(active);
        }
        // one request retrieved (copied, acked; its new ID unanswered), the others left queued in the kernel
        CmEvent first = listener.await(CmEventType.CONNECT_REQUEST, STEP);
        long start = System.nanoTime();
        server.close();
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertThat(first.id().isClosed()).isTrue();
        assertThat(listener.isClosed()).isTrue();
        assertThatThrownBy(() -> server.poll()).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        // the clients see the server vanish: rejected or unreachable, or nothing yet; closing them is immediate too
        client.close();
        assertThat(actives).allMatch(CmId::isClosed);
        System.out.printf("rdma_cm: channel with pending requests closed in %d ms%n", ms);
    }

    private static WorkCompletion pollOne(CompletionQueue cq) {
        WorkCompletions wcs = WorkCompletions.allocate(1);
        long deadline = System.nanoTime() + STEP.toNanos();
        while (cq.poll(wcs) == 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no completion on " + cq + " within " + STEP);
            }
            Thread.onSpinWait();
        }
        return wcs.get(0);
    }
}
