package dev.panverbs.core.internal;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.NativeLibraryException;
import dev.panverbs.bindings.UnsupportedSlotException;
import dev.panverbs.bindings.verbs.verbs_h;
import dev.panverbs.core.MissingLibraryException;
import dev.panverbs.core.UnsupportedVerbException;
import dev.panverbs.core.VerbsException;
import java.util.Map;
import java.util.Set;

/**
 * The one place that turns (verb + call context, errno) into the right exception with the right hint. Every
 * verb failure in core and its extensions goes through {@link #failure}, so the same errno gets the same
 * advice everywhere:
 * <ul>
 *   <li>{@code EOPNOTSUPP}, {@code EPROTONOSUPPORT} → {@link UnsupportedVerbException} naming the capability;</li>
 *   <li>a provider slot left NULL (the bindings' {@link UnsupportedSlotException}) → the same
 *       {@link UnsupportedVerbException} ({@link #unsupportedSlot});</li>
 *   <li>{@code ENOMEM}/{@code EPERM}/{@code EAGAIN} from memory registration, and {@code ENOMEM} from queue
 *       creation (queue buffers are pinned too) → the current {@code RLIMIT_MEMLOCK} and {@code ulimit -l};</li>
 *   <li>{@code EFAULT}/{@code EACCES}/{@code EINVAL} from registration → what about the range or flags is wrong;</li>
 *   <li>no device / {@code ENOSYS} from the device list → how to load rxe or what is missing;</li>
 *   <li>{@code EACCES}/{@code EPERM} from {@code ibv_open_device} → the uverbs device permissions.</li>
 * </ul>
 * A native library that cannot be loaded (the bindings' {@link NativeLibraryException}) becomes
 * {@link MissingLibraryException} ({@link #missingLibrary}). Messages are built here, on the cold path; callers pass the call as {@link #call} formats it.
 */
public final class Errors {

    private static final Set<String> REGISTRATION = Set.of(
            "ibv_reg_mr", "ibv_reg_mr_iova", "ibv_reg_mr_iova2", "ibv_rereg_mr", "ibv_reg_dmabuf_mr",
            "ibv_reg_dm_mr", "pd.allocate");
    private static final Set<String> PINNING_QUEUES = Set.of(
            "ibv_create_cq", "ibv_create_cq_ex", "ibv_create_qp", "ibv_create_qp_ex", "ibv_create_srq",
            "ibv_create_srq_ex", "ibv_create_wq", "ibv_resize_cq", "mlx5dv_create_qp", "mlx5dv_create_cq");
    private static final Map<String, String> CAPABILITIES = Map.ofEntries(
            Map.entry("ibv_reg_dmabuf_mr", "DMA-BUF memory registration"),
            Map.entry("ibv_alloc_mw", "memory windows"),
            Map.entry("ibv_bind_mw", "memory windows"),
            Map.entry("ibv_open_xrcd", "XRC domains"),
            Map.entry("ibv_alloc_dm", "device memory"),
            Map.entry("ibv_reg_dm_mr", "device memory"),
            Map.entry("ibv_create_flow", "flow steering"),
            Map.entry("ibv_query_rt_values_ex", "real-time clock values"),
            Map.entry("ibv_advise_mr", "on-demand paging prefetch (ibv_advise_mr)"),
            Map.entry("ibv_create_cq_ex", "extended completion queues"),
            Map.entry("ibv_create_qp_ex", "extended queue pairs"),
            Map.entry("ibv_create_srq_ex", "extended shared receive queues"),
            Map.entry("ibv_alloc_td", "thread domains"),
            Map.entry("ibv_alloc_parent_domain", "parent domains"),
            Map.entry("ibv_create_counters", "flow counters"),
            Map.entry("ibv_create_wq", "work queues"),
            Map.entry("ibv_modify_qp_rate_limit", "QP rate limiting (packet pacing)"),
            Map.entry("ibv_alloc_null_mr", "null memory regions"),
            Map.entry("ibv_query_gid_ex", "extended GID queries (kernel 5.9+)"),
            Map.entry("_ibv_query_gid_ex", "extended GID queries (kernel 5.9+)"),
            Map.entry("_ibv_query_gid_table", "GID table queries (kernel 5.9+)"),
            Map.entry("ibv_query_device_ex", "extended device attributes"),
            Map.entry("ibv_rereg_mr", "memory re-registration"),
            Map.entry("mlx5dv_create_qp", "mlx5 direct-verbs QP creation"));

    private Errors() {}

