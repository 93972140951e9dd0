package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.testing.RdmaTestDevice;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The data path on a real device (rxe in the Soft-RoCE guest): two QPs of one context connected to each other,
 * data verified byte for byte, and the negative cases with their exact completion status.
 */
class DataPathIT {
    private static final Set<Access> ALL_REMOTE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
            Access.REMOTE_READ, Access.REMOTE_ATOMIC);
    private static final Set<Access> QP_REMOTE = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ,
            Access.REMOTE_ATOMIC);
    private static final int PORT = 1;
    private static final int SIZE = 64 * 1024;

    private Context ctx;
    private ProtectionDomain pd;
    private int gidIndex;
    private byte[] gid;
    private final WorkCompletions wcs = WorkCompletions.allocate(16);

    @BeforeEach
    void open() {
        ctx = Device.open(RdmaTestDevice.name());
        pd = ctx.allocPd();
        gidIndex = ctx.queryGid(PORT, 1).isZero() ? 0 : 1;
        gid = ctx.queryGid(PORT, gidIndex).toBytes();
    }

    @AfterEach
    void close() {
        ctx.close(); // the cascade closes QPs, CQs, MRs
    }

    private AddressVector path() {
        return AddressVector.builder(PORT).grh(gid, gidIndex, 64).build();
    }

    /** Connects a and b to each other (RC or UC). */
    private void connect(QueuePair a, QueuePair b) {
        for (QueuePair q : new QueuePair[] {a, b}) {
            q.toInit(PORT, QP_REMOTE);
        }
        a.toRtr(path(), Mtu.MTU_1024, b.qpNum(), 100);
        b.toRtr(path(), Mtu.MTU_1024, a.qpNum(), 200);
        a.toRts(200);
        b.toRts(100);
        assertThat(a.state()).isEqualTo(QueuePairState.RTS);
    }

    private static WorkCompletion pollOne(CompletionQueue cq, WorkCompletions wcs) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        WorkCompletions one = WorkCompletions.allocate(1);
        while (System.nanoTime() < deadline) {
            if (cq.poll(one) == 1) {
                return one.get(0);
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no completion within 60 s on " + cq);
    }

    private static void fill(MemorySegment s, long off, int len, int seed) {
        for (int i = 0; i < len; i++) {
            s.set(ValueLayout.JAVA_BYTE, off + i, (byte) (seed + i * 31));
        }
    }

    private static void assertSame(MemorySegment a, long aOff, MemorySegment b, long bOff, int len) {
        assertThat(MemorySegment.mismatch(a, aOff, aOff + len, b, bOff, bOff + len)).isEqualTo(-1);
    }

    @Test
    void rcWriteReadSendImmInlineMultiSgeAndBatches() {
        CompletionQueue cq = ctx.createCq(1024).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(512).maxRecvWr(16).maxSendSge(2)
                .maxRecvSge(2).maxInlineData(64).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(16).maxRecvWr(16).maxRecvSge(2).build();
        connect(a, b);
        MemoryRegion src = pd.allocate(SIZE, ALL_REMOTE);
        MemoryRegion dst = pd.allocate(SIZE, ALL_REMOTE);
        fill(src.buffer(), 0, SIZE, 7);

        // RDMA WRITE 4 KiB
        a.sendRequests().rdmaWrite(1, SendFlag.SIGNALED_BIT, dst.address(), dst.rkey()).sge(src, 0, 4096);
        assertThat(a.postSend(a.sendRequests())).isEqualTo(1);
        WorkCompletion wc = pollOne(cq, wcs);
        assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.RDMA_WRITE);
        assertSame(src.buffer(), 0, dst.buffer(), 0, 4096);

        // RDMA READ it back into src[8K..12K)
        a.sendRequests().rdmaRead(2, SendFlag.SIGNALED_BIT, dst.address(), dst.rkey()).sge(src, 8192, 4096);
        a.postSend(a.sendRequests());
        wc = pollOne(cq, wcs);
        assertThat(wc.ok()).isTrue();
        assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.RDMA_READ);
        assertSame(dst.buffer(), 0, src.buffer(), 8192, 4096);

        // SEND_WITH_IMM from two SGEs into a receive of two SGEs
        b.receiveRequests().recv(50).sge(dst, 16384, 100).sge(dst, 20000, 200);
        b.postRecv(b.receiveRequests());
        a.sendRequests().sendWithImm(3, SendFlag.SIGNALED_BIT, 0x12345678).sge(src, 100, 150).sge(src, 300, 150);
        a.postSend(a.sendRequests());
        boolean sent = false, received = false;
        for (int i = 0; i < 2; i++) {
            wc = pollOne(cq, wcs);
            assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
            if (wc.opcode() == WorkCompletionOpcode.RECV) {
                received = true;
                assertThat(wc.wrId()).isEqualTo(50);
                assertThat(wc.byteLen()).isEqualTo(300);
                assertThat(wc.hasImm()).isTrue();
                assertThat(wc.immData()).isEqualTo(0x12345678);
                assertThat(wc.qpNum()).isEqualTo(b.qpNum());
            } else {
                sent = true;
                assertThat(wc.wrId()).isEqualTo(3);
            }
        }
        assertThat(sent && received).isTrue();
        assertSame(src.buffer(), 100, dst.buffer(), 16384, 100);
        assertSame(src.buffer(), 200, dst.buffer(), 20000, 50);
        assertSame(src.buffer(), 300, dst.buffer(), 20050, 150);

        // inline SEND: the buffer is reusable (here: overwritten) right after the post
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment header = arena.allocate(48);
            fill(header, 0, 48, 99);
            byte[] expected = header.toArray(ValueLayout.JAVA_BYTE);
            b.receiveRequests().recv(51).sge(dst, 32768, 64);
            b.postRecv(b.receiveRequests());
            a.sendRequests().send(4, SendFlag.SIGNALED_BIT).inline(header);
            a.postSend(a.sendRequests());
            header.fill((byte) 0);
            for (int i = 0; i < 2; i++) {
                assertThat(pollOne(cq, wcs).ok()).isTrue();
            }
            assertThat(dst.buffer().asSlice(32768, 48).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(expected);
        }

        // batches of 1..512 WRs, one ibv_post_send each, only the last signaled
        for (int batch : new int[] {1, 7, 64, 512}) {
            dst.buffer().fill((byte) 0);
            SendRequests wrs = a.sendRequests();
            for (int i = 0; i < batch; i++) {
                wrs.rdmaWrite(1000 + i, i == batch - 1 ? SendFlag.SIGNALED_BIT : 0, dst.address() + i * 64L,
                        dst.rkey()).sge(src, i * 64L, 64);
            }
            assertThat(a.postSend(wrs)).isEqualTo(batch);
            wc = pollOne(cq, wcs);
            assertThat(wc.ok()).isTrue();
            assertThat(wc.wrId()).isEqualTo(1000 + batch - 1);
            assertSame(src.buffer(), 0, dst.buffer(), 0, batch * 64);
            assertThat(a.sendTracker.outstanding()).isZero(); // the signaled completion retired the batch
        }
        QueuePairInfo info = a.query();
        assertThat(info.state()).isEqualTo(QueuePairState.RTS);
        assertThat(info.destQpNum()).isEqualTo(b.qpNum());
        assertThat(info.cap().maxSendWr()).isGreaterThanOrEqualTo(512);
    }

    @Test
    void rcAtomicsClassicAndExtended() {
        RdmaTestDevice.assumeCapability(ctx.queryDevice().supportsAtomics(), "atomic operations (atomic_cap)");
        CompletionQueue cq = ctx.createCq(64).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq)
                .sendOps(EnumSet.of(SendOperation.ATOMIC_FETCH_AND_ADD, SendOperation.ATOMIC_CMP_AND_SWP,
                        SendOperation.RDMA_WRITE, SendOperation.SEND_WITH_IMM, SendOperation.RDMA_READ))
                .maxInlineData(32).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(a, b);
        MemoryRegion local = pd.allocate(4096, ALL_REMOTE);
        MemoryRegion remote = pd.allocate(4096, ALL_REMOTE);
        remote.buffer().set(ValueLayout.JAVA_LONG, 0, 40L);

        a.sendRequests().atomicFetchAndAdd(1, SendFlag.SIGNALED_BIT, remote.address(), remote.rkey(), 2L)
                .sge(local, 0, 8);
        a.postSend(a.sendRequests());
        WorkCompletion wc = pollOne(cq, wcs);
        assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.FETCH_ADD);
        assertThat(local.buffer().get(ValueLayout.JAVA_LONG, 0)).isEqualTo(40L);
        assertThat(remote.buffer().get(ValueLayout.JAVA_LONG, 0)).isEqualTo(42L);

        a.sendRequests().atomicCmpAndSwp(2, SendFlag.SIGNALED_BIT, remote.address(), remote.rkey(), 42L, 7L)
                .sge(local, 8, 8);
        a.postSend(a.sendRequests());
        assertThat(pollOne(cq, wcs).opcode()).isEqualTo(WorkCompletionOpcode.COMP_SWAP);
        assertThat(local.buffer().get(ValueLayout.JAVA_LONG, 8)).isEqualTo(42L);
        assertThat(remote.buffer().get(ValueLayout.JAVA_LONG, 0)).isEqualTo(7L);

        // the same through ibv_wr_*: a failing compare leaves memory alone and returns the current value
        try (PostBatch batch = a.startSend()) {
            batch.atomicCmpSwp(3, SendFlag.SIGNALED_BIT, remote.rkey(), remote.address(), 1L, 99L).setSge(local, 16, 8);
            batch.atomicFetchAdd(4, SendFlag.SIGNALED_BIT, remote.rkey(), remote.address(), 10L).setSge(local, 24, 8);
            batch.submit();
        }
        assertThat(pollOne(cq, wcs).wrId()).isEqualTo(3);
        assertThat(pollOne(cq, wcs).wrId()).isEqualTo(4);
        assertThat(local.buffer().get(ValueLayout.JAVA_LONG, 16)).isEqualTo(7L);
        assertThat(local.buffer().get(ValueLayout.JAVA_LONG, 24)).isEqualTo(7L);
        assertThat(remote.buffer().get(ValueLayout.JAVA_LONG, 0)).isEqualTo(17L);
        // an operation not requested in sendOps is refused naming it
        try (PostBatch batch = a.startSend()) {
            assertThatThrownBy(() -> batch.send(5, 0)).isInstanceOf(UnsupportedVerbException.class)
                    .hasMessageContaining("without SEND in sendOps");
        }
    }

    @Test
    void extendedCqAndPostBatchWriteImmInlineRead() {
        ExtendedCompletionQueue cq = ctx.createCq(64)
                .wcFlags(EnumSet.of(CompletionField.BYTE_LEN, CompletionField.IMM)).buildEx();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).maxInlineData(64).maxSendSge(2)
                .sendOps(EnumSet.of(SendOperation.RDMA_WRITE_WITH_IMM, SendOperation.SEND, SendOperation.RDMA_READ))
                .build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(a, b);
        MemoryRegion src = pd.allocate(8192, ALL_REMOTE);
        MemoryRegion dst = pd.allocate(8192, ALL_REMOTE);
        fill(src.buffer(), 0, 8192, 3);
        b.receiveRequests().recv(70).sge(dst, 4096, 64).recv(71).sge(dst, 4096 + 64, 64);
        b.postRecv(b.receiveRequests());
        try (Arena arena = Arena.ofConfined(); PostBatch batch = a.startSend()) {
            MemorySegment text = arena.allocateFrom("inline through ibv_wr_set_inline_data");
            batch.rdmaWriteWithImm(10, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address(), 0xBEEF).setSge(src, 0, 2048);
            batch.send(11, SendFlag.SIGNALED_BIT).setInlineData(text);
            batch.rdmaRead(12, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address()).setSge(src, 6144, 1024);
            batch.submit();
        }
        int seen = 0;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        boolean imm = false;
        while (seen < 5 && System.nanoTime() < deadline) {
            if (cq.startPoll()) {
                do {
                    assertThat(cq.status()).as("wr %d", cq.wrId()).isEqualTo(WorkCompletionStatus.SUCCESS);
                    if (cq.wrId() == 70) {
                        assertThat(cq.readOpcode()).isEqualTo(WorkCompletionOpcode.RECV_RDMA_WITH_IMM);
                        assertThat(cq.readImmData()).isEqualTo(0xBEEF);
                        imm = true;
                    } else if (cq.wrId() == 71) {
                        assertThat(cq.readByteLen()).isEqualTo(38);
                    }
                    seen++;
                } while (cq.nextPoll());
                cq.endPoll();
            }
        }
        assertThat(seen).isEqualTo(5);
        assertThat(imm).isTrue();
        assertSame(src.buffer(), 0, dst.buffer(), 0, 2048);
        assertSame(dst.buffer(), 0, src.buffer(), 6144, 1024);
        assertThat(dst.buffer().getString(4096 + 64)).isEqualTo("inline through ibv_wr_set_inline_data");
        assertThatThrownBy(cq::readCompletionTs).hasMessageContaining("not created with COMPLETION_TIMESTAMP");
        // timestamps: read where the device has a clock, else refused naming the capability
        if (ctx.queryDevice().supportsCompletionTimestamps()) {
            ctx.createCq(4).wcFlags(EnumSet.of(CompletionField.COMPLETION_TIMESTAMP)).buildEx().close();
        } else {
            assertThatThrownBy(() -> ctx.createCq(4).wcFlags(EnumSet.of(CompletionField.COMPLETION_TIMESTAMP))
                    .buildEx()).isInstanceOf(UnsupportedVerbException.class)
                    .hasMessageContaining("completion timestamps");
        }
        // an aborted batch posts nothing
        try (PostBatch batch = a.startSend()) {
            batch.send(13, SendFlag.SIGNALED_BIT).setSge(src, 0, 8);
        }
        assertThat(cq.startPoll()).isFalse();
    }

    @Test
    void ucWriteWithImm() {
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair a = pd.createQp(QueuePairType.UC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.UC, cq, cq).build();
        connect(a, b);
        MemoryRegion src = pd.allocate(4096, ALL_REMOTE);
        MemoryRegion dst = pd.allocate(4096, ALL_REMOTE);
        fill(src.buffer(), 0, 4096, 5);
        b.receiveRequests().recv(9).sge(dst, 0, 0);
        b.postRecv(b.receiveRequests());
        a.sendRequests().rdmaWriteWithImm(8, SendFlag.SIGNALED_BIT, dst.address(), dst.rkey(), 77).sge(src, 0, 4096);
        a.postSend(a.sendRequests());
        for (int i = 0; i < 2; i++) {
            WorkCompletion wc = pollOne(cq, wcs);
            assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
            if (wc.wrId() == 9) {
                assertThat(wc.immData()).isEqualTo(77);
            }
        }
        assertSame(src.buffer(), 0, dst.buffer(), 0, 4096);
        assertThatThrownBy(() -> a.sendRequests().rdmaRead(1, 0, 0, 0)).isInstanceOf(UnsupportedVerbException.class);
        a.sendRequests().clear();
    }

    @Test
    void udSendWithGrh() {
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair a = pd.createQp(QueuePairType.UD, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.UD, cq, cq).build();
        int qkey = 0x11111111;
        for (QueuePair q : new QueuePair[] {a, b}) {
            q.toInit(PORT, qkey);
            q.toRtr();
            q.toRts(0);
        }
        AddressHandle ah = pd.createAh(path());
        MemoryRegion buf = pd.allocate(8192, EnumSet.of(Access.LOCAL_WRITE));
        fill(buf.buffer(), 0, 512, 11);
        b.receiveRequests().recv(1).sge(buf, 4096, 1024 + 40);
        b.postRecv(b.receiveRequests());
        a.sendRequests().send(2, SendFlag.SIGNALED_BIT).sge(buf, 0, 512).ud(ah, b.qpNum(), qkey);
        a.postSend(a.sendRequests());
        for (int i = 0; i < 2; i++) {
            WorkCompletion wc = pollOne(cq, wcs);
            assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
            if (wc.wrId() == 1) {
                assertThat(wc.hasGrh()).isTrue();
                assertThat(wc.byteLen()).isEqualTo(512 + 40);
                assertThat(wc.srcQp()).isEqualTo(a.qpNum());
            }
        }
        assertSame(buf.buffer(), 0, buf.buffer(), 4096 + 40, 512);
        a.sendRequests().send(3, 0).sge(buf, 0, 8);
        // a UD send without destination is refused in Java
        assertThatThrownBy(() -> a.postSend(a.sendRequests())).hasMessageContaining("needs ud(ah");
    }

    @Test
    void negativeStatusesAndDmaSafety() {
        CompletionQueue cq = ctx.createCq(64).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        MemoryRegion src = pd.allocate(4096, ALL_REMOTE);
        MemoryRegion dst = pd.allocate(4096, ALL_REMOTE);

        // posting on a QP in RESET: refused by the provider (or flushed), never crashes
        a.sendRequests().rdmaWrite(1, SendFlag.SIGNALED_BIT, dst.address(), dst.rkey()).sge(src, 0, 8);
        assertThatThrownBy(() -> a.postSend(a.sendRequests())).isInstanceOf(PostException.class)
                .satisfies(e -> assertThat(((PostException) e).badWrIndex()).isZero());
        a.sendRequests().clear();

        // a wrong transition is refused before the kernel, naming what is missing
        assertThatThrownBy(() -> a.toRtr(new QueuePairAttributes())).isInstanceOf(InvalidTransitionException.class)
                .hasMessageContaining("no transition from RESET to RTR");
        connect(a, b);

        // an SGE outside its MR is refused in Java
        assertThatThrownBy(() -> a.sendRequests().rdmaWrite(2, 0, dst.address(), dst.rkey()).sge(src, 4000, 200))
                .isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("lies outside");
        a.sendRequests().clear();

        // wrong rkey -> REM_ACCESS_ERR, and the QP goes to ERR
        a.sendRequests().rdmaWrite(3, SendFlag.SIGNALED_BIT, dst.address(), dst.rkey() ^ 0x5a5a00).sge(src, 0, 64);
        a.postSend(a.sendRequests());
        assertThat(pollOne(cq, wcs).status()).isEqualTo(WorkCompletionStatus.REM_ACCESS_ERR);
        assertThat(a.state()).isEqualTo(QueuePairState.ERR);
        // recovery: RESET, then connect again
        a.toReset();
        b.toErr();
        b.toReset();
        connect(a, b);

        // READ beyond the remote MR -> an error status
        a.sendRequests().rdmaRead(4, SendFlag.SIGNALED_BIT, dst.address() + 4000, dst.rkey()).sge(src, 0, 1024);
        a.postSend(a.sendRequests());
        WorkCompletion wc = pollOne(cq, wcs);
        assertThat(wc.status()).isIn(WorkCompletionStatus.REM_ACCESS_ERR, WorkCompletionStatus.REM_INV_REQ_ERR);
        Optional<AsyncEvent> ev = ctx.getAsyncEvent(Duration.ofSeconds(5));
        ev.ifPresent(e -> assertThat(e.type().name()).contains("QP"));
    }

    @Test
    void rnrRetryExceededAndMrCloseRefusedWhileInFlight() {
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        for (QueuePair q : new QueuePair[] {a, b}) {
            q.toInit(PORT, QP_REMOTE);
        }
        a.toRtr(path(), Mtu.MTU_1024, b.qpNum(), 0);
        b.toRtr(path(), Mtu.MTU_1024, a.qpNum(), 0);
        a.toRts(new QueuePairAttributes().sqPsn(0).timeout(10).retryCnt(1).rnrRetry(0).maxRdAtomic(1));
        b.toRts(0);
        MemoryRegion src = pd.allocate(4096, ALL_REMOTE);
        // b has no receive posted: with rnr_retry 0 the first RNR NAK fails the send
        a.sendRequests().send(1, SendFlag.SIGNALED_BIT).sge(src, 0, 64);
        a.postSend(a.sendRequests());
        assertThatThrownBy(src::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("outstanding work request");
        assertThat(pollOne(cq, wcs).status()).isEqualTo(WorkCompletionStatus.RNR_RETRY_EXC_ERR);
        src.close(); // retired by the completion: now allowed
        assertThat(src.isClosed()).isTrue();
    }

    @Test
    void retryExceededAfterPeerDestroyed() {
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        for (QueuePair q : new QueuePair[] {a, b}) {
            q.toInit(PORT, QP_REMOTE);
        }
        a.toRtr(path(), Mtu.MTU_1024, b.qpNum(), 0);
        b.toRtr(path(), Mtu.MTU_1024, a.qpNum(), 0);
        a.toRts(new QueuePairAttributes().sqPsn(0).timeout(8).retryCnt(1).rnrRetry(7).maxRdAtomic(1));
        b.toRts(0);
        MemoryRegion src = pd.allocate(4096, ALL_REMOTE);
        MemoryRegion dst = pd.allocate(4096, ALL_REMOTE);
        b.close();
        a.sendRequests().rdmaWrite(1, SendFlag.SIGNALED_BIT, dst.address(), dst.rkey()).sge(src, 0, 64);
        a.postSend(a.sendRequests());
        assertThat(pollOne(cq, wcs).status()).isEqualTo(WorkCompletionStatus.RETRY_EXC_ERR);
    }

    @Test
    void completionChannelWakesUpOnCompletion() throws Exception {
        CompletionChannel channel = ctx.createCompChannel();
        CompletionQueue cq = ctx.createCq(16).channel(channel).build();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(a, b);
        MemoryRegion src = pd.allocate(4096, ALL_REMOTE);
        MemoryRegion dst = pd.allocate(4096, ALL_REMOTE);
        cq.reqNotify(false);
        assertThat(channel.getCqEvent(0)).isNull();
        a.sendRequests().rdmaWrite(1, SendFlag.SIGNALED_BIT, dst.address(), dst.rkey()).sge(src, 0, 64);
        a.postSend(a.sendRequests());
        assertThat(channel.getCqEvent(60_000)).isSameAs(cq);
        assertThat(pollOne(cq, wcs).ok()).isTrue();
        // solicited-only: an unsolicited send completion raises no event at the receiver's CQ
        cq.reqNotify(true);
        b.receiveRequests().recv(5).sge(dst, 0, 64);
        b.postRecv(b.receiveRequests());
        a.sendRequests().send(6, SendFlag.SIGNALED_BIT | SendFlag.SOLICITED_BIT).sge(src, 0, 64);
        a.postSend(a.sendRequests());
        assertThat(channel.getCqEvent(60_000)).isSameAs(cq);
    }

    @Test
    void cqOverrunSurfacesAsAsyncEventOrError() {
        CompletionQueue cq = ctx.createCq(1).build();
        int cqe = cq.cqe();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(cqe + 8).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(a, b);
        MemoryRegion src = pd.allocate(4096, ALL_REMOTE);
        MemoryRegion dst = pd.allocate(4096, ALL_REMOTE);
        SendRequests wrs = a.sendRequests();
        for (int i = 0; i < cqe + 4; i++) {
            wrs.rdmaWrite(i, SendFlag.SIGNALED_BIT, dst.address(), dst.rkey()).sge(src, 0, 8);
        }
        a.postSend(wrs);
        Optional<AsyncEvent> ev = ctx.getAsyncEvent(Duration.ofSeconds(30));
        assertThat(ev).as("an async event after overrunning a CQ of %d entries", cqe).isPresent();
        assertThat(ev.get().type()).isEqualTo(AsyncEventType.CQ_ERR);
    }
}
