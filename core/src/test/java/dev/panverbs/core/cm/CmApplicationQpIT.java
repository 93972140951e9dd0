package dev.panverbs.core.cm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.Access;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairAttribute;
import dev.panverbs.core.QueuePairAttributes;
import dev.panverbs.core.QueuePairState;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.InvalidTransitionException;
import dev.panverbs.core.WorkCompletionStatus;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.EnumSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An RC connection through rdma_cm whose QPs are the application's (rping {@code -q}): each side moves its own QP
 * with the attributes {@code rdma_init_qp_attr} computes ({@link CmId#initQpAttributes}), connect and accept carry
 * the QP numbers, the active side ends with {@code rdma_establish} after CONNECT_RESPONSE; a SEND crosses, and each
 * side sees its own DISCONNECTED through {@link CmId#pollEvent} on a channel other IDs share. RTR attributes asked
 * before the CM has the peer's parameters lack the path, and the core refuses that transition by name.
 */
class CmApplicationQpIT {

    private static final Duration STEP = Duration.ofSeconds(20);
    private CmResources res;
    private EventChannel channel;

    @BeforeEach
    void open() throws Exception {
        res = new CmResources();
        channel = res.channel(); // both sides on one channel: pollEvent must keep their events apart
    }

    @AfterEach
    void close() {
        if (res != null) {
            res.close();
        }
    }

    record Side(ProtectionDomain pd, CompletionQueue cq, QueuePair qp, MemoryRegion mr) {
        static Side on(CmId id) {
            Context ctx = id.context();
            ProtectionDomain pd = ctx.allocPd();
            CompletionQueue cq = ctx.createCq(8).build();
            QueuePair qp = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(4).maxRecvWr(4).build();
            qp.toInit(id.portNum(), EnumSet.noneOf(Access.class));
            return new Side(pd, cq, qp, pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE)));
        }

        void moveWith(CmId id) {
            for (QueuePairState s : new QueuePairState[] {QueuePairState.INIT, QueuePairState.RTR,
                    QueuePairState.RTS}) {
                QueuePairAttributes attrs = id.initQpAttributes(s);
                assertThat(attrs.qpState()).isEqualTo(s);
                qp.modify(attrs);
            }
            assertThat(qp.state()).isEqualTo(QueuePairState.RTS);
        }
    }

    @Test
    void applicationQpsConnectThroughInitQpAttrAndEstablish() {
        CmId listener = channel.createId(PortSpace.TCP);
        InetSocketAddress at = res.nextAddress();
        listener.bindAddress(at);
        listener.listen(1);
        CmId active = channel.createId(PortSpace.TCP);
        active.resolve(at, STEP);
        Side a = Side.on(active);
        assertThat(active.queuePair()).as("the ID owns no QP").isEmpty();

        // before the peer's reply the CM has no path to give: what it returns for RTR lacks RTR's required
        // attributes, and the core's transition check refuses it before the kernel sees it
        QueuePairAttributes early = active.initQpAttributes(QueuePairState.RTR);
        assertThat(early.attributes()).doesNotContain(QueuePairAttribute.DEST_QPN);
        assertThatThrownBy(() -> a.qp().modify(early)).isInstanceOf(InvalidTransitionException.class)
                .hasMessageContaining("RTR");
        QueuePairAttributes init = active.initQpAttributes(QueuePairState.INIT);
        assertThat(init.attributes()).contains(QueuePairAttribute.PORT, QueuePairAttribute.ACCESS_FLAGS);

        active.connect(ConnectionParameters.defaults().withQpNum(a.qp().qpNum()));
        CmEvent request = listener.await(CmEventType.CONNECT_REQUEST, STEP);
        assertThat(request.connection().qpNum()).isEqualTo(a.qp().qpNum());
        CmId passive = request.id();
        Side p = Side.on(passive);
        p.qp().receiveRequests().recv(1).sge(p.mr(), 0, 4096).post();
        p.moveWith(passive); // rping_accept with -q: RTR and RTS from the request, before the reply
        passive.accept(ConnectionParameters.defaults().withQpNum(p.qp().qpNum()));

        CmEvent response = active.await(CmEventType.CONNECT_RESPONSE, STEP);
        assertThat(response.connection().qpNum()).isEqualTo(p.qp().qpNum());
        a.moveWith(active);
        active.establish();
        passive.await(CmEventType.ESTABLISHED, STEP);

        a.mr().buffer().fill((byte) 0x6b);
        a.qp().sendRequests().send(2, SendFlag.SIGNALED_BIT).sge(a.mr(), 0, 100).post();
        assertThat(poll(p.cq())).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(poll(a.cq())).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(p.mr().buffer().get(ValueLayout.JAVA_BYTE, 99)).isEqualTo((byte) 0x6b);

        // rping_disconnect with -q: the application's QP to ERR, then the DREQ; each ID polls its own events
        a.qp().toErr();
        active.disconnect();
        assertThat(awaitOwn(passive).type()).isEqualTo(CmEventType.DISCONNECTED);
        p.qp().toErr();
        passive.disconnect();
        assertThat(awaitOwn(active).type()).isEqualTo(CmEventType.DISCONNECTED);
        assertThat(listener.pollEvent()).as("nothing for the listener").isNull();
    }

    private static CmEvent awaitOwn(CmId id) {
        long deadline = System.nanoTime() + STEP.toNanos();
        while (System.nanoTime() < deadline) {
            CmEvent e = id.pollEvent();
            if (e != null) {
                assertThat(e.id()).isSameAs(id);
                return e;
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no event for " + id + " within " + STEP);
    }

    private static WorkCompletionStatus poll(CompletionQueue cq) {
        WorkCompletions wcs = WorkCompletions.allocate(1);
        long deadline = System.nanoTime() + STEP.toNanos();
        while (cq.poll(wcs) == 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no completion on " + cq);
            }
            Thread.onSpinWait();
        }
        return wcs.get(0).status();
    }
}
