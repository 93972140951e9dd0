package dev.panverbs.core;

import dev.panverbs.bindings.verbs.ibv_recv_wr;
import dev.panverbs.bindings.verbs.ibv_sge;


/**
 * A queue pair's reusable chain of receive work requests for {@code ibv_post_recv(3)}: a native array of
 * {@code struct ibv_recv_wr} and their SGE lists, allocated once per QP ({@link QueuePair#receiveRequests()}),
 * filled in place and posted in one call by {@link #post()}.
 *
 * <pre>{@code
 * ReceiveRequests rwrs = qp.receiveRequests();
 * for (int i = 0; i < 64; i++) rwrs.recv(i).sge(mr, i * 4096L, 4096);
 * rwrs.post();
 * }</pre>
 *
 * <p>Native layout written: {@code 0 wr_id | 8 next | 16 sg_list | 24 num_sge} (32 bytes). On a UD QP the first
 * 40 bytes of each receive buffer receive the GRH (see {@link WorkCompletion#hasGrh()}): size buffers MTU + 40.
 *
 * <p>Nothing here allocates. Not thread-safe: one producer per receive queue.
 */
public final class ReceiveRequests extends WorkRequests<ReceiveRequests> {
    static final long WR_SIZE = ibv_recv_wr.layout().byteSize();

    ReceiveRequests(WorkRequestRules rules, int capacity, int maxSge) {
        this("ibv_post_recv", rules, capacity, maxSge);
    }

    /** A chain for {@code verb}: {@code ibv_post_recv}, or {@code ibv_post_srq_recv} for a {@link SharedReceiveQueue}. */
    ReceiveRequests(String verb, WorkRequestRules rules, int capacity, int maxSge) {
        super(verb, rules, capacity, maxSge);
    }

    @Override
    long structSize() {
        return WR_SIZE;
    }

    /** Starts a receive WR with id {@code wrId}; add its buffers with {@link #sge}. */
    public ReceiveRequests recv(long wrId) {
        startWr(wrId, NUM_SGE, 0L); // num_sge 0 and the struct's padding, in one store
        return this;
    }

    /**
     * Appends a buffer to the current receive WR: {@code length} bytes at {@code offset} in {@code key}, checked
     * against the key's range, its protection domain, whether it is still registered and its memory allocated, and
     * whether it grants {@link Access#LOCAL_WRITE} (the NIC writes received data into it).
     *
     * <p>DMA contract: as {@link SendRequests#sge}: re-checked at {@link #post()}, then referenced until the WR's
     * completion is polled; {@link MemoryRegion#close()} refuses to deregister the region meanwhile.
     */
    public ReceiveRequests sge(LocalKey key, long offset, int length) {
        KeySnapshot k = DataPathAccess.stagedSnapshot(key);
        boolean chainKey = isChainKey(k);
        if (chainKey) { // checked in full when first staged on this queue; the post re-checks it after its fence
            if (!chainStarted() && !k.memoryAlive()) { // a chain's first SGE: its memory checked again, as before
                throw rules.unusableSge(k);
            }
            rules.checkSgeRange(k, offset, length);
        } else if (k == lastStaged) { // open and in this PD when last checked (immutable); the post re-checks both
            rules.checkSameKeySge(k, offset, length);
        } else {
            rules.checkSge(k, offset, length);
            lastStaged = k; // a new key: stored only when it changes
        }
        rules.checkReceiveSge(k, length);
        if (chainKey) {
            appendChainKeySge(k.address + offset, length, k.lkey, k);
        } else {
            appendSge(k.address + offset, length, k.lkey, k);
        }
        return this;
    }
}
