package dev.panverbs.core;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.LibIbverbsQueues;
import dev.panverbs.bindings.verbs.ibv_ah_attr;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.Handshake;
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
 * <p>Thread safety: immutable once created; may be used by several QPs and threads at once. Like a memory region,
 * it is tracked by the UD send queues of its protection domain: {@link #close()} is refused while an outstanding
 * send names it, and a send staged with it is refused at post if it was closed since.
 */
public final class AddressHandle extends VerbsObject {

    private final ProtectionDomain pd;
    private final AddressVector addressVector;
    /** What the UD send queues' trackers record per WR (unique in the JVM: the keys' counter). */
    final long trackingId = KeySnapshot.nextTrackingId();
    /** Set before {@link #close()} scans for outstanding sends (reset if refused); posts read it after their fence. */
    private volatile boolean closing;

    private AddressHandle(ProtectionDomain pd, MemorySegment handle, AddressVector av,
                          dev.panverbs.core.internal.Resource.Destroyer destroyer) {
        super(ResourceKind.ADDRESS_HANDLE, "AddressHandle[" + Units.hex(handle.address()) + " to " + av + "]",
                handle, destroyer, pd.resource);
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
            return new AddressHandle(pd, ah, av, AddressHandle::destroy);
        }
    }

    /** Adopts an AH made by another provider path (the tests' fake provider), destroyed by {@code destroyer}. */
    static AddressHandle wrap(ProtectionDomain pd, MemorySegment handle, AddressVector av,
                              dev.panverbs.core.internal.Resource.Destroyer destroyer) {
        return new AddressHandle(pd, handle, av, destroyer);
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

    /**
     * Destroys the address handle ({@code ibv_destroy_ah(3)}); see the cascade and idempotence rules of every verbs
     * object. Refused with {@link IllegalStateException} while UD send requests that name it are outstanding (until
     * their completions are polled): the provider and the kernel resolve the AH when the WQE executes. The close
     * marks the AH, runs the closer side of {@link Handshake}, then scans the outstanding WRs of its protection
     * domain's queues; a post publishes its WRs, runs the post side, then re-reads the mark: either the post refuses or this does (as {@link MemoryRegion#close()}).
     * A parent's cascade closes the QPs first, so it is never refused.
     */
    @Override
    public synchronized void close() {
        if (!isClosed()) {
            closing = true;
            Handshake.closerSide(() -> closing = false); // membarrier (the posts: a compiler barrier), or a fence
            if (!pd.awaitAddressCopies(trackingId)) { // a UD batch's provider call copying its address vector
                closing = false;
                throw new IllegalStateException("ibv_destroy_ah: " + this + " is being read by a provider call "
                        + "(ibv_wr_set_ud_addr) that has not returned after "
                        + java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(CallGuard.AWAIT_NANOS) + " s, or on "
                        + "this thread (from inside that call); it was not destroyed");
            }
            int inFlight = pd.inFlight(trackingId);
            if (inFlight > 0) {
                closing = false;
                throw new IllegalStateException("ibv_destroy_ah: " + this + " is still named by " + inFlight
                        + " outstanding UD send(s); poll their completions (or move the QP to ERR and poll the "
                        + "flushes, or close the QP) before destroying it");
            }
        }
        super.close();
    }

    /**
     * {@code ibv_wr_set_ud_addr} under this AH's monitor, which {@link #close()} holds: the provider copies the AH's
     * address vector (libmlx5: {@code mlx5_ah.av}), which {@code ibv_destroy_ah} frees. The path of a batch that saw
     * a close in progress; the others run {@link AddressCopyGuard}'s handshake instead.
     */
    synchronized void setUdAddrLocked(dev.panverbs.bindings.ibverbs.QpExOps ops, int remoteQpn, int remoteQkey) {
        ops.ibv_wr_set_ud_addr(resource.handle("ibv_wr_set_ud_addr"), remoteQpn, remoteQkey);
    }

    /** Closing or closed: a post re-reads this after publishing its WRs (the post side of {@link #close()}). */
    boolean isClosing() {
        return closing || resource.isClosedRelaxed();
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
