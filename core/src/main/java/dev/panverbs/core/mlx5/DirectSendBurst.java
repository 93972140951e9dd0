package dev.panverbs.core.mlx5;

import static dev.panverbs.core.mlx5.DirectSendChecks.checkFlags;
import static dev.panverbs.core.mlx5.WqeWriter.WR_RDMA_READ;

import dev.panverbs.core.LocalKey;
import dev.panverbs.core.internal.DirectPath;

/**
 * {@link DirectSendQueue}'s bursts ({@code rdmaWriteBurst}, {@code sendBurst}, {@code rdmaReadBurst}): {@code n}
 * one-call WRs of one opcode, key, length and rkey, wr_ids {@code wrId + j * wrIdStride} (stride 1, or 0 for one
 * wr_id for all: perftest's lists), local and remote addresses with a stride, the last WR with its own flags
 * (perftest's shape). What the one-call WR checks per WR is checked once per burst, before anything is written: the flags, the key (in full unless it is the chain's last one) and the range of
 * the span's first and last SGE (the offsets are linear in {@code j}, so every SGE between is in range), LOCAL_WRITE
 * for a READ, the producer guard (held from here to the end of the burst: no other code runs on this thread between,
 * and a close on another thread waits for the guard) and the room for all {@code n}. Then the WQEs
 * ({@link WqeBurst#write}: the bytes of {@code n} one-call WRs) and, per WR, its provider wr_id and its tracker
 * record (the caller's wr_id, one reference to the key): the same records as {@code n} one-call WRs, so every WR
 * pins the key until it completes and a signaled WR inside the burst reports its own wr_id. {@code post()} re-checks
 * the key after its fence, as for every chain.
 */
final class DirectSendBurst {
    private static final DirectPath PATH = DirectPath.get();

    private DirectSendBurst() {}

    static DirectSendQueue write(DirectSendQueue s, int op, long wrId, long wrIdStride, int n, int flags,
                                 int lastFlags, long ra, long rstride, int rk, LocalKey key, long offset,
                                 long lstride, int length) {
        checkFlags(flags);
        checkFlags(lastFlags);
        long lastOffset = DirectSendChecks.burstEnd(n, offset, lstride);
        boolean read = op == WR_RDMA_READ;
        Object snap = PATH.checkNextSge(s.qp, s.lastKey, key, offset, length, read, "RDMA READ");
        PATH.checkNextSge(s.qp, snap, key, lastOffset, length, read, "RDMA READ"); // the same snapshot: its range
        int i = s.count;
        if (i < s.fast) { // a chain is open, with room, and no builder WR open
            s.held();
        } else {
            i = s.next();
        }
        if (n > s.room - i) {
            room(s, i, n);
        }
        s.stage(key, snap);
        long t = s.chainTail + i;
        int idx = WqeBurst.write(s.writer, op, n, flags, lastFlags, ra, rstride, rk, s.kAddress + offset, lstride,
                length, s.kLkeyBe);
        long[] q = s.sq;
        long[] r = s.rec;
        long tracking = s.kTracking;
        long positionMask = s.positionMask;
        int recMask = s.recMask;
        int stride = s.stride;
        int qMask = q.length - 1; // a power of two: WR j's provider wr_id at (idx + j) & qMask
        long w = wrId;
        for (int j = 0; j < n; ) {
            // the WRs up to the first wrap of the record ring, of the provider wr_id ring or of the position bits are
            // one run: within it the slots and the provider wr_ids are linear (no mask per WR)
            long pos = t + j;
            int slot = (int) pos & recMask;
            int qi = (idx + j) & qMask;
            long p = pos & positionMask;
            int run = (int) Math.min(Math.min(n - j, recMask + 1 - slot),
                    Math.min(qMask + 1 - qi, positionMask + 1 - p));
            if (stride == 4) { // records of 4 longs (max_send_sge 1 or 2; perftest's QPs: 1): a constant stride
                records(q, qi, run, s.token | p, r, slot * 4, 4, w, wrIdStride, tracking);
            } else {
                records(q, qi, run, s.token | p, r, slot * stride, stride, w, wrIdStride, tracking);
            }
            w += run * wrIdStride;
            j += run;
        }
        s.count = i + n;
        return s;
    }

    /**
     * One run's provider wr_ids ({@code word + m} at {@code q[qi + m]}) and tracker records (at {@code b + m * stride}:
     * the caller's wr_id, one reference, {@code tracking}). Its indexes are linear in {@code m}, so C2 checks each
     * array's range once per run instead of per WR where {@code stride} is a constant (the caller's stride-4 call):
     * the same stores either way.
     */
    private static void records(long[] q, int qi, int run, long word, long[] r, int b, int stride, long w,
                                long wrIdStride, long tracking) {
        for (int m = 0; m < run; m++) {
            q[qi + m] = word + m;
            int x = b + m * stride;
            r[x] = w;
            r[x + 1] = 1;
            r[x + 2] = tracking;
            w += wrIdStride;
        }
    }

    /**
     * A burst of {@code n} from WR {@code i} passes the room last read: re-reads it and widens the tracker
     * reservation, or refuses the burst (a chain the burst opened is closed again: nothing is pending).
     */
    private static void room(DirectSendQueue s, int i, int n) {
        int r = s.side.room();
        if (n > r - i) {
            if (i == 0) {
                s.drop();
                s.side.exit();
            }
            throw DirectSendChecks.burstFull(s.qp, i, n, s.capacity);
        }
        s.room = r;
        s.fast = (int) Math.min(r, s.wordLimit); // the burst follows next(), which set wordLimit
        s.reserved = r;
        s.side.reserve(s.chainTail, r);
    }
}
