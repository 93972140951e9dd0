package dev.panverbs.core;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The library's real {@link Context}, {@link ProtectionDomain}, {@link CompletionQueue},
 * {@link ExtendedCompletionQueue}, {@link QueuePair} and {@link MemoryRegion} objects over a fake provider
 * ({@code core/src/test/c/fake_provider.c}) instead of a device: its {@code fake_open_device}, {@code fake_create_*}
 * return C objects with the {@code <infiniband/verbs.h>} layouts whose data-path slots point at the fake's C
 * functions, and this class wraps them through the package-private constructors the creation verbs use. Post and
 * poll then run the production code unchanged, down to the provider's function pointers: the host tests of post,
 * poll and retire use it on every build, and the JMH benchmarks (perf module, through core's test jar) measure it.
 *
 * <p>QPs and MRs close through the fake's destroy functions; the context, PDs and CQs are never closed (their
 * destroy verbs would call libibverbs on fake objects): the JVM exits instead.
 */
public final class FakeProvider {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG;

    private final SymbolLookup lib;
    private final Context context;
    private final ProtectionDomain pd;
    private int nextQpNum = 0x100;

    /** Opens the fake device from the shared library at {@code library} (see {@link #compile}). */
    public FakeProvider(Path library) {
        this.lib = SymbolLookup.libraryLookup(library.toAbsolutePath(), Arena.global());
        MemorySegment ctx = call("fake_open_device", FunctionDescriptor.of(ValueLayout.ADDRESS));
        this.context = new Context(new Device("fake0", 0L, NodeType.CA, TransportType.IB, 0), ctx);
        this.pd = newPd();
    }

