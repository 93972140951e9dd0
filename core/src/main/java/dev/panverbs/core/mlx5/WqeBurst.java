package dev.panverbs.core.mlx5;

import static dev.panverbs.core.mlx5.WqeWriter.CTRL_WORD1;
import static dev.panverbs.core.mlx5.WqeWriter.NATIVE;
import static dev.panverbs.core.mlx5.WqeWriter.RAW64;
import static dev.panverbs.core.mlx5.WqeWriter.WR_SEND;

import java.lang.foreign.MemorySegment;

/**
 * The WQEs of a burst ({@link DirectSendQueue}'s {@code rdmaWriteBurst}, {@code sendBurst}, {@code rdmaReadBurst}):
 * {@code n} WRs with the bytes of {@code n} {@link WqeWriter#writeOneBe} calls (libmlx5's {@code mlx5_post_send} of
 * the same WRs; {@code Mlx5SendOracleTest} proves it), written into {@link WqeWriter}'s ring with the per-WR words
 * built once per burst or run. Static over the writer's package-private state, as {@link DcWqe}.
 */
final class WqeBurst {
    private WqeBurst() {}

    /**
     * {@code n} WRs of {@link WqeWriter#writeOneBe} with one opcode, rkey, length and lkey into {@code wr}: WR {@code j}
     * goes to {@code raddr + j * rstride} from {@code addr + j * lstride} with {@code flags}, the last with
     * {@code lastFlags}. Each WQE is one WQEBB. Returns the first WQE's index; the caller checked the room for all
     * {@code n >= 1} and the opcode.
     */
    static int write(WqeWriter wr, int opcode, int n, int flags, int lastFlags, long raddr, long rstride, int rkey,
                     long addr, long lstride, int len, long lkeyBe) {
        int cp0 = wr.curPost;
        long word1 = CTRL_WORD1[flags & 7] | wr.sigWord;
        long rk = Long.reverseBytes((long) rkey << 32);
        long data0 = lkeyBe | (Integer.reverseBytes(len) & 0xFFFF_FFFFL);
        boolean raddrSeg = opcode != WR_SEND;
        long word0 = ((long) WqeWriter.oneCallOpcode(opcode) << 32) | wr.qpnWord
                | (1 + (raddrSeg ? 1 : 0) + (len != 0 ? 1 : 0));
        MemorySegment m = NATIVE;
        long ra = raddr;
        long la = addr;
        int end = cp0 + n;
        int wqeMask = wr.wqeMask;
        for (int cp = cp0; cp != end; ) {
            // a run of WQEBBs up to the ring's end or the wrap of the WQE index's low byte: their addresses are the
            // run's first plus k * 64 (no ring mask per WR, and still provably inside NATIVE: wqebb's range plus an
            // int times 64), and their control bytes 0-7 in native order are the first's plus k << 16 (the index's
            // low byte is byte 2 and does not carry into byte 1 within the run: no swap per WR)
            int idx = wr.index(cp);
            long w0 = wr.wqebb(idx);
            int run = Math.min(end - cp, Math.min(wqeMask + 1 - idx, 256 - (cp & 0xff)));
            long c0 = Long.reverseBytes(((long) (cp & 0xffff) << 40) | word0);
            for (int k = 0; k < run; k++) {
                long w = w0 + ((long) k << 6);
                m.set(RAW64, w + 8, word1);
                long seg = w + 16;
                if (raddrSeg) {
                    m.set(RAW64, seg, Long.reverseBytes(ra));
                    m.set(RAW64, seg + 8, rk);
                    seg += 16;
                }
                if (len != 0) {
                    m.set(RAW64, seg, data0);
                    m.set(RAW64, seg + 8, Long.reverseBytes(la));
                }
                m.set(RAW64, w, c0 + ((long) k << 16));
                ra += rstride;
                la += lstride;
            }
            cp += run;
        }
        // the last WR's flags: its bytes 8-15 again, before any doorbell (the NIC reads nothing beyond the producer)
        m.set(RAW64, wr.wqebb(wr.index(cp0 + n - 1)) + 8, CTRL_WORD1[lastFlags & 7] | wr.sigWord);
        wr.curPost = cp0 + n;
        return wr.index(cp0);
    }
}
