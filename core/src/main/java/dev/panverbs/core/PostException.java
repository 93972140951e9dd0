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

    static PostException of(String verb, QueuePair qp, int errno, int badIndex, Class<?> opcodeType, int opcode) {
        String call = verb + "(" + qp + ", wr[" + badIndex + "]"
                + (opcodeType != null ? ", opcode=" + opcodeName(opcode) : "") + ")";
        String hint = errno == dev.panverbs.bindings.verbs.verbs_h.EINVAL()
                ? "the WR is malformed for this QP or the QP is not in a state that accepts it (query its state: "
                        + "sends need RTS, receives at least INIT)"
                : null;
        return new PostException(call, errno, hint, badIndex);
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
