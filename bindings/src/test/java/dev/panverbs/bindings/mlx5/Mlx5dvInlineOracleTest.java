package dev.panverbs.bindings.mlx5;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.fail;

import dev.panverbs.bindings.abi.COracle;
import dev.panverbs.bindings.abi.CToolchain;
import dev.panverbs.bindings.mlx5dv.mlx5_cqe64;
import dev.panverbs.bindings.mlx5dv.mlx5dv_clock_info;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Byte-compares every pure twin of {@link Mlx5dvInline} with the {@code static inline} original in the
 * installed {@code <infiniband/mlx5dv.h>}: gcc compiles a program calling the C helpers on edge inputs (0,
 * all ones, sign bits, values wider than the C parameter) and pseudo-random ones; the Java twins must
 * produce the same bytes (CQE and WQE segments, DEVX fields) and values (CQE bits, timestamps).
 */
class Mlx5dvInlineOracleTest {

    static final boolean X86 = System.getProperty("os.arch").equals("amd64");
    static final int[] EDGE32 = {0, 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0xDEAD_BEEF};
    static final long[] EDGE64 = {0, 1, 0x7F00_1234_5678L, 0x8000_0000_0000_0000L, -1L, 0x0102_0304_0506_0708L};

    static String u32(int v) {
        return "0x" + Integer.toHexString(v) + "u";
    }

    static String u64(long v) {
        return "0x" + Long.toHexString(v) + "ull";
    }

    static void assertOracle(COracle oracle) {
        List<String> mismatches = oracle.mismatches(CToolchain.get());
        if (!mismatches.isEmpty()) {
            fail(mismatches.size() + " of " + oracle.size() + " cases differ from mlx5dv.h, first: "
                    + String.join("\n", mismatches.subList(0, Math.min(5, mismatches.size()))));
        }
        System.out.printf("C oracle %s: %d cases byte-identical to the C code%n", oracle.name(), oracle.size());
    }

    /** Base vector, then each parameter through its edge values (incl. wider than the C type), then random. */
    static List<int[]> vectors(int[] base, int[][] edges, int random, long seed) {
        List<int[]> out = new ArrayList<>();
        out.add(base);
        for (int i = 0; i < edges.length; i++) {
            for (int e : edges[i]) {
                int[] v = base.clone();
                v[i] = e;
                out.add(v);
            }
        }
        SplittableRandom r = new SplittableRandom(seed);
        for (int k = 0; k < random; k++) {
            int[] v = new int[base.length];
            for (int i = 0; i < v.length; i++) {
                v[i] = r.nextInt();
            }
            out.add(v);
        }
        return out;
    }

