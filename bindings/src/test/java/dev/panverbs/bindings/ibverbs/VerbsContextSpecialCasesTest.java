package dev.panverbs.bindings.ibverbs;

import static dev.panverbs.bindings.ibverbs.FakeVerbs.args;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.UnsupportedSlotException;
import dev.panverbs.bindings.verbs.ibv_context;
import dev.panverbs.bindings.verbs.ibv_device_attr;
import dev.panverbs.bindings.verbs.ibv_device_attr_ex;
import dev.panverbs.bindings.verbs.ibv_port_attr;
import dev.panverbs.bindings.verbs.ibv_qp_init_attr_ex;
import dev.panverbs.bindings.verbs.ibv_query_device_ex_input;
import dev.panverbs.bindings.verbs.ibv_srq_init_attr_ex;
import dev.panverbs.bindings.verbs.ibv_wq;
import dev.panverbs.bindings.verbs.ibv_wq_init_attr;
import dev.panverbs.bindings.verbs.verbs_context;
import dev.panverbs.bindings.verbs.verbs_h;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The {@code verbs_context} wrappers that do more than dispatch: fallbacks to exported functions, fast paths,
 * argument checks, post-processing. Exported functions called on the fake context reach the fake
 * {@code verbs_ex_private} ({@link FakeVerbs#fillPriv}), whose stubs stand for libibverbs' internal ops.
 */
class VerbsContextSpecialCasesTest {

    private static final FunctionDescriptor PRIV_QUERY_PORT = FunctionDescriptor.of(ValueLayout.JAVA_INT,
            ValueLayout.ADDRESS, ValueLayout.JAVA_BYTE, ValueLayout.ADDRESS);
    private static final FunctionDescriptor PRIV_QUERY_DEVICE_EX = verbs_context.query_device_ex.descriptor();
    private static final FunctionDescriptor PRIV_CREATE = FunctionDescriptor.of(ValueLayout.ADDRESS,
            ValueLayout.ADDRESS, ValueLayout.ADDRESS);

    /** The three ways {@code verbs_get_ctx_op} yields NULL, applied to the op at {@code op}. */
    static Stream<Arguments> missingOp() {
        return Stream.of(
                Arguments.of("abi_compat not the sentinel", (Consumer<FakeVerbs>) f ->
                        ibv_context.abi_compat(f.ctx, MemorySegment.NULL)),
                Arguments.of("sz too small for query_port and query_device_ex", (Consumer<FakeVerbs>) f ->
                        verbs_context.sz(f.vctx, verbs_context.sizeof() - verbs_context.query_device_ex$offset() - 1)),
                Arguments.of("op NULL", (Consumer<FakeVerbs>) f -> {
                    f.vctx.set(ValueLayout.ADDRESS, verbs_context.query_port$offset(), MemorySegment.NULL);
                    f.vctx.set(ValueLayout.ADDRESS, verbs_context.query_device_ex$offset(), MemorySegment.NULL);
                }));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("missingOp")
    void queryPortFallsBackToTheCompatExportWhichFillsOnly48Bytes(String why, Consumer<FakeVerbs> breakIt) {
        try (FakeVerbs f = new FakeVerbs()) {
            f.install(f.vctx, verbs_context.query_port$offset(), "query_port",
                    verbs_context.query_port.descriptor(), 0);
            breakIt.accept(f);
            f.fillPriv(f.fillingStub("priv.query_port", PRIV_QUERY_PORT, 0, 2, ibv_port_attr.sizeof()));
            f.attr.fill((byte) 0xFF);

            assertThat(VerbsContextInline.ibv_query_port(f.ctx, (byte) 1, f.attr)).isZero();

            FakeVerbs.Call call = f.onlyCall();
            assertThat(call.slot()).isEqualTo("priv.query_port");
            assertThat(call.args().subList(0, 2)).isEqualTo(args(f.ctx, (byte) 1));
            // the compat export copies the 48-byte prefix; the twin's memset leaves port_cap_flags2 zero
            assertThat(f.attr.asSlice(0, 48).toArray(ValueLayout.JAVA_BYTE)).containsOnly(FakeVerbs.FILL);
            assertThat(f.attr.asSlice(48, ibv_port_attr.sizeof() - 48).toArray(ValueLayout.JAVA_BYTE))
                    .containsOnly((byte) 0);
            assertThat(f.attr.get(ValueLayout.JAVA_BYTE, ibv_port_attr.sizeof())).isEqualTo((byte) 0xFF);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("missingOp")
    void queryDeviceExFallsBackToLegacyQueryDevice(String why, Consumer<FakeVerbs> breakIt) {
        try (FakeVerbs f = new FakeVerbs()) {
            f.install(f.vctx, verbs_context.query_device_ex$offset(), "query_device_ex", PRIV_QUERY_DEVICE_EX, 0);
            breakIt.accept(f);
            f.fillPriv("priv.query_device_ex", PRIV_QUERY_DEVICE_EX, 0);
            f.attr.fill((byte) 0xFF);

            assertThat(VerbsContextInline.ibv_query_device_ex(f.ctx, MemorySegment.NULL, f.attr)).isZero();

            // ibv_query_device(ctx, &attr->orig_attr) reaches the library's op with the legacy size
            assertThat(f.onlyCall()).isEqualTo(new FakeVerbs.Call("priv.query_device_ex",
                    args(f.ctx, MemorySegment.NULL, f.attr, ibv_device_attr.sizeof())));
            assertThat(f.attr.asSlice(0, ibv_device_attr_ex.sizeof()).toArray(ValueLayout.JAVA_BYTE))
                    .containsOnly((byte) 0);
        }
    }

    @ParameterizedTest(name = "op returns {0}")
    @MethodSource("legacyErrors")
    void queryDeviceExFallsBackWhenTheOpReports(String name, int ret) {
        try (FakeVerbs f = new FakeVerbs()) {
            f.install(f.vctx, verbs_context.query_device_ex$offset(), "query_device_ex", PRIV_QUERY_DEVICE_EX, ret);
            f.fillPriv("priv.query_device_ex", PRIV_QUERY_DEVICE_EX, 0);

            assertThat(VerbsContextInline.ibv_query_device_ex(f.ctx, MemorySegment.NULL, f.attr)).isZero();
            assertThat(f.calls).extracting(FakeVerbs.Call::slot).containsExactly("query_device_ex",
                    "priv.query_device_ex");
        }
    }

    static Stream<Arguments> legacyErrors() {
        return Stream.of(Arguments.of("EOPNOTSUPP", Errno.EOPNOTSUPP), Arguments.of("ENOSYS", Errno.ENOSYS));
    }

    @Test
    void queryDeviceExReturnsOtherOpErrorsAsIs() {
        try (FakeVerbs f = new FakeVerbs()) {
            f.install(f.vctx, verbs_context.query_device_ex$offset(), "query_device_ex", PRIV_QUERY_DEVICE_EX,
                    Errno.EINVAL);
            f.fillPriv(f.forbidden("priv", PRIV_QUERY_DEVICE_EX));
            f.attr.fill((byte) 0xFF);
            assertThat(VerbsContextInline.ibv_query_device_ex(f.ctx, MemorySegment.NULL, f.attr))
                    .isEqualTo(Errno.EINVAL);
            assertThat(f.onlyCall().slot()).isEqualTo("query_device_ex");
            assertThat(f.attr.get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte) 0xFF);
        }
    }

    @Test
    void queryDeviceExRejectsInputWithCompMask() {
        try (FakeVerbs f = new FakeVerbs()) {
            MemorySegment input = f.arena.allocate(ibv_query_device_ex_input.layout());
            ibv_query_device_ex_input.comp_mask(input, 1);
            f.install(f.vctx, verbs_context.query_device_ex$offset(), "query_device_ex", PRIV_QUERY_DEVICE_EX, 0);
            assertThat(VerbsContextInline.ibv_query_device_ex(f.ctx, input, f.attr)).isEqualTo(Errno.EINVAL);
            assertThat(f.calls).isEmpty();
        }
    }

    @Test
    void createQpExWithOnlyPdTakesTheExportedCreateQp() {
        try (FakeVerbs f = new FakeVerbs()) {
            f.vctx.set(ValueLayout.ADDRESS, verbs_context.create_qp_ex$offset(),
                    f.forbidden("create_qp_ex", verbs_context.create_qp_ex.descriptor()));
            f.fillPriv("priv.create_qp", PRIV_CREATE, f.qp);
            ibv_qp_init_attr_ex.comp_mask(f.attr, verbs_h.IBV_QP_INIT_ATTR_PD());
            ibv_qp_init_attr_ex.pd(f.attr, f.pd);

            MemorySegment qp = VerbsContextInline.ibv_create_qp_ex(f.errno, f.ctx, f.attr);

            assertThat(qp.address()).isEqualTo(f.qp.address());
            assertThat(f.onlyCall()).isEqualTo(new FakeVerbs.Call("priv.create_qp", args(f.pd, f.attr)));
        }
    }

    static Stream<Arguments> srqFastPath() {
        int pd = verbs_h.IBV_SRQ_INIT_ATTR_PD();
        int type = verbs_h.IBV_SRQ_INIT_ATTR_TYPE();
        int basic = verbs_h.IBV_SRQT_BASIC();
        int xrc = verbs_h.IBV_SRQT_XRC();
        return Stream.of(
                Arguments.of("PD", pd, basic, true),
                Arguments.of("PD|TYPE basic", pd | type, basic, true),
                Arguments.of("PD|TYPE xrc", pd | type, xrc, false),
                Arguments.of("TYPE without PD", type, basic, false),
                Arguments.of("PD|CQ", pd | verbs_h.IBV_SRQ_INIT_ATTR_CQ(), basic, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("srqFastPath")
    void createSrqExTakesTheExportedCreateSrqOnlyForBasicSrqs(String name, int mask, int type, boolean fast) {
        try (FakeVerbs f = new FakeVerbs()) {
            f.install(f.vctx, verbs_context.create_srq_ex$offset(), "create_srq_ex",
                    verbs_context.create_srq_ex.descriptor(), f.srq);
            f.fillPriv("priv.create_srq", PRIV_CREATE, f.srq);
            ibv_srq_init_attr_ex.comp_mask(f.attr, mask);
            ibv_srq_init_attr_ex.srq_type(f.attr, type);
            ibv_srq_init_attr_ex.pd(f.attr, f.pd);

            MemorySegment srq = VerbsContextInline.ibv_create_srq_ex(f.errno, f.ctx, f.attr);

            assertThat(srq.address()).isEqualTo(f.srq.address());
            assertThat(f.onlyCall()).isEqualTo(fast
                    ? new FakeVerbs.Call("priv.create_srq", args(f.pd, f.attr))
                    : new FakeVerbs.Call("create_srq_ex", args(f.ctx, f.attr)));
        }
    }

    @Test
    void postSrqOpsWithoutTheOpReportsTheFirstOpAsBad() {
        try (FakeVerbs f = new FakeVerbs()) {
            MemorySegment badOp = f.arena.allocate(ValueLayout.ADDRESS);
            assertThat(VerbsContextInline.ibv_post_srq_ops(f.srq, f.attr, badOp)).isEqualTo(Errno.EOPNOTSUPP);
            assertThat(badOp.get(ValueLayout.ADDRESS, 0).address()).isEqualTo(f.attr.address());
        }
    }

    @Test
    void closeXrcdIgnoresSzLikeC() {
        try (FakeVerbs f = new FakeVerbs()) {
            f.install(f.vctx, verbs_context.close_xrcd$offset(), "close_xrcd", verbs_context.close_xrcd.descriptor(), 3);
            verbs_context.sz(f.vctx, 0L);
            assertThat(VerbsContextInline.ibv_close_xrcd(f.xrcd)).isEqualTo(3);
            assertThat(f.onlyCall()).isEqualTo(new FakeVerbs.Call("close_xrcd", args(f.xrcd)));
        }
    }

    @Test
    void closeXrcdThrowsWhereCWouldCrash() {
        try (FakeVerbs f = new FakeVerbs()) {
            assertThatThrownBy(() -> VerbsContextInline.ibv_close_xrcd(f.xrcd))
                    .isInstanceOf(UnsupportedSlotException.class)
                    .hasMessageStartingWith("ibv_close_xrcd: verbs_context.close_xrcd is NULL");
            ibv_context.abi_compat(f.ctx, MemorySegment.NULL);
            assertThatThrownBy(() -> VerbsContextInline.ibv_close_xrcd(f.xrcd))
                    .isInstanceOf(UnsupportedSlotException.class)
                    .hasMessage("ibv_close_xrcd: verbs_context.close_xrcd is NULL: xrcd->context is not an extended "
                            + "verbs_context (abi_compat is not the sentinel)");
        }
    }

    @Test
    void createWqInitialisesWhatTheInlineInitialises() {
        try (FakeVerbs f = new FakeVerbs()) {
            f.install(f.vctx, verbs_context.create_wq$offset(), "create_wq", verbs_context.create_wq.descriptor(), f.wq);
            MemorySegment userContext = MemorySegment.ofAddress(0x1234_5670L);
            ibv_wq_init_attr.wq_context(f.attr, userContext);
            f.wq.fill((byte) 0xFF);
            ibv_wq.context(f.wq, f.ctx);

            MemorySegment wq = VerbsFlowInline.ibv_create_wq(f.errno, f.ctx, f.attr);

            assertThat(wq.address()).isEqualTo(f.wq.address());
            assertThat(ibv_wq.wq_context(f.wq).address()).isEqualTo(userContext.address());
            assertThat(ibv_wq.events_completed(f.wq)).isZero();
            // glibc's default-attribute init zeroes the whole mutex and condition variable
            assertThat(f.wq.asSlice(ibv_wq.mutex$offset(), ibv_wq.mutex$layout().byteSize())
                    .toArray(ValueLayout.JAVA_BYTE)).containsOnly((byte) 0);
            assertThat(f.wq.asSlice(ibv_wq.cond$offset(), ibv_wq.cond$layout().byteSize())
                    .toArray(ValueLayout.JAVA_BYTE)).containsOnly((byte) 0);
        }
    }

    @Test
    void createWqFailureTouchesNothing() {
        try (FakeVerbs f = new FakeVerbs()) {
            f.install(f.vctx, verbs_context.create_wq$offset(), "create_wq", verbs_context.create_wq.descriptor(),
                    MemorySegment.NULL);
            f.wq.fill((byte) 0xFF);
            assertThat(VerbsFlowInline.ibv_create_wq(f.errno, f.ctx, f.attr).address()).isZero();
            assertThat(f.wq.toArray(ValueLayout.JAVA_BYTE)).containsOnly((byte) 0xFF);
        }
    }

    @Test
    void verbsGetCtxIsTheEnclosingVerbsContext() {
        try (FakeVerbs f = new FakeVerbs()) {
            MemorySegment vctx = VerbsInline.verbs_get_ctx(f.ctx);
            assertThat(vctx.address()).isEqualTo(f.ctx.address() - 320).isEqualTo(f.vctx.address());
            assertThat(vctx.byteSize()).isEqualTo(648);
            ibv_context.abi_compat(f.ctx, MemorySegment.ofAddress(0x1000));
            assertThat(VerbsInline.verbs_get_ctx(f.ctx).address()).isZero();
        }
    }

    @Test
    void verbsGetCtxOpAppliesItsThreeChecks() {
        try (FakeVerbs f = new FakeVerbs()) {
            long op = verbs_context.alloc_td$offset();
            assertThat(VerbsInline.verbs_get_ctx_op(f.ctx, op).address()).as("NULL op").isZero();
            f.install(f.vctx, op, "alloc_td", verbs_context.alloc_td.descriptor(), MemorySegment.NULL);
            assertThat(VerbsInline.verbs_get_ctx_op(f.ctx, op).address()).isEqualTo(f.vctx.address());
            verbs_context.sz(f.vctx, 648 - op - 1);
            assertThat(VerbsInline.verbs_get_ctx_op(f.ctx, op).address()).as("sz too small").isZero();
            verbs_context.sz(f.vctx, 648 - op);
            assertThat(VerbsInline.verbs_get_ctx_op(f.ctx, op).address()).isEqualTo(f.vctx.address());
            // sz is a size_t: a "negative" value is huge, not small
            verbs_context.sz(f.vctx, -1L);
            assertThat(VerbsInline.verbs_get_ctx_op(f.ctx, op).address()).isEqualTo(f.vctx.address());
        }
    }
}
