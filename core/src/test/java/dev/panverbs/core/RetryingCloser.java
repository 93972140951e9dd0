package dev.panverbs.core;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * The closer of the ITs' DMA-safety races (Java-only): a thread that retries a close until one succeeds, counting
 * each refusal ({@link IllegalStateException}: still named by posted work), while the test's thread posts work that
 * names what it closes.
 */
final class RetryingCloser {
    private final AtomicBoolean over = new AtomicBoolean();
    private final AtomicLong refusals = new AtomicLong();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final Thread thread;

    /** {@code close} retried from the moment {@code gate} is true (or the race is over). */
    RetryingCloser(Runnable close, BooleanSupplier gate) {
        thread = new Thread(() -> {
            try {
                while (!gate.getAsBoolean() && !over.get()) {
                    Thread.onSpinWait();
                }
                while (!over.get()) {
                    try {
                        close.run();
                        over.set(true);
                    } catch (IllegalStateException inUse) {
                        refusals.incrementAndGet();
                        Thread.onSpinWait();
                    }
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "closer");
    }

    void start() {
        thread.start();
    }

    /** Whether a close succeeded, or {@link #stop} ended the race. */
    boolean over() {
        return over.get();
    }

    long refusals() {
        return refusals.get();
    }

    /** What the closer thread threw other than a refusal; null if nothing. */
    Throwable failure() {
        return failure.get();
    }

    /** Ends the race and waits for the closer (bounded). */
    void stop() throws InterruptedException {
        over.set(true);
        thread.join(30_000);
    }
}
