package dev.panverbs.core;

/** The cold refusals of {@link PostBatch}, and its address-handle re-check at submit. */
final class PostBatchRefusals {
    private PostBatchRefusals() {
    }

    /**
     * The first of the batch's {@code n} WRs whose address handle is closing or closed, or -1: read by submit after
     * its fence (the post side of {@link AddressHandle#close()}'s handshake).
     */
    static int firstClosedAh(AddressHandle[] ahs, int n) {
        AddressHandle previous = null;
        for (int i = 0; i < n; i++) {
            AddressHandle ah = ahs[i];
            if (ah != previous) {
                if (ah.isClosing()) {
                    return i;
                }
                previous = ah;
            }
        }
        return -1;
    }

    static IllegalStateException ahClosed(QueuePair qp, int index, AddressHandle ah) {
        return new IllegalStateException("ibv_wr_complete: work request " + index + " of the batch of " + qp
                + " names " + ah + ", closed since " + (qp.type == QueuePairType.DC_INITIATOR
                ? "DcInitiator.setDcAddr(batch, ah, ...)" : "setUdAddr(ah, ...)") + ": the batch was aborted (ibv_wr_abort), nothing "
                + "was posted; address the WRs with an open AH");
    }

    static IllegalStateException startRefused(QueuePair qp, CallGuard guard) {
        Thread holder = guard.holder();
        if (holder == Thread.currentThread()) {
            return new IllegalStateException("ibv_wr_start: a batch is already open on " + qp
                    + " in this thread (submit or close it first; a second ibv_wr_start would spin forever on the "
                    + "send-queue lock)");
        }
        if (qp.resource.isClosed()) {
            return qp.resource.closedException("ibv_wr_start");
        }
        return new IllegalStateException("ibv_wr_start: " + qp + " is being posted to by "
                + WorkQueue.holderName(holder) + " at the same time; the send side has one producer "
                + "at a time");
    }

    /** A list setter asked for the first {@code n} entries of arrays holding only {@code length}. Cold. */
    static IllegalArgumentException shortList(String verb, int n, int length) {
        return new IllegalArgumentException(verb + ": n = " + n + " entries asked for, but the arrays hold only "
                + length + ". Nothing was set");
    }

    static IllegalStateException noDestination(QueuePair qp, WorkRequestRules rules, int index) {
        if (rules.type() == QueuePairType.DC_INITIATOR) {
            return new IllegalStateException("ibv_wr_complete: work request " + index + " of the batch of " + qp
                    + " names no DC target: a DCI work request needs DcInitiator.setDcAddr(batch, ah, remoteDctn, "
                    + "remoteDcKey) (mlx5dv_wr_set_dc_addr) after its operation. Nothing was posted; the batch stays "
                    + "open (close() aborts it)");
        }
        if (rules.type() == QueuePairType.UD) {
            return new IllegalStateException("ibv_wr_complete: work request " + index + " of the batch of " + qp
                    + " names no destination: a UD send needs setUdAddr(ah, remoteQpn, remoteQkey) "
                    + "(ibv_wr_set_ud_addr) after its operation. Nothing was posted; the batch stays open (close() "
                    + "aborts it)");
        }
        return new IllegalStateException("ibv_wr_complete: work request " + index + " of the batch of " + qp
                + " names no remote XRC SRQ: an XRC send needs setXrcSrqn(remoteSrqn) (ibv_wr_set_xrc_srqn) after "
                + "its operation. Nothing was posted; the batch stays open (close() aborts it)");
    }

    static UnsupportedVerbException notEnabled(QueuePair qp, SendOperation op) {
        return new UnsupportedVerbException("ibv_wr_" + op.name().toLowerCase() + "(" + qp + ")",
                "the QP was created without " + op + " in sendOps (send_ops_flags); add it to "
                        + "QueuePairBuilder.sendOps", op + " through the ibv_wr_* API");
    }
}
