package dev.panverbs.core.internal;

import java.util.Arrays;

/**
 * Closes several resources, continuing past failures: the first failure is rethrown at the end with the
 * others attached as suppressed exceptions, as Agrona's {@code CloseHelper.closeAll} does. A helper that
 * stopped at the first failure would leak everything after it (Infinileap's {@code ResourcePool}). Java-only.
 */
public final class CloseHelper {

    private CloseHelper() {}

    /** Closes each non-null element in order; see the class comment for failures. */
    public static void closeAll(AutoCloseable... closeables) {
        closeAll(Arrays.asList(closeables));
    }

    /**
     * Closes each non-null element in iteration order; see the class comment for failures. A checked
     * exception thrown by a {@code close()} is rethrown unchanged (undeclared), as Agrona's
     * {@code LangUtil.rethrowUnchecked} does, rather than wrapped.
     */
    public static void closeAll(Iterable<? extends AutoCloseable> closeables) {
        Throwable failure = null;
        for (AutoCloseable c : closeables) {
            if (c == null) {
                continue;
            }
            try {
                c.close();
            } catch (Exception | Error e) {
                failure = accumulate(failure, e);
            }
        }
        if (failure != null) {
            rethrow(failure);
        }
    }

    /** {@code first} with {@code next} added as suppressed, or {@code next} if there is no first yet. */
    static Throwable accumulate(Throwable first, Throwable next) {
        if (first == null) {
            return next;
        }
        if (first != next) {
            first.addSuppressed(next);
        }
        return first;
    }

    static void rethrow(Throwable t) {
        CloseHelper.<RuntimeException>sneaky(t);
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> void sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
