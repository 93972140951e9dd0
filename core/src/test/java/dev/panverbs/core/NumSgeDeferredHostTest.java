package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A send WR's {@code num_sge} is written by its SGEs only, not zeroed when the WR starts ({@link WorkRequests#startWr}):
 * a WR that ends with none must still reach the provider with {@code num_sge} 0, not with the count an earlier WR of
 * the same chain slot left (whose SGEs name keys this WR does not hold: the NIC would DMA through them untracked).
 * The fake provider completes a send with the length of its first SGE when {@code num_sge} is not 0.
 */
class NumSgeDeferredHostTest {
    private static FakeProvider fake;

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
    }

    /** The send completions' byte_len, in order. */
    private static int[] byteLens(CompletionQueue cq, int n) {
        WorkCompletions wcs = WorkCompletions.allocate(16);
        assertThat(cq.poll(wcs)).isEqualTo(n);
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            assertThat(wcs.get(i).statusValue()).isZero();
            out[i] = wcs.get(i).byteLen();
        }
        return out;
    }

    @Test
    void aWrWithoutAnSgeIsPostedWithNumSgeZeroWhateverItsSlotHeldBefore() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 8, 8, 0, EnumSet.noneOf(SendOperation.class));
        MemoryRegion buf = fake.buffer(0x33);
        SendRequests s = qp.sendRequests();
        // slots 0 and 1 hold one SGE each
        s.rdmaWrite(1, SendFlag.SIGNALED_BIT, 7, 0x1000).sge(buf, 0, 64);
        s.rdmaWrite(2, SendFlag.SIGNALED_BIT, 7, 0x1000).sge(buf, 64, 48);
        assertThat(s.post()).isEqualTo(2);
        assertThat(byteLens(cq, 2)).containsExactly(64, 48);
        // slot 0 again without an SGE, then one with: its 0 comes when the next WR starts
        s.rdmaWrite(3, SendFlag.SIGNALED_BIT, 7, 0x1000);
        s.rdmaWrite(4, SendFlag.SIGNALED_BIT, 7, 0x1000).sge(buf, 0, 32);
        assertThat(s.post()).isEqualTo(2);
        assertThat(byteLens(cq, 2)).containsExactly(0, 32);
        // the chain's last WR without an SGE (slot 1 held one): its 0 comes with the post
        s.rdmaWrite(5, SendFlag.SIGNALED_BIT, 7, 0x1000).sge(buf, 0, 16);
        s.rdmaWrite(6, SendFlag.SIGNALED_BIT, 7, 0x1000);
        assertThat(s.post()).isEqualTo(2);
        assertThat(byteLens(cq, 2)).containsExactly(16, 0);
        // a one-WR chain without an SGE in slot 0 (which held one)
        s.rdmaWrite(7, SendFlag.SIGNALED_BIT, 7, 0x1000);
        assertThat(s.post()).isEqualTo(1);
        assertThat(byteLens(cq, 1)).containsExactly(0);
        assertThat(qp.sendQueue.tracker.outstanding()).isZero();
    }

    @Test
    void aWrsOpcodeAndFlagsLandInOneStoreAndItsSgesCountUp() {
        CompletionQueue cq = fake.createCq(64);
        QueuePair qp = fake.createRtsQp(fake.protectionDomain(), cq, cq, 8, 8, 0, EnumSet.noneOf(SendOperation.class));
        MemoryRegion buf = fake.buffer(0x34);
        SendRequests s = qp.sendRequests();
        s.rdmaWrite(1, SendFlag.SIGNALED_BIT, 7, 0x1000).sge(buf, 0, 24);
        s.rdmaWrite(2, 0, 7, 0x1000).sge(buf, 0, 40); // unsignaled: no completion
        s.rdmaWrite(3, SendFlag.SIGNALED_BIT, 7, 0x1000).sge(buf, 0, 8);
        assertThat(s.post()).isEqualTo(3);
        assertThat(byteLens(cq, 2)).containsExactly(24, 8);
    }
}
