package dev.panverbs.bindings;

/**
 * A native library of rdma-core ({@code libibverbs.so.1}, {@code libmlx5.so.1}) or one of its symbols is
 * missing. The message names the package that provides it.
 */
public final class NativeLibraryException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NativeLibraryException(String message) {
        super(message);
    }
}
