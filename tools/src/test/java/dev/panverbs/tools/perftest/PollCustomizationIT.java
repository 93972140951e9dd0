package dev.panverbs.tools.perftest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The JDK customizes a method handle once, at its 128th {@code invokeExact} from interpreted or C1 code: ~64 KiB
 * allocated on the polling thread at the 128th {@code ibv_poll_cq} of the JVM. {@link CoreCq} pays it when the
 * first CQ is made, so that it cannot land in a timed run whose warm-up polled fewer times (or had none). Only a
 * fresh JVM shows it (any earlier test's polls pay it), so the probe runs in a child JVM: resources made as a
 * perftest run makes them, then 256 polls of the (empty) CQ must allocate next to nothing.
 */
class PollCustomizationIT {
    private static final Pattern RESULT = Pattern.compile("polls allocated (\\d+) B");

    @Test
    void theFirstPollsOfAFreshJvmAllocateNothingOnceTheRunsResourcesAreMade() throws Exception {
        String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
        Process p = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC", "-cp", classPath(), PollCustomizationIT.class.getName(),
                ItSupport.device()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        Matcher m = RESULT.matcher(out);
        assertThat(m.find()).as(out).isTrue();
        assertThat(Long.parseLong(m.group(1))).as("bytes 256 polls allocated in a fresh JVM; output:%n%s", out)
                .isLessThan(8192);
    }

    /** This test's class path: the IT runner's (JUnit's console launcher loads the tests through its own loader). */
    private static String classPath() throws Exception {
        List<String> entries = new ArrayList<>();
        for (ClassLoader l = PollCustomizationIT.class.getClassLoader(); l != null; l = l.getParent()) {
            if (l instanceof URLClassLoader u) {
                for (URL url : u.getURLs()) {
                    entries.add(Path.of(url.toURI()).toString());
                }
            }
        }
        entries.add(System.getProperty("java.class.path"));
        return String.join(File.pathSeparator, entries);
    }

    /** The child: a send_bw server's resources, then 256 polls of its receive CQ, measured. */
    public static void main(String[] args) throws Exception {
        PerftestParameters p = ZeroAllocationIT.params(PerftestTest.SEND_BW, true, "-s", "64");
        try (VerbsEngine.Device d = new CoreEngine().open(args[0])) {
            new DeviceSetup(p, System.out, System.err).check(d);
            p.currMtu = d.port(p.ibPort).activeMtu();
            p.cycleBuffer = Platform.pageSize();
            p.cacheLineSize = Platform.cacheLineSize();
            BufferLayout layout = new BufferLayout(64, p.cycleBuffer, p.cacheLineSize, 1, false, false);
            try (VerbsEngine.Resources r = d.allocate(ZeroAllocationIT.spec(p, layout))) {
                VerbsEngine.Cq cq = r.recvCq();
                var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
                long before = threads.getCurrentThreadAllocatedBytes();
                int found = 0;
                for (int i = 0; i < 256; i++) {
                    found += cq.poll(VerbsEngine.Cq.BATCH);
                }
                long used = threads.getCurrentThreadAllocatedBytes() - before;
                System.out.println(found == 0 ? "polls allocated " + used + " B" : "completions: " + found);
            }
        }
    }
}
