package dev.panverbs.bindings.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.verbs.ibv_context;
import dev.panverbs.bindings.verbs.ibv_counters;
import dev.panverbs.bindings.verbs.ibv_cq_ex;
import dev.panverbs.bindings.verbs.ibv_dm;
import dev.panverbs.bindings.verbs.ibv_flow;
import dev.panverbs.bindings.verbs.ibv_flow_action;
import dev.panverbs.bindings.verbs.ibv_mr;
import dev.panverbs.bindings.verbs.ibv_mw;
import dev.panverbs.bindings.verbs.ibv_pd;
import dev.panverbs.bindings.verbs.ibv_qp_ex;
import dev.panverbs.bindings.verbs.ibv_rwq_ind_table;
import dev.panverbs.bindings.verbs.ibv_srq;
import dev.panverbs.bindings.verbs.ibv_td;
import dev.panverbs.bindings.verbs.ibv_wq;
import dev.panverbs.bindings.verbs.ibv_xrcd;
import dev.panverbs.bindings.verbs.verbs_context;
import dev.panverbs.bindings.verbs.verbs_h;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A fake provider in native memory: an extended {@code ibv_context} embedded at offset 320 of a
 * {@code verbs_context} (as libibverbs lays it out), and one object of each kind pointing at it. Slots are
 * filled with upcall stubs that record the slot name and the arguments (pointers as {@code Long} addresses)
 * and return a chosen value.
 *
 * <p>{@link #priv} stands for libibverbs' private {@code verbs_ex_private}, which exported functions reach
 * through {@code vctx->priv->ops}; {@link #fillPriv} makes every word of it one stub, so an exported verb
 * called on this fake context (e.g. the compat {@code ibv_query_port}) ends in that stub whatever the
 * private layout. By default it holds a stub recording a "FORBIDDEN" call, so a twin that wrongly enters the
 * library fails its test instead of crashing the JVM on a NULL op.
 */
final class FakeVerbs implements AutoCloseable {

    /** One call of a stub: the slot name and the arguments, pointers as {@code Long} addresses. */
    record Call(String slot, List<Object> args) {}

    private static final MethodHandle RECORD;
    private static final MethodHandle RECORD_AND_FILL;

    static {
        try {
            RECORD = MethodHandles.lookup().findVirtual(FakeVerbs.class, "record",
                    MethodType.methodType(Object.class, String.class, Object.class, Object[].class));
            RECORD_AND_FILL = MethodHandles.lookup().findVirtual(FakeVerbs.class, "recordAndFill",
                    MethodType.methodType(Object.class, String.class, Object.class, int.class, long.class,
                            Object[].class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final Arena arena = Arena.ofConfined();
    final List<Call> calls = new ArrayList<>();

    final MemorySegment vctx = arena.allocate(verbs_context.layout());
    final MemorySegment ctx = vctx.asSlice(verbs_context.context$offset(), ibv_context.sizeof());
    final MemorySegment device = arena.allocate(4096, 8);
    final MemorySegment priv = arena.allocate(8192, 8);
    final MemorySegment errno = Errno.allocateCapture(arena);
    /** A zeroed buffer for attribute structs and output arguments. */
    final MemorySegment attr = arena.allocate(1024, 8);

    final MemorySegment qp = object(ibv_qp_ex.layout(), ibv_qp_ex.qp_base$offset());
    final MemorySegment cq = object(ibv_cq_ex.layout(), ibv_cq_ex.context$offset());
    final MemorySegment srq = object(ibv_srq.layout(), ibv_srq.context$offset());
    final MemorySegment pd = object(ibv_pd.layout(), ibv_pd.context$offset());
    final MemorySegment mr = object(ibv_mr.layout(), ibv_mr.context$offset());
    final MemorySegment mw = object(ibv_mw.layout(), ibv_mw.context$offset());
    final MemorySegment wq = object(ibv_wq.layout(), ibv_wq.context$offset());
    final MemorySegment dm = object(ibv_dm.layout(), ibv_dm.context$offset());
    final MemorySegment xrcd = object(ibv_xrcd.layout(), ibv_xrcd.context$offset());
    final MemorySegment td = object(ibv_td.layout(), ibv_td.context$offset());
    final MemorySegment flow = object(ibv_flow.layout(), ibv_flow.context$offset());
    final MemorySegment flowAction = object(ibv_flow_action.layout(), ibv_flow_action.context$offset());
    final MemorySegment counters = object(ibv_counters.layout(), ibv_counters.context$offset());
    final MemorySegment rwqIndTable = object(ibv_rwq_ind_table.layout(), ibv_rwq_ind_table.context$offset());

    FakeVerbs() {
        ibv_context.abi_compat(ctx, verbs_h.__VERBS_ABI_IS_EXTENDED());
        verbs_context.sz(vctx, verbs_context.sizeof());
        verbs_context.priv(vctx, priv);
        ibv_context.device(ctx, device);
        ibv_context.cmd_fd(ctx, -1);
        ibv_context.async_fd(ctx, -1);
        ibv_mw.pd(mw, pd);
        ibv_mw.type(mw, verbs_h.IBV_MW_TYPE_1());
        ibv_mr.pd(mr, pd);
        // a twin that wrongly falls into libibverbs internals records a call here instead of crashing the JVM
        fillPriv(stub("FORBIDDEN libibverbs-internal op", ANY_OP, 0L));
    }

    /** Any internal op: six word-sized arguments, a zero word returned (0, or NULL). */
    private static final FunctionDescriptor ANY_OP = FunctionDescriptor.of(ValueLayout.JAVA_LONG,
            ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS,
            ValueLayout.ADDRESS);

    /** A zeroed struct of {@code layout} whose {@code context} pointer (at {@code contextOffset}) is {@link #ctx}. */
    private MemorySegment object(MemoryLayout layout, long contextOffset) {
        MemorySegment s = arena.allocate(layout);
        s.set(ValueLayout.ADDRESS, contextOffset, ctx);
        return s;
    }

    /** A stub for {@code descriptor} that records a call of {@code slot} and returns {@code ret}. */
    MemorySegment stub(String slot, FunctionDescriptor descriptor, Object ret) {
        MethodHandle target = MethodHandles.insertArguments(RECORD.bindTo(this), 0, slot, ret)
                .asCollector(Object[].class, descriptor.argumentLayouts().size())
                .asType(descriptor.toMethodType());
        return Linker.nativeLinker().upcallStub(target, descriptor, arena);
    }

    /**
     * Like {@link #stub}, and the stub also fills the {@code size} bytes that its pointer argument number
     * {@code argIndex} points to with {@link #FILL}, as a provider filling an output struct would.
     */
    MemorySegment fillingStub(String slot, FunctionDescriptor descriptor, Object ret, int argIndex, long size) {
        MethodHandle target = MethodHandles
                .insertArguments(RECORD_AND_FILL.bindTo(this), 0, slot, ret, argIndex, size)
                .asCollector(Object[].class, descriptor.argumentLayouts().size())
                .asType(descriptor.toMethodType());
        return Linker.nativeLinker().upcallStub(target, descriptor, arena);
    }

    /** The byte {@link #fillingStub} writes. */
    static final byte FILL = 0x5A;

    /** Stores a stub in the pointer at {@code offset} of {@code struct}. */
    void install(MemorySegment struct, long offset, String slot, FunctionDescriptor descriptor, Object ret) {
        struct.set(ValueLayout.ADDRESS, offset, stub(slot, descriptor, ret));
    }

    /** Stores a stub in {@code ibv_context.ops} at {@code offsetInContext} (an {@code VerbsInline.OPS_*} offset). */
    void installOp(long offsetInContext, String slot, FunctionDescriptor descriptor, Object ret) {
        install(ctx, offsetInContext, slot, descriptor, ret);
    }

    /** Makes every word of the fake {@code verbs_ex_private} the same stub (see the class comment). */
    void fillPriv(String slot, FunctionDescriptor descriptor, Object ret) {
        fillPriv(stub(slot, descriptor, ret));
    }

    /** Makes every word of the fake {@code verbs_ex_private} the stub {@code s}. */
    void fillPriv(MemorySegment s) {
        for (long off = 0; off < priv.byteSize(); off += ValueLayout.ADDRESS.byteSize()) {
            priv.set(ValueLayout.ADDRESS, off, s);
        }
    }

    /** A stub that fails the test if called, for slots that must not be reached. */
    MemorySegment forbidden(String slot, FunctionDescriptor descriptor) {
        return stub("FORBIDDEN " + slot, descriptor, defaultReturn(descriptor));
    }

    private static Object defaultReturn(FunctionDescriptor descriptor) {
        return descriptor.returnLayout().map(l -> switch (l) {
            case ValueLayout.OfInt i -> (Object) 0;
            case ValueLayout.OfLong j -> (Object) 0L;
            case ValueLayout.OfByte b -> (Object) (byte) 0;
            case ValueLayout.OfShort s -> (Object) (short) 0;
            default -> (Object) MemorySegment.NULL;
        }).orElse(null);
    }

    /** The only call recorded so far; fails if there were none or several. */
    Call onlyCall() {
        assertThat(calls).as("stub calls").hasSize(1);
        return calls.getFirst();
    }

    /** Arguments as the stubs record them: segments become their address. */
    static List<Object> args(Object... args) {
        return Arrays.stream(args).map(FakeVerbs::normalise).toList();
    }

    private static Object normalise(Object o) {
        return o instanceof MemorySegment s ? (Object) s.address() : o;
    }

    @SuppressWarnings("unused") // called through RECORD by the upcall stubs
    private Object record(String slot, Object ret, Object[] args) {
        calls.add(new Call(slot, args(args)));
        return ret;
    }

    @SuppressWarnings("unused") // called through RECORD_AND_FILL by the upcall stubs
    private Object recordAndFill(String slot, Object ret, int argIndex, long size, Object[] args) {
        ((MemorySegment) args[argIndex]).reinterpret(size).fill(FILL);
        return record(slot, ret, args);
    }

    @Override
    public void close() {
        arena.close();
    }
}
