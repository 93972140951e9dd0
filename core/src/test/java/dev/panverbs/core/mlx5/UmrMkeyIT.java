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
import dev.panverbs.core.SendOperation;
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
 * UMR-configured indirect mkeys on the test device. On any other device than mlx5 (the rxe guest) both entry points
 * are refused up front, naming the device ("rxe0 is not an mlx5 device"). On a ConnectX device (the hardware lane,
 * see README) a UMR QP configures an interleaved mkey over two regions, a peer QP RDMA WRITEs through its rkey and
 * the bytes land interleaved; the regions refuse to close while the mkey holds them; a local invalidation, its
 * completion and the mkey's close release them.
 */
class UmrMkeyIT extends Mlx5DeviceFixture {

    @Test
    void aNonMlx5DeviceIsRefusedByName() {
        assumeFalse(Mlx5.isSupported(ctx), name + " is an mlx5 device: the refusal is tested on rxe");
        CompletionQueue cq = ctx.createCq(16).build();
        String refusal = name + " is not an mlx5 device";
        assertThatThrownBy(() -> IndirectMkey.create(pd, 4)).isInstanceOf(UnsupportedVerbException.class)
                .hasMessageContaining(refusal).hasMessageContaining("mlx5dv_create_mkey");
        assertThatThrownBy(() -> UmrQueuePair.create(pd, cq, cq, 16, 16, 256, Set.of()))
                .isInstanceOf(UnsupportedVerbException.class).hasMessageContaining(refusal)
                .hasMessageContaining("mlx5dv_create_qp");
    }

    @Test
    void anInterleavedMkeyReceivesAnRdmaWriteOnConnectX() {
        assumeTrue(Mlx5.isSupported(ctx), name + " is not an mlx5 device: this runs in the hardware lane "
                + "(PANVERBS_TESTBED=host PANVERBS_TEST_DEVICE=mlx5_0 testbed/test --it UmrMkeyIT)");
        CompletionQueue cq = ctx.createCq(64).build();
        UmrQueuePair umr = UmrQueuePair.create(pd, cq, cq, 32, 16, 256, EnumSet.of(SendOperation.RDMA_WRITE));
        QueuePair peer = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(16).build();
        connect(umr.queuePair(), peer, EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ));
        Set<Access> rights = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
        MemoryRegion a = pd.allocate(8192, rights);
        MemoryRegion b = pd.allocate(8192, rights);
        MemoryRegion src = pd.allocate(4096, rights);
        IndirectMkey mk = IndirectMkey.create(pd, 4);
        assertThat(mk.maxEntries()).isGreaterThanOrEqualTo(4);
        // 8 repetitions of: 64 bytes of a (stride 256), then 32 bytes of b (stride 32)
        MkeyLayout layout = MkeyLayout.interleaved(8, new MkeyLayout.Entry(a, 0, 64, 192),
                new MkeyLayout.Entry(b, 0, 32, 0));
        umr.configure(1, SendFlag.SIGNALED_BIT, mk, rights, layout);
        WorkCompletions wcs = WorkCompletions.allocate(4);
        WorkCompletion wc = poll(cq, wcs);
        assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(wc.wrId()).isEqualTo(1);
        assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.DRIVER);
        assertThat(mk.length()).isEqualTo(8 * 96);

        for (int i = 0; i < 768; i++) {
            src.buffer().set(ValueLayout.JAVA_BYTE, i, (byte) (i + 1));
        }
        peer.sendRequests().rdmaWrite(2, SendFlag.SIGNALED_BIT, mk.rkey(), 0).sge(src, 0, 768).post();
        wc = poll(cq, wcs);
        assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        for (int r = 0; r < 8; r++) {
            for (int j = 0; j < 64; j++) {
                assertThat(a.buffer().get(ValueLayout.JAVA_BYTE, r * 256L + j)).isEqualTo((byte) (r * 96 + j + 1));
            }
            for (int j = 0; j < 32; j++) {
                assertThat(b.buffer().get(ValueLayout.JAVA_BYTE, r * 32L + j)).isEqualTo((byte) (r * 96 + 64 + j
                        + 1));
            }
        }
        assertThatThrownBy(a::close).isInstanceOf(IllegalStateException.class).hasMessageContaining(mk.toString());
        umr.invalidate(3, SendFlag.SIGNALED_BIT, mk);
        wc = poll(cq, wcs);
        assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(mk.completed(wc)).isTrue(); // the device ran it: a is no longer reachable through mk
        a.close();
        mk.close();
        b.close();
    }
}
