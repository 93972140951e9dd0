package dev.panverbs.tools.transport;

/**
 * The peer broke the transport's protocol: a malformed handshake, more credits returned than were in use, a
 * response for a request that is not outstanding. The connection cannot continue after one. Java-only, like the
 * whole transport.
 */
public final class RpcProtocolException extends RpcException {
    private static final long serialVersionUID = 1L;

    RpcProtocolException(String message) {
        super(message);
    }
}
