package dev.panverbs.bindings.mlx5;

import static dev.panverbs.bindings.mlx5.Mlx5dvInline.BE32;
import static dev.panverbs.bindings.mlx5.Mlx5dvInline.BE64;

import dev.panverbs.bindings.mlx5dv.mlx5_wqe_atomic_seg;
import dev.panverbs.bindings.mlx5dv.mlx5_wqe_av;
import dev.panverbs.bindings.mlx5dv.mlx5_wqe_data_seg;
import dev.panverbs.bindings.mlx5dv.mlx5_wqe_datagram_seg;
import dev.panverbs.bindings.mlx5dv.mlx5_wqe_inl_data_seg;
import dev.panverbs.bindings.mlx5dv.mlx5_wqe_raddr_seg;
import dev.panverbs.bindings.mlx5dv.mlx5dv_h;
import java.lang.foreign.MemorySegment;

/**
 * The WQE segments a Direct-WQE send path needs beyond the helpers {@code mlx5dv.h} provides
 * ({@link Mlx5dvInline}): rdma-core 44 declares the structures ({@code mlx5_wqe_raddr_seg},
 * {@code mlx5_wqe_atomic_seg}, {@code mlx5_wqe_inl_data_seg}, {@code mlx5_wqe_datagram_seg}) but no public
 * setter for them; libmlx5 fills them with static functions of {@code providers/mlx5/qp.c}. These methods
 * write the same bytes as those functions (v44) and keep their names so the two can be compared; they are
 * byte-compared with the public structures filled field by field in C by {@code Mlx5dvInlineOracleTest}.
 *
 * <p>Segment order inside an RC WQE (each 16 bytes, the WQE starting on a 64-byte basic block):
 * <pre>
 *  RDMA WRITE/READ:   ctrl | raddr | data x k              DS = 2 + k
 *  RDMA WRITE inline: ctrl | raddr | inline hdr + payload  DS = 2 + ceil((4 + len) / 16)
 *  SEND:              ctrl | data x k                      DS = 1 + k
 *  ATOMIC CS/FA:      ctrl | raddr | atomic | data (8 B)   DS = 4
 *  UD SEND:           ctrl | datagram (48 B) | data x k    DS = 4 + k
 * </pre>
 * Conventions as in {@link Mlx5dvInline}: {@code (segment, offset)} for the C pointer, big-endian fields,
 * bounds-checked, allocation-free, stateless.
 */
public final class Mlx5WqeSegments {

    private Mlx5WqeSegments() {}

    private static final long RADDR_RADDR = mlx5_wqe_raddr_seg.raddr$offset();
    private static final long RADDR_RKEY = mlx5_wqe_raddr_seg.rkey$offset();
    private static final long RADDR_RESERVED = mlx5_wqe_raddr_seg.reserved$offset();
    private static final long ATOMIC_SWAP_ADD = mlx5_wqe_atomic_seg.swap_add$offset();
    private static final long ATOMIC_COMPARE = mlx5_wqe_atomic_seg.compare$offset();
    private static final long DATA_BYTE_COUNT = mlx5_wqe_data_seg.byte_count$offset();
    private static final long DATA_LKEY = mlx5_wqe_data_seg.lkey$offset();
    private static final long DATA_ADDR = mlx5_wqe_data_seg.addr$offset();
    private static final long INL_BYTE_COUNT = mlx5_wqe_inl_data_seg.byte_count$offset();
    private static final long INL_HEADER_SIZE = mlx5_wqe_inl_data_seg.layout().byteSize();
    private static final long AV = mlx5_wqe_datagram_seg.av$offset();
    private static final long AV_SIZE = mlx5_wqe_av.layout().byteSize();
    private static final long AV_QKEY = AV + mlx5_wqe_av.key$offset() + mlx5_wqe_av.key.qkey$offset()
            + mlx5_wqe_av.key.qkey.qkey$offset();
    private static final long AV_DQP_DCT = AV + mlx5_wqe_av.dqp_dct$offset();
    private static final int MLX5_INLINE_SEG = mlx5dv_h.MLX5_INLINE_SEG();
    private static final int MLX5_EXTENDED_UD_AV = mlx5dv_h.MLX5_EXTENDED_UD_AV();
    private static final int MLX5_INVALID_LKEY = mlx5dv_h.MLX5_INVALID_LKEY();

    /** Size of a WQE segment unit (octoword): the DS field counts these. */
    public static final int MLX5_SEGMENT_UNIT = 16;

