package dev.panverbs.core.mlx5;

import static dev.panverbs.core.mlx5.WqeWriter.ATOMIC_OPS;
import static dev.panverbs.core.mlx5.WqeWriter.IMM_OPS;
import static dev.panverbs.core.mlx5.WqeWriter.MLX5_OPCODE;
import static dev.panverbs.core.mlx5.WqeWriter.RADDR_OPS;
import static dev.panverbs.core.mlx5.WqeWriter.WQEBB;

/**
 * The DC initiator's part of {@link WqeWriter}: the start of a builder WR with its datagram segment
 * ({@link DirectDcQueue}; proven against libmlx5 by {@code Mlx5DcOracleTest}). The WR goes on through the writer's
 * {@code data}, {@code inlineData} and {@code end}, as an RC builder WR.
 */
final class DcWqe {
    private DcWqe() {}

    /**
     * {@link WqeWriter#begin} of a DC initiator's WR, into {@code w}, as libmlx5's {@code ibv_wr_<op>} on an
     * {@code IBV_QPT_DRIVER} QP followed by {@code mlx5_send_wr_set_dc_addr}: the 48-byte datagram segment
     * {@code av} ({@code struct mlx5_wqe_av} with the DC key and the DCT number, as {@link DcAddress} holds it: six
     * native-order words) fills the rest of the control segment's WQEBB, so the segments after it start at the next
     * WQEBB, the ring's first when the control segment is in its last one (libmlx5: "in DC raddr_seg may overrun the
     * SQ"). {@code streamId} (0..65535; 0 on a DCI without streams) goes into the control segment's
     * {@code dci_stream_channel_id} (bytes 9-10, big-endian), as {@code mlx5_send_wr_set_dc_addr_stream} writes it.
     */
    static int beginDc(WqeWriter w, int opcode, int flags, int immOrInv, long raddr, int rkey, long swap,
                       long compareAdd, long[] av, int streamId) {
        int cp = w.curPost;
        int idx = cp & w.wqeMask;
        long ctrl = (long) idx * WQEBB;
        int imm = ((IMM_OPS >>> opcode) & 1) != 0 ? Integer.reverseBytes(immOrInv) : 0;
        // bytes 8-15: signature 0, dci_stream_channel_id (be16), fm_ce_se, imm; one native-order store
        long stream = (long) (Short.reverseBytes((short) streamId) & 0xFFFF) << 8;
        w.put(ctrl + 8, stream | ((long) w.fmCeSe(flags) << 24) | ((long) imm << 32));
        w.put(ctrl + 16, av[0]);
        w.put(ctrl + 24, av[1]);
        w.put(ctrl + 32, av[2]);
        w.put(ctrl + 40, av[3]);
        w.put(ctrl + 48, av[4]);
        w.put(ctrl + 56, av[5]);
        long seg = ctrl + WQEBB == w.qend ? 0 : ctrl + WQEBB;
        int size = 4;
        if (((RADDR_OPS >>> opcode) & 1) != 0) {
            w.put(seg, Long.reverseBytes(raddr));
            w.put(seg + 8, Integer.reverseBytes(rkey) & 0xFFFF_FFFFL);
            seg += 16;
            size++;
        }
        boolean atomic = ((ATOMIC_OPS >>> opcode) & 1) != 0;
        if (atomic) {
            w.atomicSeg(seg, opcode, swap, compareAdd);
            seg += 16;
            size++;
        }
        w.wCtrl = ctrl;
        w.wSeg = seg;
        w.wSize = size;
        w.wWord0 = Integer.reverseBytes(((cp & 0xffff) << 8) | MLX5_OPCODE[opcode]);
        w.wAtomic = atomic;
        w.wInline = false;
        w.wInlineBytes = 0;
        return idx;
    }
}
