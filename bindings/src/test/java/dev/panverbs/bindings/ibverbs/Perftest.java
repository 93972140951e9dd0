package dev.panverbs.bindings.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.testing.RdmaTestDevice;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Assertions;

/** Runs perftest's C {@code ib_write_bw} for the bed's ITs and reads its result line. */
final class Perftest {
    /** The result row: {@code #bytes #iterations BW-peak[MB/sec] BW-average[MB/sec] MsgRate[Mpps]}. */
    private static final Pattern RESULT =
            Pattern.compile("(?m)^\\s*(\\d+)\\s+(\\d+)\\s+([\\d.]+)\\s+([\\d.]+)\\s+([\\d.]+)\\s*$");

    private Perftest() {}

    record Run(int exitCode, String output) {
        /** The BW average in MB/s of a successful run; fails the test if there is no result row. */
        double averageMBps() {
            Matcher m = RESULT.matcher(output);
            if (!m.find()) Assertions.fail("no ib_write_bw result row in:\n" + output);
            return Double.parseDouble(m.group(4));
        }

        String resultRow() {
            Matcher m = RESULT.matcher(output);
            return m.find() ? m.group().strip() : "(none)";
        }
    }

    static String ibWriteBw() {
        return RdmaTestDevice.program("ib_write_bw", "perftest");
    }

    static Process start(List<String> command, Path log) throws IOException {
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    static Run await(Process process, Path log, Duration timeout) throws Exception {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly().waitFor();
            Assertions.fail("ib_write_bw still running after " + timeout + ":\n" + Files.readString(log));
        }
        return new Run(process.exitValue(), Files.readString(log));
    }

    /**
     * Runs the client until it connects (the server may still be starting: perftest's client exits at once
     * when nobody listens), for at most {@code timeout}.
     */
    static Run client(List<String> command, Path log, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Run run = await(start(command, log), log, timeout);
            boolean refused = run.exitCode() != 0 && run.output().contains("Couldn't connect");
            if (!refused || System.nanoTime() > deadline) return run;
            Thread.sleep(500);
        }
    }

    /** Appends a measured result to $PANVERBS_RESULTS/perftest.txt (the testbed prints it in its summary). */
    static void record(String what, Run run) throws IOException {
        String dir = System.getenv("PANVERBS_RESULTS");
        String line = what + ": " + run.resultRow() + "  (ib_write_bw: #bytes #iterations BW-peak BW-average[MB/s] MsgRate[Mpps])";
        System.out.println(line);
        if (dir != null) {
            Files.writeString(Path.of(dir, "perftest.txt"), line + System.lineSeparator(),
                    java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        }
        assertThat(run.averageMBps()).as(what + " BW average").isPositive();
    }
}
