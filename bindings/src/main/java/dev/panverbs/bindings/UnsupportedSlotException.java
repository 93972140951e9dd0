package dev.panverbs.bindings;

/**
 * A provider left NULL the function pointer a verb calls through, where C would jump to address 0: an
 * {@code ibv_context.ops} or {@code verbs_context} op, an {@code ibv_qp_ex} {@code wr_*} builder or an
 * {@code ibv_cq_ex} reader not requested at creation, an {@code mlx5dv_qp_ex} builder, or an op of a context that is
 * not an extended {@code verbs_context} ({@code abi_compat}). The one exception type for a missing provider slot in
 * these bindings; a verb whose C wrapper answers a missing op with EOPNOTSUPP instead returns or stores that errno, as
 * C does.
 *
 * <p>It is created only through {@link ProviderSlots#missing}, which lets core substitute its public
 * {@code UnsupportedVerbException} (with this exception as the cause).
 */
public final class UnsupportedSlotException extends UnsupportedOperationException {
    private static final long serialVersionUID = 1L;

    private final String verb;
    private final String slot;
    private final String reason;

    /**
     * @param verb   the C verb that calls through the slot, e.g. {@code ibv_wr_send}
     * @param slot   the slot as {@code struct.field}, e.g. {@code ibv_qp_ex.wr_send}
     * @param reason why the provider left it NULL, e.g. what the object was not created with
     */
    UnsupportedSlotException(String verb, String slot, String reason) {
        super(verb + ": " + slot + " is NULL: " + reason);
        this.verb = verb;
        this.slot = slot;
        this.reason = reason;
    }

    /** The C verb that calls through the slot, e.g. {@code ibv_wr_send}. */
    public String verb() {
        return verb;
    }

    /** The slot as {@code struct.field}, e.g. {@code ibv_qp_ex.wr_send} or {@code ibv_context.ops.post_send}. */
    public String slot() {
        return slot;
    }

    /** Why the provider left it NULL, e.g. {@code the QP was created without IBV_QP_EX_WITH_SEND in send_ops_flags}. */
    public String reason() {
        return reason;
    }
}
