package dev.panverbs.bindings.mlx5;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.UnsupportedSlotException;
import dev.panverbs.bindings.abi.CToolchain;
import dev.panverbs.bindings.mlx5dv.mlx5dv_qp_ex;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The {@code mlx5dv_wr_*} twins call the right {@code struct mlx5dv_qp_ex} slot with the right arguments,
 * and refuse NULL slots. The slots are filled with C stubs (a gcc-built library) that record which slot ran
 * and the arguments as C received them. Each stub is assigned to its slot in C with {@code -Werror}, so its
 * prototype is the header's; recorded values therefore prove the Java handles pass each argument with the
 * width and order the C slot type declares (uint16_t 0xBEEF arrives as 0xBEEF, not sign-extended).
 *
 * <p>C stubs rather than Java upcall stubs: the twins link their handles with
 * {@code Linker.Option.critical(false)}, and a critical downcall must not call back into Java.
 */
class Mlx5dvInlineWrTest {

    static final String STUBS = """
            #include <stdint.h>
            #include <string.h>
            #include <infiniband/mlx5dv.h>

            struct recorded { uint64_t slot, mqp, arg[6]; };
            struct recorded panverbs_last;

            #define REC(n, ...) do { uint64_t a[] = {__VA_ARGS__}; memset(&panverbs_last, 0, sizeof panverbs_last); \\
                panverbs_last.slot = n; panverbs_last.mqp = (uintptr_t)mqp; memcpy(panverbs_last.arg, a, sizeof a); } while (0)
            #define P(x) (uint64_t)(uintptr_t)(x)

            static void set_dc_addr(struct mlx5dv_qp_ex *mqp, struct ibv_ah *ah, uint32_t dctn, uint64_t key)
            { REC(1, P(ah), dctn, key); }
            static void mr_interleaved(struct mlx5dv_qp_ex *mqp, struct mlx5dv_mkey *mkey, uint32_t access,
                                       uint32_t repeat, uint16_t num, struct mlx5dv_mr_interleaved *data)
            { REC(2, P(mkey), access, repeat, num, P(data)); }
            static void mr_list(struct mlx5dv_qp_ex *mqp, struct mlx5dv_mkey *mkey, uint32_t access, uint16_t num,
                                struct ibv_sge *sge)
            { REC(3, P(mkey), access, num, P(sge)); }
            static void mkey_configure(struct mlx5dv_qp_ex *mqp, struct mlx5dv_mkey *mkey, uint8_t setters,
                                       struct mlx5dv_mkey_conf_attr *attr)
            { REC(4, P(mkey), setters, P(attr)); }
            static void set_mkey_access_flags(struct mlx5dv_qp_ex *mqp, uint32_t access) { REC(5, access); }
            static void set_mkey_layout_list(struct mlx5dv_qp_ex *mqp, uint16_t num, const struct ibv_sge *sge)
            { REC(6, num, P(sge)); }
            static void set_mkey_layout_interleaved(struct mlx5dv_qp_ex *mqp, uint32_t repeat, uint16_t num,
                                                    const struct mlx5dv_mr_interleaved *data)
            { REC(7, repeat, num, P(data)); }
            static void set_mkey_sig_block(struct mlx5dv_qp_ex *mqp, const struct mlx5dv_sig_block_attr *attr)
            { REC(8, P(attr)); }
            static void raw_wqe(struct mlx5dv_qp_ex *mqp, const void *wqe) { REC(9, P(wqe)); }
            static void set_dc_addr_stream(struct mlx5dv_qp_ex *mqp, struct ibv_ah *ah, uint32_t dctn, uint64_t key,
                                           uint16_t stream)
            { REC(10, P(ah), dctn, key, stream); }
            static void memcpy_(struct mlx5dv_qp_ex *mqp, uint32_t dlkey, uint64_t daddr, uint32_t slkey,
                                uint64_t saddr, size_t len)
            { REC(11, dlkey, daddr, slkey, saddr, len); }
            static void set_mkey_crypto(struct mlx5dv_qp_ex *mqp, const struct mlx5dv_crypto_attr *attr)
            { REC(12, P(attr)); }

            void panverbs_fill(struct mlx5dv_qp_ex *q) {
                q->wr_set_dc_addr = set_dc_addr;
                q->wr_mr_interleaved = mr_interleaved;
                q->wr_mr_list = mr_list;
                q->wr_mkey_configure = mkey_configure;
                q->wr_set_mkey_access_flags = set_mkey_access_flags;
                q->wr_set_mkey_layout_list = set_mkey_layout_list;
                q->wr_set_mkey_layout_interleaved = set_mkey_layout_interleaved;
                q->wr_set_mkey_sig_block = set_mkey_sig_block;
                q->wr_raw_wqe = raw_wqe;
                q->wr_set_dc_addr_stream = set_dc_addr_stream;
                q->wr_memcpy = memcpy_;
                q->wr_set_mkey_crypto = set_mkey_crypto;
            }
            """;

