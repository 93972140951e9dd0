package dev.panverbs.core;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.NativeLibraryException;
import dev.panverbs.bindings.ibverbs.LibIbverbs;
import dev.panverbs.bindings.verbs.ibv_device;
import dev.panverbs.bindings.verbs.verbs_h;
import dev.panverbs.core.internal.DeviceDiagnostics;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.Units;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * An RDMA device as {@code ibv_get_device_list(3)} reports it: name, node GUID, node and transport type. A
 * {@code Device} is a value, not a native resource: it holds no pointer into the device list (which
 * libibverbs frees), so it needs no close. {@link #open()} looks the device up again by name and opens it.
 *
 * <pre>{@code
 * try (Context ctx = Device.open("rxe0")) { ... }     // or Device.first().open()
 * }</pre>
 *
 * <p>Thread safety: immutable; the static methods may be called from any thread.
 */
public final class Device {

    private final String name;
    private final long guid;
    private final NodeType nodeType;
    private final TransportType transportType;
    private final int index;

    Device(String name, long guid, NodeType nodeType, TransportType transportType, int index) {
        this.name = name;
        this.guid = guid;
        this.nodeType = nodeType;
        this.transportType = transportType;
        this.index = index;
    }

    /**
     * Lists the RDMA devices libibverbs can use ({@code ibv_get_device_list(3)}), in its order. An empty
     * list when the kernel has no RDMA support (the call fails with {@code ENOSYS}) or no device.
     *
     * <p>Errors: {@code ENOMEM} → {@link VerbsException}.
     *
     * @throws MissingLibraryException if {@code libibverbs.so.1} cannot be loaded (rdma-core is not installed);
     *                                 its hint names the packages to install ({@code libibverbs1},
     *                                 {@code ibverbs-providers}). The first call into panverbs that needs a
     *                                 device goes through here, so this is where a missing rdma-core shows.
     */
    public static List<Device> list() {
        return withDeviceList(devices -> {
            List<Device> out = new ArrayList<>(devices.size());
            for (MemorySegment d : devices) {
                out.add(describe(d));
            }
            return List.copyOf(out);
        });
    }

    /**
     * The device named {@code name} ({@code ibv_get_device_name(3)}).
     *
     * @throws VerbsException ({@code ENODEV}) if there is none, listing the devices present or, when there
     *                        are none, how to get one (load Soft-RoCE, install providers, ...)
     * @throws MissingLibraryException if libibverbs cannot be loaded, as {@link #list()}
     */
    public static Device byName(String name) {
        Objects.requireNonNull(name, "name");
        List<Device> all = list();
        for (Device d : all) {
            if (d.name.equals(name)) {
                return d;
            }
        }
        List<String> names = all.stream().map(Device::name).toList();
        throw noDevice(Errors.call("ibv_get_device_list", "name", name), DeviceDiagnostics.notFoundHint(name, names));
    }

    /**
     * The first device of {@link #list()}.
     *
     * @throws VerbsException ({@code ENODEV}) if there is none, with what is missing and how to load rxe
     * @throws MissingLibraryException if libibverbs cannot be loaded, as {@link #list()}
     */
    public static Device first() {
        List<Device> all = list();
        if (all.isEmpty()) {
            throw noDevice("ibv_get_device_list()", new DeviceDiagnostics().noDeviceHint());
        }
        return all.getFirst();
    }

    /** Opens the device named {@code name}: shorthand for {@code byName(name).open()}. */
    public static Context open(String name) {
        return byName(name).open();
    }

    /**
     * Opens this device ({@code ibv_open_device(3)}), giving the {@link Context} every other verbs object
     * is created from. Each call opens a new context; close it when done (it closes everything made from it).
     *
     * <p>Errors: {@code ENODEV} (device gone since listed), {@code EACCES}/{@code EPERM} (no permission on
     * {@code /dev/infiniband/uverbs*}), {@code ENOMEM} → {@link VerbsException} with a hint.
     */
    public Context open() {
        return withDeviceList(devices -> {
            for (MemorySegment d : devices) {
                if (nameOf(d).equals(name)) {
                    try (Arena arena = Arena.ofConfined()) {
                        MemorySegment errno = Errno.allocateCapture(arena);
                        MemorySegment ctx = LibIbverbs.ibv_open_device(errno, d);
                        if (ctx.equals(MemorySegment.NULL)) {
                            throw Errors.failure(Errors.call("ibv_open_device", "device", name), Errno.get(errno));
                        }
                        // libibverbs holds a reference on the device for the context, so the list may be freed
                        return new Context(this, ctx);
                    }
                }
            }
            throw noDevice(Errors.call("ibv_open_device", "device", name), "device " + name
                    + " disappeared since it was listed (driver unloaded or rxe link deleted)");
        });
    }

    /** The kernel name, e.g. {@code rxe0} or {@code mlx5_0}. */
    public String name() {
        return name;
    }

    /** The node GUID ({@code ibv_get_device_guid(3)}), in host byte order. */
    public long guid() {
        return guid;
    }

    /** What kind of node the device is. */
    public NodeType nodeType() {
        return nodeType;
    }

    /** The transport the device speaks (InfiniBand also for RoCE). */
    public TransportType transportType() {
        return transportType;
    }

    /** The kernel device index ({@code ibv_get_device_index(3)}), or -1 on old kernels. */
    public int index() {
        return index;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Device d && d.name.equals(name) && d.guid == guid;
    }

    @Override
    public int hashCode() {
        return name.hashCode() * 31 + Long.hashCode(guid);
    }

    @Override
    public String toString() {
        return name + " (guid " + formatGuid(guid) + ", " + nodeType + ", " + transportType + ")";
    }

    /** {@code 0002:c903:0011:2233}: the form {@code ibv_devices} prints. */
    static String formatGuid(long guid) {
        String hex = String.format("%016x", guid);
        return hex.substring(0, 4) + ":" + hex.substring(4, 8) + ":" + hex.substring(8, 12) + ":" + hex.substring(12);
    }

    private static VerbsException noDevice(String call, String hint) {
        int enodev = verbs_h.ENODEV();
        return new VerbsException(call, enodev, Errno.name(enodev), Errno.strerror(enodev), hint);
    }

    /** Runs {@code action} over the device pointers, always freeing the list. */
    private static <T> T withDeviceList(Function<List<MemorySegment>, T> action) {
        MemorySegment list;
        int count;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment num = arena.allocate(ValueLayout.JAVA_INT);
            try {
                list = LibIbverbs.ibv_get_device_list(errno, num);
            } catch (NativeLibraryException e) { // the first call into libibverbs: it cannot be loaded
                throw Errors.missingLibrary("ibv_get_device_list()", e);
            }
            if (list.equals(MemorySegment.NULL)) {
                int e = Errno.get(errno);
                if (e == verbs_h.ENOSYS()) {
                    return action.apply(List.of()); // no kernel verbs support: no devices, not an error
                }
                throw Errors.failure("ibv_get_device_list()", e);
            }
            count = num.get(ValueLayout.JAVA_INT, 0);
        }
        try {
            MemorySegment array = list.reinterpret(ValueLayout.ADDRESS.byteSize() * count);
            List<MemorySegment> devices = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                devices.add(array.getAtIndex(ValueLayout.ADDRESS, i).reinterpret(ibv_device.sizeof()));
            }
            return action.apply(devices);
        } finally {
            LibIbverbs.ibv_free_device_list(list);
        }
    }

    /** The device of a {@code struct ibv_device *}. */
    static Device of(MemorySegment ibvDevice) {
        return describe(ibvDevice.reinterpret(ibv_device.sizeof()));
    }

    private static Device describe(MemorySegment d) {
        return new Device(nameOf(d), fromBigEndian(LibIbverbs.ibv_get_device_guid(d)),
                NodeType.of(ibv_device.node_type(d)), TransportType.of(ibv_device.transport_type(d)),
                LibIbverbs.ibv_get_device_index(d));
    }

    /** A {@code __be64} read as a native long, as a number. */
    static long fromBigEndian(long be) {
        return ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN ? be : Long.reverseBytes(be);
    }

    private static String nameOf(MemorySegment d) {
        MemorySegment namePtr = LibIbverbs.ibv_get_device_name(d);
        if (namePtr.equals(MemorySegment.NULL)) {
            throw new VerbsException("ibv_get_device_name(" + Units.hex(d.address()) + ")", "returned NULL");
        }
        return namePtr.reinterpret(ibv_device.name$layout().byteSize()).getString(0);
    }
}
