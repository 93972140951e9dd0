package dev.panverbs.core.cm;

import dev.panverbs.bindings.rdmacma.rdma_cma_h;
import dev.panverbs.core.Access;
import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.CompletionChannel;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.core.internal.Units;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;

/**
 * Java twins of {@code rdma_verbs.h}'s {@code static inline} helpers: registration on the ID's PD, one-SGE posts on
 * the ID's QP and a blocking wait for the next completion of its send or receive CQ. They go through the core's
 * post and poll paths, so every check of those applies (the SGE inside the region, the region open and of the QP's
 * PD, the queue's state, DMA safety when a region closes); a failed post is a
 * {@link dev.panverbs.core.PostException} instead of {@code rdma_post_*}'s -1 and errno. The ID must have a QP
 * ({@link CmId#createQp}), as {@code id->qp} must be set in C.
 *
 * <p>The {@code *v} forms ({@code rdma_post_sendv} ...) take SGE arrays in C; in Java build the WR with
 * {@code QueuePair.sendRequests()}, whose {@code sge(...)} calls are those arrays.
 */
public final class CmVerbs {
    /** {@code RDMA_UDP_QKEY}: the qkey of every QP rdma_cm creates in the UDP port space. */
    public static final int UDP_QKEY = rdma_cma_h.RDMA_UDP_QKEY();

    private CmVerbs() {}

    /** {@code rdma_reg_msgs}: registers {@code memory} on the ID's PD for sends and receives (LOCAL_WRITE). */
    public static MemoryRegion regMsgs(CmId id, MemorySegment memory) {
        return qp(id, "rdma_reg_msgs").protectionDomain().regMr(memory, EnumSet.of(Access.LOCAL_WRITE));
    }

    /** {@code rdma_reg_read}: as {@link #regMsgs}, and the peer may RDMA READ it (REMOTE_READ). */
    public static MemoryRegion regRead(CmId id, MemorySegment memory) {
        return qp(id, "rdma_reg_read").protectionDomain().regMr(memory,
                EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
    }

    /** {@code rdma_reg_write}: as {@link #regMsgs}, and the peer may RDMA WRITE it (REMOTE_WRITE). */
    public static MemoryRegion regWrite(CmId id, MemorySegment memory) {
        return qp(id, "rdma_reg_write").protectionDomain().regMr(memory,
                EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
    }

    /** {@code rdma_post_recv}: a receive of {@code length} bytes at {@code offset} of {@code mr}. */
    public static void postRecv(CmId id, long wrId, MemoryRegion mr, long offset, int length) {
        qp(id, "rdma_post_recv").receiveRequests().recv(wrId).sge(mr, offset, length).post();
    }

    /** {@code rdma_post_send}: a SEND of {@code length} bytes at {@code offset} of {@code mr}. */
    public static void postSend(CmId id, long wrId, MemoryRegion mr, long offset, int length, int sendFlags) {
        qp(id, "rdma_post_send").sendRequests().send(wrId, sendFlags).sge(mr, offset, length).post();
    }

    /** {@code rdma_post_read}: an RDMA READ of the peer's {@code remoteAddr}/{@code rkey} into {@code mr}. */
    public static void postRead(CmId id, long wrId, MemoryRegion mr, long offset, int length, int sendFlags,
                                long remoteAddr, int rkey) {
        qp(id, "rdma_post_read").sendRequests().rdmaRead(wrId, sendFlags, rkey, remoteAddr).sge(mr, offset, length)
                .post();
    }

    /** {@code rdma_post_write}: an RDMA WRITE from {@code mr} to the peer's {@code remoteAddr}/{@code rkey}. */
    public static void postWrite(CmId id, long wrId, MemoryRegion mr, long offset, int length, int sendFlags,
                                 long remoteAddr, int rkey) {
        qp(id, "rdma_post_write").sendRequests().rdmaWrite(wrId, sendFlags, rkey, remoteAddr)
                .sge(mr, offset, length).post();
    }

    /** {@code rdma_post_ud_send}: a UD SEND through {@code ah} to {@code remoteQpn}, qkey {@link #UDP_QKEY}. */
    public static void postUdSend(CmId id, long wrId, MemoryRegion mr, long offset, int length, int sendFlags,
                                  AddressHandle ah, int remoteQpn) {
        qp(id, "rdma_post_ud_send").sendRequests().send(wrId, sendFlags).ud(ah, remoteQpn, UDP_QKEY)
                .sge(mr, offset, length).post();
    }

    /**
     * {@code rdma_get_send_comp}: polls the send CQ of the ID's QP into {@code completions} and, while it is empty,
     * arms it and sleeps on its completion channel (poll, arm, poll again, then wait: no completion can slip between);
     * without a channel it polls with short pauses. Returns how many completions were stored (at least 1; at most
     * {@code completions.capacity()}, pass a capacity of 1 for C's one), or 0 when {@code timeout} passed first.
     *
     * @throws IllegalStateException when the CQ's channel serves another of the ID's CQs too (one would consume the
     *                               other's event), or delivered an event of another CQ
     */
    public static int getSendComp(CmId id, WorkCompletions completions, Duration timeout) {
        QueuePair qp = qp(id, "rdma_get_send_comp");
        return await(qp.sendCq(), qp.recvCq(), completions, timeout, "rdma_get_send_comp");
    }

    /** {@code rdma_get_recv_comp}: {@link #getSendComp} on the receive CQ of the ID's QP. */
    public static int getRecvComp(CmId id, WorkCompletions completions, Duration timeout) {
        QueuePair qp = qp(id, "rdma_get_recv_comp");
        return await(qp.recvCq(), qp.sendCq(), completions, timeout, "rdma_get_recv_comp");
    }

    private static int await(CompletionQueue cq, CompletionQueue other, WorkCompletions completions,
                             Duration timeout, String verb) {
        Objects.requireNonNull(completions, "completions");
        long deadline = System.nanoTime() + Units.clampedNanos(timeout);
        CompletionChannel channel = cq.channel();
        if (channel != null && other != cq && other.channel() == channel) {
            throw new IllegalStateException(verb + ": " + cq + " and " + other + " of the ID's QP share "
                    + channel + "; waiting on one could consume the other's event. Give each its own channel "
                    + "(as rdma_create_qp does when it creates the CQs), or use one CQ for both");
        }
        while (true) {
            int n = cq.poll(completions);
            if (n > 0) {
                return n;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return 0;
            }
            if (channel == null) {
                LockSupport.parkNanos(Math.min(left, 50_000L));
                continue;
            }
            cq.reqNotify(false);
            n = cq.poll(completions); // a completion that arrived before the arming raises no event
            if (n > 0) {
                return n;
            }
            CompletionQueue woken = channel.getCqEvent(Duration.ofNanos(left)).orElse(null);
            if (woken != null && woken != cq) {
                throw new IllegalStateException(verb + ": " + channel + " delivered an event of " + woken + ", not "
                        + "of " + cq + "; the ID's CQ needs a completion channel of its own");
            }
        }
    }

    private static QueuePair qp(CmId id, String verb) {
        Objects.requireNonNull(id, "id");
        return id.queuePair().orElseThrow(() -> new IllegalStateException(verb + ": " + id + " has no QP (id->qp is "
                + "NULL); create it with CmId.createQp, or post on your own QP directly"));
    }
}
