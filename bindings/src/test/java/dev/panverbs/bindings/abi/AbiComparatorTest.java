package dev.panverbs.bindings.abi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.panverbs.bindings.abi.AbiModel.Constant;
import dev.panverbs.bindings.abi.AbiModel.ConstantKind;
import dev.panverbs.bindings.abi.AbiProgram.CResult;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The ABI check can fail: deliberately wrong layouts and values are reported naming the field or constant. */
class AbiComparatorTest {

    /** {@code struct ibv_sge} with {@code length} and {@code lkey} swapped (C: addr @0, length @8, lkey @12). */
    static final GroupLayout SWAPPED_SGE = MemoryLayout.structLayout(
            JAVA_LONG.withName("addr"), JAVA_INT.withName("lkey"), JAVA_INT.withName("length")).withName("ibv_sge");

    @Test
    void wrongLayoutAndConstantsAgainstGccNameTheFieldAndConstant() {
        AbiModel wrong = new AbiModel(
                List.of(AbiModel.type("test.ibv_sge", "struct ibv_sge", SWAPPED_SGE),
                        // grh as bytes (C: struct, align 8), dlid moved after sl, 4 bytes short
                        AbiModel.type("test.ibv_ah_attr", "struct ibv_ah_attr", MemoryLayout.structLayout(
                                MemoryLayout.sequenceLayout(24, JAVA_BYTE).withName("grh"),
                                JAVA_BYTE.withName("sl"), JAVA_BYTE.withName("static_rate"),
                                JAVA_SHORT.withName("dlid")).withName("ibv_ah_attr"))),
                List.of(new Constant("verbs_h", "IBV_QPT_RC", ConstantKind.INT, 3),
                        new Constant("verbs_h", "IBV_QPT_UD", ConstantKind.INT, 4),
                        new Constant("verbs_h", "IBV_DEVICE_RAW_SCATTER_FCS", ConstantKind.INT, 0),
                        new Constant("mlx5dv_h", "MLX5DV_RES_TYPE_QP", ConstantKind.LONG, 1),
                        new Constant("verbs_h", "IBV_ALLOCATOR_USE_DEFAULT", ConstantKind.POINTER, 0)));

        CResult c = AbiProgram.run(CToolchain.get(), "abi-comparator-selftest", wrong);
        List<String> mismatches = AbiComparator.compare(wrong, c);

        assertThat(mismatches).containsExactly(
                "struct ibv_ah_attr: sizeof Java 28, C 32",
                "struct ibv_ah_attr: alignof Java 2, C 8",
                "struct ibv_sge.lkey: offset Java 8, C 12",
                "struct ibv_sge.length: offset Java 12, C 8",
                "struct ibv_ah_attr.grh: alignof Java 1, C 8",
                "struct ibv_ah_attr.sl: offset Java 24, C 26",
                "struct ibv_ah_attr.static_rate: offset Java 25, C 28",
                "struct ibv_ah_attr.dlid: offset Java 26, C 24",
                "verbs_h.IBV_QPT_RC: Java 3, C 2",
                "verbs_h.IBV_DEVICE_RAW_SCATTER_FCS: Java int 0 cannot hold C value 17179869184",
                "mlx5dv_h.MLX5DV_RES_TYPE_QP: Java 1, C 4294967297",
                "verbs_h.IBV_ALLOCATOR_USE_DEFAULT: Java address 0x0, C 0xffffffffffffffff");
    }

    @Test
    void sizeAlignmentAndMissingOutputAreReported() {
        AbiModel model = new AbiModel(
                List.of(AbiModel.type("t.x", "struct x", MemoryLayout.structLayout(
                        JAVA_INT.withName("a"), JAVA_INT.withName("b")).withName("x"))),
                List.of(new Constant("h", "K", ConstantKind.INT, -1)));
        // C says: sizeof 12 align 4; a @0 size 4 align 4; b missing; K = 0xFFFFFFFF as unsigned int
        CResult c = new CResult("gcc test", new long[][] {{12, 4}}, new long[][] {{0, 4, 4}, null},
                new long[][] {{0xFFFF_FFFFL, 0}});
        assertThat(AbiComparator.compare(model, c)).containsExactly(
                "struct x: sizeof Java 8, C 12", "struct x.b: gcc printed nothing");
    }

