package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code ibv_init_ah_from_wc}/{@code ibv_create_ah_from_wc} on a real device (rxe in the bed): a UD receive's
 * completion and GRH give the address vector that reaches its sender, for both header forms RoCE v2 puts in the
 * 40 bytes (an IPv6 header for an IPv6 GID, an IPv4 header in the last 20 bytes for an IPv4 one), and a reply sent
 * through it arrives at the sender. The misuses are refused in Java, and a header libibverbs cannot answer is a
 * {@link VerbsException} with the verb, errno name and a hint.
 */
class ReplyAddressIT extends DataPathResources {

    private static final int QKEY = 0x22222222;
    private static final int GRH = 40;

    /** The sgid indexes to test: the fixture's (an IPv6 GID) and, in the bed, the RoCE v2 GID of PANVERBS_ADDR. */
    private List<Integer> gidIndexes() throws Exception {
        List<Integer> indexes = new ArrayList<>(List.of(gidIndex));
        String addr = System.getenv("PANVERBS_ADDR");
        if (addr != null) {
            int v4 = ctx.roceV2GidIndex(PORT, InetAddress.getByName(addr));
            if (!indexes.contains(v4)) {
                indexes.add(v4);
            }
        }
        return indexes;
    }

    private record Pair(CompletionQueue cq, QueuePair a, QueuePair b, MemoryRegion buf) {}

    private Pair udPair() {
        CompletionQueue cq = ctx.createCq(16).build();
        QueuePair a = pd.createQp(QueuePairType.UD, cq, cq).build();
        QueuePair b = pd.createQp(QueuePairType.UD, cq, cq).build();
        for (QueuePair q : new QueuePair[] {a, b}) {
            q.toInit(PORT, QKEY);
            q.toRtr();
            q.toRts(0);
        }
        return new Pair(cq, a, b, pd.allocate(4 * 4096, EnumSet.of(Access.LOCAL_WRITE)));
    }

    /** a sends 256 bytes with immediate = its QP number through sgid {@code index}; returns b's receive completion. */
    private WorkCompletion sendAtoB(Pair p, int index) {
        byte[] local = ctx.queryGid(PORT, index).toBytes();
        try (AddressHandle ah = pd.createAh(AddressVector.builder(PORT).grh(local, index, 64).build())) {
            p.b().receiveRequests().recv(1).sge(p.buf(), 4096, GRH + 256).post();
            fill(p.buf().buffer(), 0, 256, 17);
            p.a().sendRequests().sendWithImm(2, SendFlag.SIGNALED_BIT, p.a().qpNum()).ud(ah, p.b().qpNum(), QKEY)
                    .sge(p.buf(), 0, 256).post();
            WorkCompletion recv = null;
            for (int i = 0; i < 2; i++) {
                WorkCompletion wc = pollOne(p.cq());
                assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
                if (wc.opcode() == WorkCompletionOpcode.RECV) {
                    recv = wc;
                }
            }
            assertThat(recv).isNotNull();
            assertThat(recv.hasGrh()).isTrue();
            assertThat(recv.srcQp()).isEqualTo(p.a().qpNum());
            return recv;
        }
    }

    @Test
    void theAddressFromAReceiveReachesItsSenderForEachHeaderForm() throws Exception {
        for (int index : gidIndexes()) {
            Pair p = udPair();
            WorkCompletion recv = sendAtoB(p, index);
            MemorySegment grh = p.buf().buffer().asSlice(4096, GRH);

            AddressVector av = ctx.initAhFromWc(PORT, recv, grh);
            byte[] local = ctx.queryGid(PORT, index).toBytes();
            assertThat(av.isGlobal()).as("sgid %d", index).isTrue();
            assertThat(av.portNum()).isEqualTo(PORT);
            assertThat(av.dgid()).as("the sender's GID (sgid %d of this device)", index).isEqualTo(local);
            assertThat(ctx.queryGid(PORT, av.sgidIndex()).toBytes()).as("the GID the packet was sent to")
                    .isEqualTo(local);
            assertThat(ctx.queryGidEntry(PORT, av.sgidIndex()).orElseThrow().type()).isEqualTo(GidType.ROCE_V2);
            assertThat(av.hopLimit()).as("TTL / hop limit of the header").isPositive();

            // the reply: b answers a through the AH made from its completion, a's QP number from the immediate data
            AddressHandle reply = pd.createAhFromWc(recv, grh, PORT);
            assertThat(reply.addressVector()).isEqualTo(av);
            int remoteQpn = recv.immData();
            p.a().receiveRequests().recv(3).sge(p.buf(), 2 * 4096, GRH + 128).post();
            fill(p.buf().buffer(), 3 * 4096, 128, 91);
            p.b().sendRequests().send(4, SendFlag.SIGNALED_BIT).ud(reply, remoteQpn, QKEY).sge(p.buf(), 3 * 4096, 128)
                    .post();
            boolean answered = false;
            for (int i = 0; i < 2; i++) {
                WorkCompletion wc = pollOne(p.cq());
                assertThat(wc.status()).as("wr %d", wc.wrId()).isEqualTo(WorkCompletionStatus.SUCCESS);
                if (wc.opcode() == WorkCompletionOpcode.RECV) {
                    assertThat(wc.qpNum()).isEqualTo(p.a().qpNum());
                    assertThat(wc.srcQp()).isEqualTo(p.b().qpNum());
                    assertThat(wc.byteLen()).isEqualTo(GRH + 128);
                    answered = true;
                }
            }
            assertThat(answered).isTrue();
            assertSameBytes(p.buf().buffer(), 3 * 4096, p.buf().buffer(), 2 * 4096 + GRH, 128);
            reply.close();
        }
    }

