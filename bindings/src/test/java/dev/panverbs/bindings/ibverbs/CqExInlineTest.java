package dev.panverbs.bindings.ibverbs;

import static dev.panverbs.bindings.ibverbs.FakeVerbs.args;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.UnsupportedSlotException;
import dev.panverbs.bindings.verbs.ibv_cq_ex;
import dev.panverbs.bindings.verbs.ibv_wc_tm_info;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** Every {@code ibv_cq_ex} polling twin and its {@link CqExOps} route call the right slot correctly. */
class CqExInlineTest {

    /**
     * One polling function: its slot, the value the stub returns, the value the twin must return (readers of
     * {@code uint8_t}/{@code uint16_t} widen to an unsigned {@code int}), and the extra argument if any.
     */
    record Poll(String verb, String slot, long offset, FunctionDescriptor descriptor, Object ret, Object expected,
            List<Object> args, BiFunction<MemorySegment, MemorySegment, Object> twin,
            BiFunction<CqExOps, MemorySegment, Object> bound, String flag) {
        @Override
        public String toString() {
            return verb;
        }
    }

    private static Poll reader(String verb, String slot, long offset, FunctionDescriptor d, Object ret,
            Object expected, BiFunction<MemorySegment, MemorySegment, Object> twin,
            BiFunction<CqExOps, MemorySegment, Object> bound, String flag) {
        return new Poll(verb, slot, offset, d, ret, expected, args(), twin, bound, flag);
    }

