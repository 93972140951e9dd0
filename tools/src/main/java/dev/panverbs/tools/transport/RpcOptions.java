package dev.panverbs.tools.transport;

import java.time.Duration;

/**
 * Sizing and addressing of one side of an RPC connection. Every buffer is allocated and registered once, when
 * the connection is set up, from these numbers; nothing is registered per call. Java-only, like the whole
 * transport.
 *
 * <p>Server side: {@link #credits} receive buffers of {@link #maxRequest} bytes per connection.
 * Client side: {@link #slots} send buffers of {@code maxRequest} bytes and as many response slots of
 * {@code 8 + maxResponse} bytes (rounded up to a cache line). The most calls a client has outstanding is
 * therefore {@code min(slots, credits - 1)}: one credit is kept for the shutdown message.
 *
 * @param device      RDMA device name, or {@code null} for the first device
 * @param ibPort      port number on the device, from 1
 * @param gidIndex    GID table index; needed on RoCE ports (every port with an Ethernet link layer), -1 for none
 * @param credits     server: receive buffers posted per connection, 2..65535
 * @param slots       client: calls outstanding at most, 1..65536
 * @param maxRequest  largest request (and one-way message) in bytes; both sides must agree (the server rejects
 *                    a client asking for more)
 * @param maxResponse largest response payload in bytes
 * @param timeout     bound on the TCP handshake and on a graceful {@code close()}
 */
public record RpcOptions(String device, int ibPort, int gidIndex, int credits, int slots, int maxRequest,
                         int maxResponse, Duration timeout) {
    /** Defaults: first device, port 1, no GID, 64 credits, 64 slots, 4 KiB requests and responses, 30 s. */
    public static final RpcOptions DEFAULTS = new RpcOptions(null, 1, -1, 64, 64, 4096, 4096, Duration.ofSeconds(30));

    /** Validates the ranges. */
    public RpcOptions {
        if (ibPort < 1 || ibPort > 255) {
            throw new IllegalArgumentException("ibPort must be 1..255, got " + ibPort);
        }
        if (credits < 2 || credits > CreditReturn.MAX_PER_MESSAGE) {
            throw new IllegalArgumentException("credits must be 2.." + CreditReturn.MAX_PER_MESSAGE + " (one is kept"
                    + " for the shutdown message), got " + credits);
        }
        if (slots < 1 || slots > Immediate.MAX_SLOTS) {
            throw new IllegalArgumentException("slots must be 1.." + Immediate.MAX_SLOTS + ", got " + slots);
        }
        if (maxRequest < 1 || maxResponse < 0 || maxResponse > Integer.MAX_VALUE - 64) {
            throw new IllegalArgumentException("maxRequest must be >= 1 and maxResponse >= 0, got " + maxRequest
                    + " and " + maxResponse);
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive");
        }
    }

    /** A copy with the device name ({@code null}: the first device) changed. */
    public RpcOptions withDevice(String device) {
        return new RpcOptions(device, ibPort, gidIndex, credits, slots, maxRequest, maxResponse, timeout);
    }

    /** A copy with the port number changed. */
    public RpcOptions withIbPort(int ibPort) {
        return new RpcOptions(device, ibPort, gidIndex, credits, slots, maxRequest, maxResponse, timeout);
    }

    /** A copy with the GID index (-1: none) changed. */
    public RpcOptions withGidIndex(int gidIndex) {
        return new RpcOptions(device, ibPort, gidIndex, credits, slots, maxRequest, maxResponse, timeout);
    }

    /** A copy with the receive buffers a server posts per connection changed. */
    public RpcOptions withCredits(int credits) {
        return new RpcOptions(device, ibPort, gidIndex, credits, slots, maxRequest, maxResponse, timeout);
    }

    /** A copy with the calls a client may have outstanding changed. */
    public RpcOptions withSlots(int slots) {
        return new RpcOptions(device, ibPort, gidIndex, credits, slots, maxRequest, maxResponse, timeout);
    }

    /** A copy with the largest request changed. */
    public RpcOptions withMaxRequest(int maxRequest) {
        return new RpcOptions(device, ibPort, gidIndex, credits, slots, maxRequest, maxResponse, timeout);
    }

    /** A copy with the largest response payload changed. */
    public RpcOptions withMaxResponse(int maxResponse) {
        return new RpcOptions(device, ibPort, gidIndex, credits, slots, maxRequest, maxResponse, timeout);
    }

    /** A copy with the handshake and graceful-close bound changed. */
    public RpcOptions withTimeout(Duration timeout) {
        return new RpcOptions(device, ibPort, gidIndex, credits, slots, maxRequest, maxResponse, timeout);
    }

    /** Bytes from one response slot to the next: header plus payload, rounded up to 64 (a cache line). */
    int slotStride() {
        return (ResponseHeader.SIZE + maxResponse + 63) & ~63;
    }
}
