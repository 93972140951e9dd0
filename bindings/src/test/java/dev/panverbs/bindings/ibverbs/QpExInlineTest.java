package dev.panverbs.bindings.ibverbs;

import static dev.panverbs.bindings.ibverbs.FakeVerbs.args;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.UnsupportedSlotException;
import dev.panverbs.bindings.verbs.ibv_qp_ex;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** Every {@code ibv_wr_*} twin and its {@link QpExOps} route call the right slot with the right arguments. */
class QpExInlineTest {

    private static final int RKEY = 0x1234_5678;
    private static final long RADDR = 0x1122_3344_5566_7788L;
    private static final int IMM = 0xCAFE_BABE;

    /**
     * One builder: its slot, its arguments after {@code qp} and two ways to call it (twin and bound route),
     * each returning the C result ({@code null} for void).
     */
    record Builder(String verb, long offset, FunctionDescriptor descriptor, Object ret, List<Object> args,
            BiFunction<FakeVerbs, MemorySegment, Object> twin, BiFunction<FakeVerbs, QpExOps, Object> bound) {
        @Override
        public String toString() {
            return verb;
        }
    }

    private static Builder v(String verb, long offset, FunctionDescriptor d, List<Object> args,
            BiFunction<FakeVerbs, MemorySegment, Object> twin, BiFunction<FakeVerbs, QpExOps, Object> bound) {
        return new Builder(verb, offset, d, null, args, twin, bound);
    }

