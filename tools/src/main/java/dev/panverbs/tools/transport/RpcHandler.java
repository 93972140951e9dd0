package dev.panverbs.tools.transport;

import java.lang.foreign.MemorySegment;

/**
 * The server's application logic, called on the server's event-loop thread for each message in arrival order
 * (per connection). It must not block: every connection of the server waits meanwhile. Java-only, like the whole
 * transport.
 */
@FunctionalInterface
public interface RpcHandler {
    /**
     * Handles one request and writes the response.
     *
     * @param request  the request bytes: a read-only view of the registered receive buffer, valid only during
     *                 the call (the buffer is re-posted afterwards)
     * @param response the registered staging buffer of the response, {@code maxResponse} bytes: write the
     *                 payload at offset 0; it is sent with one RDMA WRITE WITH IMMEDIATE, no copy
     * @return the response length, {@code 0..response.byteSize()}
     * @throws Exception to fail the call: the client's {@link ResponseHandler#onError} receives a remote
     *                   {@link RpcException} with this exception's message
     */
    int handle(MemorySegment request, MemorySegment response) throws Exception;

    /**
     * Handles a one-way message ({@link RpcClient#send}); no response goes back. The default ignores it.
     *
     * @param message a read-only view of the receive buffer, valid only during the call
     */
    default void onMessage(MemorySegment message) throws Exception {
        // one-way messages are optional for a service
    }

    /**
     * A connection ended: {@code cause} is {@code null} after the client's orderly shutdown, else what broke
     * it (a failed work completion, a protocol violation). Called on the event-loop thread.
     *
     * @param peer the client's TCP address
     */
    default void onDisconnect(String peer, RpcException cause) {
        // nothing to do by default
    }
}