    /** {@code verb(k1=v1, k2=v2)}: the call and its context as messages show it. Pairs of key, value. */
    public static String call(String verb, Object... keyValues) {
        if (keyValues.length % 2 != 0) {
            throw new IllegalArgumentException("key without value");
        }
        StringBuilder sb = new StringBuilder(verb).append('(');
        for (int i = 0; i < keyValues.length; i += 2) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(keyValues[i]).append('=').append(keyValues[i + 1]);
        }
        return sb.append(')').toString();
    }

    /** The exception for {@code call} failing with {@code errno}, with the generic hints for that pair. */
    /**
     * The JDK's refusal of a segment of a confined arena used on a thread that does not own it, naming the verb
     * ({@code call}), what the segment was for, and the fix. Cold.
     */
    public static WrongThreadException wrongThread(String call, String what, WrongThreadException e) {
        return new WrongThreadException(call + ": " + what + " belongs to a confined arena (Arena.ofConfined) of "
                + "another thread; only its owner thread may use it: call this from the arena's owner thread, or "
                + "allocate the memory from a shared arena (Arena.ofShared()). Nothing was passed to the provider", e);
    }

    public static VerbsException failure(String call, int errno) {
        return failure(call, errno, null);
    }

    /**
     * The exception for {@code call} failing with {@code errno}: an {@link UnsupportedVerbException} for
     * EOPNOTSUPP/EPROTONOSUPPORT, else a {@link VerbsException}. {@code hint}, when not null, comes first,
     * then the generic hint for the verb and errno.
     *
     * @param call  the verb with its context, e.g. {@code call("ibv_reg_mr", "length", ..., "access", ...)}
     * @param errno the errno value; negative values (verbs returning {@code -errno}) are accepted
     * @param hint  a verb-specific hint, or {@code null}
     */
    public static VerbsException failure(String call, int errno, String hint) {
        int e = Math.abs(errno);
        String verb = stem(call);
        String full = join(hint, genericHint(verb, e));
        if (e == verbs_h.EOPNOTSUPP() || e == verbs_h.EPROTONOSUPPORT()) {
            return new UnsupportedVerbException(call, e, Errno.name(e), Errno.strerror(e), full, capabilityOf(verb));
        }
        return new VerbsException(call, e, Errno.name(e), Errno.strerror(e), full);
    }

    /** An {@link UnsupportedVerbException} for a verb refused before the call: the device lacks {@code capability}. */
    public static UnsupportedVerbException unsupported(String call, String capability, String why) {
        return new UnsupportedVerbException(call, why, capability);
    }

    /**
     * The {@link UnsupportedVerbException} for a provider slot left NULL, with the bindings' exception as its cause:
     * the capability is the verb's (as {@link #capabilityOf} names it) or, for a verb with no entry, the provider op
     * itself. Installed by {@code VerbsObject} as the bindings' slot translation
     * ({@link dev.panverbs.bindings.ProviderSlots#translateWith}), so every core object throws it, on the data path
     * too, without a catch per call.
     */
    public static UnsupportedVerbException unsupportedSlot(UnsupportedSlotException slot) {
        String known = CAPABILITIES.get(slot.verb());
        UnsupportedVerbException e = new UnsupportedVerbException(slot.verb(),
                "the provider left " + slot.slot() + " NULL: " + slot.reason(),
                known != null ? known : "provider op " + slot.slot());
        e.initCause(slot);
        return e;
    }

    /**
     * The {@link MissingLibraryException} for {@code call} needing a library (or function) that the bindings could
     * not load, with the package to install as its hint and the bindings' exception as its cause.
     */
    public static MissingLibraryException missingLibrary(String call, NativeLibraryException missing) {
        MissingLibraryException e = new MissingLibraryException(call, missing.library(), missing.problem(),
                missing.hint());
        e.initCause(missing);
        return e;
    }

    /** The capability a verb provides, as {@link UnsupportedVerbException#capability()} names it. */
    public static String capabilityOf(String verb) {
        String c = CAPABILITIES.get(verb);
        return c != null ? c : "the verb " + verb;
    }

    static String genericHint(String verb, int e) {
        if (REGISTRATION.contains(verb)) {
            if (e == verbs_h.ENOMEM() || e == verbs_h.EPERM() || e == verbs_h.EAGAIN()) {
                return MemlockLimit.current().hint();
            }
            if (e == verbs_h.EFAULT()) {
                return "the address range is not mapped in this process (memory freed or never mapped)";
            }
            if (e == verbs_h.EACCES()) {
                return "the access flags exceed the mapping's protection, e.g. LOCAL_WRITE or REMOTE_WRITE on a "
                        + "read-only mapping (a file mapped READ_ONLY)";
            }
            if (e == verbs_h.EINVAL()) {
                return "the device rejected the access flags, the length (0 or above max_mr_size) or the iova "
                        + "(see DeviceAttributes: maxMrSize, pageSizeCap, odp)";
            }
        }
        if (PINNING_QUEUES.contains(verb) && e == verbs_h.ENOMEM()) {
            return "queue buffers are pinned memory: " + MemlockLimit.current().hint()
                    + "; also check the requested sizes against DeviceAttributes (maxCqe, maxQpWr, maxSge)";
        }
        if (verb.equals("ibv_get_device_list") && (e == verbs_h.ENOSYS() || e == verbs_h.ENODEV())) {
            return "the kernel has no RDMA verbs support (ib_uverbs not loaded?); "
                    + new DeviceDiagnostics().noDeviceHint();
        }
        if (verb.equals("ibv_open_device") && (e == verbs_h.EACCES() || e == verbs_h.EPERM())) {
            return "no permission on /dev/infiniband/uverbs*: add the user to the group owning it (often 'rdma') "
                    + "or install the rdma-core udev rules";
        }
        if (e == verbs_h.EBUSY() && verb.startsWith("ibv_d")) {
            return "the object is still in use by another verbs object created outside this Context's registry";
        }
        return null;
    }

    /** {@code ibv_reg_mr} for {@code ibv_reg_mr(length=1 GiB)}. */
    static String stem(String call) {
        int paren = call.indexOf('(');
        return paren < 0 ? call : call.substring(0, paren);
    }

    private static String join(String a, String b) {
        if (a == null || a.isEmpty()) {
            return b;
        }
        return b == null || b.isEmpty() ? a : a + "; " + b;
    }
}
