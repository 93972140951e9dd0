package dev.panverbs.core;

import static dev.panverbs.bindings.verbs.verbs_h.*;

import dev.panverbs.bindings.verbs.ibv_qp_attr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * The attributes of one {@code ibv_modify_qp(3)} call: a {@code struct ibv_qp_attr} plus its
 * {@code enum ibv_qp_attr_mask}. Each setter writes its field <em>and</em> sets its mask bit, so callers never
 * assemble {@code IBV_QP_*} masks; {@link QueuePair#modify} checks the resulting set against the spec's state table
 * ({@link QueuePairTransitions}) before the kernel sees it.
 *
 * <p>Setter names are the C field names in camelCase, so the man page is one search away. Most users call the named
 * transitions instead ({@link QueuePair#toInit}, {@link QueuePair#toRtr}, {@link QueuePair#toRts}), which fill the
 * attributes the transition requires.
 *
 * <p>Not thread-safe; reusable after {@link #clear()}. The native struct lives in an automatic arena (control path).
 */
public final class QueuePairAttributes {
    private final MemorySegment attr = Arena.ofAuto().allocate(ibv_qp_attr.layout());
    private int mask;

    /** Empty attributes: no field set, mask 0. */
    public QueuePairAttributes() {}

    /** Forgets every attribute (zeroes the struct and the mask). */
    public QueuePairAttributes clear() {
        attr.fill((byte) 0);
        mask = 0;
        return this;
    }

    /** The next state ({@code qp_state}, {@code IBV_QP_STATE}). */
    public QueuePairAttributes qpState(QueuePairState state) {
        ibv_qp_attr.qp_state(attr, state.value());
        mask |= IBV_QP_STATE();
        return this;
    }

    /** The state the QP is assumed to be in ({@code cur_qp_state}, {@code IBV_QP_CUR_STATE}). */
    public QueuePairAttributes curQpState(QueuePairState state) {
        ibv_qp_attr.cur_qp_state(attr, state.value());
        mask |= IBV_QP_CUR_STATE();
        return this;
    }

    /** Ask for an {@code IBV_EVENT_SQ_DRAINED} event when moving to SQD ({@code IBV_QP_EN_SQD_ASYNC_NOTIFY}). */
    public QueuePairAttributes enSqdAsyncNotify(boolean notify) {
        ibv_qp_attr.en_sqd_async_notify(attr, (byte) (notify ? 1 : 0));
        mask |= IBV_QP_EN_SQD_ASYNC_NOTIFY();
        return this;
    }

    /**
     * Remote operations this QP accepts as responder ({@code qp_access_flags}, {@code IBV_QP_ACCESS_FLAGS}):
     * {@link Access#REMOTE_WRITE}, {@link Access#REMOTE_READ}, {@link Access#REMOTE_ATOMIC}; other rights are
     * memory-region rights and are refused here.
     */
    public QueuePairAttributes qpAccessFlags(Set<Access> access) {
        for (Access a : access) {
            if (a != Access.REMOTE_WRITE && a != Access.REMOTE_READ && a != Access.REMOTE_ATOMIC
                    && a != Access.LOCAL_WRITE) { // LOCAL_WRITE: accepted and ignored, as C programs often pass it
                throw new IllegalArgumentException("ibv_modify_qp: qpAccessFlags takes REMOTE_WRITE, REMOTE_READ and "
                        + "REMOTE_ATOMIC; " + a + " is a memory-region right (pass it to regMr)");
            }
        }
        return qpAccessFlagsMask(Access.mask(access));
    }

    QueuePairAttributes qpAccessFlagsMask(int accessFlags) {
        ibv_qp_attr.qp_access_flags(attr, accessFlags);
        mask |= IBV_QP_ACCESS_FLAGS();
        return this;
    }

    /** Partition key index ({@code pkey_index}, {@code IBV_QP_PKEY_INDEX}); 0 is the default partition. */
    public QueuePairAttributes pkeyIndex(int index) {
        ibv_qp_attr.pkey_index(attr, (short) u16("pkeyIndex", index));
        mask |= IBV_QP_PKEY_INDEX();
        return this;
    }

    /** Physical port, 1-based ({@code port_num}, {@code IBV_QP_PORT}). */
    public QueuePairAttributes portNum(int port) {
        if (port < 1 || port > 0xFF) {
            throw new IllegalArgumentException("ibv_modify_qp: portNum is 1-based and fits 8 bits, got " + port);
        }
        ibv_qp_attr.port_num(attr, (byte) port);
        mask |= IBV_QP_PORT();
        return this;
    }

    /** UD queue key ({@code qkey}, {@code IBV_QP_QKEY}); datagrams whose Q_Key differs are dropped. */
    public QueuePairAttributes qkey(int qkey) {
        ibv_qp_attr.qkey(attr, qkey);
        mask |= IBV_QP_QKEY();
        return this;
    }

    /** The primary path to the remote QP ({@code ah_attr}, {@code IBV_QP_AV}). */
    public QueuePairAttributes ahAttr(AddressVector av) {
        av.writeTo(ibv_qp_attr.ah_attr(attr));
        mask |= IBV_QP_AV();
        return this;
    }

    /** Path MTU ({@code path_mtu}, {@code IBV_QP_PATH_MTU}); at most the port's active MTU. */
    public QueuePairAttributes pathMtu(Mtu mtu) {
        ibv_qp_attr.path_mtu(attr, mtu.value());
        mask |= IBV_QP_PATH_MTU();
        return this;
    }

    /**
     * Local ACK timeout ({@code timeout}, {@code IBV_QP_TIMEOUT}): 4.096 us * 2^timeout, 0 = infinite, 1..31;
     * 14 (~67 ms) is a common choice.
     */
    public QueuePairAttributes timeout(int timeout) {
        ibv_qp_attr.timeout(attr, (byte) range("timeout", timeout, 0, 31));
        mask |= IBV_QP_TIMEOUT();
        return this;
    }

    /** Transport retries before {@code RETRY_EXC_ERR} ({@code retry_cnt}, {@code IBV_QP_RETRY_CNT}), 0..7. */
    public QueuePairAttributes retryCnt(int count) {
        ibv_qp_attr.retry_cnt(attr, (byte) range("retryCnt", count, 0, 7));
        mask |= IBV_QP_RETRY_CNT();
        return this;
    }

    /**
     * RNR NAK retries before {@code RNR_RETRY_EXC_ERR} ({@code rnr_retry}, {@code IBV_QP_RNR_RETRY}), 0..7; 7 means
     * retry forever.
     */
    public QueuePairAttributes rnrRetry(int count) {
        ibv_qp_attr.rnr_retry(attr, (byte) range("rnrRetry", count, 0, 7));
        mask |= IBV_QP_RNR_RETRY();
        return this;
    }

    /** First expected receive PSN ({@code rq_psn}, {@code IBV_QP_RQ_PSN}), 24 bits: the peer's {@code sq_psn}. */
    public QueuePairAttributes rqPsn(int psn) {
        ibv_qp_attr.rq_psn(attr, range("rqPsn", psn, 0, 0xFFFFFF));
        mask |= IBV_QP_RQ_PSN();
        return this;
    }

    /** First send PSN ({@code sq_psn}, {@code IBV_QP_SQ_PSN}), 24 bits. */
    public QueuePairAttributes sqPsn(int psn) {
        ibv_qp_attr.sq_psn(attr, range("sqPsn", psn, 0, 0xFFFFFF));
        mask |= IBV_QP_SQ_PSN();
        return this;
    }

    /** Outstanding RDMA READs/atomics as initiator ({@code max_rd_atomic}, {@code IBV_QP_MAX_QP_RD_ATOMIC}). */
    public QueuePairAttributes maxRdAtomic(int n) {
        ibv_qp_attr.max_rd_atomic(attr, (byte) range("maxRdAtomic", n, 0, 0xFF));
        mask |= IBV_QP_MAX_QP_RD_ATOMIC();
        return this;
    }

    /** Outstanding RDMA READs/atomics as responder ({@code max_dest_rd_atomic}, {@code IBV_QP_MAX_DEST_RD_ATOMIC}). */
    public QueuePairAttributes maxDestRdAtomic(int n) {
        ibv_qp_attr.max_dest_rd_atomic(attr, (byte) range("maxDestRdAtomic", n, 0, 0xFF));
        mask |= IBV_QP_MAX_DEST_RD_ATOMIC();
        return this;
    }

    /**
     * Minimum RNR NAK timer ({@code min_rnr_timer}, {@code IBV_QP_MIN_RNR_TIMER}), the IB-encoded 5-bit value
     * (1 = 0.01 ms ... 31 = 491.52 ms, 0 = 655.36 ms).
     */
    public QueuePairAttributes minRnrTimer(int encoded) {
        ibv_qp_attr.min_rnr_timer(attr, (byte) range("minRnrTimer", encoded, 0, 31));
        mask |= IBV_QP_MIN_RNR_TIMER();
        return this;
    }

    /**
     * The alternate path for automatic path migration ({@code alt_ah_attr}, {@code alt_pkey_index},
     * {@code alt_port_num}, {@code alt_timeout}; {@code IBV_QP_ALT_PATH}).
     */
    public QueuePairAttributes altPath(AddressVector av, int pkeyIndex, int timeout) {
        av.writeTo(ibv_qp_attr.alt_ah_attr(attr));
        ibv_qp_attr.alt_pkey_index(attr, (short) u16("altPkeyIndex", pkeyIndex));
        ibv_qp_attr.alt_port_num(attr, (byte) av.portNum());
        ibv_qp_attr.alt_timeout(attr, (byte) range("altTimeout", timeout, 0, 31));
        mask |= IBV_QP_ALT_PATH();
        return this;
    }

    /** Path migration state ({@code path_mig_state}, {@code IBV_QP_PATH_MIG_STATE}). */
    public QueuePairAttributes pathMigState(PathMigrationState state) {
        ibv_qp_attr.path_mig_state(attr, state.value());
        mask |= IBV_QP_PATH_MIG_STATE();
        return this;
    }

    /** New queue sizes ({@code cap}, {@code IBV_QP_CAP}); few providers support resizing. */
    public QueuePairAttributes cap(QueuePairCapabilities cap) {
        cap.writeTo(ibv_qp_attr.cap(attr));
        mask |= IBV_QP_CAP();
        return this;
    }

    /** The remote QP number ({@code dest_qp_num}, {@code IBV_QP_DEST_QPN}), 24 bits. */
    public QueuePairAttributes destQpNum(int qpNum) {
        ibv_qp_attr.dest_qp_num(attr, range("destQpNum", qpNum, 0, 0xFFFFFF));
        mask |= IBV_QP_DEST_QPN();
        return this;
    }

    /** Packet pacing rate in kbps ({@code rate_limit}, {@code IBV_QP_RATE_LIMIT}); raw packet QPs. */
    public QueuePairAttributes rateLimit(int kbps) {
        ibv_qp_attr.rate_limit(attr, range("rateLimit", kbps, 0, Integer.MAX_VALUE));
        mask |= IBV_QP_RATE_LIMIT();
        return this;
    }

    /** The attributes set so far (the mask, typed). */
    public Set<QueuePairAttribute> attributes() {
        return QueuePairAttribute.fromMask(mask);
    }

    /** Whether {@code a} has been set. */
    public boolean isSet(QueuePairAttribute a) {
        return (mask & a.bit()) != 0;
    }

    /** The state set by {@link #qpState}, or {@code null}. */
    public QueuePairState qpState() {
        return (mask & IBV_QP_STATE()) != 0 ? QueuePairState.of(ibv_qp_attr.qp_state(attr)) : null;
    }

    int mask() {
        return mask;
    }

    /** Attributes holding a copy of {@code native_} ({@code struct ibv_qp_attr}) with {@code mask} set. */
    static QueuePairAttributes copyOf(MemorySegment native_, int mask) {
        QueuePairAttributes a = new QueuePairAttributes();
        MemorySegment.copy(native_, 0, a.attr, 0, ibv_qp_attr.sizeof());
        a.mask = mask;
        return a;
    }

    /** {@code port_num} as set by {@link #portNum}. */
    int portNumValue() {
        return Byte.toUnsignedInt(ibv_qp_attr.port_num(attr));
    }

    /** The port of the address vector set by {@link #ahAttr}. */
    int avPortNum() {
        return Byte.toUnsignedInt(dev.panverbs.bindings.verbs.ibv_ah_attr.port_num(ibv_qp_attr.ah_attr(attr)));
    }

    MemorySegment segment() {
        return attr;
    }

    private static int u16(String what, int v) {
        return range(what, v, 0, 0xFFFF);
    }

    private static int range(String what, int v, int min, int max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException("ibv_modify_qp: " + what + " must be " + min + ".." + max + ", got "
                    + v);
        }
        return v;
    }

    @Override
    public String toString() {
        return "QueuePairAttributes" + attributes();
    }
}
