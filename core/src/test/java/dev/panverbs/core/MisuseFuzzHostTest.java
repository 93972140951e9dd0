package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A seeded random misuse fuzzer over the library's real objects on the fake provider ({@link FakeProvider}): for each
 * seed of a fixed list, a few thousand operations drawn from {@link MisuseFuzzOps} (closes in any order, use after
 * close, keys of closed regions or of another PD, SGEs out of range or overflowing, inline data of closed or confined
 * arenas, arenas closed under in-flight WRs, batch protocol out of order, window binds, polls into small arrays, calls
 * from another thread). Every operation either succeeds or throws what the API documents, thrown by panverbs itself
 * (a {@link VerbsException} naming its errno, {@link IllegalStateException}, {@link IllegalArgumentException},
 * {@link WrongThreadException}, or {@link IndexOutOfBoundsException} for a range), with a message that names the
 * verb; never an exception escaping from the JDK or the FFM layer, never a hang (a watchdog bounds each step). The
 * DMA-safety oracle: no region is deregistered while a live QP's outstanding WR names it, except by the tie of its
 * arena, which closes. At the end of a seed, once the QPs are closed, every window and region closes: nothing stays
 * pinned. A failure prints the seed and the trace of operations; {@code -Dpanverbs.misuseFuzzSeeds=1,2} replays seeds,
 * {@code -Dpanverbs.misuseFuzzTrace=true} prints every step as it runs (the last lines before a JVM crash), and
 * {@code -Dpanverbs.misuseFuzzSurvey=true} lists each kind of unfit exception once instead of failing at the first.
 * The fixture cannot close the context or a CQ, nor re-register (those verbs would reach libibverbs with fake objects),
 * and the SRQ has no fake: those are left to the ITs on rxe.
 */
class MisuseFuzzHostTest {
    private static final long[] SEEDS = seeds(System.getProperty("panverbs.misuseFuzzSeeds",
            "1,2,3,42,1337,0xC0FFEE,20260101,77,31337,99"));
    private static final int STEPS = Integer.getInteger("panverbs.misuseFuzzSteps", 2500);
    private static final long STEP_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(20);

    /** Reports each kind of unfit exception once and goes on, instead of failing at the first (exploring). */
    private static final boolean SURVEY = Boolean.getBoolean("panverbs.misuseFuzzSurvey");
    private static final java.util.Set<String> SURVEYED = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private static FakeProvider fake;

    @BeforeAll
    static void openFake() {
        fake = FakeProvider.forTests();
    }

    private static long[] seeds(String list) {
        return java.util.Arrays.stream(list.split(",")).map(String::trim).mapToLong(Long::decode).toArray();
    }

    @Test
    void randomMisuseThrowsOnlyDocumentedExceptionsNamingTheVerbAndNeverFreesMemoryUnderTheNic() throws Exception {
        for (long seed : SEEDS) {
            runSeed(seed);
        }
    }

    /** Why {@code t} is not an acceptable answer to a misuse, or {@code null}. */
    static String misfit(Throwable t, boolean passedNull) {
        if (passedNull && t instanceof NullPointerException) {
            return null; // a null argument: Java's convention
        }
        boolean documented = t instanceof VerbsException || t instanceof IllegalStateException
                || t instanceof IllegalArgumentException || t instanceof WrongThreadException
                || t.getClass() == IndexOutOfBoundsException.class; // not the JVM's ArrayIndexOutOfBounds

        if (!documented) {
            return "an undocumented " + t.getClass().getName();
        }
        StackTraceElement[] st = t.getStackTrace();
        if (st.length == 0 || !st[0].getClassName().startsWith("dev.panverbs.")) {
            return "a " + t.getClass().getSimpleName() + " escaping from " + (st.length == 0 ? "?" : st[0])
                    + " instead of one of panverbs";
        }
        String m = t.getMessage();
        if (m == null || m.isBlank()) {
            return "no message";
        }
        if (t instanceof VerbsException v && v.errnoName() != null && !m.contains(v.errnoName())) {
            return "a message without its errno name " + v.errnoName();
        }
        // fake_* and "create X" (a parent closed at adoption): the fixture's stand-ins for the creation verbs
        if (!m.contains("ibv_") && !m.contains("fake_") && !m.contains("cannot call create ")
                && !m.contains("WorkCompletions.") && !m.contains("MemoryWindow.completed")
                && !(passedNull && m.contains("null"))) {
            return "a message that names no verb";
        }
        return null;
    }

