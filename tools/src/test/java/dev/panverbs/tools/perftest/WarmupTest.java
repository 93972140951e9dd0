package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The JIT warm-up ({@link Warmup}) on the simulated engine: it runs a private pair before the timed section, after
 * the server listens and after the client connects (so the peer waits in the exchange, never in connect), with a
 * copy of the real run's parameters; --jit_warmup=0 and -D runs skip it. (What it buys is measured on rxe by
 * perf/rxe-compare, not here.)
 */
class WarmupTest {
    /** What the exchange's TCP port looked like each time a device was opened (the first is the run's own). */
    private static final class RecordingEngine implements VerbsEngine {
        final SimulatedEngine sim = new SimulatedEngine("sim0");
        final int port;
        final List<String> atOpen = new CopyOnWriteArrayList<>();

        RecordingEngine(int port) {
            this.port = port;
        }

        @Override
        public List<String> deviceNames() {
            return sim.deviceNames();
        }

        @Override
        public Device open(String name) {
            atOpen.add(tcpStates(port));
            return sim.open(name);
        }
    }

    /** "L" when something listens on {@code port}, "E" per established connection to or from it (/proc/net/tcp). */
    static String tcpStates(int port) {
        String hex = String.format(Locale.ROOT, ":%04X ", port);
        StringBuilder s = new StringBuilder();
        for (String f : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            try {
                for (String line : Files.readAllLines(Path.of(f))) {
                    String[] c = line.trim().split("\\s+");
                    if (c.length < 4 || !(c[1] + " " + c[2] + " ").contains(hex)) {
                        continue;
                    }
                    if (c[3].equals("0A")) {
                        s.append('L');
                    } else if (c[3].equals("01")) {
                        s.append('E');
                    }
                }
            } catch (IOException e) {
                // no such table (no IPv6): nothing there
            }
        }
        return s.toString();
    }

    record Run(int rc, String out, String err) { }

    private static Run run(PerftestTest test, List<String> args, VerbsEngine engine) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int rc;
        try (PrintStream out = new PrintStream(o, true, StandardCharsets.UTF_8);
             PrintStream err = new PrintStream(e, true, StandardCharsets.UTF_8)) {
            rc = PerftestMain.run(test, test.programName(), args, out, err, () -> engine);
        }
        return new Run(rc, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @BeforeEach
    void forgetEarlierWarmups() {
        Warmup.forget();
    }

    /** A server and a client on the simulated engine, each with its own warm-up option; returns both engines. */
    private static RecordingEngine[] pair(String serverWarmup, String clientWarmup, Run[] runs) throws Exception {
        int port = freePort();
        RecordingEngine serverEngine = new RecordingEngine(port);
        RecordingEngine clientEngine = new RecordingEngine(port);
        List<String> common = List.of("-s", "65536", "-n", "20", "--debug", "--timeout=30", "-p",
                Integer.toString(port));
        CompletableFuture<Run> server = CompletableFuture.supplyAsync(
                () -> run(PerftestTest.WRITE_LAT, ItSupport.concat(common, serverWarmup), serverEngine));
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!tcpStates(port).contains("L") && System.nanoTime() < end) {
            Thread.sleep(10);
        }
        runs[1] = run(PerftestTest.WRITE_LAT, ItSupport.concat(common, clientWarmup, "127.0.0.1"), clientEngine);
        runs[0] = server.get(60, TimeUnit.SECONDS);
        assertThat(runs[1].rc()).as(runs[1].err()).isZero();
        assertThat(runs[0].rc()).as(runs[0].err()).isZero();
        // the measured run keeps its own -n and -s
        assertThat(runs[1].out()).containsPattern("\\n 65536 +20 ");
        return new RecordingEngine[] {serverEngine, clientEngine};
    }