    @Test
    void unsignedEnumValuesFitAnIntButWiderValuesDoNot() {
        Constant inlineSeg = new Constant("mlx5dv_h", "MLX5_INLINE_SEG", ConstantKind.INT, Integer.MIN_VALUE);
        assertThat(AbiComparator.constantProblem(inlineSeg, 0x8000_0000L, false)).isNull();
        assertThat(AbiComparator.constantProblem(inlineSeg, 0x1_8000_0000L, false))
                .isEqualTo("mlx5dv_h.MLX5_INLINE_SEG: Java int -2147483648 cannot hold C value 6442450944");
        Constant unknown = new Constant("verbs_h", "IBV_NODE_UNKNOWN", ConstantKind.INT, -1);
        assertThat(AbiComparator.constantProblem(unknown, -1, true)).isNull();
        assertThat(AbiComparator.constantProblem(unknown, 0xFFFF_FFFFL, false)).isNull(); // same 32 bits
        assertThat(AbiComparator.constantProblem(unknown, -2, true)).isEqualTo("verbs_h.IBV_NODE_UNKNOWN: Java -1, C -2");
    }

    @Test
    void packedMemberAlignmentIsAcceptedOnlyWherePlacementGuaranteesIt() {
        // mlx5_wqe_ctrl_seg: packed (member align 1) + aligned(4); imm at offset 12 may be read as an aligned int
        assertThat(AbiComparator.alignmentAgrees(4, 1, 4, 12)).isTrue();
        // dci_stream_channel_id at offset 9: a 2-aligned Java short would reject valid C addresses
        assertThat(AbiComparator.alignmentAgrees(2, 1, 4, 9)).isFalse();
        // Java asking for less than C declares is a mismatch too
        assertThat(AbiComparator.alignmentAgrees(4, 8, 8, 8)).isFalse();
    }

    @Test
    void anonymousMembersAddNothingToTheCPath() {
        var anon = MemoryLayout.unionLayout(JAVA_INT.withName("imm_data"), JAVA_INT.withName("invalidated_rkey"))
                .withName("$anon$1:1");
        var t = AbiModel.type("t.w", "struct w", MemoryLayout.structLayout(
                ADDRESS.withName("p"), anon, MemoryLayout.paddingLayout(4)).withName("w"));
        assertThat(t.fields()).extracting(AbiModel.Field::path, AbiModel.Field::offset)
                .containsExactly(tuple("p", 0L), tuple("imm_data", 8L), tuple("invalidated_rkey", 8L));
        assertThat(t.unexplainedPadding()).isEmpty();
    }

    /**
     * What jextract (openjdk/jextract master, as used by src-gen/regenerate.sh) emits for
     * {@code struct bf { unsigned a : 3; unsigned b : 5; int c; unsigned long long d : 40; char e; }}: it
     * prints "Skipping bf.a (bitfields are not supported)" (which regenerate.sh filters out) and puts padding
     * where the bit-fields were. offsetof cannot name a bit-field, so the audit reports such padding instead.
     */
    @Test
    void bitFieldsThatJextractTurnedIntoPaddingAreReported() {
        var bf = AbiModel.type("t.bf", "struct bf", MemoryLayout.structLayout(
                MemoryLayout.paddingLayout(4), JAVA_INT.withName("c"), MemoryLayout.paddingLayout(5),
                JAVA_BYTE.withName("e"), MemoryLayout.paddingLayout(2)).withName("bf"));
        assertThat(bf.unexplainedPadding()).containsExactly(
                new AbiModel.Padding("struct bf", 0, 4), new AbiModel.Padding("struct bf", 8, 5));
        assertThat(bf.fields()).extracting(AbiModel.Field::path).containsExactly("c", "e");
    }
}
