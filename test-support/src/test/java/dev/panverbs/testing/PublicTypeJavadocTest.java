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
 * Every public class, interface, record and enum of core, bindings and tools (main sources; not the generated
 * {@code src-gen/}) has Javadoc that says what it maps to in C, or that it is Java-only. "Says" is read loosely: a C
 * name ({@code ibv_*}, {@code rdma_*}, {@code mlx5*}, {@code IBV_*}, {@code struct}, a man page such as
 * {@code (3)}), rdma-core, perftest, the kernel, errno or C itself, or the words "Java-only".
 */
class PublicTypeJavadocTest {
    private static final Path REPO = Path.of("..").toAbsolutePath().normalize();
    private static final List<String> MODULES = List.of("core", "bindings", "tools");
    private static final Pattern DECLARATION = Pattern.compile("^\\s*public\\s+(?:(?:final|abstract|sealed|static"
            + "|non-sealed|strictfp)\\s+)*(?:class|interface|record|enum|@interface)\\s+(\\w+)");
    private static final Pattern NAMES_C = Pattern.compile("ibv_|rdma_|mlx5|struct |IBV_|RDMA_|\\(\\d\\)|\\bC\\b"
            + "|Java-only|libibverbs|librdmacm|rdma-core|perftest|ibv|rping|udaddy|errno|kernel",
            Pattern.CASE_INSENSITIVE);

    @Test
    void everyPublicTypeSaysWhatItMapsToInC() throws IOException {
        List<String> gaps = new ArrayList<>();
        int types = 0;
        for (String module : MODULES) {
            try (Stream<Path> walk = Files.walk(REPO.resolve(module).resolve("src/main/java"))) {
                for (Path file : walk.filter(p -> p.toString().endsWith(".java")
                        && !p.getFileName().toString().equals("package-info.java")).sorted().toList()) {
                    List<String> lines = Files.readAllLines(file);
                    for (int i = 0; i < lines.size(); i++) {
                        Matcher m = DECLARATION.matcher(lines.get(i));
                        if (!m.find()) {
                            continue;
                        }
                        types++;
                        String doc = javadocAbove(lines, i);
                        String where = REPO.relativize(file) + ":" + (i + 1) + " " + m.group(1);
                        if (doc == null) {
                            gaps.add(where + ": no Javadoc");
                        } else if (!NAMES_C.matcher(doc).find()) {
                            gaps.add(where + ": its Javadoc names no C counterpart and does not say Java-only");
                        }
                    }
                }
            }
        }
        assertThat(types).as("public types found").isGreaterThan(100);
        assertThat(gaps).isEmpty();
    }

    /** The Javadoc comment ending above line {@code i}, past annotations (which may span lines); null if none. */
    static String javadocAbove(List<String> lines, int i) {
        int j = i - 1;
        while (j >= 0 && !lines.get(j).strip().endsWith("*/") && !lines.get(j).isBlank()
                && !lines.get(j).strip().matches(".*[;{}]$")) {
            j--;
        }
        if (j < 0 || !lines.get(j).strip().endsWith("*/")) {
            return null;
        }
        int k = j;
        while (k >= 0 && !lines.get(k).contains("/**")) {
            if (lines.get(k).contains("/*") && !lines.get(k).contains("/**")) {
                return null; // a plain block comment, not Javadoc
            }
            k--;
        }
        return k < 0 ? null : String.join("\n", lines.subList(k, j + 1));
    }

    @Test
    void javadocIsFoundPastAMultiLineAnnotationButNotInAPlainComment() {
        assertThat(javadocAbove(List.of("/** Java-only. */", "@Command(name = \"x\",", "        usage = 1)",
                "public final class X {"), 3)).isEqualTo("/** Java-only. */");
        assertThat(javadocAbove(List.of("/* ibv_foo */", "public final class X {"), 1)).isNull();
        assertThat(javadocAbove(List.of("}", "", "public final class X {"), 2)).isNull();
    }
}