    @Test
    void theServerWarmsUpWhileListeningBeforeItAccepts() throws Exception {
        Run[] runs = new Run[2];
        RecordingEngine[] e = pair("--jit_warmup=300", "--jit_warmup=0", runs);
        // the run's own device, then the pair's two sides, opened while the port listened
        assertThat(e[0].atOpen).hasSize(3);
        assertThat(e[0].atOpen.subList(1, 3)).allSatisfy(s -> assertThat(s).contains("L"));
        assertThat(e[1].atOpen).hasSize(1);
        // 300 iterations of at most 4 KiB
        assertThat(runs[0].err()).contains(" JIT warm-up: 300 iterations of 4096 B in ");
        assertThat(runs[1].err()).doesNotContain("JIT warm-up");
    }

    @Test
    void theClientWarmsUpOnceConnectedBeforeItsFirstMessage() throws Exception {
        Run[] runs = new Run[2];
        RecordingEngine[] e = pair("--jit_warmup=0", "--jit_warmup=300", runs);
        assertThat(e[0].atOpen).hasSize(1);
        assertThat(e[1].atOpen).hasSize(3);
        assertThat(e[1].atOpen.get(0)).doesNotContain("E");
        assertThat(e[1].atOpen.subList(1, 3)).allSatisfy(s -> assertThat(s).contains("E"));
        assertThat(runs[1].err()).contains(" JIT warm-up: 300 iterations of 4096 B in ");
    }

    @Test
    void oneWarmupPerKindOfRunInAProcess() {
        RecordingEngine engine = new RecordingEngine(1);
        List<String> args = List.of("--loopback", "--jit_warmup=100", "--debug", "--timeout=30", "-n", "20");
        assertThat(run(PerftestTest.WRITE_BW, args, engine).err()).contains(" JIT warm-up: 100 iterations");
        assertThat(run(PerftestTest.WRITE_BW, args, engine).err())
                .contains(" JIT warm-up: this process ran one for the same kind of run already");
        assertThat(engine.atOpen).hasSize(6); // 2 + 2, then the second run's pair only
        assertThat(run(PerftestTest.WRITE_BW, ItSupport.concat(args, "-c", "UC"), engine).err())
                .contains(" JIT warm-up: 100 iterations");
    }

    @Test
    void loopbackWarmsUpOnceBeforeThePair() {
        RecordingEngine engine = new RecordingEngine(1);
        Run r = run(PerftestTest.SEND_BW, List.of("--loopback", "--jit_warmup=200", "--debug", "--timeout=30",
                "-n", "50"), engine);
        assertThat(r.rc()).as(r.err()).isZero();
        assertThat(engine.atOpen).hasSize(4); // the warm-up pair, then the measured pair
        assertThat(r.err()).containsOnlyOnce(" JIT warm-up: 200 iterations of 4096 B in "); // 64 KiB capped
        assertThat(r.out()).containsPattern("\\n \\d+ +50 ");
        // the client (it times a BW run) let the compiler drain before its timed section, within the limit
        java.util.regex.Matcher m = java.util.regex.Pattern
                .compile(" JIT: waited (\\d+) ms for the compiler before the timed section").matcher(r.err());
        if (JitLevels.c2Available()) {
            assertThat(m.find()).as(r.err()).isTrue();
            assertThat(Long.parseLong(m.group(1))).isLessThanOrEqualTo(Warmup.BEFORE_TIMED_LIMIT_NANOS / 1_000_000
                    + 1000); // the limit is checked between 50 ms sleeps; a loaded machine oversleeps
            assertThat(m.find()).as("only the client waits").isFalse();
        }
    }

    @Test
    void noWaitBeforeTheTimedSectionWithoutAWarmup() {
        Run r = run(PerftestTest.WRITE_LAT, List.of("--loopback", "--jit_warmup=0", "--debug", "-n", "20"),
                new RecordingEngine(1));
        assertThat(r.rc()).as(r.err()).isZero();
        assertThat(r.err()).doesNotContain("waited");
    }

