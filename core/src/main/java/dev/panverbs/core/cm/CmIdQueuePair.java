package dev.panverbs.core.cm;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.LibIbverbsQueues;
import dev.panverbs.bindings.rdmacm.LibRdmacm;
import dev.panverbs.bindings.rdmacma.rdma_cm_id;
import dev.panverbs.bindings.verbs.ibv_qp_cap;
import dev.panverbs.bindings.verbs.ibv_qp_init_attr;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairCapabilities;
import dev.panverbs.core.SharedReceiveQueue;
import dev.panverbs.core.internal.Errors;
import dev.panverbs.core.internal.NativeHandles;
import dev.panverbs.core.internal.Resource;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The QP an rdma_cm ID owns: {@code rdma_create_qp(3)} on the ID ({@code id->qp}), and what {@code rdma_destroy_qp}
 * does, with {@code ibv_destroy_qp}'s result kept. One per {@link CmId}, under the ID's lock of native calls.
 */
final class CmIdQueuePair {
    private final Object owner; // the ID, named in refusals (no back-reference to CmId's API)
    private final MemorySegment id;
    private final Resource resource;
    private final ReentrantLock calls;
    private final PortSpace portSpace;
    private volatile QueuePair qp;

    CmIdQueuePair(Object owner, MemorySegment id, Resource resource, ReentrantLock calls, PortSpace portSpace) {
        this.owner = owner;
        this.id = id;
        this.resource = resource;
        this.calls = calls;
        this.portSpace = portSpace;
    }

    /** The QP made last, open or closed; null before one is made. */
    QueuePair current() {
        return qp;
    }

    /** What {@code CmId.createQp} does, {@code call} naming it: checks the objects, then creates under the lock. */
    QueuePair create(String call, ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                     SharedReceiveQueue srq, QueuePairCapabilities capabilities) {
        if (srq != null && srq.protectionDomain() != pd) {
            throw new IllegalArgumentException(call + ": " + srq + " belongs to " + srq.protectionDomain()
                    + ", not " + pd);
        }
        // librdmacm checks only the PD: the kernel would look the CQs' handles up in the PD's context, attaching
        // the QP to whichever CQ of that context has the same number (or failing with a bare EINVAL)
        for (CompletionQueue cq : new CompletionQueue[] {sendCq, recvCq}) {
            if (cq.context() != pd.context()) {
                throw new IllegalArgumentException(call + ": " + cq + " belongs to another context than " + pd
                        + "; create the PD and both CQs through this ID's context()");
            }
        }
        calls.lock();
        try {
            return createLocked(call, pd, sendCq, recvCq, srq, capabilities);
        } finally {
            calls.unlock();
        }
    }

    private QueuePair createLocked(String call, ProtectionDomain pd, CompletionQueue sendCq,
                                   CompletionQueue recvCq, SharedReceiveQueue srq,
                                   QueuePairCapabilities capabilities) {
        MemorySegment idHandle = resource.handle(call);
        if (qp != null && !qp.isClosed()) {
            throw new IllegalStateException(call + ": " + owner + " already has " + qp);
        }
        if (rdma_cm_id.verbs(id).address() != NativeHandles.context(pd.context(), call).address()) {
            throw new IllegalArgumentException(call + ": " + pd + " is not of this ID's device context (id->verbs"
                    + (rdma_cm_id.verbs(id).address() == 0 ? " is NULL: resolve or bind first" : "") + "); create "
                    + "the PD and both CQs through this ID's context()");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            MemorySegment attr = arena.allocate(ibv_qp_init_attr.layout());
            ibv_qp_init_attr.send_cq(attr, NativeHandles.handle(sendCq, call));
            ibv_qp_init_attr.recv_cq(attr, NativeHandles.handle(recvCq, call));
            MemorySegment cap = ibv_qp_init_attr.cap(attr);
            ibv_qp_cap.max_send_wr(cap, capabilities.maxSendWr());
            ibv_qp_cap.max_recv_wr(cap, capabilities.maxRecvWr());
            ibv_qp_cap.max_send_sge(cap, capabilities.maxSendSge());
            ibv_qp_cap.max_recv_sge(cap, capabilities.maxRecvSge());
            ibv_qp_cap.max_inline_data(cap, capabilities.maxInlineData());
            ibv_qp_init_attr.qp_type(attr, portSpace.qpType().value());
            if (srq != null) {
                ibv_qp_init_attr.srq(attr, NativeHandles.handle(srq, call));
            }
            if (LibRdmacm.rdma_create_qp(errno, idHandle, NativeHandles.pd(pd, call), attr) != 0) {
                int e = Errno.get(errno);
                throw Errors.failure(call, e, e == Errno.EINVAL ? "rdma_cm moves the new QP to INIT with the ID's "
                        + "rdma_init_qp_attr, refused once its connection is gone (the peer rejected or destroyed its "
                        + "ID: see the ID's events)" : null);
            }
        }
        MemorySegment raw = rdma_cm_id.qp(id);
        try {
            qp = NativeHandles.access().adoptQueuePair(pd, sendCq, recvCq, portSpace.qpType(), raw, Set.of(),
                    "rdma_destroy_qp", this::destroy);
        } catch (RuntimeException e) {
            LibRdmacm.rdma_destroy_qp(idHandle);
            throw e;
        }
        return qp;
    }

    /** What {@code rdma_destroy_qp} does, with {@code ibv_destroy_qp}'s result kept. */
    private int destroy(MemorySegment handle) {
        int rc = LibIbverbsQueues.ibv_destroy_qp(handle);
        // a QP closed by a cascade (its PD or CQ) on one thread while another destroys the ID: write nothing into
        // the freed rdma_cm_id (a closing ID is being destroyed, so id->qp no longer matters). Never block on
        // `calls` here: a channel's cascade reaches this holding the channel's lock, which the ID's destroy takes
        // while holding `calls` (lock order); a closing ID's holder may be that destroy, and then nothing is written.
        while (!calls.tryLock()) {
            if (resource.isClosed()) {
                return rc;
            }
            Thread.onSpinWait();
        }
        try {
            if (rc == 0 && !resource.isClosed() && rdma_cm_id.qp(id).address() == handle.address()) {
                rdma_cm_id.qp(id, MemorySegment.NULL);
            }
        } finally {
            calls.unlock();
        }
        return rc;
    }
}