    private static void runSeed(long seed) throws Exception {
        ExecutorService other = Executors.newSingleThreadExecutor(r -> Thread.ofPlatform().daemon()
                .name("fuzz-other").unstarted(r));
        AtomicReference<MisuseFuzzOps> world = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[] stepStart = {System.nanoTime()};
        int[] step = {0};
        boolean verbose = Boolean.getBoolean("panverbs.misuseFuzzTrace");
        System.out.println("MisuseFuzzHostTest: seed " + seed + ", " + STEPS + " steps");
        Thread worker = Thread.ofPlatform().daemon().name("fuzz-" + seed).start(() -> {
            try {
                MisuseFuzzOps ops = new MisuseFuzzOps(fake, seed, other);
                world.set(ops);
                for (int i = 0; i < STEPS; i++) {
                    synchronized (step) {
                        step[0] = i;
                        stepStart[0] = System.nanoTime();
                    }
                    int before = ops.trace.size();
                    ops.stepIndex = i;
                    try {
                        ops.step();
                        ops.stats.merge(kind(ops.trace, before) + ": ok", 1, Integer::sum);
                    } catch (Throwable t) {
                        ops.stats.merge(kind(ops.trace, before) + ": " + t.getClass().getSimpleName(), 1,
                                Integer::sum);
                        String why = misfit(t, ops.passedNull);
                        if (why != null && SURVEY) {
                            StackTraceElement at = t.getStackTrace().length == 0 ? null : t.getStackTrace()[0];
                            if (SURVEYED.add(why + " @ " + at)) {
                                System.out.println("SURVEY " + why + " @ " + at + ": " + t);
                                if (!at.getClassName().startsWith("dev.panverbs.")) {
                                    t.printStackTrace(System.out);
                                    ops.trace.subList(Math.max(0, ops.trace.size() - 6), ops.trace.size())
                                            .forEach(System.out::println);
                                }
                            }
                        } else if (why != null) {
                            throw new AssertionError("step " + i + " threw " + why + ": " + t, t);
                        }
                        ops.log("-> " + t.getClass().getSimpleName() + ": " + t.getMessage());
                    }
                    if (verbose) {
                        ops.trace.subList(before, ops.trace.size()).forEach(System.out::println);
                    }
                    if (!ops.violations.isEmpty()) {
                        throw new AssertionError("DMA safety: " + ops.violations);
                    }
                }
                synchronized (step) {
                    step[0] = STEPS;
                    stepStart[0] = System.nanoTime();
                }
                teardown(ops);
                System.out.println("  " + ops.stats);
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        while (worker.isAlive()) {
            worker.join(200);
            long started;
            synchronized (step) {
                started = stepStart[0];
            }
            if (worker.isAlive() && System.nanoTime() - started > STEP_TIMEOUT_NS) {
                StringBuilder stack = new StringBuilder();
                for (StackTraceElement e : worker.getStackTrace()) {
                    stack.append("\n\tat ").append(e);
                }
                throw new AssertionError(report(seed, world.get(), "hang: step " + step[0] + " runs for more than "
                        + TimeUnit.NANOSECONDS.toSeconds(STEP_TIMEOUT_NS) + " s; the fuzz thread is" + stack));
            }
        }
        other.shutdownNow();
        if (failure.get() != null) {
            throw new AssertionError(report(seed, world.get(), String.valueOf(failure.get().getMessage())),
                    failure.get());
        }
    }

    /**
     * Ends the seed's world: aborts the batches, ends a poll pass, drains the CQs, closes the QPs; then every window
     * and region must close (nothing references them any more) and the DMA oracle must have stayed quiet.
     */
    private static void teardown(MisuseFuzzOps ops) {
        ops.log("teardown");
        ops.mws.removeIf(MemoryWindow::isClosed); // completed() on a closed window throws (documented)
        for (PostBatch b : ops.batches.values()) {
            b.close();
        }
        try {
            ops.ecq.endPoll();
        } catch (IllegalStateException noPass) { // none open
        }
        WorkCompletions w = WorkCompletions.allocate(64);
        for (CompletionQueue cq : ops.cqs) {
            while (cq.poll(w) > 0) {
                for (int i = 0; i < w.count(); i++) {
                    for (MemoryWindow mw : ops.mws) {
                        mw.completed(w.get(i));
                    }
                }
            }
        }
        ops.qps.forEach(QueuePair::close);
        ops.mws.forEach(MemoryWindow::close);
        ops.mrs.forEach(MemoryRegion::close);
        ops.ahs.forEach(AddressHandle::close);
        ops.pds.stream().filter(pd -> pd != ops.defaultPd).forEach(ProtectionDomain::close);
        ops.arenas.stream().filter(a -> a.scope().isAlive()).forEach(Arena::close);
        assertThat(ops.mrs).allSatisfy(mr -> assertThat(mr.isOpen()).isFalse());
        assertThat(ops.violations).as("DMA safety").isEmpty();
    }

    /** A trace line's operation, without its objects: "chain send", "close", "batch submit", ... */
    private static String kind(List<String> trace, int at) {
        if (at >= trace.size()) {
            return "nothing to do";
        }
        String line = trace.get(at);
        String op = line.substring(line.indexOf(':') + 2);
        int cut = op.length();
        for (String stop : new String[] {" on ", " Q", " M", " P", " A", " E", " C", " x", " (", " in ", " jdk",
                " sendWr", "(", " 0", " 1", " 2", " 3", " 4", " 5", " 6", " 7", " 8", " 9"}) {
            int i = op.indexOf(stop);
            if (i > 0) {
                cut = Math.min(cut, i);
            }
        }
        return op.substring(0, cut);
    }

    private static String report(long seed, MisuseFuzzOps ops, String what) {
        List<String> trace = ops == null ? List.of() : ops.trace;
        int from = Math.max(0, trace.size() - 80);
        return "seed " + seed + " (replay: -Dpanverbs.misuseFuzzSeeds=" + seed + "): " + what + "\nlast operations:\n  "
                + String.join("\n  ", trace.subList(from, trace.size()));
    }
}
