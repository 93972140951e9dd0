package dev.panverbs.testing;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/** Running a test's action on a thread of its own (wrong-thread and concurrent-close tests). */
public final class Threads {
    private Threads() {}

    /**
     * Runs {@code action} on a new platform thread and waits for it: what it threw, or {@code null} when it returned.
     * A new thread, not a pool's: it owns no confined arena of the test's, and no earlier test's state.
     */
    public static Throwable onAnotherThread(Runnable action) {
        try {
            CompletableFuture.runAsync(action, r -> Thread.ofPlatform().start(r)).join();
            return null;
        } catch (CompletionException e) {
            return e.getCause();
        }
    }

    /** Starts {@code action} on a new platform thread; the future completes with what it threw, or null. */
    public static CompletableFuture<Throwable> startOnAnotherThread(Runnable action) {
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> {
            try {
                action.run();
                outcome.complete(null);
            } catch (Throwable t) {
                outcome.complete(t);
            }
        });
        return outcome;
    }
}
