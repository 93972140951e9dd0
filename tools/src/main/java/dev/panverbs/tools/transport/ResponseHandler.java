package dev.panverbs.tools.transport;

import java.lang.foreign.MemorySegment;

/**
 * Receives the outcome of one {@link RpcClient#call}. Called on the client's progress thread: keep it short,
 * and never block in it (a blocking {@code call} from here would wait for credits that only this thread can
 * deliver; {@code call} detects that and throws). Java-only, like the whole transport.
 */
@FunctionalInterface
public interface ResponseHandler {
    /**
     * The response arrived. {@code response} is a read-only view of the registered response slot, valid only
     * until this method returns (the slot is then reused): copy what you keep.
     */
    void onResponse(MemorySegment response);

    /** The call failed: the server's handler threw, or the connection broke or was closed first. */
    default void onError(RpcException error) {
        // a handler that does not override this loses the error; RpcClient logs nothing on its own
    }
}
