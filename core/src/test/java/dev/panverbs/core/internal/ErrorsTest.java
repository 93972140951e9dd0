package dev.panverbs.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.bindings.verbs.verbs_h;
import dev.panverbs.core.UnsupportedVerbException;
import dev.panverbs.core.VerbsException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Error message text: errno names, hints, the exception type chosen per errno. */
class ErrorsTest {

    private static final String LIMITS = """
            Limit                     Soft Limit           Hard Limit           Units
            Max cpu time              unlimited            unlimited            seconds
            Max locked memory         65536                8388608              bytes
            Max address space         unlimited            unlimited            bytes
            """;

    @Test
    void regMrEnomemNamesErrnoAndMemlockLimit() {
        VerbsException e = Errors.failure(Errors.call("ibv_reg_mr", "length", Units.bytes(1L << 30), "access",
                "[LOCAL_WRITE, REMOTE_WRITE]"), verbs_h.ENOMEM());
        assertThat(e).isNotInstanceOf(UnsupportedVerbException.class);
        assertThat(e.errno()).isEqualTo(12);
        assertThat(e.errnoName()).isEqualTo("ENOMEM");
        assertThat(e.verb()).isEqualTo("ibv_reg_mr(length=1 GiB, access=[LOCAL_WRITE, REMOTE_WRITE])");
        assertThat(e.getMessage())
                .startsWith("ibv_reg_mr(length=1 GiB, access=[LOCAL_WRITE, REMOTE_WRITE]) failed: ENOMEM (Cannot allocate memory); ")
                .contains("RLIMIT_MEMLOCK is");
        assertThat(e.hint()).isEqualTo(MemlockLimit.current().hint());
    }

    @Test
    void regMrEpermAndIova2GetTheSameHint() {
        assertThat(Errors.failure("ibv_reg_mr_iova2(length=4 KiB)", verbs_h.EPERM()).getMessage())
                .contains("failed: EPERM (Operation not permitted)").contains("RLIMIT_MEMLOCK");
        assertThat(Errors.failure("ibv_create_qp(type=RC)", verbs_h.ENOMEM()).getMessage())
                .contains("queue buffers are pinned memory: RLIMIT_MEMLOCK");
        assertThat(Errors.failure("ibv_reg_mr()", verbs_h.EFAULT()).hint()).contains("not mapped");
    }

    @Test
    void memlockHintShowsValuesAndUlimit() {
        MemlockLimit limit = MemlockLimit.parse(LIMITS);
        assertThat(limit).isEqualTo(new MemlockLimit(65536, 8388608));
        assertThat(limit.hint()).startsWith("RLIMIT_MEMLOCK is 64 KiB (hard 8 MiB): registered memory is pinned")
                .contains("ulimit -l unlimited");
        assertThat(MemlockLimit.parse("Max locked memory         unlimited            unlimited            bytes\n").hint())
                .startsWith("RLIMIT_MEMLOCK is unlimited, so it is not the cause");
        assertThat(MemlockLimit.parse("garbage").soft()).isEqualTo(MemlockLimit.UNKNOWN);
        assertThat(MemlockLimit.current().soft()).isNotEqualTo(MemlockLimit.UNKNOWN); // /proc/self/limits on Linux
    }

    @Test
    void eopnotsuppBecomesUnsupportedVerbNamingTheCapability() {
        VerbsException e = Errors.failure(Errors.call("ibv_alloc_mw", "type", 1), verbs_h.EOPNOTSUPP());
        assertThat(e).isInstanceOf(UnsupportedVerbException.class);
        assertThat(((UnsupportedVerbException) e).capability()).isEqualTo("memory windows");
        assertThat(e.getMessage()).isEqualTo("ibv_alloc_mw(type=1) failed: EOPNOTSUPP (Operation not supported); "
                + "the device, its provider or the kernel lacks memory windows");
        VerbsException p = Errors.failure("ibv_query_gid_ex(port=1, index=0)", verbs_h.EPROTONOSUPPORT());
        assertThat(p).isInstanceOf(UnsupportedVerbException.class);
        assertThat(p.errnoName()).isEqualTo("EPROTONOSUPPORT");
        assertThat(((UnsupportedVerbException) Errors.failure("ibv_frobnicate()", -verbs_h.EOPNOTSUPP())).capability())
                .isEqualTo("the verb ibv_frobnicate");
    }

    @Test
    void upFrontRefusalHasNoErrno() {
        UnsupportedVerbException e = Errors.unsupported("ibv_reg_dmabuf_mr(fd=5)", "DMA-BUF memory registration",
                "device rxe0 does not implement it");
        assertThat(e.errno()).isZero();
        assertThat(e.getMessage()).isEqualTo("ibv_reg_dmabuf_mr(fd=5): unsupported: DMA-BUF memory registration; "
                + "device rxe0 does not implement it");
    }

    @Test
    void explicitHintComesFirst() {
        VerbsException e = Errors.failure("ibv_query_port(port=9)", verbs_h.EINVAL(), "ports are numbered from 1");
        assertThat(e.getMessage()).isEqualTo("ibv_query_port(port=9) failed: EINVAL (Invalid argument); ports are numbered from 1");
        assertThat(Errors.failure("ibv_open_device(device=mlx5_0)", verbs_h.EACCES()).hint())
                .contains("/dev/infiniband/uverbs");
    }

    @Test
    void noDeviceHintExplainsWhatIsMissing(@TempDir Path tmp) throws IOException {
        Path sys = tmp.resolve("sys");
        Path dev = tmp.resolve("dev");
        assertThat(new DeviceDiagnostics(sys, dev).noDeviceHint())
                .contains("the kernel has no RDMA device")
                .contains("modprobe rdma_rxe; rdma link add rxe0 type rxe netdev <if>");
        Files.createDirectories(sys.resolve("mlx5_0"));
        assertThat(new DeviceDiagnostics(sys, dev).noDeviceHint())
                .contains("[mlx5_0] but /dev/infiniband is missing").contains("modprobe ib_uverbs");
        Files.createDirectories(dev);
        assertThat(new DeviceDiagnostics(sys, dev).noDeviceHint())
                .contains("no provider for them").contains("ibverbs-providers");
        assertThat(DeviceDiagnostics.notFoundHint("mlx5_9", java.util.List.of("rxe0")))
                .isEqualTo("no device named 'mlx5_9'; present: [rxe0] (see 'ibv_devices')");
    }

    @Test
    void unitsFormatExactBinaryUnits() {
        assertThat(Units.bytes(1L << 30)).isEqualTo("1 GiB");
        assertThat(Units.bytes(65536)).isEqualTo("64 KiB");
        assertThat(Units.bytes(1536)).isEqualTo("1536 B");
        assertThat(Units.bytes(0)).isEqualTo("0 B");
        assertThat(Units.hex(0x7f00L)).isEqualTo("0x7f00");
    }
}
