package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The core API attacked on one thread, on a real device: use after close of every object, closing in every order,
 * wrong sizes, bad keys and peers, wrong types and states. Every refusal is asserted by type, by the verb and object
 * it names and, for errno failures, by the errno name and the hint; completion errors are asserted as statuses.
 * Concurrent misuse (closing under a waiter, poller or producer) is {@link ConcurrentMisuseIT}.
 */
class MisuseIT {
    private static final Set<Access> ALL = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
            Access.REMOTE_ATOMIC);
    private static final Set<Access> QP_REMOTE = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ);
    private static final int PORT = 1;

    private CoreResources res;
    private Context ctx;
    private ProtectionDomain pd;
    private final WorkCompletions wcs = WorkCompletions.allocate(16);

    @BeforeEach
    void open() {
        res = new CoreResources();
        ctx = res.context;
        pd = res.pd;
    }

    @AfterEach
    void close() {
        res.close();
    }

    // ---- fixtures ----

    private int gidIndex() {
        return ctx.queryGid(PORT, 1).isZero() ? 0 : 1;
    }

    private AddressVector path() {
        return AddressVector.builder(PORT).grh(ctx.queryGid(PORT, gidIndex()).toBytes(), gidIndex(), 64).build();
    }

    /** Two RC QPs of one CQ connected to each other with short retry timeouts, or to {@code bDest} for a. */
    private QueuePair[] rcPair(CompletionQueue cq, Set<Access> remote) {
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(a, b.qpNum(), remote);
        connect(b, a.qpNum(), remote);
        return new QueuePair[] {a, b};
    }

    private void connect(QueuePair q, int destQpNum, Set<Access> remote) {
        q.toInit(PORT, remote);
        q.toRtr(path(), Mtu.MTU_1024, destQpNum, 0);
        q.toRts(new QueuePairAttributes().sqPsn(0).timeout(8).retryCnt(1).rnrRetry(1).maxRdAtomic(1));
    }

    private WorkCompletion completion(CompletionQueue cq, long wrId) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            int n = cq.poll(wcs);
            for (int i = 0; i < n; i++) {
                if (wcs.get(i).wrId() == wrId) {
                    return wcs.get(i);
                }
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no completion of wr " + wrId + " within 60 s");
    }

    /** Asserts an IllegalStateException naming {@code object} (its class prefix) and {@code verb}. */
    private static void assertClosed(ThrowingCallable call, String object, String verb) {
        assertThatThrownBy(call).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(object).hasMessageContaining("closed").hasMessageContaining(verb);
    }

    // ---- use after close ----

    @Test
    void everyObjectAfterItsContextClosesThrowsNamingObjectAndVerb() throws Exception {
        CompletionChannel ch = ctx.createCompChannel();
        CompletionQueue cq = ctx.createCq(16).channel(ch).build();
        ExtendedCompletionQueue xcq = ctx.createCq(16).buildEx();
        QueuePair qp = pd.createQp(QueuePairType.RC, cq, cq).sendOps(EnumSet.of(SendOperation.SEND)).build();
        QueuePair ud = pd.createQp(QueuePairType.UD, cq, cq).build();
        AddressHandle ah = pd.createAh(path());
        MemoryRegion owned = pd.allocate(4096, ALL);
        Arena arena = Arena.ofShared();
        MemoryRegion caller = pd.regMr(arena.allocate(4096), EnumSet.of(Access.LOCAL_WRITE));
        SendRequests chain = qp.sendRequests();
        ReceiveRequests rchain = qp.receiveRequests();
        SendRequests udChain = ud.sendRequests();
        udChain.send(1, 0);
        connect(qp, qp.qpNum(), QP_REMOTE); // to itself: batches need RTS
        PostBatch batch = qp.startSend(); // open on this thread: the close below aborts it
        AddressVector av = path();

        ctx.close();

        for (VerbsObject o : List.<VerbsObject>of(ch, cq, xcq, qp, ud, ah, owned, caller, pd, ctx)) {
            assertThat(o.isClosed()).as("%s closed by the cascade", o).isTrue();
        }
        assertClosed(ctx::queryDevice, "Context[", "ibv_query_device_ex");
        assertClosed(() -> ctx.queryPort(PORT), "Context[", "ibv_query_port");
        assertClosed(ctx::allocPd, "Context[", "ibv_alloc_pd");
        assertClosed(ctx::createCompChannel, "Context[", "ibv_create_comp_channel");
        assertClosed(() -> ctx.createCq(4), "Context[", "ibv_create_cq");
        assertClosed(() -> ctx.getAsyncEvent(Duration.ZERO), "Context[", "ibv_get_async_event");
        assertClosed(() -> pd.allocate(4096, ALL), "ProtectionDomain[", "ibv_reg_mr");
        assertClosed(() -> pd.regMr(arena.allocate(64), ALL), "ProtectionDomain[", "ibv_reg_mr");
        assertClosed(() -> pd.createQp(QueuePairType.RC, cq, cq), "ProtectionDomain[", "ibv_create_qp");
        assertClosed(() -> pd.createAh(av), "ProtectionDomain[", "ibv_create_ah");
        assertClosed(owned::buffer, "MemoryRegion[", "buffer()");
        assertClosed(owned::rereg, "MemoryRegion[", "ibv_rereg_mr");
        assertThat(caller.buffer().scope().isAlive()).as("a caller's segment stays the caller's").isTrue();
        assertClosed(() -> cq.poll(wcs), "CompletionQueue[", "ibv_poll_cq");
        assertClosed(() -> cq.reqNotify(false), "CompletionQueue[", "ibv_req_notify_cq");
        assertClosed(xcq::startPoll, "ExtendedCompletionQueue[", "ibv_start_poll");
        assertClosed(xcq::nextPoll, "ExtendedCompletionQueue[", "ibv_next_poll");
        assertClosed(xcq::endPoll, "ExtendedCompletionQueue[", "ibv_end_poll");
        assertClosed(xcq::wrId, "ExtendedCompletionQueue[", "wr_id");
        assertClosed(() -> ch.getCqEvent(0), "CompletionChannel[", "ibv_get_cq_event");
        assertClosed(() -> chain.post(), "QueuePair[", "ibv_post_send");
        assertClosed(() -> rchain.post(), "QueuePair[", "ibv_post_recv");
        assertClosed(qp::sendRequests, "QueuePair[", "ibv_post_send");
        assertClosed(() -> chain.send(1, 0), "QueuePair[", "ibv_post_send");
        assertClosed(() -> rchain.recv(1), "QueuePair[", "ibv_post_recv");
        assertClosed(qp::startSend, "QueuePair[", "ibv_wr_start");
        assertClosed(() -> batch.send(1, 0), "QueuePair[", "ibv_wr_");
        assertClosed(batch::submit, "QueuePair[", "ibv_wr_complete");
        assertThat(batch.isOpen()).as("the cascade aborted the open batch").isFalse();
        assertClosed(qp::state, "QueuePair[", "ibv_query_qp");
        assertClosed(qp::toErr, "QueuePair[", "ibv_query_qp");
        assertClosed(() -> udChain.ud(ah, 1, 1), "QueuePair[", "ibv_post_send");
        assertThatThrownBy(() -> wcs.get(0)).isInstanceOf(IndexOutOfBoundsException.class);
        // double close, in any order, is a no-op
        for (AutoCloseable o : List.<AutoCloseable>of(batch, ctx, pd, qp, ud, cq, xcq, ch, ah, owned, caller, ctx)) {
            assertThatCode(o::close).as("second close of %s", o).doesNotThrowAnyException();
        }
        arena.close();
    }

    @Test
    void closeChildrenFirstThenParentsThenTwice() {
        CompletionChannel ch = ctx.createCompChannel();
        CompletionQueue cq = ctx.createCq(16).channel(ch).build();
        QueuePair qp = pd.createQp(QueuePairType.UD, cq, cq).build();
        AddressHandle ah = pd.createAh(path());
        MemoryRegion mr = pd.allocate(4096, ALL);
        List<VerbsObject> order = List.of(qp, ah, mr, cq, ch, pd, ctx);
        for (VerbsObject o : order) {
            o.close();
            assertThat(o.isClosed()).isTrue();
        }
        for (VerbsObject o : order) {
            o.close();
        }
    }

    @Test
    void closeParentsFirstCascadesToLiveChildren() {
        CompletionChannel ch = ctx.createCompChannel();
        CompletionQueue cq = ctx.createCq(16).channel(ch).build();
        CompletionQueue other = ctx.createCq(16).build();
        QueuePair qp = pd.createQp(QueuePairType.RC, cq, other).build();
        MemoryRegion mr = pd.allocate(4096, ALL);
        ch.close(); // its CQ, and the QP using that CQ, go first (ibv_destroy_comp_channel would fail with EBUSY)
        assertThat(cq.isClosed()).isTrue();
        assertThat(qp.isClosed()).isTrue();
        assertThat(other.isClosed()).isFalse();
        assertThatThrownBy(() -> qp.receiveRequests().post()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed with its parent CompletionQueue[");
        QueuePair qp2 = pd.createQp(QueuePairType.RC, other, other).build();
        pd.close();
        assertThat(qp2.isClosed()).isTrue();
        assertThat(mr.isClosed()).isTrue();
        assertThat(other.isClosed()).isFalse();
        other.close();
        ctx.close();
        ctx.close();
    }

    // ---- wrong sizes ----

    @Test
    void wrongSizesAreRefusedNamingTheLimit() {
        DeviceAttributes dev = ctx.queryDevice();
        assertThatThrownBy(() -> ctx.createCq(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ibv_create_cq(cqe=0)");
        assertThatThrownBy(() -> ctx.createCq(-5)).isInstanceOf(IllegalArgumentException.class);
        assertEinval(() -> ctx.createCq(dev.maxCqe() + 1).build(), "ibv_create_cq(",
                "cqe=" + (dev.maxCqe() + 1) + " exceeds the device's max_cqe of " + dev.maxCqe());
        assertEinval(() -> ctx.createCq(Integer.MAX_VALUE).buildEx(), "ibv_create_cq_ex(", "max_cqe");
        assertThatThrownBy(() -> WorkCompletions.allocate(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> WorkCompletions.allocate(-1)).isInstanceOf(IllegalArgumentException.class);

        CompletionQueue cq = ctx.createCq(16).build();
        assertEinval(() -> pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(dev.maxQpWr() + 1).build(),
                "ibv_create_qp(", "maxSendWr=" + (dev.maxQpWr() + 1) + " exceeds the device's max_qp_wr");
        assertEinval(() -> pd.createQp(QueuePairType.RC, cq, cq).maxRecvWr(Integer.MAX_VALUE).build(),
                "ibv_create_qp(", "maxRecvWr=" + Integer.MAX_VALUE + " exceeds the device's max_qp_wr");
        assertEinval(() -> pd.createQp(QueuePairType.UD, cq, cq).maxSendSge(dev.maxSge() + 1).build(),
                "ibv_create_qp(", "maxSendSge=" + (dev.maxSge() + 1) + " exceeds the device's max_sge of " + dev.maxSge());
        assertEinval(() -> pd.createQp(QueuePairType.RC, cq, cq).maxRecvSge(dev.maxSge() + 1).build(),
                "ibv_create_qp(", "maxRecvSge=");
        assertThatThrownBy(() -> pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxSendWr");
        assertThatThrownBy(() -> pd.createQp(QueuePairType.RC, cq, cq).maxInlineData(-1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> pd.createQp(QueuePairType.RC, cq, cq).maxInlineData(1 << 20).build())
                .isInstanceOf(VerbsException.class).hasMessageContaining("ibv_create_qp(")
                .hasMessageContaining("maxInlineData=1048576").hasMessageContaining("inline limit");

        assertThatThrownBy(() -> pd.allocate(0, ALL)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> pd.allocate(-4096, ALL)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> pd.allocate(1L << 52, ALL)).isInstanceOf(VerbsException.class)
                .hasMessageContaining("pd.allocate(size=").hasMessageContaining("ENOMEM");
        assertThatThrownBy(() -> pd.regMr(MemorySegment.ofArray(new byte[4096]), ALL))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("heap segment");
        assertThatThrownBy(() -> pd.regMr(MemorySegment.NULL, ALL)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty segment");
        Arena closed = Arena.ofConfined();
        MemorySegment gone = closed.allocate(4096);
        closed.close();
        assertThatThrownBy(() -> pd.regMr(gone, ALL)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already closed");
        MemorySegment readOnly = MemorySegment.ofBuffer(ByteBuffer.allocateDirect(4096)).asReadOnly();
        assertThatThrownBy(() -> pd.regMr(readOnly, EnumSet.of(Access.LOCAL_WRITE)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("read-only");
        assertThatThrownBy(() -> pd.regMr(MemorySegment.ofAddress(0x1000).reinterpret(4096), ALL))
                .isInstanceOf(VerbsException.class).hasMessageContaining("ibv_reg_mr(")
                .hasMessageContaining("EFAULT").hasMessageContaining("not mapped");

        QueuePair qp = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(4).maxSendSge(2).maxInlineData(16).build();
        MemoryRegion mr = pd.allocate(4096, ALL);
        SendRequests wrs = qp.sendRequests();
        for (long[] bad : new long[][] {{-1, 8}, {4090, 8}, {0, 4097}, {4096, 1}, {Long.MAX_VALUE, 1}, {0, -1}}) {
            assertThatThrownBy(() -> wrs.send(1, 0).sge(mr, bad[0], (int) bad[1]))
                    .isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("lies outside " + mr);
            wrs.clear();
        }
        int maxSge = qp.capabilities().maxSendSge();
        wrs.send(2, 0);
        for (int i = 0; i < maxSge; i++) {
            wrs.sge(mr, 0, 8);
        }
        assertThatThrownBy(() -> wrs.sge(mr, 0, 8)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most " + maxSge + " SGEs");
        wrs.clear();
        while (wrs.count() < wrs.capacity()) {
            wrs.send(3, 0);
        }
        assertThatThrownBy(() -> wrs.send(4, 0)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is full");
        wrs.clear();
        int maxInline = qp.capabilities().maxInlineData();
        try (Arena a = Arena.ofConfined()) {
            assertThatThrownBy(() -> wrs.send(5, 0).inline(a.allocate(maxInline + 1L)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max_inline_data of " + maxInline);
        }
        wrs.clear();
        wrs.send(6, SendFlag.INLINE_BIT).sge(mr, 0, maxInline); // the SGEs of an INLINE WR are inline data
        assertThatThrownBy(() -> wrs.sge(mr, 0, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("flagged INLINE").hasMessageContaining("max_inline_data of " + maxInline);
        wrs.clear();
    }

    private static void assertEinval(ThrowingCallable call, String verb, String detail) {
        assertThatThrownBy(call).isInstanceOf(VerbsException.class).hasMessageStartingWith(verb)
                .hasMessageContaining("failed: EINVAL").hasMessageContaining(detail)
                .satisfies(e -> assertThat(((VerbsException) e).errnoName()).isEqualTo("EINVAL"));
    }

    @Test
    void moreWorkRequestsThanTheSendQueueHoldsIsBackPressureNotAnError() {
        CompletionQueue cq = ctx.createCq(64).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(4).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(a, b.qpNum(), QP_REMOTE);
        connect(b, a.qpNum(), QP_REMOTE);
        MemoryRegion mr = pd.allocate(4096, ALL);
        SendRequests wrs = a.sendRequests();
        int capacity = wrs.capacity();
        for (int i = 0; i < capacity; i++) {
            wrs.rdmaWrite(i, SendFlag.SIGNALED_BIT, mr.rkey(), mr.address() + 2048).sge(mr, 0, 8);
        }
        assertThat(wrs.post()).isEqualTo(capacity);
        wrs.rdmaWrite(99, SendFlag.SIGNALED_BIT, mr.rkey(), mr.address() + 2048).sge(mr, 0, 8);
        assertThat(wrs.post()).as("the send queue is full until completions are polled").isZero();
        assertThat(wrs.pending()).isEqualTo(1);
        assertThat(completion(cq, capacity - 1).ok()).isTrue();
        assertThat(wrs.post()).isEqualTo(1);
        assertThat(completion(cq, 99).ok()).isTrue();
    }

    @Test
    void closingATiedArenaWithWorkInFlightDeregistersTheRegionFirst() {
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair qp = pd.createQp(QueuePairType.RC, cq, cq).build();
        qp.toInit(PORT, QP_REMOTE);
        Arena arena = Arena.ofConfined();
        MemoryRegion mr = pd.regMrBuilder(arena.allocate(4096, 4096), EnumSet.of(Access.LOCAL_WRITE))
                .deregisterWith(arena).register();
        qp.receiveRequests().recv(1).sge(mr, 0, 4096);
        assertThat(qp.receiveRequests().post()).isEqualTo(1);
        assertThatThrownBy(mr::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_dereg_mr: " + mr).hasMessageContaining("outstanding work request");
        assertThatCode(arena::close).as("the arena's close cannot be refused").doesNotThrowAnyException();
        assertThat(mr.isClosed()).as("deregistered before the memory was freed").isTrue();
        qp.toErr(); // the receive is flushed, never written
        assertThat(completion(cq, 1).status()).isEqualTo(WorkCompletionStatus.WR_FLUSH_ERR);
        try (Arena other = Arena.ofConfined()) {
            MemorySegment data = other.allocate(8);
            Arena gone = Arena.ofConfined();
            MemorySegment freed = gone.allocate(8);
            gone.close();
            QueuePair inl = pd.createQp(QueuePairType.RC, cq, cq).maxInlineData(16).build();
            inl.sendRequests().send(2, 0).inline(data);
            assertThatThrownBy(() -> inl.sendRequests().inline(freed)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("inline data of " + inl).hasMessageContaining("arena is closed");
            inl.sendRequests().clear();
        }
    }

    // ---- bad keys and peers ----

    @Test
    void badPortsGidsAndMtuNameTheValidValues() {
        int gid = gidIndex();
        byte[] peer = ctx.queryGid(PORT, gid).toBytes();
        int ports = ctx.queryDevice().physPortCnt();
        assertThatThrownBy(() -> AddressVector.builder(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1-based");
        assertThatThrownBy(() -> ctx.queryPort(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ibv_query_port(port=0)");
        assertEinval(() -> ctx.queryPort(ports + 1), "ibv_query_port(", "port " + (ports + 1) + " does not exist");
        assertEinval(() -> pd.createAh(AddressVector.builder(ports + 1).grh(peer, gid, 64).build()),
                "ibv_create_ah(", ports == 1 ? "has 1 port, number 1" : "ports, numbered 1 to " + ports);
        int tableLength = ctx.queryPort(PORT).gidTblLen();
        assertEinval(() -> pd.createAh(AddressVector.builder(PORT).grh(peer, tableLength >= 255 ? 254 : tableLength, 64)
                .build()), "ibv_create_ah(", "valid GID indexes on port 1: " + 0 + " (");
        QueuePair qp = pd.createQp(QueuePairType.RC, ctx.createCq(4).build(), ctx.createCq(4).build()).build();
        assertEinval(() -> qp.toInit(ports + 1, QP_REMOTE), "ibv_modify_qp(", "does not exist");
        assertThat(qp.state()).isEqualTo(QueuePairState.RESET);
        qp.toInit(PORT, QP_REMOTE);
        assertEinval(() -> qp.toRtr(AddressVector.builder(PORT).grh(peer, 254, 64).build(), Mtu.MTU_1024, 1, 0),
                "ibv_modify_qp(", "valid GID indexes on port 1");
        Mtu active = ctx.queryPort(PORT).activeMtu();
        if (active != Mtu.MTU_4096) {
            assertEinval(() -> qp.toRtr(path(), Mtu.MTU_4096, 1, 0), "ibv_modify_qp(",
                    "path MTU 4096 exceeds port 1's active MTU of " + active.bytes());
        }
        assertThat(qp.state()).isEqualTo(QueuePairState.INIT);
        // a destination QP that does not exist: the kernel cannot know; sends fail as RETRY_EXC_ERR
        qp.toRtr(path(), active, 0xABCDE, 0);
        qp.toRts(new QueuePairAttributes().sqPsn(0).timeout(8).retryCnt(1).rnrRetry(1).maxRdAtomic(1));
        MemoryRegion mr = pd.allocate(4096, ALL);
        qp.sendRequests().send(9, SendFlag.SIGNALED_BIT).sge(mr, 0, 8);
        qp.sendRequests().post();
        assertThat(completion(qp.sendCq(), 9).status()).isEqualTo(WorkCompletionStatus.RETRY_EXC_ERR);
    }

    @Test
    void wrongRkeyAndRemoteRangeAreCompletionStatusesNotExceptions() {
        CompletionQueue cq = ctx.createCq(64).build();
        QueuePair[] qps = rcPair(cq, EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ));
        QueuePair a = qps[0];
        QueuePair b = qps[1];
        MemoryRegion src = pd.allocate(4096, ALL);
        MemoryRegion dst = pd.allocate(4096, ALL);
        a.sendRequests().rdmaWrite(1, SendFlag.SIGNALED_BIT, dst.rkey() ^ 0x100, dst.address()).sge(src, 0, 64);
        a.sendRequests().post();
        assertThat(completion(cq, 1).status()).isEqualTo(WorkCompletionStatus.REM_ACCESS_ERR);
        // posting in ERR is accepted and flushed
        a.sendRequests().send(2, SendFlag.SIGNALED_BIT).sge(src, 0, 8);
        assertThat(a.sendRequests().post()).isEqualTo(1);
        assertThat(completion(cq, 2).status()).isEqualTo(WorkCompletionStatus.WR_FLUSH_ERR);
        // an address outside the remote MR
        a.toReset();
        b.toErr();
        b.toReset();
        connect(a, b.qpNum(), QP_REMOTE);
        connect(b, a.qpNum(), QP_REMOTE);
        a.sendRequests().rdmaWrite(3, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address() + 4090).sge(src, 0, 64);
        a.sendRequests().post();
        assertThat(completion(cq, 3).status()).isIn(WorkCompletionStatus.REM_ACCESS_ERR,
                WorkCompletionStatus.REM_INV_REQ_ERR);
        // a remote MR registered without REMOTE_WRITE: only the peer knows, so it is a status as well
        a.toReset();
        b.toErr();
        b.toReset();
        connect(a, b.qpNum(), QP_REMOTE);
        connect(b, a.qpNum(), QP_REMOTE);
        MemoryRegion localOnly = pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE));
        a.sendRequests().rdmaWrite(4, SendFlag.SIGNALED_BIT, localOnly.rkey(), localOnly.address()).sge(src, 0, 64);
        a.sendRequests().post();
        assertThat(completion(cq, 4).status()).isEqualTo(WorkCompletionStatus.REM_ACCESS_ERR);
    }

    // ---- wrong types and states ----

    @Test
    void wrongTypesAndStatesAreRefused() {
        CompletionQueue cq = ctx.createCq(64).build();
        QueuePair rc = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair ud = pd.createQp(QueuePairType.UD, cq, cq).build();
        MemoryRegion mr = pd.allocate(4096, ALL);
        MemoryRegion readOnly = pd.allocate(4096, EnumSet.noneOf(Access.class));
        ProtectionDomain otherPd = ctx.allocPd();
        MemoryRegion foreign = otherPd.allocate(4096, ALL);
        AddressHandle ah = pd.createAh(path());
        AddressHandle foreignAh = otherPd.createAh(path());

        // posting in RESET/INIT/RTR is refused naming the state; receives need INIT
        rc.sendRequests().send(1, 0).sge(mr, 0, 8);
        assertThatThrownBy(() -> rc.sendRequests().post()).isInstanceOf(PostException.class)
                .hasMessageContaining("ibv_post_send(" + rc).hasMessageContaining("EINVAL")
                .hasMessageContaining("the QP is in RESET, and its send queue accepts work requests from RTS on");
        rc.receiveRequests().recv(2).sge(mr, 0, 8);
        assertThatThrownBy(() -> rc.receiveRequests().post()).isInstanceOf(PostException.class)
                .hasMessageContaining("the QP is in RESET, and its receive queue accepts work requests from INIT on");
        rc.toInit(PORT, QP_REMOTE);
        assertThatThrownBy(() -> rc.sendRequests().post()).isInstanceOf(PostException.class)
                .hasMessageContaining("the QP is in INIT,");
        assertThat(rc.receiveRequests().post()).isEqualTo(1);
        assertThatThrownBy(() -> rc.toRts(0)).isInstanceOf(InvalidTransitionException.class)
                .hasMessageContaining("INIT -> RTS");
        rc.sendRequests().clear();

        // UD addressing on RC, RDMA and atomics on UD
        assertThatThrownBy(() -> rc.sendRequests().send(3, 0).ud(ah, 1, 1)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("addresses UD work requests").hasMessageContaining("is RC");
        rc.sendRequests().clear();
        assertThatThrownBy(() -> ud.sendRequests().rdmaWrite(4, 0, 0, 0)).isInstanceOf(UnsupportedVerbException.class)
                .hasMessageContaining("ibv_post_send(").hasMessageContaining("RDMA_WRITE");
        assertThatThrownBy(() -> ud.sendRequests().atomicFetchAdd(5, 0, 0, 0, 1))
                .isInstanceOf(UnsupportedVerbException.class);
        assertThatThrownBy(() -> pd.createQp(QueuePairType.UD, cq, cq).sendOps(EnumSet.of(SendOperation.RDMA_READ))
                .build()).isInstanceOf(UnsupportedVerbException.class).hasMessageContaining("UD");
        assertThatThrownBy(() -> ud.sendRequests().send(6, 0).ud(foreignAh, 1, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("another protection domain");
        ud.sendRequests().clear();
        ud.sendRequests().send(7, 0).sge(mr, 0, 8);
        ud.toInit(PORT, 0x1234);
        ud.toRtr();
        ud.toRts(0);
        assertThatThrownBy(() -> ud.sendRequests().post()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("needs ud(ah, remoteQpn, remoteQkey)");
        ud.sendRequests().clear();

        // memory of another PD; buffers the NIC writes need LOCAL_WRITE
        assertThatThrownBy(() -> rc.receiveRequests().recv(8).sge(foreign, 0, 8))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("another protection domain");
        rc.receiveRequests().clear();
        assertThatThrownBy(() -> rc.receiveRequests().recv(9).sge(readOnly, 0, 8))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("without LOCAL_WRITE")
                .hasMessageContaining("a receive");
        rc.receiveRequests().clear();
        assertThatThrownBy(() -> rc.sendRequests().rdmaRead(10, 0, 0, 0).sge(readOnly, 0, 8))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("without LOCAL_WRITE");
        rc.sendRequests().clear();
        rc.sendRequests().send(11, 0).sge(readOnly, 0, 8); // the NIC only reads a send buffer
        rc.sendRequests().clear();

        // objects of another context
        try (Context second = Device.open(res.deviceName)) {
            CompletionQueue alien = second.createCq(4).build();
            assertThatThrownBy(() -> pd.createQp(QueuePairType.RC, alien, alien))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("belongs to another context");
            CompletionChannel alienChannel = second.createCompChannel();
            assertThatThrownBy(() -> ctx.createCq(4).channel(alienChannel)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("belongs to another Context");
            assertThatThrownBy(() -> foreign.rereg().pd(second.allocPd())).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("another Context");
        }
    }

    @Test
    void atomicsToAQpWithoutRemoteAtomicCompleteWithAnErrorStatus() {
        RdmaTestDeviceSupport.assumeAtomics(ctx);
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair[] qps = rcPair(cq, QP_REMOTE); // no REMOTE_ATOMIC
        MemoryRegion mr = pd.allocate(4096, ALL);
        qps[0].sendRequests().atomicFetchAdd(1, SendFlag.SIGNALED_BIT, mr.rkey(), mr.address(), 1).sge(mr, 8, 8);
        qps[0].sendRequests().post();
        assertThat(completion(cq, 1).status()).isIn(WorkCompletionStatus.REM_INV_REQ_ERR,
                WorkCompletionStatus.REM_ACCESS_ERR);
    }

    /** Skips only for a capability the device reports absent. */
    private static final class RdmaTestDeviceSupport {
        static void assumeAtomics(Context ctx) {
            dev.panverbs.testing.RdmaTestDevice.assumeCapability(
                    ctx.queryDevice().atomicCap() != AtomicCapability.NONE, "atomic operations");
        }
    }
}
