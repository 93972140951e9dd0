package dev.panverbs.core.mlx5;

import static dev.panverbs.core.mlx5.WqeWriter.BE32;
import static dev.panverbs.core.mlx5.WqeWriter.BE64;

import dev.panverbs.bindings.mlx5dv.mlx5dv_h;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

/**
 * Writes receive WQEs into an mlx5 receive queue: libmlx5's {@code mlx5_post_recv} ({@code providers/mlx5/qp.c},
 * rdma-core 44) for a QP without WQE signatures: one data segment per non-empty SGE, a terminator segment
 * ({@code byte_count 0, MLX5_INVALID_LKEY, addr 0}) when fewer than {@code max_gs} were written, and after the chain
 * the doorbell record's receive counter ({@code dbrec[0] = be32(head & 0xffff)}). Proven against that code by
 * {@code Mlx5RecvOracleTest}. Single producer; allocation-free; no downcall.
 */
final class RecvWriter {
    private static final int INVALID_LKEY = mlx5dv_h.MLX5_INVALID_LKEY();

    private final MemorySegment rq;
    private final int mask;
    private final int shift;
    private final int maxGs;
    private final MemorySegment dbrec;
    private final int maxPost;
    /** {@code rq.head}: receive WRs posted, unmasked. */
    int head;
    int tail;
    private int nreq;

    /**
     * @param rq      the receive queue buffer, {@code wqeCount * stride} bytes ({@code mlx5dv_qp.rq.buf})
     * @param stride  bytes per receive WQE ({@code mlx5dv_qp.rq.stride}, a power of two: {@code max_gs * 16})
     * @param dbrec   the QP doorbell record (8 bytes); the receive counter is its first big-endian word
     */
    RecvWriter(MemorySegment rq, int wqeCount, int stride, MemorySegment dbrec, int maxPost, int head) {
        if (Integer.bitCount(wqeCount) != 1 || Integer.bitCount(stride) != 1 || stride < 16
                || rq.byteSize() < (long) wqeCount * stride) {
            throw new IllegalArgumentException("receive queue of " + wqeCount + " x " + stride + " bytes over "
                    + rq.byteSize());
        }
        this.rq = rq.asSlice(0, (long) wqeCount * stride);
        this.mask = wqeCount - 1;
        this.shift = Integer.numberOfTrailingZeros(stride);
        this.maxGs = stride / 16;
        this.dbrec = dbrec;
        this.maxPost = maxPost;
        this.head = head;
        this.tail = head;
    }

    /** The receive counter in the doorbell record ({@code be32toh(dbrec[0])}). */
    int dbrecCounter() {
        return dbrec.get(BE32, 0);
    }

    int maxGs() {
        return maxGs;
    }

    /** mlx5_wq_overflow on the receive queue. */
    boolean full() {
        return Integer.compareUnsigned(head - tail + nreq, maxPost) >= 0;
    }

    /** Writes one receive WR (SGEs {@code from .. from+nsge-1}) and returns its index ({@code ind}). */
    int write(int nsge, int from, long[] addr, int[] len, int[] lkey) {
        int ind = (head + nreq) & mask;
        long w = (long) ind << shift;
        MemorySegment q = rq;
        int j = 0;
        for (int i = from; i < from + nsge; i++) {
            if (len[i] == 0) {
                continue;
            }
            long d = w + 16L * j++;
            q.set(BE32, d, len[i]);
            q.set(BE32, d + 4, lkey[i]);
            q.set(BE64, d + 8, addr[i]);
        }
        if (j < maxGs) {
            long d = w + 16L * j;
            q.set(BE32, d, 0);
            q.set(BE32, d + 4, INVALID_LKEY);
            q.set(BE64, d + 8, 0L);
        }
        nreq++;
        return ind;
    }

    /** Ends the chain: the WQEs before the doorbell record's receive counter. */
    void ring() {
        if (nreq == 0) {
            return;
        }
        head += nreq;
        nreq = 0;
        VarHandle.releaseFence(); // udma_to_device_barrier
        dbrec.set(BE32, 0, head & 0xffff);
    }
}
