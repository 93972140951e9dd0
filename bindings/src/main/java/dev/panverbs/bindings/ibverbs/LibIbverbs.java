package dev.panverbs.bindings.ibverbs;

import dev.panverbs.bindings.Downcalls;
import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.NativeLibraryException;
import java.lang.foreign.MemorySegment;

/**
 * Exported libibverbs functions (rdma-core 44, {@code <infiniband/verbs.h>}) for devices, contexts, queries,
 * protection domains, memory regions and asynchronous events, as typed static methods over
 * {@code static final} downcall handles ({@link LibIbverbsQueues} has the queue verbs, {@link LibIbverbsStrings}
 * the enum-to-text and rate helpers). Each method has the C name and forwards its arguments unchanged;
 * {@code MemorySegment} stands for every C pointer.
 *
 * <p>Error contract, per method: "NULL + errno" and "-1 + errno" methods take an {@link Errno} capture
 * segment first and the caller reads {@link Errno#get} only after a failure; "an errno value" methods return
 * it directly. Nothing here throws on a verbs failure; a missing libibverbs or symbol throws
 * {@link NativeLibraryException}.
 *
 * <p>The {@code static inline} verbs of verbs.h (post, poll, the extended verbs) are not exported symbols;
 * their Java twins are in {@link VerbsInline} and the classes it links to.
 */
public final class LibIbverbs {

    private LibIbverbs() {}

    // ---- devices and contexts ----

