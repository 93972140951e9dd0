package dev.panverbs.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The {@code <pre>{@code ...}</pre>} example in {@link NativeHandles}' class Javadoc is, line for line, the body of
 * {@link NativeHandlesExample#createMlx5Qp}, which the test compilation compiles: a renamed class or method breaks the
 * build instead of leaving a stale example.
 */
class NativeHandlesExampleTest {

    private static final Path SOURCES = Path.of("src/main/java/dev/panverbs/core/internal/NativeHandles.java");
    private static final Path EXAMPLE = Path.of("src/test/java/dev/panverbs/core/internal/NativeHandlesExample.java");

    @Test
    void javadocExampleIsTheCompiledExample() throws IOException {
        List<String> javadoc = between(Files.readAllLines(SOURCES), " * <pre>{@code", " * }</pre>").stream()
                .map(l -> l.equals(" *") ? "" : l.substring(" * ".length()))
                .toList();
        List<String> compiled = between(Files.readAllLines(EXAMPLE), "        // example:start", "        // example:end")
                .stream().map(l -> l.substring("        ".length())).toList();
        assertThat(compiled).hasSizeGreaterThan(3);
        assertThat(javadoc).isEqualTo(compiled);
    }

    /** The lines strictly between the first {@code start} line and the next {@code end} line. */
    private static List<String> between(List<String> lines, String start, String end) {
        int from = lines.indexOf(start);
        assertThat(from).as("marker " + start).isNotNegative();
        int to = lines.subList(from + 1, lines.size()).indexOf(end) + from + 1;
        assertThat(to).as("marker " + end).isGreaterThan(from);
        return lines.subList(from + 1, to);
    }
}
