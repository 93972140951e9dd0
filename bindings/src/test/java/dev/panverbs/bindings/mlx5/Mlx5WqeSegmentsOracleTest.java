package dev.panverbs.bindings.mlx5;

import static dev.panverbs.bindings.mlx5.Mlx5dvInlineOracleTest.EDGE32;
import static dev.panverbs.bindings.mlx5.Mlx5dvInlineOracleTest.EDGE64;
import static dev.panverbs.bindings.mlx5.Mlx5dvInlineOracleTest.assertOracle;
import static dev.panverbs.bindings.mlx5.Mlx5dvInlineOracleTest.cBytes;
import static dev.panverbs.bindings.mlx5.Mlx5dvInlineOracleTest.u32;
import static dev.panverbs.bindings.mlx5.Mlx5dvInlineOracleTest.u64;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.abi.COracle;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * Byte-compares {@link Mlx5WqeSegments} with C that fills the public {@code mlx5dv.h} structures field by
 * field, the way libmlx5's static setters in {@code providers/mlx5/qp.c} (v44) do: {@code htobe64}/
 * {@code htobe32} on the named members, so the reference goes through gcc's layout and byte order, not ours.
 */
class Mlx5WqeSegmentsOracleTest {

    @Test
    void raddrAtomicAndTerminatorSegmentsMatchC() {
        COracle o = new COracle("mlx5-wqe-segments");
        int n = 0;
        for (long raddr : EDGE64) {
            for (int rkey : EDGE32) {
                o.bytes("raddr" + n++, 16, "struct mlx5_wqe_raddr_seg *r = (void *)p; r->raddr = htobe64(" + u64(raddr)
                        + "); r->rkey = htobe32(" + u32(rkey) + "); r->reserved = 0;",
                        (b, off) -> Mlx5WqeSegments.set_raddr_seg(b, off, raddr, rkey));
            }
        }
        for (long swap : EDGE64) {
            for (long compare : EDGE64) {
                o.bytes("atomic" + n++, 16, "struct mlx5_wqe_atomic_seg *a = (void *)p; a->swap_add = htobe64("
                        + u64(swap) + "); a->compare = htobe64(" + u64(compare) + ");",
                        (b, off) -> Mlx5WqeSegments.set_atomic_seg(b, off, swap, compare));
            }
        }
        o.bytes("end", 16, "struct mlx5_wqe_data_seg *d = (void *)p; d->byte_count = 0; "
                        + "d->lkey = htobe32(MLX5_INVALID_LKEY); d->addr = 0;",
                (b, off) -> Mlx5WqeSegments.set_data_ptr_seg_end(b, off));
        assertOracle(o);
    }

    @Test
    void inlineSegmentMatchesCIncludingTheWrapAtTheQueueEnd() {
        byte[] payload = new byte[128];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) (0x30 + i);
        }
        MemorySegment src = Arena.ofAuto().allocate(128).copyFrom(MemorySegment.ofArray(payload));
        // the provider's set_data_inl_seg: header, payload after it, split at qend (here: a 64-byte queue)
        COracle o = new COracle("mlx5-inline-seg").prelude(cBytes("payload", payload)).prelude("""
                static int inl(uint8_t *sq, int offset, int qsize, int len) {
                    struct mlx5_wqe_inl_data_seg *seg = (void *)(sq + offset);
                    uint8_t *wqe = (uint8_t *)(seg + 1), *qend = sq + qsize, *addr = payload;
                    int inl = len;
                    if (len == 0) return 0;
                    if (wqe + len > qend) {
                        int copy = qend - wqe;
                        memcpy(wqe, addr, copy);
                        addr += copy;
                        len -= copy;
                        wqe = sq;
                    }
                    memcpy(wqe, addr, len);
                    seg->byte_count = htobe32(inl | MLX5_INLINE_SEG);
                    return (inl + sizeof(seg->byte_count) + 15) / 16;
                }
                """);
        int n = 0;
        for (int length : new int[] {0, 1, 3, 12, 16, 28, 44, 60}) {
            o.bytes("inl" + n, 64, "inl(p, 0, 64, " + length + ");",
                    (b, off) -> Mlx5WqeSegments.set_inl_data_seg(b.asSlice(off, 64), 0, src, 0, length));
            o.value("inlds" + n++, "", "inl(p, 0, 64, " + length + ")",
                    (b, off) -> Mlx5WqeSegments.set_inl_data_seg(b.asSlice(off, 64), 0, src, 0, length));
        }
        for (int[] wrap : new int[][] {{48, 12}, {48, 20}, {32, 40}, {48, 60}, {16, 44}, {16, 45}}) {
            o.bytes("wrap" + n, 64, "inl(p, " + wrap[0] + ", 64, " + wrap[1] + ");",
                    (b, off) -> Mlx5WqeSegments.set_inl_data_seg(b.asSlice(off, 64), wrap[0], src, 0, wrap[1]));
            o.value("wrapds" + n++, "", "inl(p, " + wrap[0] + ", 64, " + wrap[1] + ")",
                    (b, off) -> Mlx5WqeSegments.set_inl_data_seg(b.asSlice(off, 64), wrap[0], src, 0, wrap[1]));
        }
        assertOracle(o);
    }

    @Test
    void udDatagramSegmentMatchesCAndPutsTheQkeyWhereLibmlx5Does() {
        byte[] av = new byte[48];
        for (int i = 0; i < av.length; i++) {
            av[i] = (byte) (0xC0 + i);
        }
        MemorySegment avSeg = Arena.ofAuto().allocate(48).copyFrom(MemorySegment.ofArray(av));
        COracle o = new COracle("mlx5-datagram-seg").prelude(cBytes("av", av));
        int n = 0;
        for (int qpn : new int[] {0, 0xAB_CDEF, 0xFF_FFFF, 0xFFFF_FFFF}) {
            for (int qkey : new int[] {0, 0x1111_1111, 0x8000_0000, 0xFFFF_FFFF}) {
                o.bytes("ud" + n++, 48, "struct mlx5_wqe_datagram_seg *d = (void *)p; memcpy(&d->av, av, sizeof d->av); "
                        + "d->av.dqp_dct = htobe32(" + u32(qpn) + " | MLX5_EXTENDED_UD_AV); "
                        + "d->av.key.qkey.qkey = htobe32(" + u32(qkey) + ");",
                        (b, off) -> Mlx5WqeSegments.set_datagram_seg(b, off, avSeg, qpn, qkey));
            }
        }
        assertOracle(o);
    }

    @Test
    void inlinePayloadLargerThanTheQueueIsRefused() {
        MemorySegment sq = Arena.ofAuto().allocate(64);
        MemorySegment src = Arena.ofAuto().allocate(128);
        assertThatThrownBy(() -> Mlx5WqeSegments.set_inl_data_seg(sq, 0, src, 0, 61))
                .isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("61 bytes");
        assertThatThrownBy(() -> Mlx5WqeSegments.set_inl_data_seg(sq, 0, src, 100, 40))
                .as("source shorter than the payload").isInstanceOf(IndexOutOfBoundsException.class);
        assertThat(Mlx5WqeSegments.set_inl_data_seg(sq, 0, src, 0, 60)).isEqualTo(4);
    }
}
