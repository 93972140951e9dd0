package dev.panverbs.core;

import dev.panverbs.bindings.verbs.ibv_device_attr;
import dev.panverbs.bindings.verbs.ibv_device_attr_ex;
import dev.panverbs.bindings.verbs.ibv_odp_caps;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * The attributes of a device ({@code struct ibv_device_attr_ex}, {@code ibv_query_device_ex(3)}), copied out
 * of the C struct (when the provider lacks the extended query, libibverbs falls back to
 * {@code ibv_query_device(3)} and the extended fields read 0). The typed capability accessors ({@link #supportsMemoryWindows()}, {@link #supportsXrc()},
 * {@link #odp()}, ...) are what panverbs checks before refusing a verb up front.
 *
 * @param fwVer                   the firmware version string
 * @param nodeGuid                the node GUID (host order)
 * @param sysImageGuid            the system image GUID (host order)
 * @param maxMrSize               the largest memory region in bytes, unsigned ({@code -1}: 2^64 - 1, no
 *                                limit, as rxe reports)
 * @param pageSizeCap             the supported page sizes (bit n set: 2^n bytes)
 * @param vendorId                the IEEE vendor id (0x02c9 Mellanox; 0xffffff for rxe)
 * @param vendorPartId            the vendor's part id
 * @param hwVer                   the hardware version
 * @param physPortCnt             the number of physical ports (numbered from 1)
 * @param localCaAckDelay         the local CA ack delay (4.096 µs × 2^value)
 * @param capabilities            {@code device_cap_flags} and {@code device_cap_flags_ex} as a set
 * @param atomicCap               how atomics are supported
 * @param limits                  resource limits
 * @param odp                     on-demand paging support
 * @param completionTimestampMask the valid bits of completion timestamps (0: no timestamps)
 * @param hcaCoreClockKhz         the frequency of the timestamp clock in kHz (0: unknown)
 * @param maxDmSize               bytes of on-device memory ({@code ibv_alloc_dm}); 0 when none
 * @param maxWqTypeRq             receive work queues ({@code ibv_create_wq})
 */
public record DeviceAttributes(String fwVer, long nodeGuid, long sysImageGuid, long maxMrSize, long pageSizeCap,
                               int vendorId, int vendorPartId, int hwVer, int physPortCnt, int localCaAckDelay,
                               Set<DeviceCapability> capabilities, AtomicCapability atomicCap, DeviceLimits limits,
                               OdpCapabilities odp, long completionTimestampMask, long hcaCoreClockKhz,
                               long maxDmSize, int maxWqTypeRq) {

    public DeviceAttributes {
        capabilities = Set.copyOf(capabilities);
    }

    /** Copies a filled {@code struct ibv_device_attr_ex}. */
    static DeviceAttributes read(MemorySegment ex) {
        MemorySegment a = ibv_device_attr_ex.orig_attr(ex);
        MemorySegment odpCaps = ibv_device_attr_ex.odp_caps(ex);
        MemorySegment perTransport = ibv_odp_caps.per_transport_caps(odpCaps);
        long flags = Integer.toUnsignedLong(ibv_device_attr.device_cap_flags(a)) | ibv_device_attr_ex.device_cap_flags_ex(ex);
        long general = ibv_odp_caps.general_caps(odpCaps);
        return new DeviceAttributes(
                ibv_device_attr.fw_ver(a).getString(0),
                Device.fromBigEndian(ibv_device_attr.node_guid(a)),
                Device.fromBigEndian(ibv_device_attr.sys_image_guid(a)),
                ibv_device_attr.max_mr_size(a),
                ibv_device_attr.page_size_cap(a),
                ibv_device_attr.vendor_id(a),
                ibv_device_attr.vendor_part_id(a),
                ibv_device_attr.hw_ver(a),
                Byte.toUnsignedInt(ibv_device_attr.phys_port_cnt(a)),
                Byte.toUnsignedInt(ibv_device_attr.local_ca_ack_delay(a)),
                DeviceCapability.fromMask(flags),
                AtomicCapability.of(ibv_device_attr.atomic_cap(a)),
                DeviceLimits.read(a),
                OdpCapabilities.of(general, ibv_odp_caps.per_transport_caps.rc_odp_caps(perTransport),
                        ibv_odp_caps.per_transport_caps.uc_odp_caps(perTransport),
                        ibv_odp_caps.per_transport_caps.ud_odp_caps(perTransport),
                        ibv_device_attr_ex.xrc_odp_caps(ex)),
                ibv_device_attr_ex.completion_timestamp_mask(ex),
                ibv_device_attr_ex.hca_core_clock(ex),
                ibv_device_attr_ex.max_dm_size(ex),
                ibv_device_attr_ex.max_wq_type_rq(ex));
    }

    /** Whether {@code capability} is set. */
    public boolean has(DeviceCapability capability) {
        return capabilities.contains(capability);
    }

    /** Whether memory windows can be allocated: a window type flag is set and {@code max_mw > 0}. */
    public boolean supportsMemoryWindows() {
        return limits.maxMw() > 0 && (has(DeviceCapability.MEM_WINDOW) || has(DeviceCapability.MEM_WINDOW_TYPE_2A)
                || has(DeviceCapability.MEM_WINDOW_TYPE_2B));
    }

    /** Whether XRC domains and XRC QPs are supported ({@code IBV_DEVICE_XRC}). */
    public boolean supportsXrc() {
        return has(DeviceCapability.XRC);
    }

    /** Whether atomic operations are supported ({@code atomic_cap} not NONE). */
    public boolean supportsAtomics() {
        return atomicCap != AtomicCapability.NONE;
    }

    /** Whether shared receive queues are supported ({@code max_srq > 0}). */
    public boolean supportsSrq() {
        return limits.maxSrq() > 0;
    }

    /** Whether {@link Access#ON_DEMAND} registration is supported. */
    public boolean supportsOdp() {
        return odp.supported();
    }

    /** Whether completions can carry hardware timestamps ({@code completion_timestamp_mask} non-zero). */
    public boolean supportsCompletionTimestamps() {
        return completionTimestampMask != 0;
    }

    /** Whether on-device memory can be allocated ({@code max_dm_size > 0}). */
    public boolean supportsDeviceMemory() {
        return maxDmSize > 0;
    }

    /** Shorthand for {@code limits().maxQp()}. */
    public int maxQp() {
        return limits.maxQp();
    }

    /** Shorthand for {@code limits().maxCq()}. */
    public int maxCq() {
        return limits.maxCq();
    }

    /** Shorthand for {@code limits().maxCqe()}. */
    public int maxCqe() {
        return limits.maxCqe();
    }

    /** Shorthand for {@code limits().maxMr()}. */
    public int maxMr() {
        return limits.maxMr();
    }

    /** Shorthand for {@code limits().maxSge()}. */
    public int maxSge() {
        return limits.maxSge();
    }

    /** Shorthand for {@code limits().maxQpWr()}. */
    public int maxQpWr() {
        return limits.maxQpWr();
    }
}