    /** The arena-independent arguments of the builders that take pointers are filled per fixture. */
    static List<Builder> builders(FakeVerbs f) {
        MemorySegment buf = f.arena.allocate(64);
        MemorySegment list = f.arena.allocate(32);
        return List.of(
                v("ibv_wr_atomic_cmp_swp", ibv_qp_ex.wr_atomic_cmp_swp$offset(),
                        ibv_qp_ex.wr_atomic_cmp_swp.descriptor(), args(RKEY, RADDR, 7L, 9L),
                        (x, qp) -> { QpExInline.ibv_wr_atomic_cmp_swp(qp, RKEY, RADDR, 7L, 9L); return null; },
                        (x, o) -> { o.ibv_wr_atomic_cmp_swp(RKEY, RADDR, 7L, 9L); return null; }),
                v("ibv_wr_atomic_fetch_add", ibv_qp_ex.wr_atomic_fetch_add$offset(),
                        ibv_qp_ex.wr_atomic_fetch_add.descriptor(), args(RKEY, RADDR, 5L),
                        (x, qp) -> { QpExInline.ibv_wr_atomic_fetch_add(qp, RKEY, RADDR, 5L); return null; },
                        (x, o) -> { o.ibv_wr_atomic_fetch_add(RKEY, RADDR, 5L); return null; }),
                v("ibv_wr_bind_mw", ibv_qp_ex.wr_bind_mw$offset(), ibv_qp_ex.wr_bind_mw.descriptor(),
                        args(f.mw, RKEY, buf),
                        (x, qp) -> { QpExInline.ibv_wr_bind_mw(qp, x.mw, RKEY, buf); return null; },
                        (x, o) -> { o.ibv_wr_bind_mw(x.mw, RKEY, buf); return null; }),
                v("ibv_wr_local_inv", ibv_qp_ex.wr_local_inv$offset(), ibv_qp_ex.wr_local_inv.descriptor(),
                        args(RKEY),
                        (x, qp) -> { QpExInline.ibv_wr_local_inv(qp, RKEY); return null; },
                        (x, o) -> { o.ibv_wr_local_inv(RKEY); return null; }),
                v("ibv_wr_rdma_read", ibv_qp_ex.wr_rdma_read$offset(), ibv_qp_ex.wr_rdma_read.descriptor(),
                        args(RKEY, RADDR),
                        (x, qp) -> { QpExInline.ibv_wr_rdma_read(qp, RKEY, RADDR); return null; },
                        (x, o) -> { o.ibv_wr_rdma_read(RKEY, RADDR); return null; }),
                v("ibv_wr_rdma_write", ibv_qp_ex.wr_rdma_write$offset(), ibv_qp_ex.wr_rdma_write.descriptor(),
                        args(RKEY, RADDR),
                        (x, qp) -> { QpExInline.ibv_wr_rdma_write(qp, RKEY, RADDR); return null; },
                        (x, o) -> { o.ibv_wr_rdma_write(RKEY, RADDR); return null; }),
                v("ibv_wr_rdma_write_imm", ibv_qp_ex.wr_rdma_write_imm$offset(),
                        ibv_qp_ex.wr_rdma_write_imm.descriptor(), args(RKEY, RADDR, IMM),
                        (x, qp) -> { QpExInline.ibv_wr_rdma_write_imm(qp, RKEY, RADDR, IMM); return null; },
                        (x, o) -> { o.ibv_wr_rdma_write_imm(RKEY, RADDR, IMM); return null; }),
                v("ibv_wr_send", ibv_qp_ex.wr_send$offset(), ibv_qp_ex.wr_send.descriptor(), args(),
                        (x, qp) -> { QpExInline.ibv_wr_send(qp); return null; },
                        (x, o) -> { o.ibv_wr_send(); return null; }),
                v("ibv_wr_send_imm", ibv_qp_ex.wr_send_imm$offset(), ibv_qp_ex.wr_send_imm.descriptor(), args(IMM),
                        (x, qp) -> { QpExInline.ibv_wr_send_imm(qp, IMM); return null; },
                        (x, o) -> { o.ibv_wr_send_imm(IMM); return null; }),
                v("ibv_wr_send_inv", ibv_qp_ex.wr_send_inv$offset(), ibv_qp_ex.wr_send_inv.descriptor(),
                        args(RKEY),
                        (x, qp) -> { QpExInline.ibv_wr_send_inv(qp, RKEY); return null; },
                        (x, o) -> { o.ibv_wr_send_inv(RKEY); return null; }),
                v("ibv_wr_send_tso", ibv_qp_ex.wr_send_tso$offset(), ibv_qp_ex.wr_send_tso.descriptor(),
                        args(buf, (short) 54, (short) 1460),
                        (x, qp) -> { QpExInline.ibv_wr_send_tso(qp, buf, (short) 54, (short) 1460); return null; },
                        (x, o) -> { o.ibv_wr_send_tso(buf, (short) 54, (short) 1460); return null; }),
                v("ibv_wr_set_ud_addr", ibv_qp_ex.wr_set_ud_addr$offset(), ibv_qp_ex.wr_set_ud_addr.descriptor(),
                        args(buf, 0x00AB_CDEF, 0x1111_1111),
                        (x, qp) -> { QpExInline.ibv_wr_set_ud_addr(qp, buf, 0x00AB_CDEF, 0x1111_1111); return null; },
                        (x, o) -> { o.ibv_wr_set_ud_addr(buf, 0x00AB_CDEF, 0x1111_1111); return null; }),
                v("ibv_wr_set_xrc_srqn", ibv_qp_ex.wr_set_xrc_srqn$offset(),
                        ibv_qp_ex.wr_set_xrc_srqn.descriptor(), args(77),
                        (x, qp) -> { QpExInline.ibv_wr_set_xrc_srqn(qp, 77); return null; },
                        (x, o) -> { o.ibv_wr_set_xrc_srqn(77); return null; }),
                v("ibv_wr_set_inline_data", ibv_qp_ex.wr_set_inline_data$offset(),
                        ibv_qp_ex.wr_set_inline_data.descriptor(), args(buf, 64L),
                        (x, qp) -> { QpExInline.ibv_wr_set_inline_data(qp, buf, 64L); return null; },
                        (x, o) -> { o.ibv_wr_set_inline_data(buf, 64L); return null; }),
                v("ibv_wr_set_inline_data_list", ibv_qp_ex.wr_set_inline_data_list$offset(),
                        ibv_qp_ex.wr_set_inline_data_list.descriptor(), args(2L, list),
                        (x, qp) -> { QpExInline.ibv_wr_set_inline_data_list(qp, 2L, list); return null; },
                        (x, o) -> { o.ibv_wr_set_inline_data_list(2L, list); return null; }),
                v("ibv_wr_set_sge", ibv_qp_ex.wr_set_sge$offset(), ibv_qp_ex.wr_set_sge.descriptor(),
                        args(0x42, RADDR, 4096),
                        (x, qp) -> { QpExInline.ibv_wr_set_sge(qp, 0x42, RADDR, 4096); return null; },
                        (x, o) -> { o.ibv_wr_set_sge(0x42, RADDR, 4096); return null; }),
                v("ibv_wr_set_sge_list", ibv_qp_ex.wr_set_sge_list$offset(), ibv_qp_ex.wr_set_sge_list.descriptor(),
                        args(2L, list),
                        (x, qp) -> { QpExInline.ibv_wr_set_sge_list(qp, 2L, list); return null; },
                        (x, o) -> { o.ibv_wr_set_sge_list(2L, list); return null; }),
                v("ibv_wr_start", ibv_qp_ex.wr_start$offset(), ibv_qp_ex.wr_start.descriptor(), args(),
                        (x, qp) -> { QpExInline.ibv_wr_start(qp); return null; },
                        (x, o) -> { o.ibv_wr_start(); return null; }),
                new Builder("ibv_wr_complete", ibv_qp_ex.wr_complete$offset(), ibv_qp_ex.wr_complete.descriptor(),
                        12, args(), (x, qp) -> QpExInline.ibv_wr_complete(qp), (x, o) -> o.ibv_wr_complete()),
                v("ibv_wr_abort", ibv_qp_ex.wr_abort$offset(), ibv_qp_ex.wr_abort.descriptor(), args(),
                        (x, qp) -> { QpExInline.ibv_wr_abort(qp); return null; },
                        (x, o) -> { o.ibv_wr_abort(); return null; }),
                v("ibv_wr_atomic_write", ibv_qp_ex.wr_atomic_write$offset(), ibv_qp_ex.wr_atomic_write.descriptor(),
                        args(RKEY, RADDR, buf),
                        (x, qp) -> { QpExInline.ibv_wr_atomic_write(qp, RKEY, RADDR, buf); return null; },
                        (x, o) -> { o.ibv_wr_atomic_write(RKEY, RADDR, buf); return null; }));
    }

