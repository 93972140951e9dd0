package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Type 2 memory windows through the classic chain ({@code ibv_post_send} with {@code IBV_WR_BIND_MW} and
 * {@code IBV_WR_LOCAL_INV}) on a real device, and the window's bookkeeping (bound or not, rkey, which region refuses
 * to close) after a local invalidation, a remote invalidation ({@code SEND_WITH_INV}) and a bind that completes in
 * error. The {@code ibv_wr_*} twin is {@link MemoryWindowIT}.
 */
class MemoryWindowChainIT extends DataPathResources {
    private static final Set<Access> WINDOW_MR = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
            Access.REMOTE_READ, Access.MW_BIND);
    private static final Set<Access> RW = EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE);

    private void assumeType2() {
        DeviceAttributes a = ctx.queryDevice();
        if (!a.supportsMemoryWindows()) {
            assertThatThrownBy(() -> pd.allocMw(MemoryWindowType.TYPE_2))
                    .isInstanceOf(UnsupportedVerbException.class).hasMessageContaining("IBV_DEVICE_MEM_WINDOW");
        }
        assumeThat(a.has(DeviceCapability.MEM_WINDOW_TYPE_2A) || a.has(DeviceCapability.MEM_WINDOW_TYPE_2B))
                .as("type 2 windows").isTrue();
    }

    /** A fresh connected RC pair: b binds the window (type 2B windows grant access through their QP only). */
    private QueuePair[] pair(CompletionQueue cq) {
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(a, b);
        return new QueuePair[] {a, b};
    }

    private static WorkCompletion write(QueuePair a, CompletionQueue cq, MemoryRegion src, int rkey, long remote,
                                        long wrId) {
        a.sendRequests().rdmaWrite(wrId, SendFlag.SIGNALED_BIT, rkey, remote).sge(src, 0, 64).post();
        WorkCompletion wc = pollOne(cq);
        assertThat(wc.wrId()).isEqualTo(wrId);
        return wc;
    }

    @Test
    void bindAndLocalInvalidationThroughThePostSendChain() {
        assumeType2();
        CompletionQueue cq = ctx.createCq(64).build();
        QueuePair[] p = pair(cq);
        QueuePair a = p[0];
        QueuePair b = p[1];
        MemoryRegion target = pd.allocate(8192, WINDOW_MR);
        MemoryRegion src = pd.allocate(4096, ALL_REMOTE);
        MemoryWindow mw = pd.allocMw(MemoryWindowType.TYPE_2);
        int before = mw.rkey();
        int rkey = MemoryWindow.nextRkey(before);

        // checks before the provider: a type 1 window, a region without MW_BIND, SGEs on a bind
        MemoryWindow type1 = pd.allocMw(MemoryWindowType.TYPE_1);
        assertThatThrownBy(() -> b.sendRequests().bindMw(1, 0, type1, 7, target, 0, 64, RW))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MemoryWindow.bind");
        MemoryRegion noBind = pd.allocate(4096, ALL_REMOTE);
        assertThatThrownBy(() -> b.sendRequests().bindMw(1, 0, mw, rkey, noBind, 0, 64, RW))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MW_BIND");
        assertThatThrownBy(() -> b.sendRequests().bindMw(1, 0, mw, rkey, target, 0, 64, RW).sge(src, 0, 8))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("carries no SGE");
        b.sendRequests().clear();
        assertThat(mw.boundRegion()).as("nothing posted").isEmpty();
        assertThat(mw.rkey()).isEqualTo(before);

        // a bind and a WRITE in one chain
        SendRequests chain = b.sendRequests();
        chain.bindMw(10, SendFlag.SIGNALED_BIT, mw, rkey, target, 1024, 4096, RW);
        chain.rdmaWrite(11, SendFlag.SIGNALED_BIT, target.rkey(), target.address()).sge(src, 0, 64);
        assertThat(chain.post()).isEqualTo(2);
        assertThat(mw.rkey()).isEqualTo(rkey);
        assertThat(mw.boundRegion()).containsSame(target);
        assertThat(mw.address()).isEqualTo(target.address() + 1024);
        assertThat(mw.length()).isEqualTo(4096);
        WorkCompletion bound = pollOne(cq);
        assertThat(bound.wrId()).isEqualTo(10);
        assertThat(bound.status()).as("%s", bound).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(bound.opcode()).isEqualTo(WorkCompletionOpcode.BIND_MW);
        assertThat(mw.completed(bound)).as("the bind's own completion").isTrue();
        assertThat(pollOne(cq).wrId()).isEqualTo(11);

        fill(src.buffer(), 0, 64, 8);
        assertThat(write(a, cq, src, rkey, mw.address() + 64, 12).status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertSameBytes(target.buffer(), 1024 + 64, src.buffer(), 0, 64);
        assertThatThrownBy(target::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("memory window").hasMessageContaining(mw.toString());

        // the chain is back to plain posts afterwards
        b.sendRequests().rdmaWrite(13, SendFlag.SIGNALED_BIT, target.rkey(), target.address()).sge(src, 0, 64).post();
        assertThat(pollOne(cq).status()).isEqualTo(WorkCompletionStatus.SUCCESS);

        // local invalidation through the chain: unbound once posted, the rkey stops working
        b.sendRequests().localInv(14, SendFlag.SIGNALED_BIT, mw).post();
        assertThat(mw.boundRegion()).isEmpty();
        assertThat(mw.length()).isZero();
        WorkCompletion inv = pollOne(cq);
        assertThat(inv.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(inv.opcode()).isEqualTo(WorkCompletionOpcode.LOCAL_INV);
        assertThat(write(a, cq, src, rkey, mw.address(), 15).status())
                .isEqualTo(WorkCompletionStatus.REM_ACCESS_ERR);
        target.close();
        assertThat(target.isClosed()).isTrue();
    }

    @Test
    void aRemoteInvalidationUnbindsTheWindowWhenItsCompletionIsHandedOver() {
        assumeType2();
        CompletionQueue cq = ctx.createCq(64).build();
        QueuePair[] p = pair(cq);
        MemoryRegion target = pd.allocate(8192, WINDOW_MR);
        MemoryRegion src = pd.allocate(4096, ALL_REMOTE);
        MemoryWindow mw = pd.allocMw(MemoryWindowType.TYPE_2);
        int rkey = MemoryWindow.nextRkey(mw.rkey());
        p[1].sendRequests().bindMw(20, SendFlag.SIGNALED_BIT, mw, rkey, target, 0, 4096, RW).post();
        assertThat(pollOne(cq).status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(write(p[0], cq, src, rkey, target.address(), 21).status())
                .isEqualTo(WorkCompletionStatus.SUCCESS);

        MemoryRegion rx = pd.allocate(4096, ALL_REMOTE);
        p[1].receiveRequests().recv(22).sge(rx, 0, 64).post();
        p[0].sendRequests().sendWithInv(23, SendFlag.SIGNALED_BIT, rkey).sge(src, 0, 64).post();
        WorkCompletion c1 = pollOne(cq);
        WorkCompletion c2 = pollOne(cq);
        WorkCompletion recv = c1.wrId() == 22 ? c1 : c2;
        WorkCompletion send = c1.wrId() == 22 ? c2 : c1;
        assertThat(send.wrId()).isEqualTo(23);
        assertThat(send.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(mw.completed(send)).as("a send concerns no window").isFalse();
        assertThat(mw.boundRegion()).containsSame(target);
        assertThat(recv.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        int recvRkey = recv.invalidatedRkey();
        boolean mine = mw.completed(recv);
        assertThat(recvRkey).isEqualTo(rkey);
        assertThat(mine).as("the receive invalidated this window").isTrue();
        assertThat(mw.boundRegion()).isEmpty();
        assertThat(mw.rkey()).as("an invalidation keeps the key").isEqualTo(rkey);
        assertThat(write(p[0], cq, src, rkey, target.address(), 24).status())
                .isEqualTo(WorkCompletionStatus.REM_ACCESS_ERR);
        target.close(); // released without closing the window
        assertThat(target.isClosed()).isTrue();
        assertThat(mw.isClosed()).isFalse();
    }

    @Test
    void aBindThatCompletesInErrorLeavesTheWindowAsItWas() {
        assumeType2();
        CompletionQueue cq = ctx.createCq(64).build();
        QueuePair[] p = pair(cq);
        QueuePair b = p[1];
        MemoryRegion first = pd.allocate(4096, WINDOW_MR);
        MemoryRegion second = pd.allocate(4096, WINDOW_MR);
        MemoryWindow mw = pd.allocMw(MemoryWindowType.TYPE_2);
        int rkey1 = MemoryWindow.nextRkey(mw.rkey());
        b.sendRequests().bindMw(30, SendFlag.SIGNALED_BIT, mw, rkey1, first, 0, 2048, RW).post();
        assertThat(pollOne(cq).status()).isEqualTo(WorkCompletionStatus.SUCCESS);

        // a type 2 window must be invalidated before it is bound again (IB spec o10-37.2.30): the device refuses
        // this bind in its completion, not at the post
        int rkey2 = MemoryWindow.nextRkey(rkey1);
        b.sendRequests().bindMw(31, SendFlag.SIGNALED_BIT, mw, rkey2, second, 0, 1024, RW).post();
        assertThat(mw.rkey()).as("posted: the window reports the new binding").isEqualTo(rkey2);
        assertThat(mw.boundRegion()).containsSame(second);
        assertThatThrownBy(first::close).as("the first region may still be bound at the device")
                .isInstanceOf(IllegalStateException.class);
        WorkCompletion failed = pollOne(cq);
        assertThat(failed.wrId()).isEqualTo(31);
        assertThat(failed.status()).as("%s", failed).isNotEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(mw.completed(failed)).isTrue();
        assertThat(mw.rkey()).as("back to the binding that holds").isEqualTo(rkey1);
        assertThat(mw.boundRegion()).containsSame(first);
        assertThat(mw.length()).isEqualTo(2048);
        assertThat(mw.completed(failed)).as("handed over twice: no longer pending").isFalse();
        second.close(); // never bound: free to go
        assertThatThrownBy(first::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("memory window");
        mw.close();
        first.close();
        assertThat(first.isClosed()).isTrue();
    }
}
