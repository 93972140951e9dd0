package dev.panverbs.tools.perftest;

import dev.panverbs.core.CompletionChannel;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.VerbsException;
import java.util.concurrent.atomic.AtomicInteger;

/** A CQ polled through the verbs ({@code ibv_poll_cq}) into preallocated arrays of 1 and 16 work completions. */
final class CoreCq extends PolledCq {
    private final CompletionQueue cq;

    /**
     * Polls of the poll downcall this JVM still owes the JDK: {@code java.lang.invoke.MethodHandle}'s
     * {@code CUSTOMIZE_THRESHOLD} (127) invocations from interpreted or C1 code, then it customizes the handle once
     * (spins a LambdaForm class: ~64 KiB on the polling thread, at the 128th {@code ibv_poll_cq}). The JIT warm-up
     * polls that often only when the timing says so (a batch per poll with moderation, one poll per event with -e),
     * and runs without it (-D, -R, --jit_warmup=0) poll first in the timed section.
     */
    private static final AtomicInteger UNPRIMED_POLLS = new AtomicInteger(128);

    CoreCq(CompletionQueue cq, CompletionChannel channel) {
        super(channel);
        this.cq = cq;
        primePoll();
    }

    /**
     * Pays the handle's customization here, where the CQ is new and no QP is connected to it: these polls find
     * nothing and consume nothing. Once per JVM; every poll goes through the same {@code static final} handle.
     */
    private void primePoll() {
        while (UNPRIMED_POLLS.get() > 0 && UNPRIMED_POLLS.getAndDecrement() > 0) {
            if (poll(BATCH) != 0) {
                return; // an error: leave the rest to the run (a CQ without a QP holds no completion)
            }
        }
    }

    @Override
    public int poll(int max) {
        try {
            return cq.poll(arrayFor(max));
        } catch (VerbsException e) {
            return -Math.max(1, e.errno());
        }
    }

    @Override
    public void requestNotify() {
        cq.reqNotify(false);
    }

    @Override
    void rearm(CompletionQueue got) {
        got.reqNotify(false);
    }
}
