package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.verbs.ibv_recv_wr;
import dev.panverbs.bindings.verbs.ibv_send_wr;
import dev.panverbs.bindings.verbs.ibv_sge;
import dev.panverbs.bindings.verbs.verbs_h;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The WR/SGE writers against the generated ibv_send_wr/ibv_recv_wr/ibv_sge layouts, and the Java-side checks. */
class WorkRequestLayoutTest {
    private final Arena arena = Arena.ofConfined();
    private final Object pd = new Object();

    @AfterEach
    void close() {
        arena.close();
    }

    private SendRequests send(QueuePairType type, boolean atomics, int cap, int maxSge) {
        return new SendRequests(new WorkRequestRules("QP#test", type, atomics, 64, pd), cap, maxSge);
    }

    private static MemorySegment wr(SendRequests s, int i) {
        return s.wrs.asSlice(s.wrOffset(i), ibv_send_wr.layout());
    }

    @Test
    void sendWrFieldsLandWhereTheCHeaderPutsThem() {
        assertThat(SendRequests.WR_SIZE).isEqualTo(128);
        SendRequests s = send(QueuePairType.RC, true, 4, 2);
        s.rdmaWriteWithImm(0x1122334455667788L, SendFlag.SIGNALED_BIT, 0x77, 0xABCDEF0123L, 0x01020304);
        s.appendSge(0x1000, 64, 0x55, null);
        s.appendSge(0x2000, 32, 0x66, null);
        MemorySegment w = wr(s, 0);
        // the caller's wr_id stays in the tracker's slot; the native wr_id is the slot's position (and route)
        assertThat(s.tracker.wrIdAt(s.base)).isEqualTo(0x1122334455667788L);
        assertThat(ibv_send_wr.wr_id(w)).isEqualTo(s.tracker.encode(s.base));
        assertThat(ibv_send_wr.opcode(w)).isEqualTo(verbs_h.IBV_WR_RDMA_WRITE_WITH_IMM());
        assertThat(ibv_send_wr.send_flags(w)).isEqualTo(verbs_h.IBV_SEND_SIGNALED());
        // imm_data is __be32: the wire bytes are 01 02 03 04
        assertThat(ibv_send_wr.imm_data(w)).isEqualTo(Integer.reverseBytes(0x01020304));
        MemorySegment rdma = ibv_send_wr.wr.rdma(ibv_send_wr.wr(w));
        assertThat(ibv_send_wr.wr.rdma.remote_addr(rdma)).isEqualTo(0xABCDEF0123L);
        assertThat(ibv_send_wr.wr.rdma.rkey(rdma)).isEqualTo(0x77);
        assertThat(ibv_send_wr.num_sge(w)).isEqualTo(2);
        MemorySegment sges = ibv_send_wr.sg_list(w).reinterpret(2 * ibv_sge.sizeof());
        assertThat(ibv_sge.addr(sges)).isEqualTo(0x1000);
        assertThat(ibv_sge.length(sges)).isEqualTo(64);
        assertThat(ibv_sge.lkey(sges)).isEqualTo(0x55);
        MemorySegment second = sges.asSlice(ibv_sge.sizeof());
        assertThat(ibv_sge.addr(second)).isEqualTo(0x2000);
        assertThat(ibv_sge.lkey(second)).isEqualTo(0x66);
    }

    @Test
    void atomicAndUnionFields() {
        SendRequests s = send(QueuePairType.RC, true, 4, 1);
        s.atomicCmpSwp(1, 0, 9, 0x1000, 5L, 6L);
        MemorySegment atomic = ibv_send_wr.wr.atomic(ibv_send_wr.wr(wr(s, 0)));
        assertThat(ibv_send_wr.wr.atomic.remote_addr(atomic)).isEqualTo(0x1000);
        assertThat(ibv_send_wr.wr.atomic.compare_add(atomic)).isEqualTo(5L);
        assertThat(ibv_send_wr.wr.atomic.swap(atomic)).isEqualTo(6L);
        assertThat(ibv_send_wr.wr.atomic.rkey(atomic)).isEqualTo(9);
        s.sendWithInv(2, 0, 0x4242);
        assertThat(ibv_send_wr.invalidate_rkey(wr(s, 1))).isEqualTo(0x4242);
        assertThat(ibv_send_wr.opcode(wr(s, 1))).isEqualTo(verbs_h.IBV_WR_SEND_WITH_INV());
        assertThatThrownBy(() -> s.atomicFetchAdd(3, 0, 9, 0x1004, 1)).hasMessageContaining("8-byte aligned");
    }