    static List<Poll> polls() {
        return List.of(
                new Poll("ibv_start_poll", "start_poll", ibv_cq_ex.start_poll$offset(), ibv_cq_ex.start_poll.descriptor(),
                        Errno.ENOENT, Errno.ENOENT, List.of(Arg.ATTR), (cq, a) -> CqExInline.ibv_start_poll(cq, a),
                        (o, a) -> o.ibv_start_poll(a), null),
                reader("ibv_next_poll", "next_poll", ibv_cq_ex.next_poll$offset(), ibv_cq_ex.next_poll.descriptor(),
                        0, 0, (cq, a) -> CqExInline.ibv_next_poll(cq), (o, a) -> o.ibv_next_poll(), null),
                reader("ibv_end_poll", "end_poll", ibv_cq_ex.end_poll$offset(), ibv_cq_ex.end_poll.descriptor(),
                        null, null, (cq, a) -> { CqExInline.ibv_end_poll(cq); return null; },
                        (o, a) -> { o.ibv_end_poll(); return null; }, null),
                reader("ibv_wc_read_opcode", "read_opcode", ibv_cq_ex.read_opcode$offset(),
                        ibv_cq_ex.read_opcode.descriptor(), 128, 128,
                        (cq, a) -> CqExInline.ibv_wc_read_opcode(cq), (o, a) -> o.ibv_wc_read_opcode(), null),
                reader("ibv_wc_read_vendor_err", "read_vendor_err", ibv_cq_ex.read_vendor_err$offset(),
                        ibv_cq_ex.read_vendor_err.descriptor(), 0x8000_0001, 0x8000_0001,
                        (cq, a) -> CqExInline.ibv_wc_read_vendor_err(cq), (o, a) -> o.ibv_wc_read_vendor_err(), null),
                reader("ibv_wc_read_byte_len", "read_byte_len", ibv_cq_ex.read_byte_len$offset(),
                        ibv_cq_ex.read_byte_len.descriptor(), 65536, 65536,
                        (cq, a) -> CqExInline.ibv_wc_read_byte_len(cq), (o, a) -> o.ibv_wc_read_byte_len(),
                        "IBV_WC_EX_WITH_BYTE_LEN"),
                reader("ibv_wc_read_imm_data", "read_imm_data", ibv_cq_ex.read_imm_data$offset(),
                        ibv_cq_ex.read_imm_data.descriptor(), 0x0102_0304, 0x0102_0304,
                        (cq, a) -> CqExInline.ibv_wc_read_imm_data(cq), (o, a) -> o.ibv_wc_read_imm_data(),
                        "IBV_WC_EX_WITH_IMM"),
                reader("ibv_wc_read_invalidated_rkey", "read_imm_data", ibv_cq_ex.read_imm_data$offset(),
                        ibv_cq_ex.read_imm_data.descriptor(), 0x0A0B_0C0D, 0x0A0B_0C0D,
                        (cq, a) -> CqExInline.ibv_wc_read_invalidated_rkey(cq),
                        (o, a) -> o.ibv_wc_read_invalidated_rkey(), "IBV_WC_EX_WITH_IMM"),
                reader("ibv_wc_read_qp_num", "read_qp_num", ibv_cq_ex.read_qp_num$offset(),
                        ibv_cq_ex.read_qp_num.descriptor(), 0x11, 0x11,
                        (cq, a) -> CqExInline.ibv_wc_read_qp_num(cq), (o, a) -> o.ibv_wc_read_qp_num(),
                        "IBV_WC_EX_WITH_QP_NUM"),
                reader("ibv_wc_read_src_qp", "read_src_qp", ibv_cq_ex.read_src_qp$offset(),
                        ibv_cq_ex.read_src_qp.descriptor(), 0x22, 0x22,
                        (cq, a) -> CqExInline.ibv_wc_read_src_qp(cq), (o, a) -> o.ibv_wc_read_src_qp(),
                        "IBV_WC_EX_WITH_SRC_QP"),
                reader("ibv_wc_read_wc_flags", "read_wc_flags", ibv_cq_ex.read_wc_flags$offset(),
                        ibv_cq_ex.read_wc_flags.descriptor(), 3, 3,
                        (cq, a) -> CqExInline.ibv_wc_read_wc_flags(cq), (o, a) -> o.ibv_wc_read_wc_flags(), null),
                reader("ibv_wc_read_slid", "read_slid", ibv_cq_ex.read_slid$offset(), ibv_cq_ex.read_slid.descriptor(),
                        0xFFFF, 0xFFFF, (cq, a) -> CqExInline.ibv_wc_read_slid(cq), (o, a) -> o.ibv_wc_read_slid(),
                        "IBV_WC_EX_WITH_SLID"),
                reader("ibv_wc_read_sl", "read_sl", ibv_cq_ex.read_sl$offset(), ibv_cq_ex.read_sl.descriptor(),
                        (byte) 0xF0, 0xF0, (cq, a) -> CqExInline.ibv_wc_read_sl(cq), (o, a) -> o.ibv_wc_read_sl(),
                        "IBV_WC_EX_WITH_SL"),
                reader("ibv_wc_read_dlid_path_bits", "read_dlid_path_bits", ibv_cq_ex.read_dlid_path_bits$offset(),
                        ibv_cq_ex.read_dlid_path_bits.descriptor(), (byte) 0x81, 0x81,
                        (cq, a) -> CqExInline.ibv_wc_read_dlid_path_bits(cq),
                        (o, a) -> o.ibv_wc_read_dlid_path_bits(), "IBV_WC_EX_WITH_DLID_PATH_BITS"),
                reader("ibv_wc_read_completion_ts", "read_completion_ts", ibv_cq_ex.read_completion_ts$offset(),
                        ibv_cq_ex.read_completion_ts.descriptor(), 0x1234_5678_9ABC_DEF0L, 0x1234_5678_9ABC_DEF0L,
                        (cq, a) -> CqExInline.ibv_wc_read_completion_ts(cq),
                        (o, a) -> o.ibv_wc_read_completion_ts(), "IBV_WC_EX_WITH_COMPLETION_TIMESTAMP"),
                reader("ibv_wc_read_completion_wallclock_ns", "read_completion_wallclock_ns",
                        ibv_cq_ex.read_completion_wallclock_ns$offset(),
                        ibv_cq_ex.read_completion_wallclock_ns.descriptor(), -2L, -2L,
                        (cq, a) -> CqExInline.ibv_wc_read_completion_wallclock_ns(cq),
                        (o, a) -> o.ibv_wc_read_completion_wallclock_ns(),
                        "IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK"),
                reader("ibv_wc_read_cvlan", "read_cvlan", ibv_cq_ex.read_cvlan$offset(),
                        ibv_cq_ex.read_cvlan.descriptor(), (short) 0x8100, 0x8100,
                        (cq, a) -> CqExInline.ibv_wc_read_cvlan(cq), (o, a) -> o.ibv_wc_read_cvlan(),
                        "IBV_WC_EX_WITH_CVLAN"),
                reader("ibv_wc_read_flow_tag", "read_flow_tag", ibv_cq_ex.read_flow_tag$offset(),
                        ibv_cq_ex.read_flow_tag.descriptor(), 0x0033_4455, 0x0033_4455,
                        (cq, a) -> CqExInline.ibv_wc_read_flow_tag(cq), (o, a) -> o.ibv_wc_read_flow_tag(),
                        "IBV_WC_EX_WITH_FLOW_TAG"),
                new Poll("ibv_wc_read_tm_info", "read_tm_info", ibv_cq_ex.read_tm_info$offset(),
                        ibv_cq_ex.read_tm_info.descriptor(), null, null, List.of(Arg.ATTR),
                        (cq, a) -> { CqExInline.ibv_wc_read_tm_info(cq, a); return null; },
                        (o, a) -> { o.ibv_wc_read_tm_info(a); return null; }, "IBV_WC_EX_WITH_TM_INFO"));
    }

    /** Placeholder for the pointer argument, which is allocated per fixture. */
    enum Arg { ATTR }

    @Test
    void everyPollingFunctionIsCovered() {
        // 3 poll functions + 16 readers over 18 slots (invalidated_rkey shares read_imm_data)
        assertThat(polls()).hasSize(19).extracting(Poll::verb).doesNotHaveDuplicates();
        assertThat(polls().stream().map(Poll::offset).distinct().count()).isEqualTo(18);
    }

    @TestFactory
    Stream<DynamicTest> twinAndBoundRouteCallTheSlot() {
        return polls().stream().flatMap(p -> Stream.of(
                DynamicTest.dynamicTest(p.verb() + " (twin)", () -> check(p, false)),
                DynamicTest.dynamicTest(p.verb() + " (CqExOps)", () -> check(p, true))));
    }

