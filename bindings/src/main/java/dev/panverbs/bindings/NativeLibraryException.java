package dev.panverbs.bindings;

/**
 * A native library of rdma-core ({@code libibverbs.so.1}, {@code libmlx5.so.1}) cannot be loaded, or lacks a
 * function (rdma-core older than 44). The message is {@link #problem()}{@code "; "}{@link #hint()}, the hint naming
 * the package to install or upgrade. Core reports it as its own public exception type.
 */
public final class NativeLibraryException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String library;
    private final String problem;
    private final String hint;

    /**
     * @param library the soname (or path) that was loaded, e.g. {@code libibverbs.so.1}
     * @param problem what is missing, e.g. {@code libibverbs.so.1 cannot be loaded (<dlopen's reason>)}
     * @param hint    what to install or upgrade
     */
    public NativeLibraryException(String library, String problem, String hint) {
        super(problem + "; " + hint);
        this.library = library;
        this.problem = problem;
        this.hint = hint;
    }

    /** The soname (or path) of the library, e.g. {@code libibverbs.so.1}. */
    public String library() {
        return library;
    }

    /** What is missing: the library, or one of its functions. */
    public String problem() {
        return problem;
    }

    /** What to install or upgrade, e.g. {@code install it: Debian/Ubuntu 'apt-get install libibverbs1 ...'}. */
    public String hint() {
        return hint;
    }
}
