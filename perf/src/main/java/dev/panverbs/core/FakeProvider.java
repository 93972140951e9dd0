package dev.panverbs.core;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.reflect.Constructor;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;

/**
 * Benchmark-only: the library's real {@link Context}, {@link ProtectionDomain}, {@link CompletionQueue},
 * {@link ExtendedCompletionQueue}, {@link QueuePair} and {@link MemoryRegion} objects, built over the fake provider
 * ({@code perf/src/main/c/fake_provider.c}) instead of a device: its {@code fake_open_device}, {@code fake_create_*}
 * return C objects with the {@code <infiniband/verbs.h>} layouts whose data-path slots point at the fake's C
 * functions, and this class wraps them through the constructors the creation verbs use. Post and poll then run the
 * production code unchanged, down to the provider's function pointers.
 *
 * <p>It lives in the perf module, in the core's package, and works on the class path only (a split package): no
 * public API of the library serves it. The objects are never closed (their destroy verbs would call libibverbs
 * on fake objects); the benchmark JVM exits instead.
 */
public final class FakeProvider {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG;

    private final SymbolLookup lib;
    private final Context context;
    private final ProtectionDomain pd;
    private int nextQpNum = 0x100;

    /** Opens the fake device from the shared library at {@code library} (built by perf/run). */
    public FakeProvider(Path library) {
        this.lib = SymbolLookup.libraryLookup(library.toAbsolutePath(), Arena.global());
        MemorySegment ctx = call("fake_open_device", FunctionDescriptor.of(ValueLayout.ADDRESS));
        this.context = new Context(newDevice(), ctx);
        this.pd = new ProtectionDomain(context, call("fake_alloc_pd",
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS), ctx));
    }

    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** A classic CQ ({@code ibv_poll_cq} through {@code ibv_context.ops.poll_cq}). */
    public CompletionQueue createCq(int cqe) {
        return new CompletionQueue(context, null, fakeCq(cqe), "CompletionQueue");
    }

    /** An extended CQ ({@code ibv_start_poll} and friends through the {@code ibv_cq_ex} slots). */
    public ExtendedCompletionQueue createCqEx(int cqe, Set<CompletionField> fields) {
        return new ExtendedCompletionQueue(context, null, fakeCq(cqe), CompletionField.bits(fields), false);
    }

    /**
     * An RC QP in RTS (as after toInit/toRtr/toRts) sending to {@code cq}, with {@code sendOps} for
     * {@link QueuePair#startSend()} ({@code ibv_qp_ex}) when not empty.
     */
    public QueuePair createRtsQp(CompletionQueue cq, int maxSendWr, int maxInline, Set<SendOperation> sendOps) {
        int qpNum = nextQpNum++;
        MemorySegment qp = call("fake_create_qp", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                        ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
                pd.resource.handle("fake_create_qp"), cq.resource.handle("fake_create_qp"),
                cq.resource.handle("fake_create_qp"), qpNum, 0);
        QueuePairCapabilities caps = new QueuePairCapabilities(maxSendWr, 16, 1, 1, maxInline);
        long ops = SendOperation.bits(sendOps.isEmpty() ? EnumSet.noneOf(SendOperation.class) : sendOps);
        QueuePair q = new QueuePair(new QueuePairBuilder.Created(pd, cq, cq, QueuePairType.RC, caps, false, true, 1,
                qp, sendOps.isEmpty() ? MemorySegment.NULL : qp, ops, new QueuePair.Cleanup(),
                "QueuePair[RC fake#" + qpNum + "]"));
        q.trackedState = QueuePairState.RTS;
        return q;
    }

    /** A memory region over {@code buffer} with lkey = rkey = {@code key} (no registration: nothing is pinned). */
    public MemoryRegion register(MemorySegment buffer, int key) {
        MemorySegment mr = call("fake_reg_mr", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                        ValueLayout.ADDRESS, U64, ValueLayout.JAVA_INT),
                pd.resource.handle("fake_reg_mr"), buffer, buffer.byteSize(), key);
        try {
            Class<?> registration = Class.forName(MemoryRegion.class.getName() + "$Registration");
            Constructor<?> rc = registration.getDeclaredConstructor(Arena.class);
            rc.setAccessible(true);
            Constructor<MemoryRegion> c = MemoryRegion.class.getDeclaredConstructor(ProtectionDomain.class,
                    MemorySegment.class, MemorySegment.class, long.class, String.class, Set.class, registration);
            c.setAccessible(true);
            MemoryRegion region = c.newInstance(pd, mr, buffer, buffer.byteSize(), "fake",
                    EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE), rc.newInstance((Arena) null));
            java.lang.reflect.Field iova = MemoryRegion.class.getDeclaredField("iova");
            iova.setAccessible(true);
            iova.setLong(region, buffer.address()); // as ibv_reg_mr: the iova is the buffer's address
            return region;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("MemoryRegion's constructor changed: update FakeProvider", e);
        }
    }

    /** The native handle of a panverbs object ({@code ibv_qp *}, {@code ibv_cq *}, ...), for the C baselines. */
    public static MemorySegment handle(Object verbsObject) {
        return ((VerbsObject) verbsObject).resource.handle("benchmark");
    }

    /** A downcall handle for a function of the fake library (the C baselines). */
    public MethodHandle downcall(String name, FunctionDescriptor fd, boolean critical) {
        MemorySegment fn = lib.find(name).orElseThrow(() -> new IllegalStateException("no " + name + " in the fake"));
        return critical ? LINKER.downcallHandle(fn, fd, Linker.Option.critical(false)) : LINKER.downcallHandle(fn, fd);
    }

    private MemorySegment fakeCq(int cqe) {
        return call("fake_create_cq", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                ValueLayout.JAVA_INT), context.resource.handle("fake_create_cq"), cqe);
    }

    private MemorySegment call(String name, FunctionDescriptor fd, Object... args) {
        try {
            return (MemorySegment) downcall(name, fd, false).invokeWithArguments(args);
        } catch (Throwable t) {
            throw new IllegalStateException(name + " failed", t);
        }
    }

    private static Device newDevice() {
        try {
            Constructor<Device> c = Device.class.getDeclaredConstructor(String.class, long.class, NodeType.class,
                    TransportType.class, int.class);
            c.setAccessible(true);
            return c.newInstance("fake0", 0L, NodeType.CA, TransportType.IB, 0);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Device's constructor changed: update FakeProvider", e);
        }
    }
}
