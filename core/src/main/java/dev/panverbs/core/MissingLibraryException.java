package dev.panverbs.core;

/**
 * A native library of rdma-core that panverbs calls cannot be loaded ({@code dlopen(3)} of {@code libibverbs.so.1}
 * fails: rdma-core is not installed; {@code libmlx5.so.1}: the mlx5 provider is not), or lacks a function (rdma-core older than 44). Thrown
 * by the first call that needs the library, {@link Device#list()} for libibverbs; {@link #hint()} names the package
 * to install or upgrade, e.g. {@code install it: Debian/Ubuntu 'apt-get install libibverbs1 ibverbs-providers',
 * RHEL/Fedora 'dnf install libibverbs'}. {@link #errno()} is 0: no verb ran.
 *
 * <p>Catch it to run without RDMA (fall back to another transport); it is not a sign of a missing device, which
 * {@link Device#list()} reports as an empty list.
 */
public class MissingLibraryException extends VerbsException {
    private static final long serialVersionUID = 1L;

    private final String library;

    /**
     * @param verb    the C function that needed the library, with its context
     * @param library the soname or path that could not be loaded, e.g. {@code libibverbs.so.1}
     * @param problem what is missing, e.g. {@code libibverbs.so.1 cannot be loaded (<the dynamic linker's reason>)}
     * @param hint    what to install or upgrade
     */
    public MissingLibraryException(String verb, String library, String problem, String hint) {
        super(verb, problem, hint);
        this.library = library;
    }

    /** The soname (or the path given in {@code -Ddev.panverbs.bindings.libibverbs}) that is missing. */
    public String library() {
        return library;
    }
}
