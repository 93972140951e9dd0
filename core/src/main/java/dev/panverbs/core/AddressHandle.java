package dev.panverbs.core;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.LibIbverbsQueues;
import dev.panverbs.bindings.verbs.ibv_ah_attr;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.ResourceKind;
import dev.panverbs.core.internal.Units;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * An address handle ({@code struct ibv_ah}, {@code ibv_create_ah(3)}): the route to a remote port that UD
 * send requests name. Created by {@link ProtectionDomain#createAh(AddressVector)}; closing it calls
 * {@code ibv_destroy_ah(3)}. On RoCE (rxe included) the address vector must carry a GRH with the peer's GID
 * and the local RoCE v2 GID index ({@link Context#roceV2GidIndex}).
 *
 * <p>Thread safety: immutable once created; may be used by several QPs and threads at once. Do not close it
 * while send requests that use it are outstanding.
 */
public final class AddressHandle extends VerbsObject {

    private final ProtectionDomain pd;
    private final AddressVector addressVector;

    private AddressHandle(ProtectionDomain pd, MemorySegment handle, AddressVector av) {
        super(ResourceKind.ADDRESS_HANDLE, "AddressHandle[" + Units.hex(handle.address()) + " to " + av + "]",
                handle, AddressHandle::destroy, pd.resource);
        this.pd = pd;
        this.addressVector = av;
    }

    static AddressHandle create(ProtectionDomain pd, AddressVector av) {
        MemorySegment pdHandle = pd.resource.handle("ibv_create_ah");
        DeviceChecks.addressVector(pd.context(), Errors.call("ibv_create_ah", "av", av), av);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ibv_ah_attr.layout());
            av.writeTo(attr);
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment ah = LibIbverbsQueues.ibv_create_ah(errno, pdHandle, attr);
            if (ah.equals(MemorySegment.NULL)) {
                int e = Errno.get(errno);
                throw Errors.failure(Errors.call("ibv_create_ah", "av", av), e, hint(pd, av, e));
            }
            return new AddressHandle(pd, ah, av);
        }
    }

    private static String hint(ProtectionDomain pd, AddressVector av, int errno) {
        if (!av.isGlobal()) {
            return "on RoCE ports (link layer ETHERNET) an address needs a GRH: AddressVector.builder(port)"
                    + ".grh(peerGid, sgidIndex, hopLimit)";
        }
        if (errno == dev.panverbs.bindings.verbs.verbs_h.EINVAL() || errno == dev.panverbs.bindings.verbs.verbs_h.ENODATA()) {
            return "check the sgid index and the port; " + DeviceChecks.validGids(pd.context(), av.portNum());
        }
        return null;
    }

    private static void destroy(MemorySegment ah) {
        int rc = LibIbverbsQueues.ibv_destroy_ah(ah);
        if (rc != 0) {
            throw Errors.failure(Errors.call("ibv_destroy_ah", "ah", Units.hex(ah.address())), rc);
        }
    }

    /** The protection domain the AH belongs to. */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** The address vector it was created from. */
    public AddressVector addressVector() {
        return addressVector;
    }
}
