package dev.panverbs.core;

/**
 * A verb failed. Carries the C verb's name ({@code ibv_reg_mr}), the errno value and its symbolic name
 * ({@code ENOMEM}), the call's context and, where one exists, a hint on what to do about it.
 *
 * <p>Example message: {@code ibv_reg_mr(length=1 GiB, access=[LOCAL_WRITE, REMOTE_WRITE]) failed: ENOMEM
 * (Cannot allocate memory); RLIMIT_MEMLOCK is 64 KiB, raise ulimit -l}.
 */
public class VerbsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String verb;
    private final int errno;
    private final String errnoName;
    private final String hint;

    /**
     * @param verb      the C function that failed, with its context, e.g. {@code ibv_query_gid(port=1, index=3)}
     * @param errno     the errno value (0 if the verb reports no errno)
     * @param errnoName the symbolic errno name, e.g. {@code EINVAL}
     * @param strerror  {@code strerror(errno)}
     * @param hint      what the user can do, or {@code null}
     */
    public VerbsException(String verb, int errno, String errnoName, String strerror, String hint) {
        super(format(verb, errnoName, strerror, hint));
        this.verb = verb;
        this.errno = errno;
        this.errnoName = errnoName;
        this.hint = hint;
    }

    /** A failure detected in Java before any native call (errno 0). */
    public VerbsException(String verb, String message) {
        super(verb + ": " + message);
        this.verb = verb;
        this.errno = 0;
        this.errnoName = "";
        this.hint = null;
    }

    /**
     * A failure outside any verb's native call (errno 0) that has an actionable hint: the message is
     * {@code verb: message; hint}.
     */
    protected VerbsException(String verb, String message, String hint) {
        super(verb + ": " + message + (hint == null || hint.isEmpty() ? "" : "; " + hint));
        this.verb = verb;
        this.errno = 0;
        this.errnoName = "";
        this.hint = hint;
    }

    private static String format(String verb, String errnoName, String strerror, String hint) {
        StringBuilder sb = new StringBuilder(verb).append(" failed: ").append(errnoName);
        if (strerror != null && !strerror.isEmpty()) {
            sb.append(" (").append(strerror).append(')');
        }
        if (hint != null && !hint.isEmpty()) {
            sb.append("; ").append(hint);
        }
        return sb.toString();
    }

    /** The failing C verb with its call context, as it appears at the start of the message. */
    public String verb() { return verb; }

    /** The errno value, or 0 when the failure was detected before calling into C. */
    public int errno() { return errno; }

    /** The symbolic errno name such as {@code EINVAL}, or the empty string. */
    public String errnoName() { return errnoName; }

    /** The actionable hint, or {@code null}. */
    public String hint() { return hint; }
}
