package dev.panverbs.core;

/**
 * The device, its provider library or the kernel does not support a verb or one of its options. The one
 * exception type for every way a capability can be missing, each naming it in {@link #capability()}:
 * <ul>
 *   <li>up front, before any native call, when the device attributes show the capability is absent or the
 *       object was not created with it (an operation not in {@code sendOps}, a completion field not in
 *       {@code wcFlags}); {@link #errno()} is then 0;</li>
 *   <li>when a verb fails with {@code EOPNOTSUPP} or {@code EPROTONOSUPPORT}, which rdma-core returns from
 *       its dummy ops for anything the provider lacks (promoted as rust-ibverbs' {@code Error::os} does);</li>
 *   <li>when the provider left NULL the function pointer a verb calls through (C would jump to address 0);
 *       {@link #errno()} is 0 and the capability names the op, e.g. {@code provider op ibv_qp_ex.wr_send}.</li>
 * </ul>
 * Catch it to fall back to another way of doing the same thing; tests skip on it.
 */
public class UnsupportedVerbException extends VerbsException {
    private static final long serialVersionUID = 1L;

    private final String capability;

    /**
     * A verb that failed with {@code EOPNOTSUPP}/{@code EPROTONOSUPPORT}.
     *
     * @param verb       the C function that failed, with its context
     * @param errno      the errno value
     * @param errnoName  its symbolic name
     * @param strerror   {@code strerror(errno)}
     * @param hint       what the user can do, or {@code null}
     * @param capability the missing capability, e.g. {@code "DMA-BUF memory registration"}
     */
    public UnsupportedVerbException(String verb, int errno, String errnoName, String strerror, String hint,
                                    String capability) {
        super(verb, errno, errnoName, strerror, capabilityHint(capability, hint));
        this.capability = capability;
    }

    /** A verb refused before the native call because the device lacks {@code capability}. */
    public UnsupportedVerbException(String verb, String message, String capability) {
        super(verb, "unsupported: " + capability + "; " + message);
        this.capability = capability;
    }

    private static String capabilityHint(String capability, String hint) {
        String missing = "the device, its provider or the kernel lacks " + capability;
        return hint == null || hint.isEmpty() ? missing : missing + "; " + hint;
    }

    /** The missing capability, e.g. {@code "DMA-BUF memory registration"} or {@code "memory windows"}. */
    public String capability() {
        return capability;
    }
}
