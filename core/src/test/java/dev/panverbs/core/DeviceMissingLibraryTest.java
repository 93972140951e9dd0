package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.bindings.NativeLibraries;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A machine without rdma-core: {@link Device#list()} throws the documented {@link MissingLibraryException} naming
 * the packages to install, not a type of the unexported bindings. libibverbs is loaded once per JVM (and is installed
 * on the build host), so the check runs in a child JVM that {@value NativeLibraries#IBVERBS_PROPERTY} points at a
 * library that does not exist.
 */
class DeviceMissingLibraryTest {

    private static final String ABSENT = "libpanverbs-absent-ibverbs.so.1";

    @Test
    void listWithoutLibibverbsThrowsMissingLibraryExceptionWithTheInstallHint() throws Exception {
        List<String> lines = runChild(NativeLibraries.IBVERBS_PROPERTY, ABSENT);
        assertThat(lines).as("child output").hasSize(4);
        assertThat(lines.get(0)).isEqualTo(MissingLibraryException.class.getName());
        assertThat(lines.get(1)).as("library()").isEqualTo(ABSENT);
        assertThat(lines.get(2)).as("hint()")
                .isEqualTo("install it: Debian/Ubuntu 'apt-get install libibverbs1 ibverbs-providers', "
                        + "RHEL/Fedora 'dnf install libibverbs'");
        assertThat(lines.get(3)).as("message")
                .startsWith("ibv_get_device_list(): " + ABSENT + " cannot be loaded (")
                .endsWith("; install it: Debian/Ubuntu 'apt-get install libibverbs1 ibverbs-providers', "
                        + "RHEL/Fedora 'dnf install libibverbs'");
    }

    /** Runs {@link Child} in a new JVM with {@code -Dproperty=value}; its output lines. */
    private static List<String> runChild(String property, String value) throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(java.toString(), "--enable-native-access=ALL-UNNAMED",
                "-D" + property + "=" + value, "-cp", System.getProperty("java.class.path"), Child.class.getName())
                .redirectErrorStream(true).start();
        p.getOutputStream().close();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("the child JVM did not finish within 120 s");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as("child exit status; output:%n%s", out).isZero();
        return out.lines().toList();
    }

    /** The child JVM: calls {@link Device#list()} and prints what it threw, one item per line. */
    static final class Child {
        public static void main(String[] args) {
            try {
                System.out.println("no exception: " + Device.list());
            } catch (MissingLibraryException e) {
                System.out.println(e.getClass().getName());
                System.out.println(e.library());
                System.out.println(e.hint());
                System.out.println(e.getMessage());
            } catch (RuntimeException e) {
                System.out.println(e.getClass().getName());
                System.out.println(e);
            }
        }
    }
}
