package dev.panverbs.core;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.VerbsContextInline;
import dev.panverbs.bindings.ibverbs.VerbsInline;
import dev.panverbs.bindings.verbs.ibv_alloc_dm_attr;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.Resource;
import dev.panverbs.core.internal.ResourceKind;
import dev.panverbs.core.internal.Units;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * On-device memory ({@code struct ibv_dm}, {@code ibv_alloc_dm(3)}): memory on the NIC itself, read and written by
 * the host with {@link #copyTo}/{@link #copyFrom} ({@code ibv_memcpy_to_dm}/{@code ibv_memcpy_from_dm}) and by the
 * NIC through a {@link MemoryRegion} registered over it with {@link #register} ({@code ibv_reg_dm_mr(3)}), a key
 * that SGEs and peers can use. Made by {@link Context#allocDm(long)}; gated on the device's {@code max_dm_size}
 * (refused up front, naming it, where the device has none: rxe, most non-mlx5 devices). Closing it
 * ({@code ibv_free_dm}) closes the regions registered over it first.
 */
public final class DeviceMemory extends VerbsObject {
    private final Context context;
    private final long length;

    private DeviceMemory(Context context, MemorySegment dm, long length) {
        this(context, dm, length, DeviceMemory::free);
    }

    /** With {@code free} as the destroy verb (the fake provider's in host tests). */
    DeviceMemory(Context context, MemorySegment dm, long length, Resource.Destroyer free) {
        super(ResourceKind.DEVICE_MEMORY, "DeviceMemory[" + Units.bytes(length) + " " + Units.hex(dm.address())
                + " on " + context.device().name() + "]", dm, free, context.resource);
        this.context = context;
        this.length = length;
    }

    /**
     * Deregisters the regions over this memory, then frees it ({@code ibv_free_dm}). DMA safety: each region's own
     * {@link MemoryRegion#close()} runs first, so while work requests still reference one (or windows are bound to
     * it) the close is refused with {@link IllegalStateException} and the memory stays allocated; the resource
     * cascade alone would deregister a region under the NIC. Closing the context or a PD closes the QPs first.
     */
    @Override
    public synchronized void close() {
        if (isClosed()) {
            return;
        }
        for (Resource child : resource.children()) {
            if (child.owner() instanceof MemoryRegion mr) {
                mr.close();
            }
        }
        super.close();
    }

    private static void free(MemorySegment dm) {
        int rc = VerbsContextInline.ibv_free_dm(dm);
        if (rc != 0) {
            throw Errors.failure(Errors.call("ibv_free_dm", "dm", Units.hex(dm.address())), rc);
        }
    }

    /** {@code ibv_alloc_dm}, refused up front when {@code max_dm_size} is 0 or smaller than {@code length}. */
    static DeviceMemory alloc(Context context, long length) {
        String call = Errors.call("ibv_alloc_dm", "length", Units.bytes(length));
        if (length <= 0) {
            throw new IllegalArgumentException(call + ": length must be positive");
        }
        long max = context.attributes().maxDmSize();
        if (max == 0) {
            throw Errors.unsupported(call, "device memory (max_dm_size > 0)", context.device().name()
                    + " reports max_dm_size = 0 (on-device memory exists on mlx5 ConnectX-5 and later)");
        }
        DeviceChecks.atMost(call, "length", length, "max_dm_size", max, "DeviceAttributes.maxDmSize()");
        MemorySegment ctx = context.resource.handle("ibv_alloc_dm");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_alloc_dm_attr.layout());
            ibv_alloc_dm_attr.length(attr, length);
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment dm = VerbsContextInline.ibv_alloc_dm(errno, ctx, attr);
            if (dm.address() == 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
            return new DeviceMemory(context, dm, length);
        }
    }

    /** The context it was allocated on. */
    public Context context() {
        return context;
    }

    /** Its length in bytes. */
    public long length() {
        return length;
    }

    /**
     * Copies {@code source} to {@code offset} in the device memory ({@code ibv_memcpy_to_dm(3)}). The provider
     * requires 4-byte alignment of the offset and length (mlx5).
     *
     * <p>Errors: a range outside the memory → {@link IllegalArgumentException}; the provider's refusal →
     * {@link VerbsException}.
     */
    public void copyTo(long offset, MemorySegment source) {
        String call = Errors.call("ibv_memcpy_to_dm", "dm", this, "offset", offset, "length", source.byteSize());
        checkRange(call, offset, source.byteSize());
        requireNative(call, source, "source");
        int rc;
        try {
            rc = VerbsInline.ibv_memcpy_to_dm(resource.handle("ibv_memcpy_to_dm"), offset, source, source.byteSize());
        } catch (WrongThreadException e) { // the linker's access check, before the provider
            throw Errors.wrongThread(call, "the source segment", e);
        }
        if (rc != 0) {
            throw Errors.failure(call, rc);
        }
    }

    /** Copies {@code target.byteSize()} bytes from {@code offset} in the device memory into {@code target}. */
    public void copyFrom(long offset, MemorySegment target) {
        String call = Errors.call("ibv_memcpy_from_dm", "dm", this, "offset", offset, "length", target.byteSize());
        checkRange(call, offset, target.byteSize());
        if (target.isReadOnly()) {
            throw new IllegalArgumentException(call + ": the target segment is read-only");
        }
        requireNative(call, target, "target");
        int rc;
        try {
            rc = VerbsInline.ibv_memcpy_from_dm(target, resource.handle("ibv_memcpy_from_dm"), offset,
                    target.byteSize());
        } catch (WrongThreadException e) { // the linker's access check, before the provider
            throw Errors.wrongThread(call, "the target segment", e);
        }
        if (rc != 0) {
            throw Errors.failure(call, rc);
        }
    }

    /**
     * Registers {@code length} bytes at {@code offset} of this memory in {@code pd} ({@code ibv_reg_dm_mr(3)},
     * always zero-based: SGEs and peers address it from 0). The region has no CPU-visible buffer; it closes with
     * this memory.
     */
    public MemoryRegion register(ProtectionDomain pd, long offset, long length, Set<Access> access) {
        String call = Errors.call("ibv_reg_dm_mr", "dm", this, "offset", offset, "length", length, "access", access);
        checkRange(call, offset, length);
        if (pd.context() != context) {
            throw new IllegalArgumentException(call + ": " + pd + " belongs to another context");
        }
        java.util.EnumSet<Access> zeroBased = access.isEmpty() ? java.util.EnumSet.noneOf(Access.class)
                : java.util.EnumSet.copyOf(access);
        zeroBased.add(Access.ZERO_BASED); // ibv_reg_dm_mr(3): IBV_ACCESS_ZERO_BASED is mandatory
        int mask = Access.validate("ibv_reg_dm_mr", zeroBased);
        MemorySegment pdHandle = pd.resource.handle("ibv_reg_dm_mr");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment mr = VerbsContextInline.ibv_reg_dm_mr(errno, pdHandle, resource.handle("ibv_reg_dm_mr"),
                    offset, length, mask);
            if (mr.address() == 0) {
                throw Errors.failure(call, Errno.get(errno));
            }
            return MemoryRegion.ofDeviceMemory(pd, this, mr, length, zeroBased);
        }
    }

    /** The provider's memcpy needs an address: a heap segment would fail deep in the linker without the verb. */
    private static void requireNative(String call, MemorySegment segment, String what) {
        if (!segment.isNative()) {
            throw new IllegalArgumentException(call + ": the " + what + " is a heap segment; copy it to native memory"
                    + " (Arena.allocate) first");
        }
    }

    private void checkRange(String call, long offset, long len) {
        if (offset < 0 || len < 0 || offset > length || len > length - offset) {
            throw new IllegalArgumentException(call + ": [" + offset + ", " + offset + " + " + len
                    + ") is outside the " + length + " bytes of device memory");
        }
    }
}
