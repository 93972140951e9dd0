package dev.panverbs.tools;

import dev.panverbs.testing.RdmaTestDevice;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code panverbs devices}/{@code devinfo} against rdma-core's {@code ibv_devices}/{@code ibv_devinfo} on the device. */
class DevicesIT {

    static String panverbs(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc = new CommandLine(new Panverbs()).setOut(new PrintWriter(out)).setErr(new PrintWriter(err)).execute(args);
        assertThat(rc).as(err.toString()).isZero();
        return out.toString();
    }

    static String c(String... command) throws Exception {
        String tool = RdmaTestDevice.program(command[0], "ibverbs-utils");
        List<String> cmd = new ArrayList<>(List.of(command));
        cmd.set(0, tool);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return out;
    }

    @Test
    void devicesMatchesIbvDevices() throws Exception {
        dev.panverbs.tools.perftest.PerftestTest.values(); // class init only
        String ours = panverbs("devices");
        assertThat(ours).isEqualTo(c("ibv_devices"));
        assertThat(ours.split("\n")).hasSizeGreaterThan(2); // at least one device where ITs run
    }

    @Test
    void devinfoMatchesIbvDevinfo() throws Exception {
        assertThat(panverbs("devinfo")).isEqualTo(c("ibv_devinfo"));
        assertThat(panverbs("devinfo", "-l")).isEqualTo(c("ibv_devinfo", "-l"));
        assertThat(panverbs("devinfo", "-i", "1")).isEqualTo(c("ibv_devinfo", "-i", "1"));
    }

    @Test
    void verboseDevinfoIsASubsetInOrder() throws Exception {
        List<String> theirs = Arrays.asList(c("ibv_devinfo", "-v").split("\n"));
        List<String> ours = Arrays.asList(panverbs("devinfo", "-v").split("\n"));
        int at = 0;
        for (String line : ours) {
            int found = theirs.subList(at, theirs.size()).indexOf(line);
            assertThat(found).as("line %s of panverbs devinfo -v, in order, in:%n%s", line, String.join("\n", theirs))
                    .isNotNegative();
            at += found + 1;
        }
        assertThat(ours.size()).isGreaterThan(theirs.size() / 2);
    }
}
