package dev.panverbs.bindings.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.testing.RdmaTestDevice;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The C reference on the bed: perftest's {@code ib_write_bw} server and client on one device, over the
 * loopback TCP exchange. If this fails, the bed (not panverbs) is broken.
 */
class PerftestBedIT {

    @Test
    void ibWriteBwServerAndClientOnOneDevice(@TempDir Path dir) throws Exception {
        String device = RdmaTestDevice.name();
        String binary = Perftest.ibWriteBw();
        List<String> common = List.of(binary, "-d", device, "-s", "65536", "-n", "1000", "-p", "18515");
        Path serverLog = dir.resolve("server.log");
        Process server = Perftest.start(common, serverLog);
        try {
            Perftest.Run client = Perftest.client(
                    concat(common, "127.0.0.1"), dir.resolve("client.log"), Duration.ofSeconds(120));
            assertThat(client.exitCode()).as("client:\n%s", client.output()).isZero();
            Perftest.Run served = Perftest.await(server, serverLog, Duration.ofSeconds(60));
            assertThat(served.exitCode()).as("server:\n%s", served.output()).isZero();
            Perftest.record("ib_write_bw 64 KiB on one " + device, client);
        } finally {
            server.destroyForcibly();
        }
    }

    static List<String> concat(List<String> list, String last) {
        return java.util.stream.Stream.concat(list.stream(), java.util.stream.Stream.of(last)).toList();
    }
}
