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