    @Test
    void everyBuilderSlotIsCovered() {
        try (FakeVerbs f = new FakeVerbs()) {
            // 21 function pointers from wr_atomic_cmp_swp (+184) to wr_atomic_write (+344)
            assertThat(builders(f)).hasSize(21)
                    .extracting(Builder::offset).doesNotHaveDuplicates()
                    .allMatch(off -> off >= ibv_qp_ex.wr_atomic_cmp_swp$offset()
                            && off <= ibv_qp_ex.wr_atomic_write$offset());
        }
    }

    @TestFactory
    Stream<DynamicTest> twinCallsItsSlot() {
        return names().map(verb -> DynamicTest.dynamicTest(verb, () -> {
            try (FakeVerbs f = new FakeVerbs()) {
                Builder b = find(f, verb);
                f.install(f.qp, b.offset(), verb, b.descriptor(), b.ret());
                Object result = b.twin().apply(f, f.qp);
                assertThat(result).isEqualTo(b.ret());
                assertThat(f.onlyCall()).isEqualTo(new FakeVerbs.Call(verb, concat(f.qp, b.args())));
            }
        }));
    }

    @TestFactory
    Stream<DynamicTest> boundRouteCallsTheSlotReadAtBindTime() {
        return names().map(verb -> DynamicTest.dynamicTest(verb, () -> {
            try (FakeVerbs f = new FakeVerbs()) {
                Builder b = find(f, verb);
                f.install(f.qp, b.offset(), verb, b.descriptor(), b.ret());
                QpExOps ops = QpExOps.of(f.qp);
                // rebinding the slot after of() must not matter: the address was read once
                f.qp.set(ValueLayout.ADDRESS, b.offset(), f.forbidden(verb, b.descriptor()));
                Object result = b.bound().apply(f, ops);
                assertThat(result).isEqualTo(b.ret());
                assertThat(f.onlyCall()).isEqualTo(new FakeVerbs.Call(verb, concat(f.qp, b.args())));
            }
        }));
    }

    @TestFactory
    Stream<DynamicTest> nullSlotThrowsNamingTheVerbAndTheMissingFlag() {
        return names().map(verb -> DynamicTest.dynamicTest(verb, () -> {
            try (FakeVerbs f = new FakeVerbs()) {
                Builder b = find(f, verb);
                String slot = "ibv_qp_ex." + verb.substring(4) + " is NULL: ";
                assertThatThrownBy(() -> b.twin().apply(f, f.qp))
                        .isInstanceOf(UnsupportedSlotException.class)
                        .hasMessageStartingWith(verb + ": " + slot);
                assertThatThrownBy(() -> b.bound().apply(f, QpExOps.of(f.qp)))
                        .isInstanceOf(UnsupportedSlotException.class)
                        .hasMessageStartingWith(verb + ": " + slot);
                assertThat(f.calls).isEmpty();
            }
        }));
    }

