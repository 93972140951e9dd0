package dev.panverbs.tools.transport;

/**
 * A call failed: the server's handler threw ({@link #isRemote()}), the connection broke, or the client was
 * closed before the response arrived. Delivered to {@link ResponseHandler#onError}, or thrown by the call.
 * Java-only, like the whole transport.
 */
public class RpcException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final boolean remote;

    RpcException(String message) {
        this(message, false, null);
    }

    RpcException(String message, Throwable cause) {
        this(message, false, cause);
    }

    RpcException(String message, boolean remote, Throwable cause) {
        super(message, cause);
        this.remote = remote;
    }

    /** Whether the server's handler failed (the connection is fine), as opposed to a transport failure. */
    public boolean isRemote() {
        return remote;
    }
}
