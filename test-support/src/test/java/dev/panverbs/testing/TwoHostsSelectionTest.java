package dev.panverbs.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * Two-guest ITs are selected by their class name, {@code *TwoHostsIT}: {@code testbed/lib/run-its}'s class-name
 * filters split the ITs by it, and an IT that plays a role across two guests carries it.
 */
class TwoHostsSelectionTest {
    private static final Path REPO = Path.of("..").toAbsolutePath().normalize();

    @Test
    void runItsFiltersSplitItsByName() throws IOException {
        String runIts = Files.readString(REPO.resolve("testbed/lib/run-its"));
        Matcher m = Pattern.compile("kind_filter=\\(--exclude-classname '([^']+)'\\)").matcher(runIts);
        List<Pattern> excludes = new ArrayList<>();
        while (m.find()) {
            excludes.add(Pattern.compile(m.group(1)));
        }
        assertThat(excludes).as("run-its: the single and two-hosts exclusions").hasSize(2);
        Pattern single = excludes.get(0);
        Pattern two = excludes.get(1);
        for (String twoHosts : List.of("dev.panverbs.tools.pingpong.PingPongTwoHostsIT",
                "dev.panverbs.bindings.PerftestTwoHostsIT", "TwoHostsIT")) {
            // the JUnit console launcher matches whole class names (Matcher.matches)
            assertThat(single.matcher(twoHosts).matches()).as("single run excludes " + twoHosts).isTrue();
            assertThat(two.matcher(twoHosts).matches()).as("two-hosts run keeps " + twoHosts).isFalse();
        }
        for (String oneGuest : List.of("dev.panverbs.bindings.PerftestBedIT", "dev.panverbs.core.example.ReadmeExampleIT",
                "dev.panverbs.x.TwoHostsITHelperIT", "dev.panverbs.x.TwoHostsIt")) {
            assertThat(single.matcher(oneGuest).matches()).as("single run keeps " + oneGuest).isFalse();
            assertThat(two.matcher(oneGuest).matches()).as("two-hosts run excludes " + oneGuest).isTrue();
        }
    }

    @Test
    void testbedTestSplitsModulesByName() throws IOException {
        String test = Files.readString(REPO.resolve("testbed/test"));
        assertThat(test).contains("[[ $fqn == *TwoHostsIT ]]").doesNotContain("grep -q 'two-hosts'");
    }

    /**
     * An IT reading PANVERBS_ROLE or PANVERBS_PEER (itself or through {@link TwoHostsRole}) plays a part across two
     * guests: its name must say so.
     */
    @Test
    void itsThatPlayARoleAreNamedTwoHostsIT() throws IOException {
        List<String> misnamed = new ArrayList<>();
        int twoHosts = 0;
        for (String module : DevicePolicyWallTest.modules(REPO)) {
            Path tests = REPO.resolve(module).resolve("src/test/java");
            if (!Files.isDirectory(tests)) {
                continue;
            }
            try (Stream<Path> walk = Files.walk(tests)) {
                for (Path file : walk.filter(p -> p.getFileName().toString().endsWith("IT.java")).toList()) {
                    boolean playsARole = Files.readString(file).matches("(?s).*(PANVERBS_(ROLE|PEER)|TwoHostsRole).*");
                    boolean named = file.getFileName().toString().endsWith("TwoHostsIT.java");
                    if (named) {
                        twoHosts++;
                    }
                    if (playsARole != named) {
                        misnamed.add(REPO.relativize(file) + (named ? " is named *TwoHostsIT but reads no "
                                + "PANVERBS_ROLE/PANVERBS_PEER" : " reads PANVERBS_ROLE/PANVERBS_PEER: name it *TwoHostsIT"));
                    }
                }
            }
        }
        assertThat(twoHosts).as("two-hosts ITs found").isPositive();
        assertThat(misnamed).isEmpty();
    }
}
