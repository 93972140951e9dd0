package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.Access;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.internal.MkeyPath;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * DMA safety of an {@link IndirectMkey} named by the Direct WQE paths (the other post paths are
 * {@link IndirectMkeyHostTest}'s): a WQE or receive WQE whose SGE is over the mkey's lkey keeps
 * {@code mlx5dv_destroy_mkey} refused until its completion is polled through the direct CQ, and the region its layout
 * names stays registered meanwhile; an SGE staged before the mkey's close is refused at post, with nothing rung. The
 * mkey is configured as {@link UmrQueuePair#configure} leaves it (the layout's region held, the key's snapshot
 * replaced) without a UMR QP; the PRM model does not translate it (the WQEs complete in error, which retires them).
 */
class IndirectMkeyDirectPathTest extends Mlx5Fixture {
    private static final int MKEY = 0x5500;
    private final AtomicInteger destroyed = new AtomicInteger();

    private IndirectMkey configuredOver(MemoryRegion region) throws Throwable {
        IndirectMkey mk = UmrFake.mkey(fp.protectionDomain(), 4, MKEY, destroyed::incrementAndGet);
        synchronized (mk) {
            MkeyPath.get().hold(region, mk.holds);
            mk.configured(MkeyLayout.list(new MkeyLayout.Sge(region, 0, 4096)),
                    Access.mask(EnumSet.of(Access.LOCAL_WRITE)));
        }
        return mk;
    }

    @Test
    void aDirectWqeOverTheMkeyKeepsItsDestroyRefusedUntilItsCompletionIsPolled() throws Throwable {
        IndirectMkey mk = configuredOver(mrLocal);
        dsq.rdmaWrite(1, SIG, mrRemote.rkey(), remote.address(), mk, 16, 64).post();
        assertThat(mk.length()).isEqualTo(4096);
        assertThatThrownBy(mk::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("mlx5dv_destroy_mkey").hasMessageContaining("outstanding");
        // the model does not translate indirect mkeys: the WQE completes in error, which retires it all the same
        assertThat(ring()).isEqualTo(1);
        assertThatThrownBy(mk::close).as("executed, no completion polled").isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(mrLocal::close).as("held by the configured mkey").isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(mk.toString());
        assertThat(mk.isOpen()).isTrue();
        assertThat(dcq.poll(wcs)).isEqualTo(1);
        assertThat(wcs.get(0).wrId()).isEqualTo(1);
        mk.close();
        assertThat(destroyed).hasValue(1);
        mrLocal.close(); // the destroyed mkey no longer holds it
    }

    @Test
    void aDirectReceiveOverTheMkeyKeepsItsDestroyRefused() throws Throwable {
        IndirectMkey mk = configuredOver(mrLocal);
        DirectReceiveQueue drq = receiveQueue();
        drq.recv(5).sge(mk, 0, 256);
        drq.post();
        assertThatThrownBy(mk::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("mlx5dv_destroy_mkey");
        assertThat(mk.isOpen()).isTrue();
        assertThat(destroyed).hasValue(0);
    }

    @Test
    void anSgeStagedOverTheMkeyBeforeItsCloseIsRefusedAtPostWithNothingRung() throws Throwable {
        IndirectMkey mk = configuredOver(mrLocal);
        MemorySegment dbBefore = MemorySegment.ofArray(dbrec.toArray(ValueLayout.JAVA_BYTE));
        dsq.rdmaWrite(3, SIG, mrRemote.rkey(), remote.address()).sge(mk, 0, 32);
        mk.close(); // nothing posted names it yet
        assertThatThrownBy(dsq::post).isInstanceOf(IllegalStateException.class).hasMessageContaining(mk.toString());
        dsq.clear();
        assertThat(dbrec.toArray(ValueLayout.JAVA_BYTE)).as("no doorbell record written")
                .isEqualTo(dbBefore.toArray(ValueLayout.JAVA_BYTE));
        assertThat(destroyed).hasValue(1);
        stillUsable(4);
    }
}
