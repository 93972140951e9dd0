package dev.panverbs.core.example;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.module.ModuleDescriptor;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import java.util.stream.Collectors;

/**
 * The README's example and its copy in {@link ReadmeExampleIT}, read from the files, and the README example built
 * as a named module.
 *
 * <p>The markers, exactly:
 * <ul>
 *   <li>README.md: the fenced block opened by the line {@value #README_FENCE} that directly follows the line
 *       {@value #README_MARKER}, up to the next line {@code ```};</li>
 *   <li>ReadmeExampleIT.java: the lines strictly between the line {@value #IT_BEGIN} and the line
 *       {@value #IT_END} (each alone on its line, surrounding whitespace ignored, each exactly once).</li>
 * </ul>
 * The two compare after {@link #normalise(List)}, which removes their common indentation and nothing else.
 */
final class ReadmeExample {
    static final String README_MARKER = "<!-- the example of ReadmeExampleIT: ReadmeExampleTest fails the build when the two differ -->";
    static final String README_FENCE = "```java";
    static final String IT_BEGIN = "// README-BEGIN";
    static final String IT_END = "// README-END";
    static final String IT_SOURCE = "src/test/java/dev/panverbs/core/example/ReadmeExampleIT.java";
    /** The named module the README example becomes, and its main class. */
    static final String MODULE = "example";
    static final String MAIN = "example.ReadmeExample";
    static final List<String> LIBRARY_MODULES = List.of("dev.panverbs.bindings", "dev.panverbs.core");

    private ReadmeExample() {}

    /** The repository's README.md; tests run in core/ (surefire and testbed/lib/run-its alike). */
    static Path readme() {
        Path readme = Path.of("..", "README.md").toAbsolutePath().normalize();
        if (!Files.isRegularFile(readme) || !Files.isRegularFile(Path.of(IT_SOURCE))) {
            throw new IllegalStateException("run from the core module's directory: no " + readme + " or " + IT_SOURCE);
        }
        return readme;
    }

    /** The example block of README.md, as written. */
    static List<String> readmeBlock() throws IOException {
        List<String> lines = Files.readAllLines(readme());
        int marker = lines.indexOf(README_MARKER);
        if (marker < 0 || lines.lastIndexOf(README_MARKER) != marker) {
            throw new IllegalStateException("README.md must hold the line " + README_MARKER + " exactly once, right above "
                    + "the example's " + README_FENCE + " block");
        }
        if (marker + 1 >= lines.size() || !lines.get(marker + 1).equals(README_FENCE)) {
            throw new IllegalStateException("README.md: the line after " + README_MARKER + " must be " + README_FENCE);
        }
        int end = lines.subList(marker + 2, lines.size()).indexOf("```");
        if (end < 0) {
            throw new IllegalStateException("README.md: the example's " + README_FENCE + " block is not closed");
        }
        return List.copyOf(lines.subList(marker + 2, marker + 2 + end));
    }

    /** The lines between the markers in ReadmeExampleIT.java, as written. */
    static List<String> itBody() throws IOException {
        List<String> lines = Files.readAllLines(Path.of(IT_SOURCE));
        int begin = onlyLine(lines, IT_BEGIN);
        int end = onlyLine(lines, IT_END);
        if (end < begin) {
            throw new IllegalStateException(IT_SOURCE + ": " + IT_END + " comes before " + IT_BEGIN);
        }
        return List.copyOf(lines.subList(begin + 1, end));
    }