    @Test
    void ctrlSegMatchesC() {
        COracle o = new COracle("mlx5-ctrl-seg", X86 ? new String[] {"-mssse3"} : new String[0]);
        // pi, opcode, opmod, qp_num, fm_ce_se, ds, signature, imm (the catalogue's example first)
        int[] base = {0x0102, 0x08, 0, 0x123456, 0x08, 3, 0, 0xDEADBEEF};
        int[][] edges = {{0, 0xFFFF, 0x8000, 0x1_0001}, {0, 0xFF, 0x80, 0x108}, {0xFF, 0x80, 0x1FF},
                {0, 0xFF_FFFF, 0xFFFF_FFFF, 0x8000_0000}, {0, 0xFF, 0x80, 0x20}, {0, 0x3F, 0xFF, 0x103},
                {0xFF, 0x80}, {0, 0xFFFF_FFFF, 0x8000_0000}};
        int n = 0;
        for (int[] v : vectors(base, edges, 24, 1)) {
            String args = String.join(", ", java.util.Arrays.stream(v).mapToObj(Mlx5dvInlineOracleTest::u32).toList());
            o.bytes("ctrl" + n, 16, "mlx5dv_set_ctrl_seg((void *)p, " + args + ");",
                    (b, off) -> Mlx5dvInline.mlx5dv_set_ctrl_seg(b, off, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]));
            if (X86) {
                o.bytes("x86ctrl" + n, 16, "mlx5dv_x86_set_ctrl_seg((void *)p, " + args + ");",
                        (b, off) -> Mlx5dvInline.mlx5dv_x86_set_ctrl_seg(b, off, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]));
            }
            n++;
        }
        assertOracle(o);
    }

    @Test
    void dataSegMatchesC() {
        COracle o = new COracle("mlx5-data-seg", X86 ? new String[] {"-mssse3"} : new String[0]);
        int n = 0;
        for (int length : EDGE32) {
            for (int lkey : new int[] {0, 0x1122_3344, 0x8000_0000, 0xFFFF_FFFF}) {
                for (long address : EDGE64) {
                    String args = u32(length) + ", " + u32(lkey) + ", (uintptr_t)" + u64(address);
                    o.bytes("data" + n, 16, "mlx5dv_set_data_seg((void *)p, " + args + ");",
                            (b, off) -> Mlx5dvInline.mlx5dv_set_data_seg(b, off, length, lkey, address));
                    if (X86) {
                        o.bytes("x86data" + n, 16, "mlx5dv_x86_set_data_seg((void *)p, " + args + ");",
                                (b, off) -> Mlx5dvInline.mlx5dv_x86_set_data_seg(b, off, length, lkey, address));
                    }
                    n++;
                }
            }
        }
        assertOracle(o);
    }

    static final byte[][] RMAC = {{0x00, 0x11, 0x22, 0x33, 0x44, 0x55}, {-1, -2, -3, -4, -5, -128}};
    static final byte[][] RGID = {
            {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x66, 0x77, (byte) 0x88, (byte) 0x99, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55},
            {-1, -1, -1, -1, -128, -128, 0, 0, 0x7F, 0x7F, 1, 2, 3, 4, 5, 6}};

    static String cBytes(String name, byte[] bytes) {
        StringBuilder s = new StringBuilder("static uint8_t " + name + "[] = {");
        for (byte b : bytes) {
            s.append(b & 0xFF).append(',');
        }
        return s.append("};").toString();
    }

    @Test
    void dgramSegMatchesC() {
        Arena arena = Arena.ofAuto();
        COracle o = new COracle("mlx5-dgram-seg");
        MemorySegment[] rmac = new MemorySegment[2];
        MemorySegment[] rgid = new MemorySegment[2];
        for (int i = 0; i < 2; i++) {
            o.prelude(cBytes("rmac" + i, RMAC[i])).prelude(cBytes("rgid" + i, RGID[i]));
            rmac[i] = arena.allocate(6).copyFrom(MemorySegment.ofArray(RMAC[i]));
            rgid[i] = arena.allocate(16).copyFrom(MemorySegment.ofArray(RGID[i]));
        }
        long[] keys = {0x1111_1111L, 0, -1L, 0x8000_0000_0000_0000L, 0x1111_1111L << 32};
        // dqp_dct, ext, stat_rate_sl, fl_mlid, rlid, tclass, hop_limit, grh_gid_fi, which rmac/rgid
        int[] base = {0xABC, 1, 0x22, 0x33, 0x4455, 0x66, 0x77, 0x0102_0304, 0};
        int[][] edges = {{0, 0xFF_FFFF, 0xFFFF_FFFF, 0x8000_0000}, {0, 2, 3, 0xFF}, {0, 0xFF}, {0, 0x1FF},
                {0, 0xFFFF, 0x1_0005}, {0, 0xFF}, {0, 0x180}, {0, 0xFFFF_FFFF, 0x8000_0000}, {1}};
        int n = 0;
        for (long key : keys) {
            for (int[] v : vectors(base, edges, key == keys[0] ? 16 : 0, 2)) {
                int which = v[8] & 1;
                String args = u64(key) + ", " + u32(v[0]) + ", " + u32(v[1]) + ", " + u32(v[2]) + ", " + u32(v[3])
                        + ", " + u32(v[4]) + ", rmac" + which + ", " + u32(v[5]) + ", " + u32(v[6]) + ", "
                        + u32(v[7]) + ", rgid" + which;
                o.bytes("dgram" + n++, 48, "mlx5dv_set_dgram_seg((void *)p, " + args + ");",
                        (b, off) -> Mlx5dvInline.mlx5dv_set_dgram_seg(b, off, key, v[0], v[1], v[2], v[3], v[4],
                                rmac[which], v[5], v[6], v[7], rgid[which]));
            }
        }
        assertOracle(o);
    }

    @Test
    void ethSegMatchesC() {
        byte[] headers = new byte[64];
        for (int i = 0; i < headers.length; i++) {
            headers[i] = (byte) (i * 7 + 1);
        }
        MemorySegment hdr = Arena.ofAuto().allocate(64).copyFrom(MemorySegment.ofArray(headers));
        COracle o = new COracle("mlx5-eth-seg").prelude(cBytes("hdr", headers));
        int n = 0;
        for (int csFlags : new int[] {0, 0xFF, 0xC0, 0x1C0}) {
            for (int mss : new int[] {0, 0xFFFF, 0x5A5, 0x1_0001}) {
                for (int size : new int[] {0, 2, 18, 32, 0x1_0012}) {
                    String args = u32(csFlags) + ", " + u32(mss) + ", " + u32(size) + ", hdr";
                    o.bytes("eth" + n++, 48, "mlx5dv_set_eth_seg((void *)p, " + args + ");",
                            (b, off) -> Mlx5dvInline.mlx5dv_set_eth_seg(b, off, csFlags, mss, size, hdr));
                }
            }
        }
        assertOracle(o);
    }

    @Test
    void cqeHelpersMatchCForEveryOpOwnByte() {
        COracle o = new COracle("mlx5-cqe");
        for (int opOwn = 0; opOwn < 256; opOwn++) {
            byte b8 = (byte) opOwn;
            String set = "((struct mlx5_cqe64 *)p)->op_own = " + opOwn + ";";
            o.value("owner" + opOwn, set, "mlx5dv_get_cqe_owner((void *)p)", (b, off) -> {
                mlx5_cqe64.op_own(b.asSlice(off), b8);
                return Mlx5dvInline.mlx5dv_get_cqe_owner(b, off);
            });
            o.value("se" + opOwn, set, "mlx5dv_get_cqe_se((void *)p)", (b, off) -> {
                mlx5_cqe64.op_own(b.asSlice(off), b8);
                return Mlx5dvInline.mlx5dv_get_cqe_se(b, off);
            });
            o.value("format" + opOwn, set, "mlx5dv_get_cqe_format((void *)p)", (b, off) -> {
                mlx5_cqe64.op_own(b.asSlice(off), b8);
                return Mlx5dvInline.mlx5dv_get_cqe_format(b, off);
            });
            o.value("opcode" + opOwn, set, "mlx5dv_get_cqe_opcode((void *)p)", (b, off) -> {
                mlx5_cqe64.op_own(b.asSlice(off), b8);
                return Mlx5dvInline.mlx5dv_get_cqe_opcode(b, off);
            });
        }
        int n = 0;
        for (int opOwn : new int[] {0, 0xFF, 0xD3, 0x01, 0xFE, 0x5A}) {
            for (int val : new int[] {0, 1, 2, 3, 0xFF, 0x100}) {
                o.bytes("setowner" + n++, 64, "((struct mlx5_cqe64 *)p)->op_own = " + opOwn
                        + "; mlx5dv_set_cqe_owner((void *)p, " + u32(val) + ");", (b, off) -> {
                    mlx5_cqe64.op_own(b.asSlice(off), (byte) opOwn);
                    Mlx5dvInline.mlx5dv_set_cqe_owner(b, off, val);
                });
            }
        }
        assertOracle(o);
    }

    /** A CQE field reader of {@link Mlx5Cqe} and the C expression it must equal. */
    record CqeField(String name, String c, COracle.Reader java) {}

    static final List<CqeField> CQE_FIELDS = List.of(
            new CqeField("wqe_counter", "be16toh(c->wqe_counter)", Mlx5Cqe::wqe_counter),
            new CqeField("sop_drop_qpn", "be32toh(c->sop_drop_qpn)", (b, o) -> Mlx5Cqe.sop_drop_qpn(b, o) & 0xFFFF_FFFFL),
            new CqeField("qpn", "be32toh(c->sop_drop_qpn) & 0xffffff", Mlx5Cqe::qpn),
            new CqeField("byte_cnt", "be32toh(c->byte_cnt)", (b, o) -> Mlx5Cqe.byte_cnt(b, o) & 0xFFFF_FFFFL),
            new CqeField("imm_data", "c->imm_inval_pkey", (b, o) -> Mlx5Cqe.imm_data(b, o) & 0xFFFF_FFFFL),
            new CqeField("invalidated_rkey", "be32toh(c->imm_inval_pkey)",
                    (b, o) -> Mlx5Cqe.invalidated_rkey(b, o) & 0xFFFF_FFFFL),
            new CqeField("flags_rqpn", "be32toh(c->flags_rqpn)", (b, o) -> Mlx5Cqe.flags_rqpn(b, o) & 0xFFFF_FFFFL),
            new CqeField("srqn_uidx", "be32toh(c->srqn_uidx)", (b, o) -> Mlx5Cqe.srqn_uidx(b, o) & 0xFFFF_FFFFL),
            new CqeField("slid", "be16toh(c->slid)", Mlx5Cqe::slid),
            new CqeField("timestamp", "be64toh(c->timestamp)", Mlx5Cqe::timestamp),
            new CqeField("syndrome", "e->syndrome", Mlx5Cqe::syndrome),
            new CqeField("vendor_err_synd", "e->vendor_err_synd", Mlx5Cqe::vendor_err_synd),
            new CqeField("s_wqe_opcode_qpn", "be32toh(e->s_wqe_opcode_qpn)",
                    (b, o) -> Mlx5Cqe.s_wqe_opcode_qpn(b, o) & 0xFFFF_FFFFL));

    @Test
    void cqeFieldReadersMatchBeToHOfTheCMembers() {
        COracle o = new COracle("mlx5-cqe-fields");
        int n = 0;
        for (int seed : new int[] {0, 0x37, 0xFF, 0x80}) {
            String fill = "for (int i = 0; i < 64; i++) p[i] = (uint8_t)(i * 29 + " + seed + "); "
                    + "struct mlx5_cqe64 *c = (void *)p; struct mlx5_err_cqe *e = (void *)p; (void)c; (void)e;";
            for (CqeField f : CQE_FIELDS) {
                o.value("cqe_" + f.name() + n++, fill, f.c(), (b, off) -> {
                    for (int i = 0; i < 64; i++) {
                        b.set(JAVA_BYTE, off + i, (byte) (i * 29 + seed));
                    }
                    return f.java().read(b, off);
                });
            }
        }
        assertOracle(o);
    }

    @Test
    void tsToNsMatchesC() {
        // nsec, last_cycles, frac, mult, shift, mask: realistic 48-bit counter, 64-bit extremes, 16-bit wrap
        long[][] clocks = {
                {1_700_000_000_000_000_000L, 0x12_3456_789AL, 0x5555, 0x9C40_0000L, 24, 0xFFFF_FFFF_FFFFL},
                {-1L, -1L, -1L, 0xFFFF_FFFFL, 0, -1L},
                {0, 0x8000, 0x7FFF_FFFF_FFFF_FFFFL, 1, 63, 0xFFFF},
                {12345, 0, 0, 0x8000_0000L, 31, 0xFF_FFFF_FFFFL}};
        COracle o = new COracle("mlx5-ts-to-ns");
        int n = 0;
        for (long[] ci : clocks) {
            long mask = ci[5];
            long last = ci[1];
            long[] timestamps = {last, last + 1, last - 1, last + (mask >>> 1), last + (mask >>> 1) + 1,
                    last + mask, 0, -1L, 0x8000_0000_0000_0000L, last ^ 0x5A5A_5A5A_5A5AL};
            String set = "struct mlx5dv_clock_info *ci = (void *)p; ci->nsec = " + u64(ci[0]) + "; ci->last_cycles = "
                    + u64(ci[1]) + "; ci->frac = " + u64(ci[2]) + "; ci->mult = " + u32((int) ci[3])
                    + "; ci->shift = " + ci[4] + "; ci->mask = " + u64(mask) + ";";
            for (long ts : timestamps) {
                o.value("ts" + n++, set, "mlx5dv_ts_to_ns(ci, " + u64(ts) + ")", (b, off) -> {
                    MemorySegment s = b.asSlice(off, mlx5dv_clock_info.layout().byteSize());
                    mlx5dv_clock_info.nsec(s, ci[0]);
                    mlx5dv_clock_info.last_cycles(s, ci[1]);
                    mlx5dv_clock_info.frac(s, ci[2]);
                    mlx5dv_clock_info.mult(s, (int) ci[3]);
                    mlx5dv_clock_info.shift(s, (int) ci[4]);
                    mlx5dv_clock_info.mask(s, mask);
                    return Mlx5dvInline.mlx5dv_ts_to_ns(s, ts);
                });
            }
        }
        assertOracle(o);
    }

    @Test
    void devxFieldHelpersMatchC() {
        COracle o = new COracle("mlx5-devx");
        String pattern = "for (int i = 0; i < 16; i++) p[i] = (uint8_t)(i * 37 + 11);";
        COracle.Writer fill = (b, off) -> {
            for (int i = 0; i < 16; i++) {
                b.set(JAVA_BYTE, off + i, (byte) (i * 37 + 11));
            }
        };
        long[][] fields = {{0, 1}, {0, 32}, {31, 1}, {3, 5}, {40, 16}, {48, 16}, {95, 1}, {64, 31}, {65, 31}, {96, 32}};
        int n = 0;
        for (long[] f : fields) {
            for (int value : new int[] {0, 0xFFFF_FFFF, 0x5A5A_5A5A, 0x1234_5678}) {
                o.bytes("set" + n++, 16, "_devx_set(p, " + u32(value) + ", " + f[0] + ", " + f[1] + ");",
                        (b, off) -> Mlx5dvInline._devx_set(b, off, value, f[0], f[1]));
            }
            o.value("get" + n++, pattern, "_devx_get(p, " + f[0] + ", " + f[1] + ")", (b, off) -> {
                fill.write(b, off);
                return Mlx5dvInline._devx_get(b, off, f[0], f[1]) & 0xFFFF_FFFFL;
            });
        }
        for (long bitOff : new long[] {0, 63, 64, 100, 127}) {
            for (long v : EDGE64) {
                o.bytes("set64_" + n++, 16, "_devx_set64(p, " + u64(v) + ", " + bitOff + ");",
                        (b, off) -> Mlx5dvInline._devx_set64(b, off, v, bitOff));
            }
            o.value("get64_" + n++, pattern, "_devx_get64(p, " + bitOff + ")", (b, off) -> {
                fill.write(b, off);
                return Mlx5dvInline._devx_get64(b, off, bitOff);
            });
        }
        assertOracle(o);
    }

    @Test
    void outOfBoundsWritesThrowInsteadOfCorruptingMemory() {
        MemorySegment seg = Arena.ofAuto().allocate(16);
        assertThatThrownBy(() -> Mlx5dvInline.mlx5dv_set_ctrl_seg(seg, 8, 0, 0, 0, 0, 0, 0, 0, 0))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> Mlx5dvInline.mlx5dv_set_data_seg(seg, 1, 0, 0, 0))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> Mlx5dvInline.mlx5dv_get_cqe_opcode(seg, 0))
                .isInstanceOf(IndexOutOfBoundsException.class);
        MemorySegment eth = Arena.ofAuto().allocate(64);
        assertThatThrownBy(() -> Mlx5dvInline.mlx5dv_set_eth_seg(eth, 0, 0, 0, 20, seg))
                .as("an inline header longer than its source").isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> Mlx5dvInline.mlx5dv_set_dgram_seg(eth, 0, 0, 0, 0, 0, 0, 0, seg.asSlice(0, 4), 0, 0, 0, seg))
                .as("a MAC shorter than 6 bytes").isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void devxFieldsCrossingAWordAreRefused() {
        MemorySegment seg = Arena.ofAuto().allocate(16);
        assertThatThrownBy(() -> Mlx5dvInline._devx_set(seg, 0, 1, 30, 4))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("4 bits at bit 30");
        assertThatThrownBy(() -> Mlx5dvInline._devx_get(seg, 0, 0, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Mlx5dvInline._devx_get(seg, 0, 0, 33)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void sizeInjectingWrappersRefuseShortOutputBeforeCallingC() {
        MemorySegment small = Arena.ofAuto().allocate(8);
        assertThat(Mlx5dvInline.MLX5DV_PORT_SIZE).isEqualTo(40);
        assertThat(Mlx5dvInline.MLX5DV_MKEY_ERR_SIZE).isEqualTo(32);
        assertThatThrownBy(() -> Mlx5dvInline.mlx5dv_query_port(MemorySegment.NULL, 1, small))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("mlx5dv_query_port: the output segment has 8 bytes, struct mlx5dv_port needs 40 "
                        + "(the C function would write past it)");
        assertThatThrownBy(() -> Mlx5dvInline.mlx5dv_mkey_check(MemorySegment.NULL, small))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("struct mlx5dv_mkey_err needs 32");
    }
}
