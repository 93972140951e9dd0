package dev.panverbs.bindings.ibverbs;

import static dev.panverbs.bindings.verbs.verbs_h.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.panverbs.bindings.verbs.ibv_ah_attr;
import dev.panverbs.bindings.verbs.ibv_context;
import dev.panverbs.bindings.verbs.ibv_cq;
import dev.panverbs.bindings.verbs.ibv_gid;
import dev.panverbs.bindings.verbs.ibv_global_route;
import dev.panverbs.bindings.verbs.ibv_mr;
import dev.panverbs.bindings.verbs.ibv_port_attr;
import dev.panverbs.bindings.verbs.ibv_qp;
import dev.panverbs.bindings.verbs.ibv_qp_attr;
import dev.panverbs.bindings.verbs.ibv_qp_cap;
import dev.panverbs.bindings.verbs.ibv_qp_init_attr;
import dev.panverbs.bindings.verbs.ibv_recv_wr;
import dev.panverbs.bindings.verbs.ibv_send_wr;
import dev.panverbs.bindings.verbs.ibv_sge;
import dev.panverbs.bindings.verbs.ibv_wc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * A resource aggregate over the raw jextract bindings for the bed's ITs: one context, PD, CQ and any number
 * of RC QPs connected on port 1 through the GID table (RoCE needs a GRH). {@link #close()} destroys
 * everything in dependency order.
 *
 * <p>{@code ibv_post_send}, {@code ibv_post_recv}, {@code ibv_poll_cq} and {@code ibv_query_port} are static
 * inlines (or macros) in verbs.h that jextract drops: they go through the hand-written twins
 * {@link VerbsInline} and {@link VerbsContextInline}, so these ITs also prove those on a real provider.
 */
final class RawVerbs implements AutoCloseable {
    static final byte PORT = 1;

    final Arena arena = Arena.ofShared();
    final MemorySegment context;
    final MemorySegment pd;
    final MemorySegment cq;
    final MemorySegment portAttr;
    final int gidIndex;
    final MemorySegment gid;
    private final List<MemorySegment> qps = new ArrayList<>();
    private final List<MemorySegment> mrs = new ArrayList<>();

    RawVerbs(String device) {
        context = BedDevice.open(device).reinterpret(ibv_context.sizeof());
        portAttr = ibv_port_attr.allocate(arena);
        assertEquals(0, VerbsContextInline.ibv_query_port(context, PORT, portAttr), "ibv_query_port(port=1)");
        gid = ibv_gid.allocate(arena);
        gidIndex = chooseGid(gid);
        pd = ibv_alloc_pd(context);
        assertNotEquals(MemorySegment.NULL, pd, "ibv_alloc_pd");
        MemorySegment created = ibv_create_cq(context, 64, MemorySegment.NULL, MemorySegment.NULL, 0);
        assertNotEquals(MemorySegment.NULL, created, "ibv_create_cq(cqe=64)");
        cq = created.reinterpret(ibv_cq.sizeof());
    }

    /** The first IPv4-mapped GID (RoCE v2 over IPv4, what perftest picks on rxe), else the first non-zero one. */
    private int chooseGid(MemorySegment out) {
        int length = ibv_port_attr.gid_tbl_len(portAttr);
        int firstNonZero = -1;
        MemorySegment probe = ibv_gid.allocate(arena);
        for (int i = 0; i < length; i++) {
            if (ibv_query_gid(context, PORT, i, probe) != 0 || isZero(probe)) {
                continue; // an unpopulated entry
            }
            if (isIpv4Mapped(probe)) {
                out.copyFrom(probe);
                return i;
            }
            if (firstNonZero < 0) {
                firstNonZero = i;
                out.copyFrom(probe);
            }
        }
        if (firstNonZero < 0) {
            fail("port 1 has no populated GID among " + length + " entries (is the netdev up with an address?)");
        }
        return firstNonZero;
    }

    static boolean isZero(MemorySegment gid) {
        return gid.get(JAVA_LONG, 0) == 0 && gid.get(JAVA_LONG, 8) == 0;
    }

    static boolean isIpv4Mapped(MemorySegment gid) {
        for (int i = 0; i < 10; i++) {
            if (gid.get(JAVA_BYTE, i) != 0) return false;
        }
        return gid.get(JAVA_BYTE, 10) == (byte) 0xff && gid.get(JAVA_BYTE, 11) == (byte) 0xff;
    }

    /** Registers {@code buffer} with local write plus remote read and write; returns the {@code ibv_mr}. */
    MemorySegment regMr(MemorySegment buffer) {
        int access = IBV_ACCESS_LOCAL_WRITE() | IBV_ACCESS_REMOTE_WRITE() | IBV_ACCESS_REMOTE_READ();
        MemorySegment mr = ibv_reg_mr(pd, buffer, buffer.byteSize(), access);
        assertNotEquals(MemorySegment.NULL, mr, "ibv_reg_mr(length=" + buffer.byteSize()
                + ") failed (RLIMIT_MEMLOCK? the guest sets ulimit -l unlimited)");
        mr = mr.reinterpret(ibv_mr.sizeof());
        mrs.add(mr);
        return mr;
    }

    /** Creates an RC QP on the shared CQ and moves it to INIT. */
    MemorySegment createRcQp() {
        MemorySegment init = ibv_qp_init_attr.allocate(arena);
        ibv_qp_init_attr.send_cq(init, cq);
        ibv_qp_init_attr.recv_cq(init, cq);
        ibv_qp_init_attr.qp_type(init, IBV_QPT_RC());
        MemorySegment cap = ibv_qp_init_attr.cap(init);
        ibv_qp_cap.max_send_wr(cap, 16);
        ibv_qp_cap.max_recv_wr(cap, 16);
        ibv_qp_cap.max_send_sge(cap, 1);
        ibv_qp_cap.max_recv_sge(cap, 1);
        MemorySegment qp = ibv_create_qp(pd, init);
        assertNotEquals(MemorySegment.NULL, qp, "ibv_create_qp(RC)");
        qp = qp.reinterpret(ibv_qp.sizeof());
        qps.add(qp);

        MemorySegment attr = ibv_qp_attr.allocate(arena);
        ibv_qp_attr.qp_state(attr, IBV_QPS_INIT());
        ibv_qp_attr.pkey_index(attr, (short) 0);
        ibv_qp_attr.port_num(attr, PORT);
        ibv_qp_attr.qp_access_flags(attr,
                IBV_ACCESS_LOCAL_WRITE() | IBV_ACCESS_REMOTE_WRITE() | IBV_ACCESS_REMOTE_READ());
        assertEquals(0, ibv_modify_qp(qp, attr,
                IBV_QP_STATE() | IBV_QP_PKEY_INDEX() | IBV_QP_PORT() | IBV_QP_ACCESS_FLAGS()), "ibv_modify_qp(INIT)");
        return qp;
    }

    static int qpNum(MemorySegment qp) {
        return ibv_qp.qp_num(qp);
    }

    /** Moves an INIT QP to RTR then RTS, connected to the remote QP {@code destQpn} reached via {@code destGid}. */
    void connect(MemorySegment qp, int destQpn, MemorySegment destGid) {
        MemorySegment attr = ibv_qp_attr.allocate(arena);
        attr.fill((byte) 0);
        ibv_qp_attr.qp_state(attr, IBV_QPS_RTR());
        ibv_qp_attr.path_mtu(attr, ibv_port_attr.active_mtu(portAttr));
        ibv_qp_attr.dest_qp_num(attr, destQpn);
        ibv_qp_attr.rq_psn(attr, 0);
        ibv_qp_attr.max_dest_rd_atomic(attr, (byte) 1);
        ibv_qp_attr.min_rnr_timer(attr, (byte) 12);
        MemorySegment ah = ibv_qp_attr.ah_attr(attr);
        ibv_ah_attr.port_num(ah, PORT);
        ibv_ah_attr.dlid(ah, ibv_port_attr.lid(portAttr)); // 0 on RoCE; the LID on InfiniBand
        ibv_ah_attr.is_global(ah, (byte) 1);
        MemorySegment grh = ibv_ah_attr.grh(ah);
        ibv_global_route.dgid(grh, destGid);
        ibv_global_route.sgid_index(grh, (byte) gidIndex);
        ibv_global_route.hop_limit(grh, (byte) 64);
        assertEquals(0, ibv_modify_qp(qp, attr, IBV_QP_STATE() | IBV_QP_AV() | IBV_QP_PATH_MTU()
                | IBV_QP_DEST_QPN() | IBV_QP_RQ_PSN() | IBV_QP_MAX_DEST_RD_ATOMIC() | IBV_QP_MIN_RNR_TIMER()),
                "ibv_modify_qp(RTR)");

        attr.fill((byte) 0);
        ibv_qp_attr.qp_state(attr, IBV_QPS_RTS());
        ibv_qp_attr.timeout(attr, (byte) 14);
        ibv_qp_attr.retry_cnt(attr, (byte) 7);
        ibv_qp_attr.rnr_retry(attr, (byte) 7);
        ibv_qp_attr.sq_psn(attr, 0);
        ibv_qp_attr.max_rd_atomic(attr, (byte) 1);
        assertEquals(0, ibv_modify_qp(qp, attr, IBV_QP_STATE() | IBV_QP_TIMEOUT() | IBV_QP_RETRY_CNT()
                | IBV_QP_RNR_RETRY() | IBV_QP_SQ_PSN() | IBV_QP_MAX_QP_RD_ATOMIC()), "ibv_modify_qp(RTS)");
    }

    /** ibv_post_send of one signaled WR with one SGE; returns the provider's errno (0 = posted). */
    int postSend(MemorySegment qp, long wrId, int opcode, MemorySegment mr, MemorySegment local,
                 long remoteAddr, int rkey) {
        MemorySegment sge = ibv_sge.allocate(arena);
        ibv_sge.addr(sge, local.address());
        ibv_sge.length(sge, (int) local.byteSize());
        ibv_sge.lkey(sge, ibv_mr.lkey(mr));
        MemorySegment wr = ibv_send_wr.allocate(arena);
        wr.fill((byte) 0);
        ibv_send_wr.wr_id(wr, wrId);
        ibv_send_wr.sg_list(wr, sge);
        ibv_send_wr.num_sge(wr, 1);
        ibv_send_wr.opcode(wr, opcode);
        ibv_send_wr.send_flags(wr, IBV_SEND_SIGNALED());
        MemorySegment rdma = ibv_send_wr.wr.rdma(ibv_send_wr.wr(wr));
        ibv_send_wr.wr.rdma.remote_addr(rdma, remoteAddr);
        ibv_send_wr.wr.rdma.rkey(rdma, rkey);
        MemorySegment bad = arena.allocate(ADDRESS);
        return VerbsInline.ibv_post_send(qp, wr, bad);
    }

    /** ibv_post_recv of one WR with one SGE over {@code local}; returns the provider's errno. */
    int postRecv(MemorySegment qp, long wrId, MemorySegment mr, MemorySegment local) {
        MemorySegment sge = ibv_sge.allocate(arena);
        ibv_sge.addr(sge, local.address());
        ibv_sge.length(sge, (int) local.byteSize());
        ibv_sge.lkey(sge, ibv_mr.lkey(mr));
        MemorySegment wr = ibv_recv_wr.allocate(arena);
        wr.fill((byte) 0);
        ibv_recv_wr.wr_id(wr, wrId);
        ibv_recv_wr.sg_list(wr, sge);
        ibv_recv_wr.num_sge(wr, 1);
        MemorySegment bad = arena.allocate(ADDRESS);
        return VerbsInline.ibv_post_recv(qp, wr, bad);
    }

    /** Polls the CQ until one completion arrives (or fails after {@code timeoutMillis}); returns its ibv_wc. */
    MemorySegment pollOne(long timeoutMillis) {
        MemorySegment wc = ibv_wc.allocate(arena);
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (System.nanoTime() < deadline) {
            int n = VerbsInline.ibv_poll_cq(cq, 1, wc);
            if (n < 0) {
                fail("ibv_poll_cq returned " + n);
            }
            if (n == 1) {
                return wc;
            }
            Thread.onSpinWait();
        }
        return fail("no completion within " + timeoutMillis + " ms");
    }

    @Override
    public void close() {
        for (MemorySegment qp : qps) assertEquals(0, ibv_destroy_qp(qp), "ibv_destroy_qp");
        for (MemorySegment mr : mrs) assertEquals(0, ibv_dereg_mr(mr), "ibv_dereg_mr");
        assertEquals(0, ibv_destroy_cq(cq), "ibv_destroy_cq");
        assertEquals(0, ibv_dealloc_pd(pd), "ibv_dealloc_pd");
        assertEquals(0, ibv_close_device(context), "ibv_close_device");
        arena.close();
    }
}