    @Test
    void nullWrSendNamesTheSendOpsFlag() {
        try (FakeVerbs f = new FakeVerbs()) {
            assertThatThrownBy(() -> QpExInline.ibv_wr_send(f.qp)).hasMessage("ibv_wr_send: ibv_qp_ex.wr_send is NULL: "
                    + "the QP was created without IBV_QP_EX_WITH_SEND in send_ops_flags");
            assertThatThrownBy(() -> QpExOps.of(f.qp).ibv_wr_rdma_write(1, 2L)).hasMessage(
                    "ibv_wr_rdma_write: ibv_qp_ex.wr_rdma_write is NULL: "
                            + "the QP was created without IBV_QP_EX_WITH_RDMA_WRITE in send_ops_flags");
        }
    }

    /**
     * The slots of the first {@code QpExOps} bound in the process are called through constants ({@code First}); a
     * binding with other slots must still call its own, one with the same slots (another QP of that provider) its
     * own struct. Whichever binding is the process's first, every call lands in its own fixture.
     */
    @Test
    void eachBindingCallsItsOwnSlotsWhetherTheConstantOrTheFieldRoute() {
        try (FakeVerbs a = new FakeVerbs(); FakeVerbs b = new FakeVerbs()) {
            a.install(a.qp, ibv_qp_ex.wr_start$offset(), "a.wr_start", ibv_qp_ex.wr_start.descriptor(), null);
            a.install(a.qp, ibv_qp_ex.wr_complete$offset(), "a.wr_complete", ibv_qp_ex.wr_complete.descriptor(), 0);
            b.install(b.qp, ibv_qp_ex.wr_start$offset(), "b.wr_start", ibv_qp_ex.wr_start.descriptor(), null);
            b.install(b.qp, ibv_qp_ex.wr_complete$offset(), "b.wr_complete", ibv_qp_ex.wr_complete.descriptor(), 0);
            MemorySegment a2 = a.arena.allocate(ibv_qp_ex.layout());
            a2.copyFrom(a.qp); // another QP of a's provider: the same slot addresses
            QpExOps opsA = QpExOps.of(a.qp);
            QpExOps opsB = QpExOps.of(b.qp);
            QpExOps opsA2 = QpExOps.of(a2);
            assertThat(opsA2.callsConstantSlots()).isEqualTo(opsA.callsConstantSlots());
            assertThat(opsA.callsConstantSlots() && opsB.callsConstantSlots()).isFalse();
            for (int i = 0; i < 20_000; i++) { // compiled too: C2 folds the constant route
                opsB.ibv_wr_start();
                opsA2.ibv_wr_start();
                assertThat(opsA.ibv_wr_complete()).isZero();
                assertThat(b.calls).containsExactly(new FakeVerbs.Call("b.wr_start", List.of(b.qp.address())));
                assertThat(a.calls).containsExactly(new FakeVerbs.Call("a.wr_start", List.of(a2.address())),
                        new FakeVerbs.Call("a.wr_complete", List.of(a.qp.address())));
                a.calls.clear();
                b.calls.clear();
            }
        }
    }

    @Test
    void nullQpIsRejectedBeforeAnyRead() {
        assertThatThrownBy(() -> QpExInline.ibv_wr_start(MemorySegment.NULL))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("ibv_wr_start: qp is NULL");
        assertThatThrownBy(() -> QpExOps.of(MemorySegment.NULL)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void wrIdAndWrFlagsAreWrittenWhereTheProviderReadsThem() {
        try (FakeVerbs f = new FakeVerbs()) {
            QpExOps ops = QpExOps.of(f.qp);
            ops.wr_id(0xDEAD_BEEF_0000_0001L);
            ops.wr_flags(6);
            assertThat(ibv_qp_ex.wr_id(f.qp)).isEqualTo(0xDEAD_BEEF_0000_0001L);
            assertThat(ibv_qp_ex.wr_flags(f.qp)).isEqualTo(6);
            assertThat(ops.qp().address()).isEqualTo(f.qp.address());
            assertThat(ops.qp().byteSize()).isEqualTo(ibv_qp_ex.sizeof());
        }
    }

    private static Stream<String> names() {
        try (FakeVerbs f = new FakeVerbs()) {
            return builders(f).stream().map(Builder::verb).toList().stream();
        }
    }

    private static Builder find(FakeVerbs f, String verb) {
        return builders(f).stream().filter(b -> b.verb().equals(verb)).findFirst().orElseThrow();
    }

    private static List<Object> concat(MemorySegment first, List<Object> rest) {
        return Stream.concat(Stream.of((Object) first.address()), rest.stream()).toList();
    }
}
