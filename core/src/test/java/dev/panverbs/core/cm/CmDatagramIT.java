package dev.panverbs.core.cm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.QueuePairState;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletionStatus;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.core.cm.CmResources.Side;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * rdma_cm's UDP port space on a real device (rxe in the bed): a SIDR "connection" (the request's private data
 * reaches the listener, ESTABLISHED carries the peer's QP number, qkey and address as a typed
 * {@link CmEvent.Datagram}), a UD SEND addressed with an address handle made from that address, and a multicast
 * join and leave (MULTICAST_JOIN with the group's address, QP number 0xFFFFFF).
 */
class CmDatagramIT {

    private static final Duration STEP = Duration.ofSeconds(20);
    private static final int UDP_QKEY = 0x01234567; // RDMA_UDP_QKEY

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
            res.close();
        }
    }

    private static Side side(CmId id) {
        return Side.on(id, 4);
    }

    @Test
    void sidrResolvesThePeersQpAndAUdSendReachesIt() {
        CmId listener = server.createId(PortSpace.UDP);
        InetSocketAddress at = res.nextAddress();
        listener.bindAddress(at);
        listener.listen(2);
        CmId active = client.createId(PortSpace.UDP);
        active.resolve(at, STEP);
        Side a = side(active);
        assertThat(a.qp().type()).isEqualTo(QueuePairType.UD);
        assertThat(a.qp().state()).isEqualTo(QueuePairState.RTS); // rdma_create_qp readies a UD QP

        byte[] hello = "sidr".getBytes(StandardCharsets.US_ASCII);
        active.connect(ConnectionParameters.defaults().withPrivateData(hello));
        CmEvent request = listener.await(CmEventType.CONNECT_REQUEST, STEP);
        assertThat(request.datagram()).isNotNull();
        assertThat(request.datagram().address()).as("a SIDR request carries no address").isNull();
        assertThat(Arrays.copyOf(request.privateData(), hello.length)).isEqualTo(hello);
        CmId passive = request.id();
        Side p = side(passive);
        p.qp().receiveRequests().recv(9).sge(p.mr(), 0, 40 + 256).post(); // UD receives start with a 40-byte GRH
        passive.accept(ConnectionParameters.defaults());

        CmEvent established = active.await(CmEventType.ESTABLISHED, STEP);
        CmEvent.Datagram peer = established.datagram();
        assertThat(peer).isNotNull();
        assertThat(peer.qpNum()).isEqualTo(p.qp().qpNum());
        assertThat(peer.qkey()).isEqualTo(UDP_QKEY);
        assertThat(peer.address().isGlobal()).isTrue(); // RoCE: the peer is addressed by GID

        AddressHandle ah = a.pd().createAh(peer.address());
        a.mr().buffer().fill((byte) 0x3c);
        a.qp().sendRequests().send(1, SendFlag.SIGNALED_BIT).ud(ah, peer.qpNum(), peer.qkey()).sge(a.mr(), 0, 128)
                .post();
        assertThat(pollOne(a.cq()).status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        WorkCompletion recv = pollOne(p.cq());
        assertThat(recv.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(recv.byteLen()).isEqualTo(40 + 128);
        assertThat(recv.srcQp()).isEqualTo(a.qp().qpNum());
        assertThat(p.mr().buffer().get(ValueLayout.JAVA_BYTE, 40 + 127)).isEqualTo((byte) 0x3c);
    }

    @Test
    void aMulticastJoinReportsTheGroupAndLeaveSucceeds() throws Exception {
        CmId id = client.createId(PortSpace.UDP);
        id.bindAddress(new InetSocketAddress(res.local, 0));
        side(id);
        InetSocketAddress group = new InetSocketAddress(InetAddress.getByName("239.7.7.7"), 0);
        id.joinMulticast(group);
        CmEvent joined = id.await(CmEventType.MULTICAST_JOIN, STEP);
        assertThat(joined.datagram()).isNotNull();
        assertThat(joined.datagram().qpNum()).isEqualTo(0xFFFFFF);
        assertThat(joined.datagram().address().isGlobal()).isTrue();
        id.leaveMulticast(group);
        id.close();
        assertThat(id.isClosed()).isTrue();
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