    private static int onlyLine(List<String> lines, String marker) {
        List<Integer> at = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).strip().equals(marker)) {
                at.add(i);
            }
        }
        if (at.size() != 1) {
            throw new IllegalStateException(IT_SOURCE + " must hold the line " + marker + " exactly once, found " + at.size());
        }
        return at.get(0);
    }

    /** Removes the indentation all non-blank lines share; blank lines become empty. Nothing else changes. */
    static List<String> normalise(List<String> lines) {
        int common = lines.stream().filter(l -> !l.isBlank())
                .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        return lines.stream().map(l -> l.isBlank() ? "" : l.substring(common)).toList();
    }

    /** The flag the README gives for the module path: {@code `--enable-native-access=...` on the module path}. */
    static String moduleNativeAccessFlag() throws IOException {
        String text = Files.readString(readme()).replaceAll("\\s+", " ");
        Matcher m = Pattern.compile("`(--enable-native-access=[^`]+)` on the module path").matcher(text);
        if (!m.find()) {
            throw new IllegalStateException("README.md no longer says \"Run with `--enable-native-access=...` on the "
                    + "module path\"");
        }
        return m.group(1);
    }

    /**
     * Where the named modules {@link #LIBRARY_MODULES} are on this test's class path (a jar or a classes directory
     * with a {@code module-info.class}), found by module name so that no bindings class name is assumed.
     */
    static Map<String, Path> libraryModules() throws IOException, URISyntaxException {
        Map<String, Path> found = new LinkedHashMap<>();
        for (URL url : Collections.list(ReadmeExample.class.getClassLoader().getResources("module-info.class"))) {
            String name;
            try (InputStream in = url.openStream()) {
                name = ModuleDescriptor.read(in).name();
            }
            if (LIBRARY_MODULES.contains(name)) {
                Path root = url.getProtocol().equals("jar")
                        ? Path.of(((JarURLConnection) url.openConnection()).getJarFileURL().toURI())
                        : Path.of(url.toURI()).getParent();
                Path earlier = found.putIfAbsent(name, root);
                if (earlier != null && !earlier.equals(root)) {
                    throw new IllegalStateException("module " + name + " twice on the class path: " + earlier + " and " + root);
                }
            }
        }
        if (!found.keySet().containsAll(LIBRARY_MODULES)) {
            throw new IllegalStateException("modules " + LIBRARY_MODULES + " not all on the test class path (found "
                    + found + "): build bindings and core first");
        }
        return found;
    }

    /** The module path of the library: the bindings' and core's jars or classes directories. */
    static String libraryModulePath() throws IOException, URISyntaxException {
        return libraryModules().values().stream().map(Path::toString).collect(Collectors.joining(":"));
    }

    /**
     * Writes the README example as module {@value #MODULE} ({@code requires dev.panverbs.core} only) with main class
     * {@value #MAIN} ({@code args: deviceName localAddress}), compiles it against the library's module path into
     * {@code dir/classes} and returns that directory. Throws with javac's diagnostics when it does not compile.
     */
    static Path compileModule(Path dir) throws IOException, URISyntaxException {
        Path src = dir.resolve("src");
        Path classes = dir.resolve("classes");
        Files.createDirectories(src.resolve("example"));
        Files.writeString(src.resolve("module-info.java"), "module " + MODULE + " {\n    requires dev.panverbs.core;\n}\n");
        StringBuilder main = new StringBuilder("""
                package example;

                import dev.panverbs.core.*;

                import java.net.InetAddress;
                import java.util.EnumSet;

                /** README.md's example, verbatim, as a program: ReadmeExample DEVICE LOCAL_IPV4_ADDRESS. */
                public final class ReadmeExample {
                    public static void main(String[] args) {
                        String deviceName = args[0];
                        InetAddress localAddress = InetAddress.ofLiteral(args[1]);
                """);
        for (String line : readmeBlock()) {
            main.append(line.isBlank() ? "" : "        " + line).append('\n');
        }
        main.append("    }\n}\n");
        Files.writeString(src.resolve("example/ReadmeExample.java"), main);

        // javac in this JVM through java.base's ToolProvider (core's tests are compiled inside module
        // dev.panverbs.core, which does not read java.compiler); a JRE has no javac
        ToolProvider javac = ToolProvider.findFirst("javac")
                .orElseThrow(() -> new IllegalStateException("no javac in this JVM: the tests need a JDK, not a JRE"));
        StringWriter diagnostics = new StringWriter();
        PrintWriter to = new PrintWriter(diagnostics, true);
        int rc = javac.run(to, to, "--module-path", libraryModulePath(), "-d", classes.toString(), "-Xlint:all",
                src.resolve("module-info.java").toString(), src.resolve("example/ReadmeExample.java").toString());
        if (rc != 0) {
            throw new IllegalStateException("the README example does not compile as module " + MODULE
                    + " against " + libraryModulePath() + ":\n" + diagnostics);
        }
        return classes;
    }
}
