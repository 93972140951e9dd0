package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.internal.Resource;
import dev.panverbs.core.internal.ResourceKind;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * Work-request chains of a closed queue pair and the refusals built before any verb, without a device: a fake QP
 * lifecycle ({@link Resource} over a dummy handle) stands in for the QP.
 */
class ClosedChainTest {

    @Test
    void chainsOfAClosedQpFailNamingIt() {
        Resource qp = Resource.adopt(ResourceKind.QUEUE_PAIR, new Object(), "QueuePair[RC 0x1000 on fake0]",
                MemorySegment.ofAddress(0x1000), h -> { }, new Resource[0]);
        WorkRequestRules rules = new WorkRequestRules("QueuePair[RC 0x1000 on fake0]", QueuePairType.RC, true, 64,
                new Object(), qp);
        SendRequests send = new SendRequests(rules, 4, 2);
        ReceiveRequests recv = new ReceiveRequests(rules, 4, 2);
        send.rdmaWrite(1, 0, 7, 0x1000);
        recv.recv(1);
        qp.close();
        assertThatThrownBy(() -> send.send(2, 0)).isInstanceOf(IllegalStateException.class)
                .hasMessage("QueuePair[RC 0x1000 on fake0] is closed; cannot call ibv_post_send");
        assertThatThrownBy(() -> recv.recv(2)).isInstanceOf(IllegalStateException.class)
                .hasMessage("QueuePair[RC 0x1000 on fake0] is closed; cannot call ibv_post_recv");
        // the chains outlive the QP (their memory is freed by the GC, never under a writer): completing the WR that
        // was started before the close writes into memory that is still allocated; posting it is refused by state
        send.appendSge(0x2000, 8, 1, null);
        recv.appendSge(0x2000, 8, 1, null);
        assertThat(send.count()).isEqualTo(1);
        // other refusals of an open QP keep their own message
        SendRequests full = new SendRequests(new WorkRequestRules("QP#open", QueuePairType.RC, true, 64,
                new Object(), Resource.adopt(ResourceKind.QUEUE_PAIR, new Object(), "QP#open",
                MemorySegment.ofAddress(0x2000), h -> { }, new Resource[0])), 1, 1);
        full.send(1, 0);
        assertThatThrownBy(() -> full.send(2, 0)).isInstanceOf(IllegalStateException.class).hasMessageContaining("is full");
    }

    @Test
    void sgesOfAnInlineWorkRequestCountAgainstMaxInlineData() {
        WorkRequestRules rules = new WorkRequestRules("QP#t", QueuePairType.RC, false, 64, new Object());
        assertThat(rules.checkInlineSge(40, 0)).isEqualTo(40);
        assertThat(rules.checkInlineSge(24, 40)).isEqualTo(64);
        assertThatThrownBy(() -> rules.checkInlineSge(1, 64)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("65 bytes exceed QP#t's max_inline_data of 64");
        // rxe sums SGE lengths in 32 bits: the check must not wrap where the provider's does
        assertThatThrownBy(() -> rules.checkInlineSge(Integer.MAX_VALUE, 32)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining((Integer.MAX_VALUE + 32L) + " bytes");
    }

    @Test
    void deviceLimitRefusalsReadLikeTheVerbsEinvalWithTheLimit() {
        VerbsException e = DeviceChecks.invalid("ibv_create_cq(cqe=40000)", "cqe=40000 exceeds the device's max_cqe");
        assertThat(e.errnoName()).isEqualTo("EINVAL");
        assertThat(e.errno()).isEqualTo(dev.panverbs.bindings.verbs.verbs_h.EINVAL());
        assertThat(e.verb()).isEqualTo("ibv_create_cq(cqe=40000)");
        assertThat(e.getMessage()).isEqualTo("ibv_create_cq(cqe=40000) failed: EINVAL (Invalid argument); refused "
                + "before the call: cqe=40000 exceeds the device's max_cqe");
        DeviceChecks.atMost("ibv_create_qp(maxSendWr=16)", "maxSendWr", 16, "max_qp_wr", 16, "x");
        assertThatThrownBy(() -> DeviceChecks.atMost("ibv_create_qp(maxSendSge=33)", "maxSendSge", 33, "max_sge", 32,
                "DeviceAttributes.maxSge()")).isInstanceOf(VerbsException.class)
                .hasMessageEndingWith("maxSendSge=33 exceeds the device's max_sge of 32 (DeviceAttributes.maxSge())")
                .extracting(t -> ((VerbsException) t).hint()).asString().startsWith("refused before the call");
    }
}