    /**
     * Compiles {@code source} (fake_provider.c) with gcc into {@code outDir}, unless an up-to-date library is
     * there, and returns the library.
     */
    public static Path compile(Path source, Path outDir) {
        try {
            Files.createDirectories(outDir);
            Path lib = outDir.resolve("libfakeprovider.so");
            if (Files.exists(lib) && Files.getLastModifiedTime(lib).compareTo(Files.getLastModifiedTime(source)) > 0) {
                return lib;
            }
            Path tmp = outDir.resolve("libfakeprovider.so." + ProcessHandle.current().pid());
            Process p = new ProcessBuilder("gcc", "-O2", "-Wall", "-shared", "-fPIC", "-o", tmp.toString(),
                    source.toString()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("gcc failed on " + source + " (needs gcc and libibverbs-dev):\n" + out);
            }
            Files.move(tmp, lib, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            return lib;
        } catch (IOException e) {
            throw new IllegalStateException("cannot build the fake provider from " + source, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** For core's own tests: builds {@code src/test/c/fake_provider.c} into {@code target/fake}. */
    static FakeProvider forTests() {
        return new FakeProvider(compile(Path.of("src/test/c/fake_provider.c"), Path.of("target/fake")));
    }

    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** Another protection domain on the fake context. */
    public ProtectionDomain newPd() {
        return new ProtectionDomain(context, call("fake_alloc_pd",
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS), context.resource.handle("fake")));
    }

    /**
     * A protection domain on the fake context that can be closed: wrapped as a PD another library owns
     * ({@code ProtectionDomain.adopt}), so its close closes what was created in it and never calls
     * {@code ibv_dealloc_pd} on the fake object.
     */
    public ProtectionDomain newClosablePd() {
        return ProtectionDomain.adopt(context, call("fake_alloc_pd",
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS), context.resource.handle("fake")));
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
        return createRtsQp(pd, cq, cq, maxSendWr, 16, maxInline, sendOps);
    }

    /** An RC QP in RTS in {@code pd} whose sends complete to {@code sendCq} and receives to {@code recvCq}. */
    public QueuePair createRtsQp(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, int maxSendWr,
                                 int maxRecvWr, int maxInline, Set<SendOperation> sendOps) {
        return createRtsQp(pd, sendCq, recvCq, maxSendWr, maxRecvWr, 1, maxInline, sendOps);
    }

    /** The same with {@code maxSendSge} SGEs per send WR. */
    public QueuePair createRtsQp(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, int maxSendWr,
                                 int maxRecvWr, int maxSendSge, int maxInline, Set<SendOperation> sendOps) {
        return createRtsQp(pd, sendCq, recvCq, maxSendWr, maxRecvWr, maxSendSge, maxInline, sendOps, false);
    }

    /** The same, created with {@code sq_sig_all} when {@code sqSigAll}. */
    public QueuePair createRtsQp(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, int maxSendWr,
                                 int maxRecvWr, int maxSendSge, int maxInline, Set<SendOperation> sendOps,
                                 boolean sqSigAll) {
        return fakeQpInRts(pd, sendCq, recvCq, QueuePairType.RC,
                new QueuePairCapabilities(maxSendWr, maxRecvWr, maxSendSge, 1, maxInline), sqSigAll,
                !sendOps.isEmpty(), sendOps, false);
    }

    /** A memory region over a new 4 KiB buffer (a shared arena's) with lkey = rkey = {@code key}, in the default PD. */
    public MemoryRegion buffer(int key) {
        return register(Arena.ofShared().allocate(4096, 64), key);
    }

    /** A memory window of {@code type} in the default PD with {@code rkey} (its dealloc marks the fake's object dead and keeps it: {@link #mwDeadUses}). */
    public MemoryWindow allocMw(MemoryWindowType type, int rkey) {
        return allocMw(pd, type, rkey);
    }

    /** The same in {@code pd}. */
    public MemoryWindow allocMw(ProtectionDomain pd, MemoryWindowType type, int rkey) {
        MemorySegment mw = call("fake_alloc_mw", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                ValueLayout.JAVA_INT, ValueLayout.JAVA_INT), pd.resource.handle("fake_alloc_mw"),
                type == MemoryWindowType.TYPE_1 ? 1 : 2, rkey);
        return MemoryWindow.wrap(pd, type, mw);
    }

    /** A memory region over {@code buffer} with lkey = rkey = {@code key} (nothing is pinned), in the default PD. */
    public MemoryRegion register(MemorySegment buffer, int key) {
        return register(pd, buffer, key);
    }

    /** A memory region over {@code buffer} in {@code pd}; closing it calls the fake's dereg. */
    public MemoryRegion register(ProtectionDomain pd, MemorySegment buffer, int key) {
        return register(pd, buffer, key, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
    }

    /** As {@link #register(ProtectionDomain, MemorySegment, int)} with the given access flags (e.g. ON_DEMAND). */
    public MemoryRegion register(ProtectionDomain pd, MemorySegment buffer, int key, Set<Access> access) {
        return register(pd, buffer, key, access, h -> { });
    }

    /** The same; {@code beforeDereg} sees the {@code ibv_mr *} just before the fake's dereg frees it. */
    public MemoryRegion register(ProtectionDomain pd, MemorySegment buffer, int key, Set<Access> access,
                                 java.util.function.Consumer<MemorySegment> beforeDereg) {
        MemorySegment mr = call("fake_reg_mr", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                        ValueLayout.ADDRESS, U64, ValueLayout.JAVA_INT),
                pd.resource.handle("fake_reg_mr"), buffer, buffer.byteSize(), key);
        MethodHandle dereg = downcall("fake_dereg_mr", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS),
                false);
        return MemoryRegion.wrap(pd, mr, buffer, access, h -> {
            beforeDereg.accept(h);
            return invokeInt(dereg, h);
        });
    }

