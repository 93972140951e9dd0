package dev.panverbs.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one JDK finder of the scripts, {@code testbed/lib/jdk.sh}: its policy on fake JDK directories, and that
 * {@code tools/bin/panverbs}, {@code perf/run} and {@code testbed/} use it and no other.
 */
class JdkFinderTest {
    private static final Path REPO = Path.of("..").toAbsolutePath().normalize();
    private static final Path JDK_SH = REPO.resolve("testbed/lib/jdk.sh");

    @TempDir
    Path jvm;

    @BeforeEach
    void jdks() throws IOException {
        fakeJdk("java-17-openjdk-amd64", "17.0.13", true, true);
        fakeJdk("jdk-22", "22.0.2", true, true);
        fakeJdk("temurin-25-jdk-amd64", "25.0.1", true, true);
        fakeJdk("jre-26", "26", false, true);          // no javac: not a JDK
    }

    @Test
    void findJdkTakesJavaHomeWhen22OrNewer() throws Exception {
        Result r = find(jvm.resolve("jdk-22"));
        assertThat(r.javaHome()).isEqualTo(jvm.resolve("jdk-22").toString());
        assertThat(r.stderr()).isEmpty();
    }

    @Test
    void findJdkWithoutJavaHomeTakesTheNewestJdk() throws Exception {
        Result r = find(null);
        assertThat(r.javaHome()).isEqualTo(jvm.resolve("temurin-25-jdk-amd64").toString());
        assertThat(r.stderr()).isEmpty();
    }

    @Test
    void findJdkPassesOverAnOldJavaHomeWithANote() throws Exception {
        Result r = find(jvm.resolve("java-17-openjdk-amd64"));
        assertThat(r.javaHome()).isEqualTo(jvm.resolve("temurin-25-jdk-amd64").toString());
        assertThat(r.stderr()).contains("java-17-openjdk-amd64 is Java 17, older than 22")
                .contains("using " + jvm.resolve("temurin-25-jdk-amd64") + " (Java 25)");
    }

    @Test
    void findJdkPassesOverAJreJavaHome() throws Exception {
        Result r = find(jvm.resolve("jre-26"));
        assertThat(r.javaHome()).isEqualTo(jvm.resolve("temurin-25-jdk-amd64").toString());
        assertThat(r.stderr()).contains("is not a JDK (no bin/javac)");
    }

    @Test
    void findJdkReadsTheVersionFromJavaWithoutReleaseFile() throws Exception {
        fakeJdk("built-from-source", "27", true, false);
        Result r = find(null);
        assertThat(r.javaHome()).isEqualTo(jvm.resolve("built-from-source").toString());
    }

    @Test
    void findJdkWithoutJdk22FailsNamingWhatItFound() throws Exception {
        deleteJdk("jdk-22");
        deleteJdk("temurin-25-jdk-amd64");
        Result r = find(jvm.resolve("java-17-openjdk-amd64"));
        assertThat(r.rc()).isEqualTo(1);
        assertThat(r.error()).startsWith("no JDK 22 or newer: JAVA_HOME=")
                .contains("is Java 17, older than 22")
                .contains(jvm + " holds java-17-openjdk-amd64 (17)")
                .contains("set JAVA_HOME");
    }

    @Test
    void findJdkWithEmptyJvmDirAndNoJavaHomeFails() throws Exception {
        Result r = find(null, jvm.resolve("nothing-here"));
        assertThat(r.rc()).isEqualTo(1);
        assertThat(r.error()).contains("JAVA_HOME is unset").contains("holds no JDK");
    }