    @Test
    void theAutomaticWarmupProbesThenRunsWhatFitsItsBudget() {
        RecordingEngine engine = new RecordingEngine(1);
        // --timeout=3: the budget is 3/4 of it, 2.25 s
        Run r = run(PerftestTest.WRITE_BW, List.of("--loopback", "--debug", "--timeout=3", "-n", "20"), engine);
        assertThat(r.rc()).as(r.err()).isZero();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(" JIT warm-up: (\\d+) iterations of")
                .matcher(r.err());
        assertThat(m.find()).as(r.err()).isTrue();
        int done = Integer.parseInt(m.group(1));
        assertThat(done).isBetween(Warmup.PROBE_ITERATIONS, Warmup.AUTO_ITERATIONS);
        // the probe's pair, perhaps further chunks' pairs (until C2 compiled the round methods), then the measured pair
        assertThat(engine.atOpen.size()).isEven().isGreaterThanOrEqualTo(4);
        assertThat(done == Warmup.PROBE_ITERATIONS).isEqualTo(engine.atOpen.size() == 4);
    }

    @Test
    void offAndDurationRunsSkipIt() {
        RecordingEngine off = new RecordingEngine(1);
        assertThat(run(PerftestTest.WRITE_BW, List.of("--loopback", "--jit_warmup=0", "--debug", "-n", "20"), off)
                .err()).doesNotContain("JIT warm-up");
        assertThat(off.atOpen).hasSize(2);
        RecordingEngine duration = new RecordingEngine(1);
        Run d = run(PerftestTest.WRITE_BW, List.of("--loopback", "--debug", "-D", "1"), duration);
        assertThat(d.rc()).as(d.err()).isZero();
        assertThat(d.err()).doesNotContain("JIT warm-up");
        assertThat(duration.atOpen).hasSize(2);
    }

    @Test
    void thePairIsACopyOfTheRunWithItsOwnIterationsSizeAndAddresses() {
        PerftestParameters p = PerftestParser.parse(PerftestTest.SEND_BW, "ib_send_bw",
                List.of("-c", "UC", "-q", "2", "-s", "65536", "-n", "7", "-t", "64", "-I", "0", "--use_old_post_send",
                        "--source_ip=10.1.1.1", "-p", "20000", "--out_json", "server.example"),
                new PrintStream(new ByteArrayOutputStream()), new PrintStream(new ByteArrayOutputStream())).params();
        assertThat(p).isNotNull();
        PerftestParameters server = Warmup.pairSide(p, false);
        PerftestParameters client = Warmup.pairSide(p, true);
        for (PerftestParameters q : List.of(server, client)) {
            assertThat(q.connection).isEqualTo(PerftestParameters.Connection.UC);
            assertThat(q.numQps).isEqualTo(2);
            assertThat(q.txDepth).isEqualTo(p.txDepth);
            assertThat(q.inlineSize).isEqualTo(p.inlineSize);
            assertThat(q.useOldPostSend).isTrue();
            assertThat(q.cqMod).isEqualTo(p.cqMod);
            assertThat(q.iters).isEqualTo(Warmup.AUTO_ITERATIONS);
            assertThat(q.size).isEqualTo(Warmup.MAX_SIZE);
            assertThat(q.testMethod).isEqualTo(PerftestParameters.TestMethod.REGULAR);
            assertThat(q.outJson).isFalse();
            assertThat(q.sourceIp).isNull();
            assertThat(q.port).isZero();
            assertThat(q.jitWarmup).isZero();
        }
        assertThat(server.servername).isNull();
        assertThat(server.isServer()).isTrue();
        assertThat(client.servername).isEqualTo("127.0.0.1");
        assertThat(client.isClient()).isTrue();
        // the run itself is untouched
        assertThat(p.iters).isEqualTo(7);
        assertThat(p.servername).isEqualTo("server.example");
        assertThat(p.port).isEqualTo(20000);
    }

    @Test
    void badValuesAreRefused() {
        for (String v : List.of("-1", "x", "", "100000001")) {
            ByteArrayOutputStream e = new ByteArrayOutputStream();
            PerftestParser.Outcome o = PerftestParser.parse(PerftestTest.WRITE_BW, "ib_write_bw",
                    List.of("--jit_warmup=" + v), new PrintStream(new ByteArrayOutputStream()),
                    new PrintStream(e, true, StandardCharsets.UTF_8));
            assertThat(o.proceed()).as(v).isFalse();
            assertThat(e.toString(StandardCharsets.UTF_8)).contains("JIT warm-up iterations should be between 0");
        }
    }
}
