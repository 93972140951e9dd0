package dev.panverbs.core.cm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.AddressVector;
import dev.panverbs.core.CompletionChannel;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePairCapabilities;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletionOpcode;
import dev.panverbs.core.WorkCompletionStatus;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The twins of {@code rdma_verbs.h} ({@link CmVerbs}) on a real device (rxe in the bed): registration on the ID's
 * PD with the rights each form grants, SEND/receive, RDMA WRITE and READ over an rdma_cm connection and a UD send,
 * each completion awaited with {@code rdma_get_send_comp}/{@code rdma_get_recv_comp} sleeping on the CQ's channel;
 * an empty CQ returns 0 at the timeout, and an ID without a QP or CQs sharing a channel are refused by name.
 */
class CmVerbsIT {
    private static final Duration STEP = Duration.ofSeconds(20);

    private CmResources res;
    private EventChannel channel;
    private Arena arena;
    private final WorkCompletions wc = WorkCompletions.allocate(1);

    @BeforeEach
    void open() throws Exception {
        res = new CmResources();
        channel = res.channel();
        arena = Arena.ofShared();
    }

    @AfterEach
    void close() {
        if (res != null) {
            res.close(); // the IDs, their QPs, and the MRs made through the adopted context
            arena.close(); // then the memory they registered
        }
    }

    /** The ID's QP on two CQs, each with a completion channel of its own (what rdma_create_qp would make). */
    private static void qp(CmId id) {
        Context ctx = id.context();
        ProtectionDomain pd = ctx.allocPd();
        CompletionQueue send = ctx.createCq(8).channel(ctx.createCompChannel()).build();
        CompletionQueue recv = ctx.createCq(8).channel(ctx.createCompChannel()).build();
        id.createQp(pd, send, recv, new QueuePairCapabilities(4, 4, 1, 1, 0));
    }

    private WorkCompletion sent(CmId id, long wrId) {
        assertThat(CmVerbs.getSendComp(id, wc, STEP)).isEqualTo(1);
        WorkCompletion c = wc.get(0);
        assertThat(c.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(c.wrId()).isEqualTo(wrId);
        return c;
    }

    @Test
    void sendReceiveWriteAndReadThroughTheTwins() {
        CmId listener = channel.createId(PortSpace.TCP);
        InetSocketAddress at = res.nextAddress();
        listener.bindAddress(at);
        listener.listen(1);
        CmId active = channel.createId(PortSpace.TCP);
        active.resolve(at, STEP);
        qp(active);
        active.connect(ConnectionParameters.defaults());
        CmId passive = listener.await(CmEventType.CONNECT_REQUEST, STEP).id();
        qp(passive);

        MemoryRegion msgs = CmVerbs.regMsgs(active, arena.allocate(4096));
        MemoryRegion inbox = CmVerbs.regMsgs(passive, arena.allocate(4096));
        MemoryRegion writable = CmVerbs.regWrite(passive, arena.allocate(4096));
        MemoryRegion readable = CmVerbs.regRead(passive, arena.allocate(4096));
        assertThat(writable.rkey()).isNotEqualTo(readable.rkey());
        CmVerbs.postRecv(passive, 7, inbox, 0, 4096);
        passive.accept(ConnectionParameters.defaults());
        active.await(CmEventType.ESTABLISHED, STEP);
        passive.await(CmEventType.ESTABLISHED, STEP);

        // nothing to receive yet: 0 at the timeout, after sleeping on the channel
        assertThat(CmVerbs.getRecvComp(active, wc, Duration.ofMillis(300))).isZero();

        msgs.buffer().fill((byte) 0x21);
        CmVerbs.postSend(active, 1, msgs, 0, 64, SendFlag.SIGNALED_BIT);
        sent(active, 1);
        assertThat(CmVerbs.getRecvComp(passive, wc, STEP)).isEqualTo(1);
        assertThat(wc.get(0).wrId()).isEqualTo(7);
        assertThat(wc.get(0).byteLen()).isEqualTo(64);
        assertThat(inbox.buffer().get(ValueLayout.JAVA_BYTE, 63)).isEqualTo((byte) 0x21);

        msgs.buffer().asSlice(100, 32).fill((byte) 0x42);
        CmVerbs.postWrite(active, 2, msgs, 100, 32, SendFlag.SIGNALED_BIT, writable.address() + 8, writable.rkey());
        assertThat(sent(active, 2).opcode()).isEqualTo(WorkCompletionOpcode.RDMA_WRITE);
        assertThat(writable.buffer().get(ValueLayout.JAVA_BYTE, 8 + 31)).isEqualTo((byte) 0x42);

        readable.buffer().asSlice(0, 16).fill((byte) 0x63);
        CmVerbs.postRead(active, 3, msgs, 200, 16, SendFlag.SIGNALED_BIT, readable.address(), readable.rkey());
        assertThat(sent(active, 3).opcode()).isEqualTo(WorkCompletionOpcode.RDMA_READ);
        assertThat(msgs.buffer().get(ValueLayout.JAVA_BYTE, 215)).isEqualTo((byte) 0x63);
    }

    @Test
    void udSendToItselfAndTheRefusals() {
        CmId id = channel.createId(PortSpace.UDP);
        assertThatThrownBy(() -> CmVerbs.postSend(id, 1, null, 0, 1, 0)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("rdma_post_send").hasMessageContaining("has no QP");
        id.bindAddress(new InetSocketAddress(res.local, 0));
        qp(id);
        Context ctx = id.context();
        MemoryRegion buf = CmVerbs.regMsgs(id, arena.allocate(4096));
        int gidIndex = ctx.roceV2GidIndex(id.portNum(), res.local);
        AddressHandle self = id.queuePair().orElseThrow().protectionDomain().createAh(
                AddressVector.builder(id.portNum()).grh(ctx.queryGid(id.portNum(), gidIndex).toBytes(), gidIndex, 64)
                        .build());
        CmVerbs.postRecv(id, 5, buf, 1024, 40 + 100);
        buf.buffer().asSlice(0, 100).fill((byte) 0x7e);
        CmVerbs.postUdSend(id, 6, buf, 0, 100, SendFlag.SIGNALED_BIT, self, id.queuePair().orElseThrow().qpNum());
        sent(id, 6);
        assertThat(CmVerbs.getRecvComp(id, wc, STEP)).isEqualTo(1);
        assertThat(wc.get(0).byteLen()).as("GRH + payload").isEqualTo(40 + 100);
        assertThat(buf.buffer().get(ValueLayout.JAVA_BYTE, 1024 + 40 + 99)).isEqualTo((byte) 0x7e);

        // two CQs on one channel: waiting on one could eat the other's event
        CmId shared = channel.createId(PortSpace.UDP);
        shared.bindAddress(new InetSocketAddress(res.local, 0));
        Context c = shared.context();
        CompletionChannel one = c.createCompChannel();
        shared.createQp(c.allocPd(), c.createCq(4).channel(one).build(), c.createCq(4).channel(one).build(),
                new QueuePairCapabilities(2, 2, 1, 1, 0));
        assertThatThrownBy(() -> CmVerbs.getSendComp(shared, wc, STEP)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("rdma_get_send_comp").hasMessageContaining("share");
    }
}
