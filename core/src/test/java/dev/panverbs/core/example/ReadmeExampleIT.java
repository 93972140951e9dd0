package dev.panverbs.core.example;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.core.Access;
import dev.panverbs.core.AddressVector;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.Device;
import dev.panverbs.core.GidType;
import dev.panverbs.core.LinkLayer;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.Mtu;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletionStatus;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.testing.RdmaTestDevice;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's example, run on the test device: verbatim between the markers (README-BEGIN and README-END, see
 * {@link ReadmeExample}; {@code ReadmeExampleTest} fails the host build when this copy and README.md differ), and
 * as a named module on the module path, started with the README's {@code --enable-native-access} flags.
 */
class ReadmeExampleIT {

    @Test
    void rdmaWriteBetweenTwoQueuePairs() {
        String deviceName = RdmaTestDevice.name();
        InetAddress localAddress = roceV2Address(deviceName);
        PrintStream stdout = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
        try {
            example(deviceName, localAddress);
        } finally {
            System.setOut(stdout);
        }
        assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo("7 SUCCESS" + System.lineSeparator());
    }

    private static void example(String deviceName, InetAddress localAddress) {
        // README-BEGIN
        try (Context ctx = Device.open(deviceName)) {                 // ibv_open_device
            ProtectionDomain pd = ctx.allocPd();                      // ibv_alloc_pd
            CompletionQueue cq = ctx.createCq(64).build();            // ibv_create_cq
            MemoryRegion src = pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE));   // ibv_reg_mr
            MemoryRegion dst = pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
            QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(16).build();  // ibv_create_qp
            QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(16).build();

            // RoCE: address by GID, the RoCE v2 GID of localAddress (what perftest's -x selects)
            int gid = ctx.roceV2GidIndex(1, localAddress);            // ibv_query_gid_table
            AddressVector path = AddressVector.builder(1).grh(ctx.queryGid(1, gid).toBytes(), gid, 64).build();
            a.toInit(1, EnumSet.of(Access.REMOTE_WRITE));             // ibv_modify_qp RESET -> INIT
            b.toInit(1, EnumSet.of(Access.REMOTE_WRITE));
            a.toRtr(path, Mtu.MTU_1024, b.qpNum(), 0);                 // INIT -> RTR
            b.toRtr(path, Mtu.MTU_1024, a.qpNum(), 0);
            a.toRts(0);                                               // RTR -> RTS
            b.toRts(0);

            src.buffer().fill((byte) 42);
            a.sendRequests()                                          // the send queue's reusable native WR chain
                    .rdmaWrite(7L, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address())
                    .sge(src, 0, 4096)
                    .post();                                          // ibv_post_send

