package dev.panverbs.core;

import dev.panverbs.bindings.Errno;

/**
 * {@code ibv_post_send(3)} or {@code ibv_post_recv(3)} refused a work request of a chain. The WRs before
 * {@link #badWrIndex()} were posted (and will complete); the refused one and those after it were not.
 */
public class PostException extends VerbsException {
    private static final long serialVersionUID = 1L;

    private final int badWrIndex;

    PostException(String verb, int errno, String hint, int badWrIndex) {
        super(verb, errno, Errno.name(errno), Errno.strerror(errno), hint);
        this.badWrIndex = badWrIndex;
    }

    /** The index, in the posted chain, of the first WR the provider refused ({@code *bad_wr}). */
    public int badWrIndex() {
        return badWrIndex;
    }

    static PostException of(String verb, Object qp, int errno, int badIndex, Class<?> opcodeType, int opcode) {
        String call = verb + "(" + qp + ", wr[" + badIndex + "]"
                + (opcodeType != null ? ", opcode=" + opcodeName(opcode) : "") + ")";
        String hint = errno == dev.panverbs.bindings.verbs.verbs_h.EINVAL()
                ? "the WR is malformed for this QP or the QP is not in a state that accepts it (query its state: "
                        + "sends need RTS, receives at least INIT)"
                : null;
        return new PostException(call, errno, hint, badIndex);
    }

    /**
     * A post refused in Java because the QP's state forbids it (IB spec vol. 1, 10.3.1: an immediate error, which C
     * providers report as {@code EINVAL}); nothing of the chain reached the provider.
     */
    static PostException notReady(String verb, Object qp, QueuePairState state, int index, Class<?> opcodeType,
                                  int opcode) {
        String call = verb + "(" + qp + (verb.equals("ibv_wr_start") ? "" : ", wr[" + index + "]")
                + (opcodeType != null ? ", opcode=" + opcodeName(opcode) : "") + ")";
        boolean send = !verb.equals("ibv_post_recv");
        String hint = "refused before the provider: the QP is in " + state + ", and its "
                + (send ? "send queue accepts work requests from RTS on" : "receive queue accepts work requests from "
                + "INIT on") + " (IB spec 10.3.1: posting in " + (send ? "RESET, INIT or RTR" : "RESET")
                + " is an immediate error); move it with " + (send ? "toInit, toRtr and toRts" : "toInit") + " first";
        return new PostException(call, dev.panverbs.bindings.verbs.verbs_h.EINVAL(), hint, index);
    }

    private static String opcodeName(int value) {
        for (WorkRequestOpcode o : WorkRequestOpcode.values()) {
            if (o.value() == value) {
                return o.name();
            }
        }
        return String.valueOf(value);
    }
}
