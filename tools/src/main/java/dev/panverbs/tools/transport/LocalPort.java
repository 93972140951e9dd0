package dev.panverbs.tools.transport;

import dev.panverbs.core.AddressVector;
import dev.panverbs.core.Context;
import dev.panverbs.core.Mtu;
import dev.panverbs.core.PortAttributes;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairAttributes;
import java.security.SecureRandom;

/**
 * The local end of a connection: port attributes and GID, read once at setup, and the RC connect step
 * (INIT → RTR → RTS) both sides share.
 */
final class LocalPort {
    private static final SecureRandom RANDOM = new SecureRandom();

    final int portNum;
    final int gidIndex;
    final PortAttributes attributes;
    final byte[] gid;

    LocalPort(Context ctx, RpcOptions options) {
        this.portNum = options.ibPort();
        this.gidIndex = options.gidIndex();
        this.attributes = ctx.queryPort(portNum);
        if (attributes.grhRequired() && gidIndex < 0) {
            throw new IllegalArgumentException("port " + portNum + " of " + ctx.device().name() + " is "
                    + attributes.linkLayer() + " and addresses need a GRH: give RpcOptions.withGidIndex(index)"
                    + " (Context.roceV2GidIndex finds the index of an IP address)");
        }
        this.gid = gidIndex >= 0 ? ctx.queryGid(portNum, gidIndex).toBytes() : new byte[16];
    }

    /**
     * The port a connection set up through rdma_cm uses ({@code CmId.portNum()}): rdma_cm computes the path, so
     * no GID index is needed and the handshake's path fields stay zero.
     */
    LocalPort(Context ctx, int portNum) {
        this.portNum = portNum;
        this.gidIndex = -1;
        this.attributes = ctx.queryPort(portNum);
        this.gid = new byte[16];
    }

    /** How a new QP (in INIT, receives posted) is taken to RTS towards the peer. */
    @FunctionalInterface
    interface Connector {
        void connect(QueuePair qp, RpcHandshake peer, int myPsn);
    }

    /**
     * The rdma_cm route's connector: INIT (again), RTR and RTS with the attributes {@code rdma_init_qp_attr}
     * computes for {@code id}'s connection (path, MTU, peer QP number and PSNs); the handshake's fields are unused.
     */
    static Connector through(dev.panverbs.core.cm.CmId id) {
        return (qp, peer, psn) -> {
            for (dev.panverbs.core.QueuePairState s : new dev.panverbs.core.QueuePairState[] {
                    dev.panverbs.core.QueuePairState.INIT, dev.panverbs.core.QueuePairState.RTR,
                    dev.panverbs.core.QueuePairState.RTS}) {
                qp.modify(id.initQpAttributes(s));
            }
        };
    }

    /** A random initial PSN, 24 bits, as the ping-pong examples use. */
    static int randomPsn() {
        return RANDOM.nextInt(1 << 24);
    }

    /**
     * Moves {@code qp} (in INIT) to RTS connected to the peer's QP. The path MTU is the smaller of both active
     * MTUs. Retries: timeout 14 (~67 ms), 7 transport retries, RNR retry 7 (infinite); the credit scheme makes
     * RNR NAKs impossible for requests, so an RNR retry would point at a bug, never at load.
     */
    void connect(QueuePair qp, RpcHandshake peer, int myPsn) {
        AddressVector.Builder av = AddressVector.builder(portNum).dlid(peer.lid());
        boolean peerHasGid = false;
        for (byte b : peer.gid()) {
            peerHasGid |= b != 0;
        }
        if (peerHasGid) {
            if (gidIndex < 0) {
                throw new RpcProtocolException("the peer addresses itself by GID but this side has no GID index");
            }
            av.grh(peer.gid(), gidIndex, 64);
        }
        Mtu mtu = attributes.activeMtu();
        if (peer.mtu() != 0 && peer.mtu() < mtu.value()) {
            mtu = Mtu.of(peer.mtu());
        }
        qp.toRtr(new QueuePairAttributes().ahAttr(av.build()).pathMtu(mtu).destQpNum(peer.qpn()).rqPsn(peer.psn())
                .maxDestRdAtomic(1).minRnrTimer(12));
        qp.toRts(new QueuePairAttributes().timeout(14).retryCnt(7).rnrRetry(7).sqPsn(myPsn).maxRdAtomic(1));
    }
}
