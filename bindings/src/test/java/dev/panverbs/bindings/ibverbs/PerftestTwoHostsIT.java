package dev.panverbs.bindings.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.testing.RdmaTestDevice;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * perftest's {@code ib_write_bw} across the bed's two guests (testbed/run --two): the server guest
 * ({@code PANVERBS_ROLE=server}) and the client guest, which connects to {@code PANVERBS_PEER}. Both guests
 * run this class; each plays its role. The name (*TwoHostsIT) is what makes testbed/test run it there.
 */
class PerftestTwoHostsIT {

    @Test
    void ibWriteBwAcrossTwoHosts(@TempDir Path dir) throws Exception {
        String role = System.getenv("PANVERBS_ROLE");
        String peer = System.getenv("PANVERBS_PEER");
        Assumptions.assumeTrue(role != null && peer != null && !peer.isEmpty(),
                "two-hosts IT without PANVERBS_ROLE/PANVERBS_PEER: run it with testbed/test (testbed/run --two)");
        String device = RdmaTestDevice.name();
        List<String> common = List.of(Perftest.ibWriteBw(), "-d", device, "-s", "65536", "-n", "500", "-p", "18516");
        Perftest.Run run;
        if (role.equals("server")) {
            Path log = dir.resolve("server.log");
            run = Perftest.await(Perftest.start(common, log), log, Duration.ofSeconds(240));
        } else {
            run = Perftest.client(PerftestBedIT.concat(common, peer), dir.resolve("client.log"), Duration.ofSeconds(180));
        }
        assertThat(run.exitCode()).as("%s:\n%s", role, run.output()).isZero();
        Perftest.record("ib_write_bw 64 KiB across two guests (" + role + ")", run);
    }
}