    @Test
    void chainIsPreLinkedAndCutOnlyForAPost() {
        SendRequests s = send(QueuePairType.RC, false, 3, 1);
        s.send(1, 0).send(2, 0).send(3, 0);
        long base = s.wrs.address();
        long stride = s.wrOffset(1); // a WR's slot: its 128-byte struct, then its SGE list (a power of two)
        assertThat(stride).isEqualTo(256);
        assertThat(ibv_send_wr.next(wr(s, 0)).address()).isEqualTo(base + stride);
        assertThat(ibv_send_wr.next(wr(s, 1)).address()).isEqualTo(base + 2 * stride);
        assertThat(ibv_send_wr.next(wr(s, 2)).address()).isZero();
        assertThat(ibv_send_wr.sg_list(wr(s, 1)).address()).isEqualTo(base + stride + 128);
        s.terminate(1);
        assertThat(ibv_send_wr.next(wr(s, 1)).address()).isZero();
        s.relink(1);
        assertThat(ibv_send_wr.next(wr(s, 1)).address()).isEqualTo(base + 2 * stride);
        assertThat(s.indexOf(base + 2 * stride)).isEqualTo(2);
        assertThatThrownBy(() -> s.send(4, 0)).hasMessageContaining("is full (3 WRs)");
        s.clear();
        assertThat(s.count()).isZero();
    }

    @Test
    void aPostsCutStaysWhereTheChainEndedAndMovesWhenTheLengthChanges() {
        SendRequests s = send(QueuePairType.RC, false, 4, 1);
        long base = s.wrs.address();
        long stride = s.wrOffset(1);
        s.cutAfter(1); // a post of WRs 0..1
        assertThat(ibv_send_wr.next(wr(s, 0)).address()).isEqualTo(base + stride);
        assertThat(ibv_send_wr.next(wr(s, 1)).address()).isZero();
        assertThat(ibv_send_wr.next(wr(s, 2)).address()).isEqualTo(base + 3 * stride);
        s.cutAfter(1); // the same length again: nothing to write, the same chain
        assertThat(ibv_send_wr.next(wr(s, 1)).address()).isZero();
        s.cutAfter(2); // a longer chain: the old cut relinked, the new one made
        assertThat(ibv_send_wr.next(wr(s, 1)).address()).isEqualTo(base + 2 * stride);
        assertThat(ibv_send_wr.next(wr(s, 2)).address()).isZero();
        s.cutAfter(0); // a retry from mid-chain, or a shorter chain
        assertThat(ibv_send_wr.next(wr(s, 0)).address()).isZero();
        assertThat(ibv_send_wr.next(wr(s, 1)).address()).isEqualTo(base + 2 * stride);
        assertThat(ibv_send_wr.next(wr(s, 2)).address()).isEqualTo(base + 3 * stride);
        assertThat(ibv_send_wr.next(wr(s, 3)).address()).isZero();
    }

    @Test
    void receiveWrLayout() {
        assertThat(ReceiveRequests.WR_SIZE).isEqualTo(32);
        ReceiveRequests r = new ReceiveRequests(new WorkRequestRules("QP#test", QueuePairType.RC, false, 0, pd),
                2, 1);
        r.recv(99).appendSge(0x3000, 4096, 7, null);
        MemorySegment w = r.wrs.asSlice(0, ibv_recv_wr.layout());
        assertThat(r.tracker.wrIdAt(r.base)).isEqualTo(99);
        assertThat(ibv_recv_wr.num_sge(w)).isEqualTo(1);
        MemorySegment sge = ibv_recv_wr.sg_list(w).reinterpret(ibv_sge.sizeof());
        assertThat(ibv_sge.addr(sge)).isEqualTo(0x3000);
        assertThat(ibv_sge.length(sge)).isEqualTo(4096);
        assertThat(ibv_sge.lkey(sge)).isEqualTo(7);
        assertThat(ibv_recv_wr.next(w).address()).isEqualTo(r.wrs.address() + 64); // 32-byte struct + 1 SGE
        assertThat(ibv_recv_wr.sg_list(w).address()).isEqualTo(r.wrs.address() + 32);
        assertThatThrownBy(() -> r.appendSge(0, 1, 1, null)).hasMessageContaining("at most 1 SGEs");
    }

