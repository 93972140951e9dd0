package dev.panverbs.core.mlx5;

import static dev.panverbs.core.mlx5.Mlx5Model.LOCAL_WRITE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/**
 * Bursts on a QP of one SGE per WR ({@code max_send_sge} 1, perftest's QPs), whose tracker records are 4 longs (the wr_id,
 * the count, one reference, rounded up to a power of two): the burst writes them with a constant stride
 * ({@link DirectSendBurst}'s stride-4 call); {@link Mlx5BurstTest}'s QP of 4 SGEs (records of 8) takes the general
 * one. Over the PRM device model: each signaled WR completes with its own wr_id across the
 * record ring's and the WQE ring's ends, a partly polled burst keeps its key pinned until its last WR is polled and
 * leaves exactly its polled WRs retired.
 */
class Mlx5BurstOneSgeTest extends Mlx5Fixture {
    @Override
    int maxSendSge() {
        return 1;
    }

    @Test
    void aPartlyPolledBurstPinsItsKeyUntilItsLastWrIsPolledAndRetiresWhatWasPolled() throws Throwable {
        MemoryRegion key = fp.register(local.asSlice(4096, 4096), 0x3333);
        Mlx5Model.reg.invokeExact(0x3333, local.address() + 4096, 4096L, LOCAL_WRITE);
        int rk = mrRemote.rkey();
        long ra = remote.address();
        WorkCompletions three = WorkCompletions.allocate(3); // polls a burst's completions a few at a time
        long wrId = 1000;
        for (int round = 0; round < 700; round++) { // 16-WR room, 32 record slots, 64 WQEBBs: all three rings wrap
            int n = 1 + round % 16;
            long stride = round % 3 - 1;
            int len = 8 + round % 56;
            dsq.rdmaWriteBurst(wrId, stride, n, SIG, SIG, rk, ra, 64, key, 0, 128, len);
            assertThat(dsq.post()).isEqualTo(n);
            assertThat(ring()).isEqualTo(n);
            for (int got = 0; got < n; ) {
                int k = dcq.poll(three);
                assertThat(k).isPositive();
                for (int c = 0; c < k; c++) {
                    assertThat(three.get(c).ok()).isTrue();
                    assertThat(three.get(c).wrId()).as("round %d WR %d", round, got + c)
                            .isEqualTo(wrId + (got + c) * stride);
                }
                got += k;
                assertThat(dsq.room()).as("round %d: the polled WRs retired, the others not", round)
                        .isEqualTo(16 - (n - got));
                if (got < n) {
                    assertThatThrownBy(key::close).as("round %d: %d of %d WRs outstanding", round, n - got, n)
                            .isInstanceOf(IllegalStateException.class).hasMessageContaining("still referenced by");
                }
            }
            assertThat(local.asSlice(4096 + (n - 1) * 128L, len).toArray(ValueLayout.JAVA_BYTE))
                    .isEqualTo(remote.asSlice((n - 1) * 64L, len).toArray(ValueLayout.JAVA_BYTE));
            wrId += 7 * n;
        }
        key.close(); // every WR retired
    }
}