    static MethodHandle fill;
    static MemorySegment last;

    // distinctive pointers and values: all-ones, sign bits, values wider than the C parameter
    static final MemorySegment A = MemorySegment.ofAddress(0x1122_3344_5566_7788L);
    static final MemorySegment B = MemorySegment.ofAddress(0x7FFF_0000_0000_1000L);

    /** One twin call, the slot id its stub records, and the arguments C must have received. */
    record Call(Mlx5dvQpExOp op, long slot, Consumer<MemorySegment> call, long... expected) {}

    static final List<Call> CALLS = List.of(
            new Call(Mlx5dvQpExOp.SET_DC_ADDR, 1, q -> Mlx5dvInlineWr.mlx5dv_wr_set_dc_addr(q, A, 0xFFFF_FFFF,
                    0x8000_0000_0000_0001L), A.address(), 0xFFFF_FFFFL, 0x8000_0000_0000_0001L),
            new Call(Mlx5dvQpExOp.MR_INTERLEAVED, 2, q -> Mlx5dvInlineWr.mlx5dv_wr_mr_interleaved(q, A, 0x8000_000F,
                    0xFFFF_FFFE, 0x1_BEEF, B), A.address(), 0x8000_000FL, 0xFFFF_FFFEL, 0xBEEF, B.address()),
            new Call(Mlx5dvQpExOp.MR_LIST, 3, q -> Mlx5dvInlineWr.mlx5dv_wr_mr_list(q, B, 7, 0xFFFF, A),
                    B.address(), 7, 0xFFFF, A.address()),
            new Call(Mlx5dvQpExOp.MKEY_CONFIGURE, 4, q -> Mlx5dvInlineWr.mlx5dv_wr_mkey_configure(q, A, 0x1FE, B),
                    A.address(), 0xFE, B.address()),
            new Call(Mlx5dvQpExOp.SET_MKEY_ACCESS_FLAGS, 5,
                    q -> Mlx5dvInlineWr.mlx5dv_wr_set_mkey_access_flags(q, 0x8000_0001), 0x8000_0001L),
            new Call(Mlx5dvQpExOp.SET_MKEY_LAYOUT_LIST, 6,
                    q -> Mlx5dvInlineWr.mlx5dv_wr_set_mkey_layout_list(q, 0x8000, A), 0x8000, A.address()),
            new Call(Mlx5dvQpExOp.SET_MKEY_LAYOUT_INTERLEAVED, 7,
                    q -> Mlx5dvInlineWr.mlx5dv_wr_set_mkey_layout_interleaved(q, -1, 2, B), 0xFFFF_FFFFL, 2, B.address()),
            new Call(Mlx5dvQpExOp.SET_MKEY_SIG_BLOCK, 8, q -> Mlx5dvInlineWr.mlx5dv_wr_set_mkey_sig_block(q, A), A.address()),
            new Call(Mlx5dvQpExOp.RAW_WQE, 9, q -> Mlx5dvInlineWr.mlx5dv_wr_raw_wqe(q, B), B.address()),
            new Call(Mlx5dvQpExOp.SET_DC_ADDR_STREAM, 10, q -> Mlx5dvInlineWr.mlx5dv_wr_set_dc_addr_stream(q, B, 0x00AB_CDEF,
                    -1L, 0xBEEF), B.address(), 0xAB_CDEF, -1L, 0xBEEF),
            new Call(Mlx5dvQpExOp.MEMCPY, 11, q -> Mlx5dvInlineWr.mlx5dv_wr_memcpy(q, 0x8000_0000, 0x1000_2000_3000_4000L,
                    0xFFFF_FFFF, -2L, 0x7FFF_FFFF_FFFF_FFFFL), 0x8000_0000L, 0x1000_2000_3000_4000L, 0xFFFF_FFFFL, -2L,
                    0x7FFF_FFFF_FFFF_FFFFL),
            new Call(Mlx5dvQpExOp.SET_MKEY_CRYPTO, 12, q -> Mlx5dvInlineWr.mlx5dv_wr_set_mkey_crypto(q, A), A.address()));

    @BeforeAll
    static void buildStubs() {
        var lib = CToolchain.get().compileSharedLibrary("mlx5dv-qp-ex-stubs", STUBS);
        SymbolLookup stubs = SymbolLookup.libraryLookup(lib, Arena.global());
        fill = Linker.nativeLinker().downcallHandle(stubs.find("panverbs_fill").orElseThrow(), FunctionDescriptor.ofVoid(ADDRESS));
        last = stubs.find("panverbs_last").orElseThrow().reinterpret(8 * 8);
    }