    /** tools/bin/panverbs (and its symlinks), perf/run and testbed/test find their JDK through jdk.sh. */
    @Test
    void scriptsShareTheOneFinder() throws IOException {
        for (String script : List.of("tools/bin/panverbs", "perf/run", "testbed/lib/bed.sh")) {
            assertThat(Files.readString(REPO.resolve(script))).as(script).contains("/lib/jdk.sh\"");
        }
        for (String script : List.of("tools/bin/panverbs", "perf/run", "testbed/test")) {
            assertThat(Files.readString(REPO.resolve(script))).as(script).contains("panverbs_find_jdk ||");
        }
        // no script but jdk.sh looks for JDKs itself (a second policy)
        Pattern ownPolicy = Pattern.compile("/usr/lib/jvm/\\*|JAVA_VERSION=|java\\.specification\\.version");
        List<String> violations = new ArrayList<>();
        for (Path script : scripts()) {
            if (!script.equals(JDK_SH) && ownPolicy.matcher(Files.readString(script)).find()) {
                violations.add(REPO.relativize(script).toString());
            }
        }
        assertThat(violations).as("scripts that look for a JDK themselves instead of sourcing testbed/lib/jdk.sh")
                .isEmpty();
    }

    /** The repository's shell scripts: executable files and *.sh outside target/ and .git/. */
    private static List<Path> scripts() throws IOException {
        try (Stream<Path> walk = Files.walk(REPO)) {
            List<Path> scripts = walk.filter(Files::isRegularFile)
                    .filter(p -> !REPO.relativize(p).toString().matches("(.*/)?(target|\\.git|src-gen)/.*"))
                    .filter(p -> p.toString().endsWith(".sh") || Files.isExecutable(p))
                    .filter(JdkFinderTest::isShell)
                    .toList();
            assertThat(scripts).as("shell scripts of " + REPO)
                    .contains(JDK_SH, REPO.resolve("tools/bin/panverbs"), REPO.resolve("perf/run"),
                            REPO.resolve("testbed/test"));
            return scripts;
        }
    }

    private static boolean isShell(Path p) {
        try {
            String text = Files.readString(p, StandardCharsets.ISO_8859_1);
            return p.toString().endsWith(".sh") || text.startsWith("#!/bin/bash") || text.startsWith("#!/bin/sh");
        } catch (IOException e) {
            return false;
        }
    }

    record Result(int rc, String javaHome, String error, String stderr) {}

    private Result find(Path javaHome) throws Exception {
        return find(javaHome, jvm);
    }

    private Result find(Path javaHome, Path jvmDir) throws Exception {
        String script = ". \"$1\"; if panverbs_find_jdk \"$2\"; then printf '%s' \"$JAVA_HOME\"; "
                + "else printf 'ERROR %s' \"$PANVERBS_JDK_ERROR\"; exit 1; fi";
        ProcessBuilder pb = new ProcessBuilder("bash", "-c", script, "find", JDK_SH.toString(), jvmDir.toString());
        Map<String, String> env = pb.environment();
        env.remove("JAVA_HOME");
        if (javaHome != null) {
            env.put("JAVA_HOME", javaHome.toString());
        }
        pb.redirectError(jvm.resolve("stderr.txt").toFile());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        String err = Files.readString(jvm.resolve("stderr.txt")).strip();
        return p.exitValue() == 0
                ? new Result(0, out, null, err)
                : new Result(p.exitValue(), null, out.replaceFirst("^ERROR ", ""), err);
    }

    /** A directory that looks like a JDK of {@code version}: its java answers -XshowSettings like a real one. */
    private void fakeJdk(String name, String version, boolean javac, boolean releaseFile) throws IOException {
        Path home = Files.createDirectories(jvm.resolve(name).resolve("bin"));
        executable(home.resolve("java"), "#!/bin/sh\necho '    java.specification.version = "
                + version.replaceFirst("\\..*", "") + "' >&2\n");
        if (javac) {
            executable(home.resolve("javac"), "#!/bin/sh\nexit 0\n");
        }
        if (releaseFile) {
            Files.writeString(jvm.resolve(name).resolve("release"), "IMPLEMENTOR=\"test\"\nJAVA_VERSION=\"" + version + "\"\n");
        }
    }

    private void deleteJdk(String name) throws IOException {
        try (Stream<Path> walk = Files.walk(jvm.resolve(name))) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    private static void executable(Path file, String text) throws IOException {
        Files.writeString(file, text);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
}
