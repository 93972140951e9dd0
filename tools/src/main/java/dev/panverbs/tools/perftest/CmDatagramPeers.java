package dev.panverbs.tools.perftest;

import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletionOpcode;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.core.cm.CmEvent;

import java.util.concurrent.locks.LockSupport;

/**
 * -R -c UD: where each UD QP sends, as perftest 6.06 learns it over rdma_cm ({@code RDMA_PS_UDP}). The active side
 * takes the peer's address, QP number and Q_Key from the ESTABLISHED event (the SIDR reply;
 * {@code rdma_cm_establish_ud_connection}); when the passive side also sends (latency tests, -b), the active side
 * then sends it a 4-byte SEND_WITH_IMM carrying its QP number ({@code rdma_cm_send_ud_connection_parameters}),
 * which the passive side received into a buffer posted before {@code rdma_accept}
 * ({@code rdma_cm_request_ud_connection_parameters}) and turns into an address handle
 * ({@code ibv_create_ah_from_wc}) and the Q_Key of its own QP ({@code rdma_cm_initialize_ud_connection_parameters}).
 * The address handles belong to the run's QPs and are destroyed with them.
 */
final class CmDatagramPeers {
    /** The Q_Key rdma_cm gives every {@code RDMA_PS_UDP} QP ({@code RDMA_UDP_QKEY}). */
    static final int RDMA_UDP_QKEY = 0x01234567;
    /** The GRH in front of every UD receive ({@code UD_ADDITION}). */
    static final int UD_ADDITION = 40;
    private static final long ADDRESS_WR_ID = 0;

    private final int[] qpns;
    private final int[] qkeys;

    CmDatagramPeers(int numQps) {
        qpns = new int[numQps];
        qkeys = new int[numQps];
    }

    /** Whether the passive side sends too, and so needs the active side's address: latency tests and -b. */
    static boolean passiveSends(PerftestParameters p) {
        return !p.isBw() || p.duplex;
    }

    int remoteQpn(int i) {
        return qpns[i];
    }

    int remoteQkey(int i) {
        return qkeys[i];
    }

    /** Passive side, before {@code rdma_accept}: one receive for the active side's SEND_WITH_IMM. */
    static void postAddressReceive(CoreEngine.CoreResources res, int i) {
        CoreQp q = (CoreQp) res.qp(i);
        q.qp.receiveRequests().recv(ADDRESS_WR_ID).sge(q.mr, 0, UD_ADDITION + Integer.BYTES).post();
    }

    /** Passive side, after {@code rdma_accept}: the active side's QP number and the address it sent from. */
    void receiveAddress(CoreEngine.CoreResources res, int i, int portNum, long timeoutMillis) {
        CoreQp q = (CoreQp) res.qp(i);
        WorkCompletion wc = next(res.recvCq, timeoutMillis, "the client's UD address (SEND_WITH_IMM) for QP " + i);
        if (!wc.ok() || wc.opcode() != WorkCompletionOpcode.RECV || !wc.hasImm()) {
            throw new RunFailure("Failed to poll CQ.\nBad WQE status when trying to create AH for UD connection in "
                    + "RDMA CM:\n Status: " + wc.status() + " ; opcode: " + wc.opcode() + " (the client sends a "
                    + "SEND_WITH_IMM with its QP number; is it a perftest -R -c UD client of the same test?)");
        }
        AddressHandle ah = res.pd.createAhFromWc(wc, q.mr.buffer().asSlice(0, UD_ADDITION), portNum);
        q.ah = ah;
        qpns[i] = wc.immData();
        qkeys[i] = RDMA_UDP_QKEY; // perftest: the Q_Key of its own QP, which rdma_cm set
    }

    /**
     * Active side, on ESTABLISHED: the passive side's address, QP number and Q_Key; then, when the passive side
     * sends too, this QP's number in a SEND_WITH_IMM to it.
     */
    void established(CoreEngine.CoreResources res, int i, CmEvent.Datagram peer, boolean sendAddress,
                     long timeoutMillis) {
        if (peer == null) {
            throw new RunFailure("Failed to establish UD connection for RDMA CM: ESTABLISHED carries no UD "
                    + "parameters for QP " + i);
        }
        CoreQp q = (CoreQp) res.qp(i);
        q.ah = res.pd.createAh(peer.address());
        qpns[i] = peer.qpNum();
        qkeys[i] = peer.qkey();
        if (!sendAddress) {
            return;
        }
        q.qp.sendRequests().sendWithImm(ADDRESS_WR_ID, SendFlag.SIGNALED_BIT, q.qp.qpNum())
                .ud(q.ah, qpns[i], qkeys[i]).sge(q.mr, 0, Integer.BYTES).post();
        WorkCompletion wc = next(res.sendCq, timeoutMillis, "the SEND of this side's UD address for QP " + i);
        if (!wc.ok()) {
            throw new RunFailure("Failed to poll CQ.\nBad WQE status when trying to send UD connection parameters in "
                    + "RDMA CM:\n Status: " + wc.status());
        }
    }

    private static WorkCompletion next(CompletionQueue cq, long timeoutMillis, String what) {
        WorkCompletions wcs = WorkCompletions.allocate(1);
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (cq.poll(wcs) == 0) {
            if (System.nanoTime() - deadline > 0) {
                throw new RunFailure(" No completion for " + what + " within " + timeoutMillis / 1000 + " s (is "
                        + "the peer a perftest -R -c UD of the same test, and still running?)");
            }
            LockSupport.parkNanos(100_000);
        }
        return wcs.get(0);
    }
}