    static MemorySegment filledQpEx(Arena arena) throws Throwable {
        MemorySegment mqp = mlx5dv_qp_ex.allocate(arena);
        fill.invokeExact(mqp);
        return mqp;
    }

    @Test
    void everyBuilderCallsItsSlotWithTheArgumentsCReceives() throws Throwable {
        assertThat(CALLS).extracting(Call::op).containsExactlyInAnyOrder(Mlx5dvQpExOp.values());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mqp = filledQpEx(arena);
            for (Call c : CALLS) {
                last.fill((byte) 0);
                c.call().accept(mqp);
                long[] recorded = last.toArray(JAVA_LONG);
                assertThat(recorded[0]).as("slot called by " + c.op().verb()).isEqualTo(c.slot());
                assertThat(recorded[1]).as(c.op().verb() + " passes mqp first").isEqualTo(mqp.address());
                assertThat(Arrays.copyOfRange(recorded, 2, 2 + c.expected().length))
                        .as(c.op().verb() + " arguments as C received them").containsExactly(c.expected());
            }
        }
    }

    @Test
    void nullSlotThrowsNamingTheOperationInsteadOfCrashing() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mqp = mlx5dv_qp_ex.allocate(arena).fill((byte) 0);
            for (Call c : CALLS) {
                assertThatThrownBy(() -> c.call().accept(mqp)).as(c.op().verb())
                        .isInstanceOf(UnsupportedSlotException.class)
                        .hasMessage(c.op().verb() + ": mlx5dv_qp_ex." + c.op().slot() + " is NULL: libmlx5 fills it "
                                + "only for " + c.op().enabledBy());
            }
        }
        assertThatThrownBy(() -> Mlx5dvInlineWr.mlx5dv_wr_memcpy(
                mlx5dv_qp_ex.allocate(Arena.ofAuto()).fill((byte) 0), 0, 0, 0, 0, 0))
                .hasMessage("mlx5dv_wr_memcpy: mlx5dv_qp_ex.wr_memcpy is NULL: libmlx5 "
                        + "fills it only for an RC or DCI QP created by mlx5dv_create_qp with MLX5DV_QP_EX_WITH_MEMCPY "
                        + "in send_ops_flags (mlx5dv_context.max_wr_memcpy_length > 0)");
    }

    @Test
    void oneMissingSlotIsDetectedUpFrontAndTheOthersStillWork() throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mqp = filledQpEx(arena);
            mqp.set(ADDRESS, Mlx5dvQpExOp.RAW_WQE.offset(), MemorySegment.NULL);
            for (Mlx5dvQpExOp op : Mlx5dvQpExOp.values()) {
                assertThat(op.isAvailable(mqp)).as(op.slot()).isEqualTo(op != Mlx5dvQpExOp.RAW_WQE);
            }
            assertThatThrownBy(() -> Mlx5dvQpExOp.RAW_WQE.require(mqp))
                    .isInstanceOf(UnsupportedSlotException.class).hasMessageContaining("MLX5DV_QP_EX_WITH_RAW_WQE");
            Mlx5dvQpExOp.MEMCPY.require(mqp);
            Mlx5dvInlineWr.mlx5dv_wr_set_mkey_access_flags(mqp, 3);
            assertThat(last.get(JAVA_LONG, 0)).isEqualTo(5);
        }
    }

    @Test
    void slotOffsetsAreTheHeaders() {
        // struct mlx5dv_qp_ex: comp_mask at 0, then the twelve pointers in declaration order (gcc, x86_64)
        assertThat(Arrays.stream(Mlx5dvQpExOp.values()).mapToLong(Mlx5dvQpExOp::offset).toArray())
                .containsExactly(8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96);
        assertThat(Arrays.stream(Mlx5dvQpExOp.values()).map(Mlx5dvQpExOp::slot)).containsExactly(
                "wr_set_dc_addr", "wr_mr_interleaved", "wr_mr_list", "wr_mkey_configure", "wr_set_mkey_access_flags",
                "wr_set_mkey_layout_list", "wr_set_mkey_layout_interleaved", "wr_set_mkey_sig_block", "wr_raw_wqe",
                "wr_set_dc_addr_stream", "wr_memcpy", "wr_set_mkey_crypto");
    }

    @Test
    void qpExTooSmallIsAnExceptionNotACrash() {
        MemorySegment tooSmall = Arena.ofAuto().allocate(16);
        assertThatThrownBy(() -> Mlx5dvInlineWr.mlx5dv_wr_memcpy(tooSmall, 0, 0, 0, 0, 0))
                .isInstanceOf(IndexOutOfBoundsException.class);
    }
}
