package dev.panverbs.core;

/**
 * The device, its provider library or the kernel does not support a verb or one of its options. Thrown
 * in two cases, both naming the missing {@link #capability()}:
 * <ul>
 *   <li>up front, before any native call, when the device attributes show the capability is absent
 *       ({@link #errno()} is then 0);</li>
 *   <li>when a verb fails with {@code EOPNOTSUPP} or {@code EPROTONOSUPPORT}, which rdma-core returns from
 *       its dummy ops for anything the provider lacks (promoted as rust-ibverbs' {@code Error::os} does).</li>
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