    /**
     * Device memory of {@code length} bytes on the fake context (a host allocation standing in for NIC memory),
     * with a region over it in the default PD whose lkey = rkey = {@code key}; {@code freed} runs at ibv_free_dm.
     */
    public MemoryRegion registerDeviceMemory(long length, int key, Runnable freed) {
        MemorySegment mem = Arena.ofAuto().allocate(length, 64);
        DeviceMemory dm = new DeviceMemory(context, mem, length, h -> freed.run());
        MemorySegment mr = call("fake_reg_mr", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                        ValueLayout.ADDRESS, U64, ValueLayout.JAVA_INT),
                pd.resource.handle("fake_reg_mr"), mem, length, key);
        MethodHandle dereg = downcall("fake_dereg_mr", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS),
                false);
        return MemoryRegion.ofDeviceMemory(pd, dm, mr, length, EnumSet.of(Access.LOCAL_WRITE, Access.ZERO_BASED),
                h -> invokeInt(dereg, h));
    }

    /**
     * An XRC initiator ({@code XRC_SEND}) in RTS sending to {@code cq}: no receive queue of its own; its WRs must name
     * a remote SRQ number. The fake executes its WRs like an RC QP's.
     */
    public QueuePair createXrcInitiator(CompletionQueue cq, int maxSendWr, Set<SendOperation> sendOps) {
        return fakeQpInRts(pd, cq, cq, QueuePairType.XRC_SEND, new QueuePairCapabilities(maxSendWr, 0, 1, 0, 0), false,
                !sendOps.isEmpty(), sendOps, true);
    }

    /**
     * A UD QP in RTS sending to {@code cq} with {@code sendOps} for {@link QueuePair#startSend()}: panverbs applies
     * its UD rules (each WR must name an address); the fake executes its WRs like an RC QP's.
     */
    public QueuePair createUdQp(CompletionQueue cq, int maxSendWr, Set<SendOperation> sendOps) {
        return fakeQpInRts(pd, cq, cq, QueuePairType.UD, new QueuePairCapabilities(maxSendWr, 16, 1, 1, 0), false,
                true, sendOps, false);
    }

    /**
     * A DC initiator ({@code DC_INITIATOR}) in RTS sending to {@code cq}, as {@code dev.panverbs.core.mlx5} adopts one
     * from {@code mlx5dv_create_qp}: no receive queue; each WR must name a DC target. The fake executes its WRs like an
     * RC QP's (its {@code mlx5dv_qp_ex} is the test's).
     */
    public QueuePair createDcInitiator(CompletionQueue cq, int maxSendWr, Set<SendOperation> sendOps) {
        return fakeQpInRts(pd, cq, cq, QueuePairType.DC_INITIATOR, new QueuePairCapabilities(maxSendWr, 0, 1, 0, 0),
                false, true, sendOps, true);
    }

    /**
     * A QP of {@code type} over the fake's {@code fake_create_qp} (which executes every QP's WRs like an RC QP's),
     * tracked in RTS; {@code withQpEx}: its {@code ibv_qp_ex} is the QP itself; {@code noOwnRecv}: no receive queue
     * of its own (an XRC or DC initiator, as on an SRQ).
     */
    private QueuePair fakeQpInRts(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                                  QueuePairType type, QueuePairCapabilities caps, boolean sqSigAll, boolean withQpEx,
                                  Set<SendOperation> sendOps, boolean noOwnRecv) {
        int qpNum = nextQpNum++;
        MemorySegment qp = call("fake_create_qp", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                        ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
                pd.resource.handle("fake_create_qp"), sendCq.resource.handle("fake_create_qp"),
                recvCq.resource.handle("fake_create_qp"), qpNum, 0);
        MethodHandle destroy = downcall("fake_destroy_qp",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS), false);
        QueuePair q = new QueuePair(new QueuePairBuilder.Created(pd, sendCq, recvCq, type, caps, sqSigAll, true, 1, qp,
                withQpEx ? qp : MemorySegment.NULL, SendOperation.bits(sendOps), noOwnRecv,
                new QueuePair.Cleanup("fake_destroy_qp", h -> invokeInt(destroy, h)),
                "QueuePair[" + type + " fake#" + qpNum + "]"));
        q.trackedState = QueuePairState.RTS;
        return q;
    }

    /** An address handle of {@code pd} over 64 bytes of fake {@code ibv_ah}; its destroy counts into {@code destroyed}. */
    public static AddressHandle fakeAh(ProtectionDomain pd, java.util.concurrent.atomic.AtomicInteger destroyed) {
        return AddressHandle.wrap(pd, Arena.global().allocate(64), AddressVector.builder(1).build(),
                h -> destroyed.incrementAndGet());
    }

    /** The fake context's device name ({@code fake0}) and its context: for provider-extension refusals. */
    public Context context() {
        return context;
    }

    /**
     * How many times a provider call read a deallocated window, plus how many deallocated windows were written since
     * (the fake keeps them, marked dead, instead of freeing them); 0 while no window was used after its dealloc.
     */
    public int mwDeadUses() {
        try {
            return (int) downcall("fake_mw_dead_uses", FunctionDescriptor.of(ValueLayout.JAVA_INT), false).invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** The remote SRQ number that the last {@code ibv_wr_*} WR of {@code qp} carried ({@code wr_set_xrc_srqn}). */
    public int lastXrcSrqn(QueuePair qp) {
        try {
            return (int) downcall("fake_last_xrc_srqn", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS),
                    false).invokeExact(handle(qp));
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** The next send WR {@code qp} executes completes with {@code status} (a raw {@code enum ibv_wc_status}). */
    public void failNext(QueuePair qp, int status) {
        invokeVoid("fake_fail_next", FunctionDescriptor.ofVoid(ValueLayout.ADDRESS, ValueLayout.JAVA_INT),
                handle(qp), status);
    }

    /** Every posted receive of {@code qp} completes with {@code WR_FLUSH_ERR} (and a misleading opcode). */
    public void flushReceives(QueuePair qp) {
        invokeVoid("fake_flush_recv", FunctionDescriptor.ofVoid(ValueLayout.ADDRESS), handle(qp));
    }

    /**
     * Runs {@code hook} inside every provider post ({@code post_send}, {@code post_recv}, {@code wr_complete}) until
     * {@link #clearPostHook()}, on the posting thread, while the provider holds the WRs ("the doorbell").
     */
    public void setPostHook(Runnable hook) {
        try {
            MethodHandle target = MethodHandles.lookup().findVirtual(Runnable.class, "run", MethodType.methodType(void.class))
                    .bindTo(hook);
            MemorySegment stub = LINKER.upcallStub(target, FunctionDescriptor.ofVoid(), Arena.global());
            invokeVoid("fake_set_post_hook", FunctionDescriptor.ofVoid(ValueLayout.ADDRESS), stub);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    public void clearPostHook() {
        invokeVoid("fake_set_post_hook", FunctionDescriptor.ofVoid(ValueLayout.ADDRESS), MemorySegment.NULL);
    }

    /** Runs {@code hook} (null: none) inside the fake's {@code wr_set_ud_addr} and {@code wr_set_dc_addr}. */
    public void setAhHook(Runnable hook) {
        MemorySegment stub = MemorySegment.NULL;
        if (hook != null) {
            try {
                MethodHandle target = MethodHandles.lookup().findVirtual(Runnable.class, "run",
                        MethodType.methodType(void.class)).bindTo(hook);
                stub = LINKER.upcallStub(target, FunctionDescriptor.ofVoid(), Arena.global());
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
        invokeVoid("fake_set_ah_hook", FunctionDescriptor.ofVoid(ValueLayout.ADDRESS), stub);
    }

    /** The native handle of a panverbs object ({@code ibv_qp *}, {@code ibv_cq *}, ...), for the C baselines. */
    public static MemorySegment handle(Object verbsObject) {
        return ((VerbsObject) verbsObject).resource.handle("benchmark");
    }

    /** A downcall handle for a function of the fake library (the C baselines). */
    /** The address of the fake's function {@code name} (to put into a provider slot). */
    public MemorySegment symbol(String name) {
        return lib.find(name).orElseThrow(() -> new IllegalStateException("no " + name + " in the fake"));
    }

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

    private void invokeVoid(String name, FunctionDescriptor fd, Object... args) {
        try {
            downcall(name, fd, false).invokeWithArguments(args);
        } catch (Throwable t) {
            throw new IllegalStateException(name + " failed", t);
        }
    }

    private static int invokeInt(MethodHandle mh, MemorySegment handle) {
        try {
            return (int) mh.invokeExact(handle);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