    /**
     * Fills a 16-byte remote-address segment: BE64 remote address, BE32 rkey, 4 zero bytes. mlx5dv.h has no
     * setter for {@code struct mlx5_wqe_raddr_seg}; this is libmlx5's {@code set_raddr_seg} (qp.c, v44).
     * <pre>
     *  0 .. 7 raddr (BE64) | 8 .. 11 rkey (BE32) | 12 .. 15 reserved = 0
     * </pre>
     */
    public static void set_raddr_seg(MemorySegment seg, long offset, long remoteAddr, int rkey) {
        seg.set(BE64, offset + RADDR_RADDR, remoteAddr);
        seg.set(BE32, offset + RADDR_RKEY, rkey);
        seg.set(BE32, offset + RADDR_RESERVED, 0);
    }

    /**
     * Fills a 16-byte atomic segment: BE64 {@code swap_add}, BE64 {@code compare}. For compare-and-swap pass
     * (swap, compare); for fetch-and-add pass (add, 0): libmlx5's {@code _set_atomic_seg} (qp.c, v44) writes
     * only {@code swap_add} for FA and leaves {@code compare}, which the HCA ignores, stale; this writes it.
     */
    public static void set_atomic_seg(MemorySegment seg, long offset, long swapAdd, long compare) {
        seg.set(BE64, offset + ATOMIC_SWAP_ADD, swapAdd);
        seg.set(BE64, offset + ATOMIC_COMPARE, compare);
    }

    /**
     * Writes the receive-queue terminator data segment {0, BE32(MLX5_INVALID_LKEY), 0} that ends a receive
     * WQE with fewer SGEs than the RQ's maximum: libmlx5's {@code set_data_ptr_seg_end} (qp.c, v44).
     */
    public static void set_data_ptr_seg_end(MemorySegment seg, long offset) {
        seg.set(BE32, offset + DATA_BYTE_COUNT, 0);
        seg.set(BE32, offset + DATA_LKEY, MLX5_INVALID_LKEY);
        seg.set(BE64, offset + DATA_ADDR, 0L);
    }

    /**
     * Writes an inline-data segment: the 4-byte header BE32({@code length | MLX5_INLINE_SEG}) at {@code offset}
     * followed by {@code length} payload bytes copied from {@code src}; returns the segment's size in 16-byte
     * units (the DS it adds), {@code ceil((4 + length) / 16)}, or 0 for an empty payload (nothing written),
     * as libmlx5's {@code set_data_inl_seg} (qp.c, v44) does. Padding up to the unit is not written.
     *
     * <p>{@code sq} may be the whole send queue buffer: a payload that runs past its end continues at offset
     * 0, as the provider wraps at {@code qend}. The caller checks {@code length} against the QP's
     * {@code max_inline_data} (the provider returns ENOMEM).
     *
     * @throws IndexOutOfBoundsException if {@code src} holds fewer than {@code length} bytes from
     *         {@code srcOffset}, or the payload does not fit {@code sq} even with the wrap
     */
    public static int set_inl_data_seg(MemorySegment sq, long offset, MemorySegment src, long srcOffset, int length) {
        if (length == 0) {
            return 0;
        }
        if (length < 0 || length > sq.byteSize() - INL_HEADER_SIZE) {
            throw new IndexOutOfBoundsException("inline payload of " + length + " bytes does not fit a send queue of "
                    + sq.byteSize() + " bytes");
        }
        long payload = offset + INL_HEADER_SIZE;
        long first = Math.min(length, sq.byteSize() - payload);
        MemorySegment.copy(src, srcOffset, sq, payload, first);
        if (first < length) {
            MemorySegment.copy(src, srcOffset + first, sq, 0, length - first);
        }
        sq.set(BE32, offset + INL_BYTE_COUNT, length | MLX5_INLINE_SEG);
        return (int) ((length + INL_HEADER_SIZE + MLX5_SEGMENT_UNIT - 1) / MLX5_SEGMENT_UNIT);
    }

    /**
     * Fills a 48-byte UD datagram segment the way libmlx5's {@code _set_datagram_seg} (qp.c, v44) does:
     * copies the address vector of the address handle ({@code struct mlx5_wqe_av}, e.g. {@code mlx5dv_ah.av}
     * from {@code mlx5dv_init_obj}), then stores BE32({@code remoteQpn | MLX5_EXTENDED_UD_AV}) in
     * {@code dqp_dct} and BE32({@code remoteQkey}) in {@code key.qkey.qkey} (bytes 0-3). Unlike
     * {@link Mlx5dvInline#mlx5dv_set_dgram_seg}, the Q_Key lands where the HCA reads it.
     *
     * @param av 48 bytes ({@code sizeof(struct mlx5_wqe_av)}) read from its start
     */
    public static void set_datagram_seg(MemorySegment seg, long offset, MemorySegment av, int remoteQpn,
                                        int remoteQkey) {
        MemorySegment.copy(av, 0, seg, offset + AV, AV_SIZE);
        seg.set(BE32, offset + AV_DQP_DCT, remoteQpn | MLX5_EXTENDED_UD_AV);
        seg.set(BE32, offset + AV_QKEY, remoteQkey);
    }
}
