package dev.panverbs.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.bindings.NativeLibraries;
import org.junit.jupiter.api.Test;

class RdmaCoreVersionTest {

    @Test
    void parsesTheReleaseFromTheMappedLibibverbs() {
        String maps = """
                7f1c2a000000-7f1c2a00c000 r--p 00000000 08:01 1234  /usr/lib/x86_64-linux-gnu/libc.so.6
                7f1c2b000000-7f1c2b00a000 r--p 00000000 08:01 5678  /usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0
                7f1c2b00a000-7f1c2b01a000 r-xp 0000a000 08:01 5678  /usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0
                """;
        assertThat(RdmaCoreVersion.parse(maps)).isEqualTo(44);
        assertThat(RdmaCoreVersion.parse("x /opt/rdma/build/lib/libibverbs.so.1.15.58.0\n")).isEqualTo(58);
        assertThat(RdmaCoreVersion.parse("x /usr/lib/libibverbs.so.1\n")).isEqualTo(-1);
    }

    @Test
    void readsThisProcess() {
        NativeLibraries.ibverbs(); // maps libibverbs (installed on every build host: libibverbs-dev)
        assertThat(RdmaCoreVersion.major()).isGreaterThanOrEqualTo(44);
    }
}
