package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.testing.RdmaTestDevice;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The data path on a real device (rxe in the Soft-RoCE guest), positive paths: two QPs of one context connected to
 * each other, every transfer verified byte for byte, both post APIs and both CQ APIs. The negative cases are in
 * {@link DataPathErrorsIT}.
 */
class DataPathIT extends DataPathResources {
    private static final int SIZE = 64 * 1024;

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
        a.sendRequests().rdmaWrite(1, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address()).sge(src, 0, 4096);
        assertThat(a.sendRequests().post()).isEqualTo(1);
        WorkCompletion wc = pollOne(cq);
        assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.RDMA_WRITE);
        assertSameBytes(src.buffer(), 0, dst.buffer(), 0, 4096);

        // RDMA READ it back into src[8K..12K)
        a.sendRequests().rdmaRead(2, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address()).sge(src, 8192, 4096);
        a.sendRequests().post();
        wc = pollOne(cq);
        assertThat(wc.ok()).isTrue();
        assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.RDMA_READ);
        assertSameBytes(dst.buffer(), 0, src.buffer(), 8192, 4096);

        // SEND_WITH_IMM from two SGEs into a receive of two SGEs
        b.receiveRequests().recv(50).sge(dst, 16384, 100).sge(dst, 20000, 200);
        b.receiveRequests().post();
        a.sendRequests().sendWithImm(3, SendFlag.SIGNALED_BIT, 0x12345678).sge(src, 100, 150).sge(src, 300, 150);
        a.sendRequests().post();
        boolean sent = false, received = false;
        for (int i = 0; i < 2; i++) {
            wc = pollOne(cq);
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
        assertSameBytes(src.buffer(), 100, dst.buffer(), 16384, 100);
        assertSameBytes(src.buffer(), 200, dst.buffer(), 20000, 50);
        assertSameBytes(src.buffer(), 300, dst.buffer(), 20050, 150);

        // inline SEND: the buffer is reusable (here: overwritten) right after the post
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment header = arena.allocate(48);
            fill(header, 0, 48, 99);
            byte[] expected = header.toArray(ValueLayout.JAVA_BYTE);
            b.receiveRequests().recv(51).sge(dst, 32768, 64);
            b.receiveRequests().post();
            a.sendRequests().send(4, SendFlag.SIGNALED_BIT).inline(header);
            a.sendRequests().post();
            header.fill((byte) 0);
            for (int i = 0; i < 2; i++) {
                assertThat(pollOne(cq).ok()).isTrue();
            }
            assertThat(dst.buffer().asSlice(32768, 48).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(expected);
        }

        // batches of 1..512 WRs, one ibv_post_send each, only the last signaled
        for (int batch : new int[] {1, 7, 64, 512}) {
            dst.buffer().fill((byte) 0);
            SendRequests wrs = a.sendRequests();
            for (int i = 0; i < batch; i++) {
                wrs.rdmaWrite(1000 + i, i == batch - 1 ? SendFlag.SIGNALED_BIT : 0, dst.rkey(),
                        dst.address() + i * 64L).sge(src, i * 64L, 64);
            }
            assertThat(wrs.post()).isEqualTo(batch);
            wc = pollOne(cq);
            assertThat(wc.ok()).isTrue();
            assertThat(wc.wrId()).isEqualTo(1000 + batch - 1);
            assertSameBytes(src.buffer(), 0, dst.buffer(), 0, batch * 64);
            assertThat(a.sendQueue.tracker.outstanding()).isZero(); // the signaled completion retired the batch
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

        a.sendRequests().atomicFetchAdd(1, SendFlag.SIGNALED_BIT, remote.rkey(), remote.address(), 2L)
                .sge(local, 0, 8);
        a.sendRequests().post();
        WorkCompletion wc = pollOne(cq);
        assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.FETCH_ADD);
        assertThat(local.buffer().get(ValueLayout.JAVA_LONG, 0)).isEqualTo(40L);
        assertThat(remote.buffer().get(ValueLayout.JAVA_LONG, 0)).isEqualTo(42L);

        a.sendRequests().atomicCmpSwp(2, SendFlag.SIGNALED_BIT, remote.rkey(), remote.address(), 42L, 7L)
                .sge(local, 8, 8);
        a.sendRequests().post();
        assertThat(pollOne(cq).opcode()).isEqualTo(WorkCompletionOpcode.COMP_SWAP);
        assertThat(local.buffer().get(ValueLayout.JAVA_LONG, 8)).isEqualTo(42L);
        assertThat(remote.buffer().get(ValueLayout.JAVA_LONG, 0)).isEqualTo(7L);

        // the same through ibv_wr_*: a failing compare leaves memory alone and returns the current value
        try (PostBatch batch = a.startSend()) {
            batch.atomicCmpSwp(3, SendFlag.SIGNALED_BIT, remote.rkey(), remote.address(), 1L, 99L).setSge(local, 16, 8);
            batch.atomicFetchAdd(4, SendFlag.SIGNALED_BIT, remote.rkey(), remote.address(), 10L).setSge(local, 24, 8);
            batch.submit();
        }
        assertThat(pollOne(cq).wrId()).isEqualTo(3);
        assertThat(pollOne(cq).wrId()).isEqualTo(4);
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
    void extendedCqAndPostBatchWriteImmInlineReadAndBatchesTo512() {
        ExtendedCompletionQueue cq = ctx.createCq(1024)
                .wcFlags(EnumSet.of(CompletionField.BYTE_LEN, CompletionField.IMM)).buildEx();
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(512).maxInlineData(64).maxSendSge(2)
                .sendOps(EnumSet.of(SendOperation.RDMA_WRITE_WITH_IMM, SendOperation.SEND, SendOperation.RDMA_READ,
                        SendOperation.RDMA_WRITE))
                .build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(a, b);
        MemoryRegion src = pd.allocate(64 * 512, ALL_REMOTE);
        MemoryRegion dst = pd.allocate(64 * 512, ALL_REMOTE);
        fill(src.buffer(), 0, 8192, 3);
        b.receiveRequests().recv(70).sge(dst, 4096, 64).recv(71).sge(dst, 4096 + 64, 64);
        b.receiveRequests().post();
        try (Arena arena = Arena.ofConfined(); PostBatch batch = a.startSend()) {
            MemorySegment text = arena.allocateFrom("inline through ibv_wr_set_inline_data");
            batch.rdmaWriteWithImm(10, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address(), 0xBEEF).setSge(src, 0, 2048);
            batch.send(11, SendFlag.SIGNALED_BIT | SendFlag.INLINE_BIT).setInlineData(text);
            batch.rdmaRead(12, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address()).setSge(src, 6144, 1024);
            batch.submit();
            text.fill((byte) 0); // inline data was copied by ibv_wr_set_inline_data
        }
        List<Long> ids = new java.util.ArrayList<>();
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (ids.size() < 5 && System.nanoTime() < deadline) {
            if (cq.startPoll()) {
                do {
                    assertThat(cq.status()).as("wr %d", cq.wrId()).isEqualTo(WorkCompletionStatus.SUCCESS);
                    if (cq.wrId() == 70) {
                        assertThat(cq.readOpcode()).isEqualTo(WorkCompletionOpcode.RECV_RDMA_WITH_IMM);
                        assertThat(cq.readImmData()).isEqualTo(0xBEEF);
                        assertThat(cq.readQpNum()).isEqualTo(b.qpNum());
                    } else if (cq.wrId() == 71) {
                        assertThat(cq.readOpcode()).isEqualTo(WorkCompletionOpcode.RECV);
                        assertThat(cq.readByteLen()).isEqualTo(38);
                    } else if (cq.wrId() == 12) {
                        assertThat(cq.readOpcode()).isEqualTo(WorkCompletionOpcode.RDMA_READ);
                    }
                    ids.add(cq.wrId());
                } while (cq.nextPoll());
                cq.endPoll();
            }
        }
        assertThat(ids).containsExactlyInAnyOrder(10L, 11L, 12L, 70L, 71L);
        // and nothing more: a stray entry would mean the pass was ended twice (rxe before rdma-core 55 ends it in
        // ibv_next_poll; see ExtendedCompletionQueue)
        long quiet = System.nanoTime() + Duration.ofMillis(500).toNanos();
        while (System.nanoTime() < quiet) {
            assertThat(cq.startPoll()).as("a completion after the last one").isFalse();
        }
        assertThatThrownBy(cq::endPoll).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no poll pass is open");
        assertThatThrownBy(cq::nextPoll).isInstanceOf(IllegalStateException.class);
        assertThat(a.sendQueue.tracker.outstanding()).isZero();
        assertThat(b.receiveQueue.tracker.outstanding()).isZero();
        assertSameBytes(src.buffer(), 0, dst.buffer(), 0, 2048);
        assertSameBytes(dst.buffer(), 0, src.buffer(), 6144, 1024);
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

        // batches of 1..512 WRs, one ibv_wr_start..ibv_wr_complete each, only the last signaled
        for (int n : new int[] {1, 33, 512}) {
            dst.buffer().fill((byte) 0);
            fill(src.buffer(), 0, 64 * n, n);
            try (PostBatch batch = a.startSend()) {
                assertThat(batch.room()).isGreaterThanOrEqualTo(n);
                for (int i = 0; i < n; i++) {
                    int flags = i == n - 1 ? SendFlag.SIGNALED_BIT : 0;
                    batch.rdmaWrite(5000 + i, flags, dst.rkey(), dst.address() + 64L * i).setSge(src, 64L * i, 64);
                }
                batch.submit();
            }
            long until = System.nanoTime() + DEADLINE.toNanos();
            boolean done = false;
            while (!done && System.nanoTime() < until) {
                if (cq.startPoll()) {
                    assertThat(cq.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
                    assertThat(cq.wrId()).isEqualTo(5000 + n - 1);
                    assertThat(cq.readOpcode()).isEqualTo(WorkCompletionOpcode.RDMA_WRITE);
                    assertThat(cq.nextPoll()).isFalse();
                    cq.endPoll();
                    done = true;
                }
            }
            assertThat(done).as("completion of the %d-WR batch", n).isTrue();
            assertSameBytes(src.buffer(), 0, dst.buffer(), 0, 64 * n);
            assertThat(a.sendQueue.tracker.outstanding()).isZero();
        }
    }

    @Test
    void ucSendAndWriteWithAndWithoutImm() {
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair a = pd.createQp(QueuePairType.UC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.UC, cq, cq).build();
        connect(a, b);
        MemoryRegion src = pd.allocate(4096, ALL_REMOTE);
        MemoryRegion dst = pd.allocate(4 * 4096, ALL_REMOTE);
        fill(src.buffer(), 0, 4096, 5);
        b.receiveRequests().recv(20).sge(dst, 0, 4096).recv(21).sge(dst, 4096, 4096).recv(22).sge(dst, 0, 0);
        b.receiveRequests().post();
        a.sendRequests()
                .send(10, SendFlag.SIGNALED_BIT).sge(src, 0, 1000)
                .sendWithImm(11, SendFlag.SIGNALED_BIT, 0x0BADCAFE).sge(src, 1000, 2000)
                .rdmaWrite(12, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address() + 2 * 4096).sge(src, 0, 4096)
                .rdmaWriteWithImm(13, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address() + 3 * 4096, 77)
                .sge(src, 0, 4096);
        assertThat(a.sendRequests().post()).isEqualTo(4);
        List<Long> ids = new java.util.ArrayList<>();
        for (int i = 0; i < 7; i++) {
            WorkCompletion wc = pollOne(cq);
            assertThat(wc.status()).as("wr %d", wc.wrId()).isEqualTo(WorkCompletionStatus.SUCCESS);
            ids.add(wc.wrId());
            if (wc.wrId() == 20) {
                assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.RECV);
                assertThat(wc.byteLen()).isEqualTo(1000);
                assertThat(wc.hasImm()).isFalse();
            } else if (wc.wrId() == 21) {
                assertThat(wc.byteLen()).isEqualTo(2000);
                assertThat(wc.hasImm()).isTrue();
                assertThat(wc.immData()).isEqualTo(0x0BADCAFE);
            } else if (wc.wrId() == 22) {
                assertThat(wc.opcode()).isEqualTo(WorkCompletionOpcode.RECV_RDMA_WITH_IMM);
                assertThat(wc.immData()).isEqualTo(77);
            }
        }
        assertThat(ids).containsExactlyInAnyOrder(10L, 11L, 12L, 13L, 20L, 21L, 22L);
        assertSameBytes(src.buffer(), 0, dst.buffer(), 0, 1000);
        assertSameBytes(src.buffer(), 1000, dst.buffer(), 4096, 2000);
        assertSameBytes(src.buffer(), 0, dst.buffer(), 2 * 4096, 4096);
        assertSameBytes(src.buffer(), 0, dst.buffer(), 3 * 4096, 4096);
        // UC has no RDMA READ (IB spec 9.4): refused naming the capability
        assertThatThrownBy(() -> a.sendRequests().rdmaRead(1, 0, 0, 0)).isInstanceOf(UnsupportedVerbException.class)
                .hasMessageContaining("RDMA_READ on UC");
        a.sendRequests().clear();
    }

    @Test
    void udSendWithGrhBothApis() {
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair a = pd.createQp(QueuePairType.UD, cq, cq).sendOps(EnumSet.of(SendOperation.SEND_WITH_IMM)).build();
        QueuePair b = pd.createQp(QueuePairType.UD, cq, cq).build();
        int qkey = 0x11111111;
        for (QueuePair q : new QueuePair[] {a, b}) {
            q.toInit(PORT, qkey);
            q.toRtr();
            q.toRts(0);
        }
        AddressHandle ah = pd.createAh(path());
        MemoryRegion buf = pd.allocate(3 * 4096, EnumSet.of(Access.LOCAL_WRITE));
        fill(buf.buffer(), 0, 512, 11);
        b.receiveRequests().recv(1).sge(buf, 4096, 1024 + 40).recv(4).sge(buf, 2 * 4096, 1024 + 40);
        b.receiveRequests().post();
        a.sendRequests().send(2, SendFlag.SIGNALED_BIT).sge(buf, 0, 512).ud(ah, b.qpNum(), qkey);
        a.sendRequests().post();
        try (PostBatch batch = a.startSend()) {
            batch.sendWithImm(3, SendFlag.SIGNALED_BIT, 0x5151).setSge(buf, 0, 256).setUdAddr(ah, b.qpNum(), qkey);
            batch.submit();
        }
        List<Long> ids = new java.util.ArrayList<>();
        for (int i = 0; i < 4; i++) {
            WorkCompletion wc = pollOne(cq);
            assertThat(wc.status()).as("wr %d", wc.wrId()).isEqualTo(WorkCompletionStatus.SUCCESS);
            ids.add(wc.wrId());
            if (wc.wrId() == 1 || wc.wrId() == 4) {
                assertThat(wc.hasGrh()).isTrue(); // RoCE: the first 40 bytes of the buffer hold the GRH
                assertThat(wc.srcQp()).isEqualTo(a.qpNum());
                assertThat(wc.byteLen()).isEqualTo((wc.wrId() == 1 ? 512 : 256) + 40);
                assertThat(wc.hasImm()).isEqualTo(wc.wrId() == 4);
            }
        }
        assertThat(ids).containsExactlyInAnyOrder(1L, 2L, 3L, 4L);
        assertSameBytes(buf.buffer(), 0, buf.buffer(), 4096 + 40, 512);
        assertSameBytes(buf.buffer(), 0, buf.buffer(), 2 * 4096 + 40, 256);
        // a UD send without destination is refused in Java
        a.sendRequests().send(5, 0).sge(buf, 0, 8);
        assertThatThrownBy(() -> a.sendRequests().post()).hasMessageContaining("needs ud(ah");
        a.sendRequests().clear();
    }

    @Test
    void completionChannelWakesUpOnCompletionAndOnSolicitedOnly() throws Exception {
        CompletionChannel channel = ctx.createCompChannel();
        CompletionQueue cq = ctx.createCq(16).channel(channel).build();
        RcPair p = rcPair(cq);
        cq.reqNotify(false);
        assertThat(channel.getCqEvent(0)).isNull();
        p.a().sendRequests().rdmaWrite(1, SendFlag.SIGNALED_BIT, p.dst().rkey(), p.dst().address()).sge(p.src(), 0, 64);
        p.a().sendRequests().post();
        assertThat(channel.getCqEvent(60_000)).isSameAs(cq);
        assertThat(pollOne(cq).wrId()).isEqualTo(1);

        // armed for solicited completions only: an unsolicited SEND (and its send completion) wakes nobody ...
        cq.reqNotify(true);
        p.b().receiveRequests().recv(5).sge(p.dst(), 0, 64).recv(7).sge(p.dst(), 64, 64);
        p.b().receiveRequests().post();
        p.a().sendRequests().send(6, SendFlag.SIGNALED_BIT).sge(p.src(), 0, 64);
        p.a().sendRequests().post();
        assertThat(awaitSuccesses(cq, 2, Duration.ofMillis(500))).containsExactlyInAnyOrder(5L, 6L);
        assertThat(channel.getCqEvent(1_000)).as("event for unsolicited completions").isNull();
        // ... a SEND with the solicited bit does
        p.a().sendRequests().send(8, SendFlag.SIGNALED_BIT | SendFlag.SOLICITED_BIT).sge(p.src(), 0, 64);
        p.a().sendRequests().post();
        assertThat(channel.getCqEvent(60_000)).isSameAs(cq);
        assertThat(awaitSuccesses(cq, 2, Duration.ofMillis(500))).containsExactlyInAnyOrder(7L, 8L);
    }

    /** A wait of Long.MAX_VALUE ms is "no limit" (it overflowed to a deadline in the past: null at once). */
    @Test
    void completionChannelWaitWithAHugeTimeoutWaitsForTheEvent() throws Exception {
        CompletionChannel channel = ctx.createCompChannel();
        CompletionQueue cq = ctx.createCq(16).channel(channel).build();
        RcPair p = rcPair(cq);
        cq.reqNotify(false);
        java.util.concurrent.CountDownLatch waiting = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CompletableFuture<CompletionQueue> woken = java.util.concurrent.CompletableFuture
                .supplyAsync(() -> {
                    waiting.countDown();
                    return channel.getCqEvent(Long.MAX_VALUE);
                });
        waiting.await();
        Thread.sleep(500); // the waiter is in its wait before the completion exists
        p.a().sendRequests().rdmaWrite(1, SendFlag.SIGNALED_BIT, p.dst().rkey(), p.dst().address()).sge(p.src(), 0, 64);
        p.a().sendRequests().post();
        assertThat(woken.get(60, java.util.concurrent.TimeUnit.SECONDS)).isSameAs(cq);
        assertThat(pollOne(cq).wrId()).isEqualTo(1);
    }

    @Test
    void rnrRetryWaitsForTheReceiveThenSucceeds() {
        CompletionQueue cq = ctx.createCq(16).build();
        RcPair p = rcPair(cq); // rnr_retry 7: retry forever; b's min_rnr_timer 12 (0.64 ms)
        fill(p.src().buffer(), 0, 128, 9);
        p.a().sendRequests().send(1, SendFlag.SIGNALED_BIT).sge(p.src(), 0, 128);
        p.a().sendRequests().post();
        // b has no receive: the responder answers RNR NAK, the requester retries and nothing completes meanwhile
        assertThat(awaitSuccesses(cq, 0, Duration.ofSeconds(2))).isEmpty();
        p.b().receiveRequests().recv(2).sge(p.dst(), 0, 128);
        p.b().receiveRequests().post();
        assertThat(awaitSuccesses(cq, 2, Duration.ofMillis(500))).containsExactlyInAnyOrder(1L, 2L);
        assertSameBytes(p.src().buffer(), 0, p.dst().buffer(), 0, 128);
    }

    /** Two connected RC QPs on {@code cq} and a source and a destination region of 4 KiB. */
    private record RcPair(QueuePair a, QueuePair b, MemoryRegion src, MemoryRegion dst) {}

    private RcPair rcPair(CompletionQueue cq) {
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).build();
        connect(a, b); // rnr_retry 7: retry forever; b's min_rnr_timer 12 (0.64 ms)
        return new RcPair(a, b, pd.allocate(4096, ALL_REMOTE), pd.allocate(4096, ALL_REMOTE));
    }
}
