package dev.panverbs.bindings.ibverbs;

import static dev.panverbs.bindings.verbs.verbs_h.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.bindings.verbs.ibv_device_attr;
import dev.panverbs.bindings.verbs.ibv_mr;
import dev.panverbs.bindings.verbs.ibv_port_attr;
import dev.panverbs.bindings.verbs.ibv_wc;
import dev.panverbs.testing.RdmaTestDevice;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.util.Arrays;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Proves the test bed with real verbs through the jextract bindings: open the device, query it, register
 * memory, connect two RC QPs on the same port and move data with RDMA WRITE and SEND/RECV, verified byte
 * for byte. Runs on any device (the Soft-RoCE guest's rxe0, or a real HCA with PANVERBS_TESTBED=host).
 */
class SoftRoceBedIT {
    private static final int SIZE = 64 * 1024;

    private RawVerbs verbs;
    private String device;

    @BeforeEach
    void open() {
        device = RdmaTestDevice.name();
        verbs = new RawVerbs(device);
    }

    @AfterEach
    void close() {
        if (verbs != null) verbs.close();
    }

    @Test
    void queryDevicePortAndGid() throws Exception {
        MemorySegment attr = ibv_device_attr.allocate(verbs.arena);
        assertThat(ibv_query_device(verbs.context, attr)).as("ibv_query_device").isZero();
        assertThat(ibv_device_attr.phys_port_cnt(attr)).isGreaterThanOrEqualTo((byte) 1);
        assertThat(ibv_device_attr.max_qp(attr)).isPositive();
        // uint64_t: rxe reports UINT64_MAX
        assertThat(Long.compareUnsigned(ibv_device_attr.max_mr_size(attr), SIZE)).as("max_mr_size").isNotNegative();
        assertThat(ibv_device_attr.node_guid(attr)).isNotZero();

        MemorySegment port = verbs.portAttr;
        assertThat(ibv_port_attr.state(port)).as("port 1 state").isEqualTo(IBV_PORT_ACTIVE());
        assertThat(ibv_port_attr.active_mtu(port)).isBetween(IBV_MTU_256(), IBV_MTU_4096());
        assertThat(ibv_port_attr.gid_tbl_len(port)).isPositive();
        if (device.startsWith("rxe")) {
            assertThat(ibv_port_attr.link_layer(port)).as("rxe is RoCE").isEqualTo((byte) IBV_LINK_LAYER_ETHERNET());
        }
        // in the bed, rxe0's RoCE v2 GID is the IPv4-mapped address of its netdev
        String addr = System.getenv("PANVERBS_ADDR");
        if ("guest".equals(System.getenv("PANVERBS_TESTBED")) && addr != null) {
            byte[] expected = new byte[16];
            expected[10] = (byte) 0xff;
            expected[11] = (byte) 0xff;
            System.arraycopy(InetAddress.getByName(addr).getAddress(), 0, expected, 12, 4);
            assertThat(verbs.gid.toArray(JAVA_BYTE)).as("GID %d of %s", verbs.gidIndex, device).isEqualTo(expected);
        }
    }

    @Test
    void regMrReportsKeysAndRange() {
        MemorySegment buffer = verbs.arena.allocate(SIZE, 4096);
        MemorySegment mr = verbs.regMr(buffer);
        assertThat(ibv_mr.addr(mr).address()).isEqualTo(buffer.address());
        assertThat(ibv_mr.length(mr)).isEqualTo(SIZE);
        assertThat(ibv_mr.lkey(mr)).isNotZero();
        assertThat(ibv_mr.rkey(mr)).isNotZero();
        assertThat(ibv_mr.pd(mr).address()).isEqualTo(verbs.pd.address());
    }

    @Test
    void rdmaWriteBetweenTwoRcQps() {
        MemorySegment a = verbs.createRcQp();
        MemorySegment b = verbs.createRcQp();
        verbs.connect(a, RawVerbs.qpNum(b), verbs.gid);
        verbs.connect(b, RawVerbs.qpNum(a), verbs.gid);

        MemorySegment source = verbs.arena.allocate(SIZE, 4096);
        MemorySegment target = verbs.arena.allocate(SIZE, 4096);
        byte[] pattern = pattern(SIZE, 7);
        source.copyFrom(MemorySegment.ofArray(pattern));
        MemorySegment sourceMr = verbs.regMr(source);
        MemorySegment targetMr = verbs.regMr(target);

        assertThat(verbs.postSend(a, 0x1234, IBV_WR_RDMA_WRITE(), sourceMr, source,
                target.address(), ibv_mr.rkey(targetMr))).as("post_send(RDMA_WRITE)").isZero();
        MemorySegment wc = verbs.pollOne(30_000);
        assertThat(ibv_wc.status(wc)).as(statusOf(wc)).isEqualTo(IBV_WC_SUCCESS());
        assertThat(ibv_wc.opcode(wc)).isEqualTo(IBV_WC_RDMA_WRITE());
        assertThat(ibv_wc.wr_id(wc)).isEqualTo(0x1234);
        assertThat(ibv_wc.qp_num(wc)).isEqualTo(RawVerbs.qpNum(a));
        assertThat(target.toArray(JAVA_BYTE)).isEqualTo(pattern);
    }

    @Test
    void rdmaWriteWithWrongRkeyFailsWithRemoteAccessError() {
        MemorySegment a = verbs.createRcQp();
        MemorySegment b = verbs.createRcQp();
        verbs.connect(a, RawVerbs.qpNum(b), verbs.gid);
        verbs.connect(b, RawVerbs.qpNum(a), verbs.gid);
        MemorySegment source = verbs.arena.allocate(4096, 4096);
        MemorySegment target = verbs.arena.allocate(4096, 4096);
        MemorySegment sourceMr = verbs.regMr(source);
        MemorySegment targetMr = verbs.regMr(target);

        int wrongRkey = ibv_mr.rkey(targetMr) ^ 0x5a5a00;
        assertThat(verbs.postSend(a, 9, IBV_WR_RDMA_WRITE(), sourceMr, source, target.address(), wrongRkey))
                .isZero();
        MemorySegment wc = verbs.pollOne(30_000);
        assertThat(ibv_wc.status(wc)).as(statusOf(wc)).isEqualTo(IBV_WC_REM_ACCESS_ERR());
    }

    @Test
    void sendRecvBetweenTwoRcQps() {
        MemorySegment a = verbs.createRcQp();
        MemorySegment b = verbs.createRcQp();
        verbs.connect(a, RawVerbs.qpNum(b), verbs.gid);
        verbs.connect(b, RawVerbs.qpNum(a), verbs.gid);

        int length = 3000; // spans several MTU-sized packets
        MemorySegment message = verbs.arena.allocate(length, 4096);
        MemorySegment inbox = verbs.arena.allocate(SIZE, 4096);
        byte[] pattern = pattern(length, 13);
        message.copyFrom(MemorySegment.ofArray(pattern));
        MemorySegment messageMr = verbs.regMr(message);
        MemorySegment inboxMr = verbs.regMr(inbox);

        assertThat(verbs.postRecv(b, 22, inboxMr, inbox)).as("post_recv").isZero();
        assertThat(verbs.postSend(a, 11, IBV_WR_SEND(), messageMr, message, 0, 0)).as("post_send(SEND)").isZero();
        boolean sent = false, received = false;
        for (int i = 0; i < 2; i++) {
            MemorySegment wc = verbs.pollOne(30_000);
            assertThat(ibv_wc.status(wc)).as(statusOf(wc)).isEqualTo(IBV_WC_SUCCESS());
            if (ibv_wc.opcode(wc) == IBV_WC_SEND()) {
                assertThat(ibv_wc.wr_id(wc)).isEqualTo(11);
                sent = true;
            } else {
                assertThat(ibv_wc.opcode(wc)).isEqualTo(IBV_WC_RECV());
                assertThat(ibv_wc.wr_id(wc)).isEqualTo(22);
                assertThat(ibv_wc.byte_len(wc)).isEqualTo(length);
                assertThat(ibv_wc.qp_num(wc)).isEqualTo(RawVerbs.qpNum(b));
                received = true;
            }
        }
        assertThat(sent && received).as("one SEND and one RECV completion").isTrue();
        assertThat(inbox.asSlice(0, length).toArray(JAVA_BYTE)).isEqualTo(pattern);
        assertThat(inbox.asSlice(length, SIZE - length).toArray(JAVA_BYTE)).as("bytes past the message")
                .containsOnly((byte) 0);
    }

    private static byte[] pattern(int length, int seed) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) bytes[i] = (byte) (i * 31 + seed + (i >>> 8));
        // not all zero and not periodic in 256: a misplaced or truncated copy cannot match
        assertThat(Arrays.equals(bytes, new byte[length])).isFalse();
        return bytes;
    }

    private static String statusOf(MemorySegment wc) {
        return "wc status " + ibv_wc_status_str(ibv_wc.status(wc)).reinterpret(64).getString(0)
                + " vendor_err " + ibv_wc.vendor_err(wc);
    }
}
