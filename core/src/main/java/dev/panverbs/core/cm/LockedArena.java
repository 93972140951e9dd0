package dev.panverbs.core.cm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A confined arena for one native call that holds a lock until it is closed, so that
 * {@code try (Arena arena = LockedArena.open(lock)) { ... }} both frees the call's arguments and releases the lock
 * (control path: one object more per call).
 */
final class LockedArena implements Arena {
    private final Arena confined = Arena.ofConfined();
    private final ReentrantLock lock;

    private LockedArena(ReentrantLock lock) {
        this.lock = lock;
    }

    /** Takes {@code lock}, then opens the arena. */
    static Arena open(ReentrantLock lock) {
        lock.lock();
        try {
            return new LockedArena(lock);
        } catch (RuntimeException | Error e) {
            lock.unlock();
            throw e;
        }
    }

    @Override
    public MemorySegment allocate(long byteSize, long byteAlignment) {
        return confined.allocate(byteSize, byteAlignment);
    }

    @Override
    public MemorySegment.Scope scope() {
        return confined.scope();
    }

    @Override
    public void close() {
        try {
            confined.close();
        } finally {
            lock.unlock();
        }
    }
}