    /**
     * {@code struct ibv_device **ibv_get_device_list(int *num_devices)}: NULL + errno (ENOSYS: no kernel verbs
     * support; ENOMEM). Free with {@link #ibv_free_device_list}. The first argument is an {@link Errno} capture
     * segment.
     */
    public static MemorySegment ibv_get_device_list(MemorySegment errno, MemorySegment numDevices) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_get_device_list, "ibv_get_device_list")
                    .invokeExact(errno, numDevices);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code void ibv_free_device_list(struct ibv_device **list)}. */
    public static void ibv_free_device_list(MemorySegment list) {
        try {
            IbverbsHandles.linked(IbverbsHandles.ibv_free_device_list, "ibv_free_device_list").invokeExact(list);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code const char *ibv_get_device_name(struct ibv_device *device)}: NULL on failure. */
    public static MemorySegment ibv_get_device_name(MemorySegment device) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_get_device_name, "ibv_get_device_name")
                    .invokeExact(device);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code __be64 ibv_get_device_guid(struct ibv_device *device)}: the node GUID in network byte order. */
    public static long ibv_get_device_guid(MemorySegment device) {
        try {
            return (long) IbverbsHandles.linked(IbverbsHandles.ibv_get_device_guid, "ibv_get_device_guid")
                    .invokeExact(device);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int ibv_get_device_index(struct ibv_device *device)}: the kernel index, or -1 when unsupported. */
    public static int ibv_get_device_index(MemorySegment device) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_get_device_index, "ibv_get_device_index")
                    .invokeExact(device);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code struct ibv_context *ibv_open_device(struct ibv_device *device)}: NULL + errno. The first argument is
     * an {@link Errno} capture segment.
     */
    public static MemorySegment ibv_open_device(MemorySegment errno, MemorySegment device) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_open_device, "ibv_open_device")
                    .invokeExact(errno, device);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int ibv_close_device(struct ibv_context *context)}: 0 (v44 always succeeds). */
    public static int ibv_close_device(MemorySegment context) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_close_device, "ibv_close_device").invokeExact(context);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code struct ibv_context *ibv_import_device(int cmd_fd)}: NULL + errno. The first argument is an {@link
     * Errno} capture segment.
     */
    public static MemorySegment ibv_import_device(MemorySegment errno, int cmdFd) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_import_device, "ibv_import_device")
                    .invokeExact(errno, cmdFd);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int ibv_fork_init(void)}: 0 or an errno value. */
    public static int ibv_fork_init() {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_fork_init, "ibv_fork_init").invokeExact();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code enum ibv_fork_status ibv_is_fork_initialized(void)}. */
    public static int ibv_is_fork_initialized() {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_is_fork_initialized, "ibv_is_fork_initialized")
                    .invokeExact();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    // ---- device, port, GID and P_Key queries ----

    /**
     * {@code int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)}: 0 or an
     * errno value.
     */
    public static int ibv_query_device(MemorySegment context, MemorySegment deviceAttr) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_query_device, "ibv_query_device")
                    .invokeExact(context, deviceAttr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * The exported compat {@code ibv_query_port@@IBVERBS_1.1}, which fills only the 48-byte {@code struct
     * _compat_ibv_port_attr} prefix (no {@code port_cap_flags2}). C programs reach the extended op through the
     * {@code ibv_query_port} macro: use {@link VerbsContextInline#ibv_query_port} instead. 0 or an errno value.
     */
    public static int ibv_query_port(MemorySegment context, byte portNum, MemorySegment portAttr) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_query_port, "ibv_query_port")
                    .invokeExact(context, portNum, portAttr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)}: 0,
     * or -1 + errno. An empty GID table entry reads as all zeros. The first argument is an {@link Errno} capture
     * segment.
     */
    public static int ibv_query_gid(
            MemorySegment errno, MemorySegment context, byte portNum, int index, MemorySegment gid) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_query_gid, "ibv_query_gid")
                    .invokeExact(errno, context, portNum, index, gid);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index, struct
     * ibv_gid_entry *entry, uint32_t flags, size_t entry_size)}: 0 or an errno value (ENODATA: empty entry). C
     * callers use the inline {@link VerbsInline#ibv_query_gid_ex}.
     */
    public static int _ibv_query_gid_ex(
            MemorySegment context, int portNum, int gidIndex, MemorySegment entry, int flags, long entrySize) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles._ibv_query_gid_ex, "_ibv_query_gid_ex")
                    .invokeExact(context, portNum, gidIndex, entry, flags, entrySize);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries, size_t
     * max_entries, uint32_t flags, size_t entry_size)}: the number of entries, or a negative errno value. C
     * callers use the inline {@link VerbsInline#ibv_query_gid_table}.
     */
    public static long _ibv_query_gid_table(
            MemorySegment context, MemorySegment entries, long maxEntries, int flags, long entrySize) {
        try {
            return (long) IbverbsHandles.linked(IbverbsHandles._ibv_query_gid_table, "_ibv_query_gid_table")
                    .invokeExact(context, entries, maxEntries, flags, entrySize);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)}: 0, or -1
     * + errno (read from sysfs). The first argument is an {@link Errno} capture segment.
     */
    public static int ibv_query_pkey(
            MemorySegment errno, MemorySegment context, byte portNum, int index, MemorySegment pkey) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_query_pkey, "ibv_query_pkey")
                    .invokeExact(errno, context, portNum, index, pkey);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)}: the index, or -1
     * + errno. The first argument is an {@link Errno} capture segment.
     */
    public static int ibv_get_pkey_index(MemorySegment errno, MemorySegment context, byte portNum, short pkey) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_get_pkey_index, "ibv_get_pkey_index")
                    .invokeExact(errno, context, portNum, pkey);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    // ---- protection domains ----

    /**
     * {@code struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)}: NULL + errno. The first argument is an
     * {@link Errno} capture segment.
     */
    public static MemorySegment ibv_alloc_pd(MemorySegment errno, MemorySegment context) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_alloc_pd, "ibv_alloc_pd")
                    .invokeExact(errno, context);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int ibv_dealloc_pd(struct ibv_pd *pd)}: 0 or an errno value (EBUSY: objects still use the PD). */
    public static int ibv_dealloc_pd(MemorySegment pd) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_dealloc_pd, "ibv_dealloc_pd").invokeExact(pd);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)}: NULL + errno. The
     * first argument is an {@link Errno} capture segment.
     */
    public static MemorySegment ibv_import_pd(MemorySegment errno, MemorySegment context, int pdHandle) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_import_pd, "ibv_import_pd")
                    .invokeExact(errno, context, pdHandle);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code void ibv_unimport_pd(struct ibv_pd *pd)}. */
    public static void ibv_unimport_pd(MemorySegment pd) {
        try {
            IbverbsHandles.linked(IbverbsHandles.ibv_unimport_pd, "ibv_unimport_pd").invokeExact(pd);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    // ---- memory regions and device memory import ----

    /**
     * {@code struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)} (the exported
     * {@code @@IBVERBS_1.1} symbol; in v44 it forwards to {@code ibv_reg_mr_iova2} with {@code iova = addr}): NULL
     * + errno. The first argument is an {@link Errno} capture segment.
     */
    public static MemorySegment ibv_reg_mr(
            MemorySegment errno, MemorySegment pd, MemorySegment addr, long length, int access) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_reg_mr, "ibv_reg_mr")
                    .invokeExact(errno, pd, addr, length, access);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int
     * access)}: NULL + errno. The first argument is an {@link Errno} capture segment.
     */
    public static MemorySegment ibv_reg_mr_iova(
            MemorySegment errno, MemorySegment pd, MemorySegment addr, long length, long iova, int access) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_reg_mr_iova, "ibv_reg_mr_iova")
                    .invokeExact(errno, pd, addr, length, iova, access);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, unsigned
     * int access)}: what the C {@code ibv_reg_mr} macro calls for any access not known at compile time; clears
     * {@code IBV_ACCESS_OPTIONAL_RANGE} bits the kernel does not support. NULL + errno. The first argument is an
     * {@link Errno} capture segment.
     */
    public static MemorySegment ibv_reg_mr_iova2(
            MemorySegment errno, MemorySegment pd, MemorySegment addr, long length, long iova, int access) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_reg_mr_iova2, "ibv_reg_mr_iova2")
                    .invokeExact(errno, pd, addr, length, iova, access);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
     * int fd, int access)}: NULL + errno. The first argument is an {@link Errno} capture segment.
     */
    public static MemorySegment ibv_reg_dmabuf_mr(
            MemorySegment errno, MemorySegment pd, long offset, long length, long iova, int fd, int access) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_reg_dmabuf_mr, "ibv_reg_dmabuf_mr")
                    .invokeExact(errno, pd, offset, length, iova, fd, access);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length, int
     * access)}: 0, or a negative {@code enum ibv_rereg_mr_err_code} with errno set. The first argument is an
     * {@link Errno} capture segment.
     */
    public static int ibv_rereg_mr(
            MemorySegment errno, MemorySegment mr, int flags, MemorySegment pd, MemorySegment addr, long length,
            int access) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_rereg_mr, "ibv_rereg_mr")
                    .invokeExact(errno, mr, flags, pd, addr, length, access);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code int ibv_dereg_mr(struct ibv_mr *mr)}: 0 or an errno value. */
    public static int ibv_dereg_mr(MemorySegment mr) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_dereg_mr, "ibv_dereg_mr").invokeExact(mr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)}: NULL + errno. The first
     * argument is an {@link Errno} capture segment.
     */
    public static MemorySegment ibv_import_mr(MemorySegment errno, MemorySegment pd, int mrHandle) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_import_mr, "ibv_import_mr")
                    .invokeExact(errno, pd, mrHandle);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code void ibv_unimport_mr(struct ibv_mr *mr)}. */
    public static void ibv_unimport_mr(MemorySegment mr) {
        try {
            IbverbsHandles.linked(IbverbsHandles.ibv_unimport_mr, "ibv_unimport_mr").invokeExact(mr);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@code struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)}: NULL + errno. The
     * first argument is an {@link Errno} capture segment.
     */
    public static MemorySegment ibv_import_dm(MemorySegment errno, MemorySegment context, int dmHandle) {
        try {
            return (MemorySegment) IbverbsHandles.linked(IbverbsHandles.ibv_import_dm, "ibv_import_dm")
                    .invokeExact(errno, context, dmHandle);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code void ibv_unimport_dm(struct ibv_dm *dm)}. */
    public static void ibv_unimport_dm(MemorySegment dm) {
        try {
            IbverbsHandles.linked(IbverbsHandles.ibv_unimport_dm, "ibv_unimport_dm").invokeExact(dm);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    // ---- asynchronous events ----

    /**
     * {@code int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)}: 0, or -1 +
     * errno. Blocks until an event arrives (unless {@code async_fd} is non-blocking: EAGAIN), so this handle is
     * not critical. The first argument is an {@link Errno} capture segment.
     */
    public static int ibv_get_async_event(MemorySegment errno, MemorySegment context, MemorySegment event) {
        try {
            return (int) IbverbsHandles.linked(IbverbsHandles.ibv_get_async_event, "ibv_get_async_event")
                    .invokeExact(errno, context, event);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@code void ibv_ack_async_event(struct ibv_async_event *event)}. */
    public static void ibv_ack_async_event(MemorySegment event) {
        try {
            IbverbsHandles.linked(IbverbsHandles.ibv_ack_async_event, "ibv_ack_async_event").invokeExact(event);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }
}
