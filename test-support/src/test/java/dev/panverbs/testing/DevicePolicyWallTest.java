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
 * The device policy is written once, in {@link RdmaTestDevice}: no other module's Java code reads the variables
 * that decide between failing and skipping. A second copy is how one of them once came to ignore {@code CI=true}.
 */
class DevicePolicyWallTest {

    /** The policy's inputs, as Java code would read them. */
    private static final Pattern POLICY_INPUT = Pattern.compile("\"CI\"|PANVERBS_REQUIRE_DEVICE");

    @Test
    void policyIsReadOnlyByTestSupport() throws IOException {
        Path repo = Path.of("..").toAbsolutePath().normalize();
        List<String> modules = modules(repo);
        assertThat(modules).as("modules of " + repo.resolve("pom.xml")).contains("test-support", "bindings", "core", "tools");
        List<String> violations = new ArrayList<>();
        int scanned = 0;
        for (String module : modules) {
            Path src = repo.resolve(module).resolve("src");
            if (module.equals("test-support") || !Files.isDirectory(src)) {
                continue;
            }
            try (Stream<Path> walk = Files.walk(src)) {
                for (Path file : walk.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                    scanned++;
                    List<String> lines = Files.readAllLines(file);
                    for (int i = 0; i < lines.size(); i++) {
                        if (POLICY_INPUT.matcher(lines.get(i)).find()) {
                            violations.add(repo.relativize(file) + ":" + (i + 1) + ": " + lines.get(i).strip());
                        }
                    }
                }
            }
        }
        assertThat(scanned).as("Java files scanned").isGreaterThan(100);
        assertThat(violations).as("code that reads CI or PANVERBS_REQUIRE_DEVICE: use "
                + "dev.panverbs.testing.RdmaTestDevice (name(), program(), required()) instead").isEmpty();
    }

    /** The {@code <module>} entries of the parent pom. */
    static List<String> modules(Path repo) throws IOException {
        Matcher m = Pattern.compile("<module>([^<]+)</module>").matcher(Files.readString(repo.resolve("pom.xml")));
        List<String> modules = new ArrayList<>();
        while (m.find()) {
            modules.add(m.group(1).strip());
        }
        return modules;
    }
}