            WorkCompletions wcs = WorkCompletions.allocate(16);       // native ibv_wc array, reused
            while (cq.poll(wcs) == 0) {                               // ibv_poll_cq
                Thread.onSpinWait();
            }
            WorkCompletion wc = wcs.get(0);                           // flyweight over wc[0]
            System.out.println(wc.wrId() + " " + wc.status());        // 7 SUCCESS
        }                                                             // closes QPs, MRs, CQ, PD, context
        // README-END
    }

    /**
     * The README example compiled as module {@code example} ({@code requires dev.panverbs.core}) and run in its own
     * JVM with {@code --module-path <bindings>:<core>:<example>} and the README's module-path flag, nothing else:
     * it must print what the README says and the JVM no warning (a restricted call from a module the flag does not
     * name prints one).
     */
    @Test
    void readmeExampleRunsOnTheModulePath(@TempDir Path dir) throws Exception {
        String deviceName = RdmaTestDevice.name();
        InetAddress localAddress = roceV2Address(deviceName);
        String flag = ReadmeExample.moduleNativeAccessFlag();
        Path classes = ReadmeExample.compileModule(dir);

        List<String> command = List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                // as testbed/lib/run-its: under TCG every compiler and GC thread costs emulated CPU time
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "--module-path", ReadmeExample.libraryModulePath() + ":" + classes,
                flag,
                "-m", ReadmeExample.MODULE + "/" + ReadmeExample.MAIN, deviceName, localAddress.getHostAddress());
        Path out = dir.resolve("stdout.txt");
        Path err = dir.resolve("stderr.txt");
        Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        boolean finished = p.waitFor(4, TimeUnit.MINUTES);
        if (!finished) {
            p.destroyForcibly().waitFor();
        }
        String described = String.join(" ", command) + "\n--- exit " + (finished ? p.exitValue() : "(killed after 4 min)")
                + "\n--- stdout\n" + Files.readString(out) + "--- stderr\n" + Files.readString(err);
        assertThat(finished).as(described).isTrue();
        assertThat(p.exitValue()).as(described).isZero();
        assertThat(Files.readString(out)).as(described).isEqualTo("7 SUCCESS\n");
        assertThat(Files.readString(err)).as(described).isEmpty();
    }

    /**
     * This host's IPv4 address on the device's netdev, from its RoCE v2 GID (the example's {@code localAddress}).
     * The example addresses by RoCE GID: on a port that is not Ethernet the test is skipped, naming why.
     */
    private static InetAddress roceV2Address(String deviceName) {
        try (Context ctx = Device.open(deviceName)) {
            RdmaTestDevice.assumeCapability(ctx.queryPort(1).linkLayer() == LinkLayer.ETHERNET,
                    "an Ethernet (RoCE) port 1: the README example addresses by RoCE v2 GID");
            return ctx.queryGidTable().stream()
                    .filter(e -> e.portNum() == 1 && e.type() == GidType.ROCE_V2 && e.gid().isIpv4Mapped())
                    .map(e -> e.gid().toInetAddress()).findFirst()
                    .orElseThrow(() -> new AssertionError("no IPv4 RoCE v2 GID on " + deviceName + " port 1 (is an "
                            + "IPv4 address assigned to its netdev?): " + ctx.queryGidTable()));
        }
    }

    @Test
    void exampleMovesTheBytes() {
        try (Context ctx = Device.open(RdmaTestDevice.name())) {
            ProtectionDomain pd = ctx.allocPd();
            CompletionQueue cq = ctx.createCq(64).build();
            MemoryRegion src = pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE));
            MemoryRegion dst = pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
            QueuePair a = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(16).build();
            QueuePair b = pd.createQp(QueuePairType.RC, cq, cq).maxSendWr(16).build();
            int gidIndex = ctx.roceV2GidIndex(1, roceV2Address(RdmaTestDevice.name()));
            AddressVector path = AddressVector.builder(1).grh(ctx.queryGid(1, gidIndex).toBytes(), gidIndex, 64).build();
            a.toInit(1, EnumSet.of(Access.REMOTE_WRITE));
            b.toInit(1, EnumSet.of(Access.REMOTE_WRITE));
            a.toRtr(path, Mtu.MTU_1024, b.qpNum(), 0);
            b.toRtr(path, Mtu.MTU_1024, a.qpNum(), 0);
            a.toRts(0);
            b.toRts(0);
            MemorySegment s = src.buffer();
            for (int i = 0; i < 4096; i++) {
                s.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7));
            }
            a.sendRequests().clear()
                    .rdmaWrite(7L, SendFlag.SIGNALED_BIT, dst.rkey(), dst.address())
                    .sge(src, 0, 4096).post();
            WorkCompletions wcs = WorkCompletions.allocate(16);
            long deadline = System.nanoTime() + 60_000_000_000L;
            int n;
            while ((n = cq.poll(wcs)) == 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(n).isEqualTo(1);
            assertThat(wcs.get(0).status()).isEqualTo(WorkCompletionStatus.SUCCESS);
            assertThat(wcs.get(0).wrId()).isEqualTo(7L);
            assertThat(MemorySegment.mismatch(src.buffer(), 0, 4096, dst.buffer(), 0, 4096)).isEqualTo(-1);
        }
    }
}
