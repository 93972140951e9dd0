package dev.panverbs.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The wall between the tools and the library's insides: the tools are written against core's public API
 * ({@code dev.panverbs.core}) only, as any application is. On the module path neither the bindings nor
 * {@code dev.panverbs.core.internal} is exported to them; on the class path nothing would stop them, so this
 * test does.
 */
class ToolsWallTest {

    /** The packages the tools must not use: every bindings package, and core's internal one. */
    private static final Pattern FORBIDDEN_IMPORT =
            Pattern.compile("(?m)^\\s*import\\s+(?:static\\s+)?(dev\\.panverbs\\.(?:bindings|core\\.internal)\\b[\\w.*]*)\\s*;");

    /** The same packages as class-file constants: internal names ({@code dev/panverbs/bindings/...}) or dotted ones. */
    private static final List<String> FORBIDDEN_CONSTANTS = List.of(
            "dev/panverbs/bindings/", "dev/panverbs/core/internal/", "dev.panverbs.bindings.", "dev.panverbs.core.internal.");

    @Test
    void toolsSourcesImportNeitherBindingsNorCoreInternal() throws IOException {
        Path sources = Path.of("src/main/java").toAbsolutePath();
        assertThat(sources).as("the tools' main sources (surefire runs in tools/)").isDirectory();
        List<Path> files = files(sources, ".java");
        assertThat(files).as("Java files under " + sources).hasSizeGreaterThan(50);
        List<String> violations = new ArrayList<>();
        for (Path file : files) {
            Matcher m = FORBIDDEN_IMPORT.matcher(Files.readString(file, StandardCharsets.UTF_8));
            while (m.find()) {
                violations.add(sources.relativize(file) + " imports " + m.group(1));
            }
        }
        assertThat(violations).as("tools/src/main may import dev.panverbs.core only (public API), "
                + "never dev.panverbs.bindings.* or dev.panverbs.core.internal").isEmpty();
    }

    /** Also catches fully qualified uses and reflection by name, which need no import. */
    @Test
    void toolsClassesReferenceNeitherBindingsNorCoreInternal() throws IOException, URISyntaxException {
        Path classes = Path.of(Panverbs.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertThat(classes).as("the tools' compiled classes").isDirectory();
        List<Path> files = files(classes, ".class");
        assertThat(files).as("class files under " + classes).hasSizeGreaterThan(50);
        List<String> violations = new ArrayList<>();
        for (Path file : files) {
            String bytes = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
            for (String forbidden : FORBIDDEN_CONSTANTS) {
                if (bytes.contains(forbidden)) {
                    violations.add(classes.relativize(file) + " refers to " + forbidden + "...");
                }
            }
        }
        assertThat(violations).as("compiled tools refer to dev.panverbs.core's public API only").isEmpty();
    }

    private static List<Path> files(Path root, String suffix) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(p -> p.toString().endsWith(suffix)).sorted().toList();
        }
    }
}
