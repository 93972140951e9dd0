package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.panverbs.core.Access;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.UnsupportedVerbException;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletionOpcode;
import dev.panverbs.core.WorkCompletionStatus;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The mlx5 direct paths on the test device. On any other device (the rxe guest) every entry point is refused up
 * front, naming the device ("rxe0 is not an mlx5 device"). On a ConnectX device (the hardware lane, see README) an
 * RC loopback pair runs RDMA WRITE, SEND with immediate into a directly posted receive, RDMA READ and an error (bad
 * rkey → REM_ACCESS_ERR) through Direct WQE posting, direct receive posting and direct CQE polling, and a region a posted WQE references cannot be closed before its
 * completion is polled.
 */
class Mlx5DirectIT extends Mlx5DeviceFixture {
    private static final Set<Access> ALL = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
            Access.REMOTE_ATOMIC);

    @Test
    void aNonMlx5DeviceIsRefusedByName() {
        assumeFalse(Mlx5.isSupported(ctx), name + " is an mlx5 device: the refusal is tested on rxe");
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair qp = pd.createQp(QueuePairType.RC, cq, cq).build();
        String refusal = name + " is not an mlx5 device";
        assertThatThrownBy(() -> Mlx5.query(ctx)).isInstanceOf(UnsupportedVerbException.class)
                .hasMessageContaining(refusal).hasMessageContaining("mlx5dv_query_device");
        assertThatThrownBy(() -> DirectCompletionQueue.open(cq)).isInstanceOf(UnsupportedVerbException.class)
                .hasMessageContaining(refusal);
        assertThatThrownBy(() -> Mlx5.queuePairView(qp)).isInstanceOf(UnsupportedVerbException.class)
                .hasMessageContaining(refusal);
        assertThat(((UnsupportedVerbException) org.assertj.core.api.Assertions.catchThrowable(() -> Mlx5.query(ctx)))
                .capability()).isEqualTo(Mlx5.CAPABILITY);
    }

    @Test
    void directWriteSendReadAndErrorOnConnectX() {
        assumeTrue(Mlx5.isSupported(ctx), name + " is not an mlx5 device: this runs in the hardware lane "
                + "(PANVERBS_TESTBED=host PANVERBS_TEST_DEVICE=mlx5_0 testbed/test --it Mlx5DirectIT)");
        Mlx5Capabilities caps = Mlx5.query(ctx);
        assertThat(caps.cqeVersion()).isBetween(0, 1);
        CompletionQueue sendCq = ctx.createCq(64).build();
        CompletionQueue recvCq = ctx.createCq(64).build();
        QueuePair a = pd.createQp(QueuePairType.RC, sendCq, recvCq).maxSendWr(32).maxSendSge(2).maxInlineData(64)
                .build();
        QueuePair b = pd.createQp(QueuePairType.RC, recvCq, recvCq).maxRecvWr(16).build();
        connect(a, b, EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC));
        DirectCompletionQueue dcq = DirectCompletionQueue.open(sendCq);
        DirectSendQueue dsq = DirectSendQueue.open(a, dcq);
        MemoryRegion src = pd.allocate(65536, ALL);
        MemoryRegion dst = pd.allocate(65536, ALL);
        for (int i = 0; i < 65536; i++) {
            src.buffer().set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + 1));
        }
        WorkCompletions wcs = WorkCompletions.allocate(8);

        dsq.rdmaWrite(1, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address()).sge(src, 0, 4096).sge(src, 8192, 100);
        assertThat(dsq.post()).isEqualTo(1);
        assertThatThrownBy(src::close).as("referenced by a posted WQE").isInstanceOf(IllegalStateException.class);
        WorkCompletion wc = poll(dcq, wcs);
        assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(wc.wrId()).isEqualTo(1);
        assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.RDMA_WRITE);
        assertThat(dst.buffer().asSlice(0, 4096).mismatch(src.buffer().asSlice(0, 4096))).isEqualTo(-1);

        DirectCompletionQueue drcq = DirectCompletionQueue.open(recvCq);
        DirectReceiveQueue drq = DirectReceiveQueue.open(b, drcq);
        drq.recv(50).sge(dst, 32768, 1024);
        assertThat(drq.post()).isEqualTo(1);
        dsq.sendWithImm(2, SendFlag.SIGNALED_BIT, 0x1234).sge(src, 100, 200);
        dsq.post();
        wc = poll(dcq, wcs);
        assertThat(wc.ok()).isTrue();
        assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.SEND);
        WorkCompletions one = WorkCompletions.allocate(1);
        WorkCompletion rwc = poll(drcq, one);
        assertThat(rwc.wrId()).isEqualTo(50);
        assertThat(rwc.opcode()).isEqualTo(WorkCompletionOpcode.RECV);
        assertThat(rwc.byteLen()).isEqualTo(200);
        assertThat(rwc.immData()).isEqualTo(0x1234);
        assertThat(dst.buffer().asSlice(32768, 200).mismatch(src.buffer().asSlice(100, 200))).isEqualTo(-1);

        dsq.rdmaRead(3, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address()).sge(src, 16384, 512);
        dsq.post();
        wc = poll(dcq, wcs);
        assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.RDMA_READ);
        assertThat(wc.byteLen()).isEqualTo(512);

        dsq.rdmaWrite(4, SendFlag.SIGNALED_BIT, dst.rkey() ^ 0x5500, dst.address()).sge(src, 0, 64);
        dsq.post();
        wc = poll(dcq, wcs);
        assertThat(wc.wrId()).isEqualTo(4);
        assertThat(wc.status()).isEqualTo(WorkCompletionStatus.REM_ACCESS_ERR);
        src.close(); // every WR retired
    }
}