    @Test
    void inlineSetsTheFlagAndIsBounded() {
        SendRequests s = send(QueuePairType.RC, false, 2, 2);
        Arena dataArena = Arena.ofConfined();
        MemorySegment data = dataArena.allocate(40);
        for (int i = 0; i < 40; i++) {
            data.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) i);
        }
        s.send(1, SendFlag.SIGNALED_BIT).inline(data);
        dataArena.close(); // copied at inline(): the post never reads the caller's (now freed) memory
        assertThat(ibv_send_wr.send_flags(wr(s, 0)))
                .isEqualTo(verbs_h.IBV_SEND_SIGNALED() | verbs_h.IBV_SEND_INLINE());
        MemorySegment sge = ibv_send_wr.sg_list(wr(s, 0)).reinterpret(ibv_sge.sizeof());
        assertThat(ibv_sge.length(sge)).isEqualTo(40);
        MemorySegment copy = MemorySegment.ofAddress(ibv_sge.addr(sge)).reinterpret(40);
        for (int i = 0; i < 40; i++) {
            assertThat(copy.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i)).isEqualTo((byte) i);
        }
        assertThatThrownBy(() -> s.inline(arena.allocate(25))).hasMessageContaining("exceeds")
                .hasMessageContaining("max_inline_data of 64");
        // heap data is copied too; a second inline SGE of the same WR lands after the first
        s.inline(MemorySegment.ofArray(new byte[] {7, 8, 9, 10}));
        MemorySegment sge2 = ibv_send_wr.sg_list(wr(s, 0)).reinterpret(2 * ibv_sge.sizeof()).asSlice(ibv_sge.sizeof());
        assertThat(ibv_sge.addr(sge2)).isEqualTo(ibv_sge.addr(sge) + 40);
        assertThat(MemorySegment.ofAddress(ibv_sge.addr(sge2)).reinterpret(4).get(java.lang.foreign.ValueLayout.JAVA_BYTE, 3))
                .isEqualTo((byte) 10);
        Arena closed = Arena.ofConfined();
        MemorySegment freed = closed.allocate(4);
        closed.close();
        assertThatThrownBy(() -> s.inline(freed)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("arena is closed");
    }

    @Test
    void opcodesRefusedPerTypeAndCapability() {
        SendRequests ud = send(QueuePairType.UD, true, 2, 1);
        ud.send(1, 0);
        assertThatThrownBy(() -> ud.rdmaWrite(2, 0, 0, 0)).isInstanceOf(UnsupportedVerbException.class)
                .hasMessageContaining("a UD QP does not support RDMA_WRITE");
        SendRequests uc = send(QueuePairType.UC, true, 2, 1);
        uc.rdmaWrite(1, 0, 0, 0);
        assertThatThrownBy(() -> uc.rdmaRead(2, 0, 0, 0)).hasMessageContaining("a UC QP does not support RDMA_READ");
        SendRequests noAtomics = send(QueuePairType.RC, false, 2, 1);
        assertThatThrownBy(() -> noAtomics.atomicFetchAdd(1, 0, 0, 0, 1))
                .isInstanceOf(UnsupportedVerbException.class)
                .hasMessageContaining("atomic_cap = IBV_ATOMIC_NONE");
        assertThat(((UnsupportedVerbException) catchIt(() -> noAtomics.atomicFetchAdd(1, 0, 0, 0, 1)))
                .capability()).contains("atomic operations");
        assertThatThrownBy(() -> noAtomics.inline(arena.allocate(1))).hasMessageContaining("no work request");
        assertThatThrownBy(() -> noAtomics.ud(null, 1, 1)).isInstanceOf(IllegalStateException.class);
    }

    private static Throwable catchIt(Runnable r) {
        try {
            r.run();
        } catch (Throwable t) {
            return t;
        }
        throw new AssertionError("nothing thrown");
    }

    @Test
    void sgeBoundsChecks() {
        assertThat(WorkRequestRules.inBounds(0, 4096, 4096)).isTrue();
        assertThat(WorkRequestRules.inBounds(4095, 1, 4096)).isTrue();
        assertThat(WorkRequestRules.inBounds(4095, 2, 4096)).isFalse();
        assertThat(WorkRequestRules.inBounds(-1, 1, 4096)).isFalse();
        assertThat(WorkRequestRules.inBounds(0, -1, 4096)).isFalse();
        assertThat(WorkRequestRules.inBounds(Long.MAX_VALUE, 1, 4096)).isFalse();
        assertThat(WorkRequestRules.inBounds(4096, 0, 4096)).isTrue();
    }

    @Test
    void immediateDataIsNetworkOrderOnTheWire() {
        SendRequests s = send(QueuePairType.UD, false, 1, 1);
        s.sendWithImm(1, 0, 0xCAFEBABE);
        int wire = wr(s, 0).get(ValueLayout.JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN), ibv_send_wr.imm_data$offset());
        assertThat(wire).isEqualTo(0xCAFEBABE);
    }
}
