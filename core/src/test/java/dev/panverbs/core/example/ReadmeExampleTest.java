package dev.panverbs.core.example;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Without a device: the README's example is the code {@link ReadmeExampleIT} runs (the markers are described in
 * {@link ReadmeExample}), it compiles as a named module that requires only {@code dev.panverbs.core}, and the
 * README's module-path flag names exactly the library's modules.
 */
class ReadmeExampleTest {

    @Test
    void readmeExampleIsTheItBody() throws Exception {
        List<String> readme = ReadmeExample.normalise(ReadmeExample.readmeBlock());
        List<String> it = ReadmeExample.normalise(ReadmeExample.itBody());
        assertThat(readme).as("README.md's example block").hasSizeGreaterThan(10);
        int line = 0;
        while (line < Math.min(readme.size(), it.size()) && readme.get(line).equals(it.get(line))) {
            line++;
        }
        String where = line == readme.size() && line == it.size() ? "" : "first difference at line " + (line + 1)
                + " of the example:\n  README.md:         " + (line < readme.size() ? readme.get(line) : "(ended)")
                + "\n  ReadmeExampleIT:   " + (line < it.size() ? it.get(line) : "(ended)")
                + "\nchange README.md and " + ReadmeExample.IT_SOURCE + " together (only indentation may differ)";
        assertThat(String.join("\n", it)).as(where).isEqualTo(String.join("\n", readme));
    }

    @Test
    void readmeExampleCompilesAsNamedModule(@TempDir Path dir) throws Exception {
        Path classes = ReadmeExample.compileModule(dir);
        assertThat(classes.resolve("module-info.class")).isRegularFile();
        assertThat(classes.resolve("example/ReadmeExample.class")).isRegularFile();
    }

    @Test
    void readmeModulePathFlagNamesTheLibraryModules() throws Exception {
        assertThat(ReadmeExample.moduleNativeAccessFlag())
                .isEqualTo("--enable-native-access=" + String.join(",", ReadmeExample.LIBRARY_MODULES));
        assertThat(ReadmeExample.libraryModules()).containsOnlyKeys(ReadmeExample.LIBRARY_MODULES);
    }

    @Test
    void normaliseRemovesCommonIndentationOnly() {
        assertThat(ReadmeExample.normalise(List.of("        a(1);", "", "            b( 2 );  ", "   ", "        }")))
                .containsExactly("a(1);", "", "    b( 2 );  ", "", "}");
    }

    @Test
    void itSourceHoldsEachMarkerOnce() throws Exception {
        List<String> lines = Files.readAllLines(Path.of(ReadmeExample.IT_SOURCE));
        assertThat(lines.stream().filter(l -> l.strip().equals(ReadmeExample.IT_BEGIN))).hasSize(1);
        assertThat(lines.stream().filter(l -> l.strip().equals(ReadmeExample.IT_END))).hasSize(1);
    }
}