    @Test
    void misuseIsRefusedInJavaAndABadHeaderIsAVerbsException() throws Exception {
        Pair p = udPair();
        int index = gidIndexes().getLast();
        WorkCompletion recv = sendAtoB(p, index);
        MemorySegment grh = p.buf().buffer().asSlice(4096, GRH);

        // the receive has a GRH: it must be passed, whole
        assertThatThrownBy(() -> pd.createAhFromWc(recv, null, PORT)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ibv_create_ah_from_wc").hasMessageContaining("IBV_WC_GRH");
        assertThatThrownBy(() -> ctx.initAhFromWc(PORT, recv, grh.asSlice(0, 39)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("39 bytes");
        assertThatThrownBy(() -> ctx.initAhFromWc(0, recv, grh)).isInstanceOf(IllegalArgumentException.class);

        try (Arena arena = Arena.ofConfined()) {
            // not a GRH at all (no IPv6 version, no IPv4 header): EPROTONOSUPPORT, the peer's fault, not a capability
            MemorySegment zeros = arena.allocate(GRH);
            assertThatThrownBy(() -> ctx.initAhFromWc(PORT, recv, zeros))
                    .isExactlyInstanceOf(VerbsException.class).hasMessageContaining("ibv_init_ah_from_wc")
                    .hasMessageContaining("EPROTONOSUPPORT").hasMessageContaining("GRH");
            if (isIpv4Header(grh)) {
                // sent to an IPv4 address this device does not have: no local GID to answer from
                MemorySegment elsewhere = arena.allocate(GRH).copyFrom(grh);
                elsewhere.asSlice(36, 4).copyFrom(MemorySegment.ofArray(new byte[] {10, 99, 99, 99}));
                assertThatThrownBy(() -> pd.createAhFromWc(recv, elsewhere, PORT))
                        .isExactlyInstanceOf(VerbsException.class).hasMessageContaining("ibv_create_ah_from_wc")
                        .hasMessageContaining("not a GID of port " + PORT).hasMessageContaining("valid GID indexes");
            }
        }

        // a send completion has no sender to answer; a flushed receive carries no address
        p.b().receiveRequests().recv(6).sge(p.buf(), 4096, GRH + 256).post();
        p.a().sendRequests().send(5, SendFlag.SIGNALED_BIT).ud(pd.createAh(path()), p.b().qpNum(), QKEY)
                .sge(p.buf(), 0, 8).post();
        WorkCompletion sent = null;
        for (int i = 0; i < 2; i++) {
            WorkCompletion wc = pollOne(p.cq());
            assertThat(wc.status()).isEqualTo(WorkCompletionStatus.SUCCESS);
            if (wc.opcode() == WorkCompletionOpcode.SEND) {
                sent = wc;
            }
        }
        WorkCompletion send = sent;
        assertThat(send).isNotNull();
        assertThatThrownBy(() -> pd.createAhFromWc(send, grh, PORT)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("SEND completions have no sender");
        p.b().receiveRequests().recv(7).sge(p.buf(), 4096, GRH + 256).post();
        p.b().toErr();
        WorkCompletion flushed = null;
        for (int i = 0; i < 3 && flushed == null; i++) {
            WorkCompletion wc = pollOne(p.cq());
            if (!wc.ok()) {
                flushed = wc;
            }
        }
        assertThat(flushed).isNotNull();
        WorkCompletion f = flushed;
        assertThatThrownBy(() -> pd.createAhFromWc(f, grh, PORT)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("WR_FLUSH_ERR").hasMessageContaining("carries no source address");

        // a closed PD
        ProtectionDomain other = ctx.allocPd();
        other.close();
        assertThatThrownBy(() -> other.createAhFromWc(recv, grh, PORT)).isInstanceOf(IllegalStateException.class);
    }

    /** RoCE v2 over IPv4: the 40 bytes hold no IPv6 version and an IPv4 header (version 4) at byte 20. */
    private static boolean isIpv4Header(MemorySegment grh) {
        int v6 = (Byte.toUnsignedInt(grh.get(ValueLayout.JAVA_BYTE, 0)) >> 4) & 0xF;
        int v4 = (Byte.toUnsignedInt(grh.get(ValueLayout.JAVA_BYTE, 20)) >> 4) & 0xF;
        return v6 != 6 && v4 == 4;
    }
}