    private static void check(Poll p, boolean bound) {
        try (FakeVerbs f = new FakeVerbs()) {
            MemorySegment arg = f.arena.allocate(ibv_wc_tm_info.layout());
            f.install(f.cq, p.offset(), p.slot(), p.descriptor(), p.ret());
            Object result = bound ? p.bound().apply(CqExOps.of(f.cq), arg) : p.twin().apply(f.cq, arg);
            assertThat(result).isEqualTo(p.expected());
            List<Object> expectedArgs = p.args().isEmpty() ? args(f.cq) : args(f.cq, arg);
            assertThat(f.onlyCall()).isEqualTo(new FakeVerbs.Call(p.slot(), expectedArgs));
        }
    }

    @TestFactory
    Stream<DynamicTest> nullSlotThrowsNamingTheVerbAndTheWcFlag() {
        return polls().stream().map(p -> DynamicTest.dynamicTest(p.verb(), () -> {
            try (FakeVerbs f = new FakeVerbs()) {
                String reason = p.flag() == null ? "the CQ was not created by ibv_create_cq_ex"
                        : "the CQ was created without " + p.flag() + " in wc_flags";
                String message = p.verb() + ": ibv_cq_ex." + p.slot() + " is NULL: " + reason;
                assertThatThrownBy(() -> p.twin().apply(f.cq, MemorySegment.NULL))
                        .isInstanceOf(UnsupportedSlotException.class).hasMessage(message);
                assertThatThrownBy(() -> p.bound().apply(CqExOps.of(f.cq), MemorySegment.NULL))
                        .isInstanceOf(UnsupportedSlotException.class).hasMessage(message);
                assertThat(f.calls).isEmpty();
            }
        }));
    }

    @Test
    void statusAndWrIdAreReadFromTheCq() {
        try (FakeVerbs f = new FakeVerbs()) {
            ibv_cq_ex.status(f.cq, 5);
            ibv_cq_ex.wr_id(f.cq, 0x0123_4567_89AB_CDEFL);
            CqExOps ops = CqExOps.of(f.cq);
            assertThat(ops.status()).isEqualTo(5);
            assertThat(ops.wr_id()).isEqualTo(0x0123_4567_89AB_CDEFL);
            assertThat(ops.cq().byteSize()).isEqualTo(ibv_cq_ex.sizeof());
        }
    }

    @Test
    void boundRouteKeepsTheSlotReadAtBindTime() {
        try (FakeVerbs f = new FakeVerbs()) {
            f.install(f.cq, ibv_cq_ex.next_poll$offset(), "next_poll", ibv_cq_ex.next_poll.descriptor(), 0);
            CqExOps ops = CqExOps.of(f.cq);
            f.cq.set(ValueLayout.ADDRESS, ibv_cq_ex.next_poll$offset(),
                    f.forbidden("next_poll", ibv_cq_ex.next_poll.descriptor()));
            ops.ibv_next_poll();
            assertThat(f.onlyCall().slot()).isEqualTo("next_poll");
        }
    }

    /** As in {@code QpExInlineTest}: the constant route and the field route each call their own slots. */
    @Test
    void eachBindingCallsItsOwnSlotsWhetherTheConstantOrTheFieldRoute() {
        try (FakeVerbs a = new FakeVerbs(); FakeVerbs b = new FakeVerbs()) {
            a.install(a.cq, ibv_cq_ex.next_poll$offset(), "a.next_poll", ibv_cq_ex.next_poll.descriptor(), 0);
            b.install(b.cq, ibv_cq_ex.next_poll$offset(), "b.next_poll", ibv_cq_ex.next_poll.descriptor(), 0);
            MemorySegment a2 = a.arena.allocate(ibv_cq_ex.layout());
            a2.copyFrom(a.cq); // another CQ of a's provider: the same slot addresses
            CqExOps opsA = CqExOps.of(a.cq);
            CqExOps opsB = CqExOps.of(b.cq);
            CqExOps opsA2 = CqExOps.of(a2);
            assertThat(opsA2.callsConstantSlots()).isEqualTo(opsA.callsConstantSlots());
            assertThat(opsA.callsConstantSlots() && opsB.callsConstantSlots()).isFalse();
            for (int i = 0; i < 20_000; i++) { // compiled too: C2 folds the constant route
                opsB.ibv_next_poll();
                opsA2.ibv_next_poll();
                assertThat(b.onlyCall()).isEqualTo(new FakeVerbs.Call("b.next_poll", List.of(b.cq.address())));
                assertThat(a.onlyCall()).isEqualTo(new FakeVerbs.Call("a.next_poll", List.of(a2.address())));
                a.calls.clear();
                b.calls.clear();
            }
        }
    }

    @Test
    void cqExToCqIsTheSameAddress() {
        try (FakeVerbs f = new FakeVerbs()) {
            assertThat(CqExInline.ibv_cq_ex_to_cq(f.cq).address()).isEqualTo(f.cq.address());
        }
    }
}
