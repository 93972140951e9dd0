package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.lang.foreign.Arena;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Memory windows on a real device (rxe in Linux 6.1 has type 1 and type 2B): a remote WRITE and READ through a window
 * inside its range succeed; outside the range, or after invalidation, they complete with REM_ACCESS_ERR; a rebind
 * changes the rkey; a remote invalidation arrives with SEND_WITH_INV; a region with a bound window refuses to close
 * with a message naming the window.
 */
class MemoryWindowIT extends DataPathResources {
    private static final Set<Access> WINDOW_MR = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
            Access.REMOTE_READ, Access.MW_BIND);
    private static final Set<Access> RW = EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE);

    private void assumeWindows() {
        DeviceAttributes a = ctx.queryDevice();
        if (!a.supportsMemoryWindows()) { // then the refusal must name the capability
            assertThatThrownBy(() -> pd.allocMw(MemoryWindowType.TYPE_1))
                    .isInstanceOf(UnsupportedVerbException.class).hasMessageContaining("IBV_DEVICE_MEM_WINDOW");
        }
        assumeThat(a.supportsMemoryWindows()).as("device caps report memory windows").isTrue();
    }

    /** A fresh connected RC pair (an access error moves the requester to ERR); b owns the window. */
    private QueuePair[] pair(CompletionQueue cq, Set<SendOperation> bSendOps) {
        QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).sendOps(EnumSet.of(SendOperation.SEND_WITH_INV,
                SendOperation.RDMA_WRITE)).build();
        QueuePairBuilder bb = pd.createQp(QueuePairType.RC, cq, cq);
        if (!bSendOps.isEmpty()) {
            bb.sendOps(bSendOps);
        }
        QueuePair b = bb.build();
        connect(a, b);
        return new QueuePair[] {a, b};
    }

    private static WorkCompletion write(QueuePair a, CompletionQueue cq, MemoryRegion src, int rkey, long remote,
                                        int len, long wrId) {
        a.sendRequests().rdmaWrite(wrId, SendFlag.SIGNALED_BIT, rkey, remote).sge(src, 0, len).post();
        WorkCompletion wc = pollOne(cq);
        assertThat(wc.wrId()).isEqualTo(wrId);
        return wc;
    }

    @Test
    void type1WindowGrantsItsRangeOnlyAndARebindChangesTheRkey() {
        assumeWindows();
        assertThat(ctx.queryDevice().has(DeviceCapability.MEM_WINDOW)).isTrue();
        CompletionQueue cq = ctx.createCq(64).build();
        QueuePair[] p = pair(cq, Set.of());
        QueuePair a = p[0];
        QueuePair b = p[1];
        MemoryRegion target = pd.allocate(8192, WINDOW_MR);
        MemoryRegion src = pd.allocate(4096, ALL_REMOTE);
        MemoryWindow mw = pd.allocMw(MemoryWindowType.TYPE_1);
        int before = mw.rkey();
        int rkey = mw.bind(b, 77, SendFlag.SIGNALED_BIT, target, 4096, 2048, RW);
        WorkCompletion bound = pollOne(cq);
        assertThat(bound.wrId()).isEqualTo(77);
        assertThat(bound.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(bound.opcode()).isEqualTo(WorkCompletionOpcode.BIND_MW);
        assertThat(rkey).isEqualTo(mw.rkey()).isNotEqualTo(before).isNotEqualTo(target.rkey());
        assertThat(mw.address()).isEqualTo(target.address() + 4096);
        assertThat(mw.length()).isEqualTo(2048);
        assertThat(mw.boundRegion()).containsSame(target);

        fill(src.buffer(), 0, 1024, 5);
        assertThat(write(a, cq, src, rkey, mw.address() + 512, 1024, 1).status())
                .isEqualTo(WorkCompletionStatus.SUCCESS);
        assertSameBytes(target.buffer(), 4096 + 512, src.buffer(), 0, 1024);
        a.sendRequests().rdmaRead(2, SendFlag.SIGNALED_BIT, rkey, mw.address()).sge(src, 2048, 256).post();
        WorkCompletion read = pollOne(cq);
        assertThat(read.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertSameBytes(src.buffer(), 2048, target.buffer(), 4096, 256);

        // the MR cannot be closed while the window is bound: named, not a bare EBUSY
        String mwName = mw.toString();
        assertThatThrownBy(target::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("memory window").hasMessageContaining(mwName);
        assertThat(target.isClosed()).isFalse();
        // nor re-registered (the window would keep the old keys and translation): refused before the provider
        // (rxe would answer EOPNOTSUPP, a device with ibv_rereg_mr would leave the window dangling)
        assertThatThrownBy(() -> target.rereg().access(WINDOW_MR).apply()).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("ibv_rereg_mr: ").hasMessageContaining(mwName);
        assertThat(target.rkey()).isNotEqualTo(0);
        assertThat(write(a, cq, src, rkey, mw.address(), 64, 9).status()).isEqualTo(WorkCompletionStatus.SUCCESS);

        // a rebind (other range) changes the rkey; the old rkey no longer grants access
        int rebound = mw.bind(b, 78, SendFlag.SIGNALED_BIT, target, 0, 1024, RW);
        assertThat(pollOne(cq).status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(rebound).isNotEqualTo(rkey);
        assertThat(write(a, cq, src, rebound, target.address() + 100, 64, 3).status())
                .isEqualTo(WorkCompletionStatus.SUCCESS);
        WorkCompletion stale = write(a, cq, src, rkey, target.address() + 4096, 64, 4);
        assertThat(stale.status()).isEqualTo(WorkCompletionStatus.REM_ACCESS_ERR);

        // outside the window's range, on a fresh pair. rxe (Linux 6.1, check_rkey) checks a window access against
        // the range of the window's region only, not the window's own: there the access must leave the region
        QueuePair[] q = pair(cq, Set.of());
        mw.bind(q[1], 79, SendFlag.SIGNALED_BIT, target, 0, 1024, RW);
        assertThat(pollOne(cq).status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        long outsideAddress = isRxe() ? target.address() + target.length() : target.address() + 1024;
        WorkCompletion outside = write(q[0], cq, src, mw.rkey(), outsideAddress, 64, 5);
        assertThat(outside.status()).isEqualTo(WorkCompletionStatus.REM_ACCESS_ERR);

        mw.close(); // deallocating the window releases the region
        assertThat(mw.boundRegion()).isEmpty();
        target.close();
        assertThat(target.isClosed()).isTrue();
    }

    /**
     * The arena tied to a region ({@code regMr(arena, ..)}) deallocates the windows bound to the region before it
     * deregisters the region and frees the memory, so no window's rkey reaches freed memory. (Before, rxe refused
     * the deregistration while the window was bound: the arena's close threw, and freed the memory anyway.)
     */
    @Test
    void closingTheArenaOfARegionDeallocatesItsBoundWindowsFirst() {
        assumeWindows();
        CompletionQueue cq = ctx.createCq(64).build();
        QueuePair[] p = pair(cq, Set.of());
        MemoryRegion src = pd.allocate(4096, ALL_REMOTE);
        Arena arena = Arena.ofShared();
        MemoryRegion target = pd.regMr(arena, arena.allocate(1 << 20, 4096), WINDOW_MR);
        MemoryWindow mw = pd.allocMw(MemoryWindowType.TYPE_1);
        int rkey = mw.bind(p[1], 1, SendFlag.SIGNALED_BIT, target, 0, 4096, RW);
        assertThat(pollOne(cq).status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        long windowAddress = mw.address();

        assertThatCode(arena::close).doesNotThrowAnyException();
        assertThat(mw.isClosed()).isTrue();
        assertThat(target.isClosed()).isTrue();
        assertThat(write(p[0], cq, src, rkey, windowAddress, 64, 2).status())
                .isEqualTo(WorkCompletionStatus.REM_ACCESS_ERR);
    }

    @Test
    void type2WindowBindsOnTheSendQueueAndInvalidatesLocallyAndRemotely() {
        assumeWindows();
        DeviceAttributes attrs = ctx.queryDevice();
        assumeThat(attrs.has(DeviceCapability.MEM_WINDOW_TYPE_2A) || attrs.has(DeviceCapability.MEM_WINDOW_TYPE_2B))
                .as("type 2 windows").isTrue();
        CompletionQueue cq = ctx.createCq(64).build();
        Set<SendOperation> bindOps = EnumSet.of(SendOperation.BIND_MW, SendOperation.LOCAL_INV);
        QueuePair[] p = pair(cq, bindOps);
        QueuePair a = p[0];
        QueuePair b = p[1];
        MemoryRegion target = pd.allocate(8192, WINDOW_MR);
        MemoryRegion src = pd.allocate(4096, ALL_REMOTE);
        MemoryWindow mw = pd.allocMw(MemoryWindowType.TYPE_2);
        assertThatThrownBy(() -> mw.bind(b, 1, SendFlag.SIGNALED_BIT, target, 0, 64, RW))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PostBatch.bindMw");

        int rkey = MemoryWindow.nextRkey(mw.rkey());
        try (PostBatch batch = b.startSend()) {
            batch.bindMw(10, SendFlag.SIGNALED_BIT, mw, rkey, target, 0, 4096, RW);
            batch.submit();
        }
        WorkCompletion bound = pollOne(cq);
        assertThat(bound.status()).as("%s", bound).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(bound.opcode()).isEqualTo(WorkCompletionOpcode.BIND_MW);
        assertThat(mw.rkey()).isEqualTo(rkey);
        assertThat(write(a, cq, src, rkey, target.address() + 128, 256, 11).status())
                .isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThatThrownBy(target::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("memory window");

        // local invalidation: the rkey stops working, and the region may close again
        try (PostBatch batch = b.startSend()) {
            batch.localInv(12, SendFlag.SIGNALED_BIT, mw);
            batch.submit();
        }
        assertThat(pollOne(cq).status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(mw.boundRegion()).isEmpty();
        assertThat(write(a, cq, src, rkey, target.address() + 128, 256, 13).status())
                .isEqualTo(WorkCompletionStatus.REM_ACCESS_ERR);

        // bind again with a new rkey (fresh pair), then the peer invalidates it with SEND_WITH_INV
        QueuePair[] q = pair(cq, bindOps);
        int rkey2 = MemoryWindow.nextRkey(mw.rkey());
        try (PostBatch batch = q[1].startSend()) {
            batch.bindMw(20, SendFlag.SIGNALED_BIT, mw, rkey2, target, 0, 4096, RW);
            batch.submit();
        }
        assertThat(pollOne(cq).status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(rkey2).isNotEqualTo(rkey);
        assertThat(write(q[0], cq, src, rkey2, target.address(), 64, 21).status())
                .isEqualTo(WorkCompletionStatus.SUCCESS);
        q[1].receiveRequests().recv(22).sge(target, 6000, 64).post(); // outside the window: the MR's own lkey
        q[0].sendRequests().sendWithInv(23, SendFlag.SIGNALED_BIT, rkey2).sge(src, 0, 64).post();
        WorkCompletion first = pollOne(cq);
        WorkCompletion second = pollOne(cq);
        WorkCompletion recv = first.wrId() == 22 ? first : second;
        WorkCompletion send = first.wrId() == 22 ? second : first;
        assertThat(send.wrId()).isEqualTo(23);
        assertThat(send.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        assertThat(recv.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
        // rxe (Linux 6.1) sets the kernel's IB_WC_WITH_INVALIDATE (1 << 2) in the user-space completion, which
        // libibverbs reads as IBV_WC_IP_CSUM_OK, instead of IBV_WC_WITH_INV (1 << 3); the rkey itself is right
        if (isRxe()) {
            assertThat(recv.wcFlags() & ((1 << 2) | (1 << 3))).as("an invalidation flag").isNotZero();
        } else {
            assertThat(recv.hasInv()).isTrue();
        }
        assertThat(recv.invalidatedRkey()).isEqualTo(rkey2);
        assertThat(write(q[0], cq, src, rkey2, target.address(), 64, 24).status())
                .isEqualTo(WorkCompletionStatus.REM_ACCESS_ERR);
        mw.close(); // a remote invalidation is not seen by the library: closing the window releases the region
        target.close();
        assertThat(target.isClosed()).isTrue();
    }

    @Test
    void aStagedBindWhoseWindowWasClosedIsRefusedAtPost() {
        assumeWindows();
        DeviceAttributes attrs = ctx.queryDevice();
        assumeThat(attrs.has(DeviceCapability.MEM_WINDOW_TYPE_2A) || attrs.has(DeviceCapability.MEM_WINDOW_TYPE_2B))
                .as("type 2 windows").isTrue();
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair b = pair(cq, EnumSet.of(SendOperation.BIND_MW, SendOperation.LOCAL_INV))[1];
        MemoryRegion target = pd.allocate(4096, WINDOW_MR);
        MemoryWindow mw = pd.allocMw(MemoryWindowType.TYPE_2);
        SendRequests s = b.sendRequests();
        s.bindMw(1, SendFlag.SIGNALED_BIT, mw, MemoryWindow.nextRkey(mw.rkey()), target, 0, 4096, RW);
        mw.close(); // the staged WR still carries its ibv_mw pointer
        assertThatThrownBy(s::post).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_post_send: work request 0").hasMessageContaining(mw.toString())
                .hasMessageContaining("Nothing was posted");
        assertThat(b.sendQueue.tracker.outstanding()).isZero();
        s.clear();
        assertThatCode(target::close).as("nothing references the region").doesNotThrowAnyException();
    }

    @Test
    void bindChecksRefuseByNameBeforeTheProvider() {
        assumeWindows();
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair[] p = pair(cq, Set.of());
        MemoryWindow mw = pd.allocMw(MemoryWindowType.TYPE_1);
        MemoryRegion noBind = pd.allocate(4096, ALL_REMOTE);
        assertThatThrownBy(() -> mw.bind(p[1], 1, SendFlag.SIGNALED_BIT, noBind, 0, 64, RW))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MW_BIND");
        MemoryRegion readOnly = pd.allocate(4096, EnumSet.of(Access.REMOTE_READ, Access.MW_BIND));
        assertThatThrownBy(() -> mw.bind(p[1], 1, SendFlag.SIGNALED_BIT, readOnly, 0, 64, RW))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("LOCAL_WRITE");
        MemoryRegion ok = pd.allocate(4096, WINDOW_MR);
        assertThatThrownBy(() -> mw.bind(p[1], 1, SendFlag.SIGNALED_BIT, ok, 4000, 200, RW))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("inside the region");
        ProtectionDomain other = ctx.allocPd();
        MemoryRegion elsewhere = other.allocate(4096, WINDOW_MR);
        assertThatThrownBy(() -> mw.bind(p[1], 1, SendFlag.SIGNALED_BIT, elsewhere, 0, 64, RW))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("C10-74");
        QueuePair reset = pd.createQp(QueuePairType.RC, cq, cq).build();
        assertThatThrownBy(() -> mw.bind(reset, 1, SendFlag.SIGNALED_BIT, ok, 0, 64, RW))
                .isInstanceOf(PostException.class).hasMessageContaining("RESET");
        assertThat(mw.boundRegion()).isEmpty();
        assertThat(p[1].sendQueue.tracker.outstanding()).as("nothing recorded").isZero();
    }
}
