package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replays command lines recorded from the real C perftest 6.06 (src/test/golden/gen-cli-golden.sh) against
 * {@link PerftestParser}. The C tools parse before they look for a device, so a line they accept ends with
 * "Did not detect devices" here; everything they print before that, and every rejection, must be identical
 * (stdout, stderr, exit status). The only allowed difference: options panverbs does not implement are refused
 * by name, and those cases are listed below so a new refusal cannot slip in unnoticed.
 */
class PerftestParserGoldenTest {

    /** Command lines the C tool accepts (or fails later) that panverbs refuses as unsupported, by design. */
    private static final Set<String> REFUSED_AS_UNSUPPORTED = Set.of(
            "ib_write_bw -O", "ib_send_bw -b", "ib_send_bw --report-both",
            "ib_write_bw --run_infinitely", "ib_write_bw --dont_xchg_versions",
            "ib_send_bw -g", "ib_write_lat -C",
            "ib_write_lat -w 5", "ib_send_lat -g");

    record Case(String tool, List<String> args, int rc, String out, String err) {
        String line() {
            return (tool + " " + String.join(" ", args)).trim();
        }

        boolean accepted() {
            return err.contains(" Did not detect devices \n");
        }

        /** What the C tool printed to stderr before it looked for a device. */
        String errBeforeDevice() {
            int at = err.indexOf(" Did not detect devices \n");
            return at < 0 ? err : err.substring(0, at);
        }
    }

    static List<Case> cases() throws IOException {
        List<Case> cases = new ArrayList<>();
        try (InputStream in = PerftestParserGoldenTest.class.getResourceAsStream("/perftest-cli-golden.txt")) {
            List<String> lines = Arrays.asList(new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n", -1));
            int i = 0;
            while (i < lines.size()) {
                String l = lines.get(i);
                if (!l.startsWith("=== ")) {
                    i++;
                    continue;
                }
                String[] words = l.substring(4).trim().split("\\s+");
                String tool = words[0];
                List<String> args = List.of(words).subList(1, words.length);
                int rc = Integer.parseInt(lines.get(i + 1).substring(3));
                i += 2;
                String[] streams = new String[2];
                for (int s = 0; s < 2; s++) {
                    String header = lines.get(i++);
                    if (header.endsWith(" usage")) {
                        streams[s] = "usage";
                        continue;
                    }
                    int n = Integer.parseInt(header.substring(header.indexOf(' ') + 1));
                    StringBuilder b = new StringBuilder();
                    for (int k = 0; k < n; k++) {
                        b.append(lines.get(i++).substring(2)).append('\n');
                    }
                    if (i < lines.size() && lines.get(i).equals("\\ no newline")) {
                        b.setLength(b.length() - 1);
                        i++;
                    }
                    streams[s] = b.toString();
                }
                cases.add(new Case(tool, args, rc, streams[0], streams[1]));
            }
        }
        return cases;
    }

    record Run(PerftestParser.Outcome outcome, String out, String err) { }

    static Run run(String tool, List<String> args) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        PerftestParser.Outcome outcome;
        try (PrintStream out = new PrintStream(o, true, StandardCharsets.UTF_8);
             PrintStream err = new PrintStream(e, true, StandardCharsets.UTF_8)) {
            outcome = PerftestParser.parse(PerftestTest.byProgramName(tool), tool, args, out, err);
        }
        return new Run(outcome, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
    }

    @Test
    void corpusIsComplete() throws IOException {
        List<Case> cases = cases();
        assertThat(cases).hasSizeGreaterThan(150);
        assertThat(cases.stream().filter(Case::accepted).count()).isGreaterThan(40);
        for (PerftestTest t : PerftestTest.values()) {
            assertThat(cases).anyMatch(c -> c.tool().equals(t.programName()));
        }
        for (String refused : REFUSED_AS_UNSUPPORTED) {
            assertThat(cases).anyMatch(c -> c.line().equals(refused));
        }
    }

    @TestFactory
    Stream<DynamicTest> sameAsPerftest() throws IOException {
        return cases().stream().map(c -> DynamicTest.dynamicTest(c.line(), () -> {
            Run r = run(c.tool(), c.args());
            if (REFUSED_AS_UNSUPPORTED.contains(c.line())) {
                assertThat(r.outcome().proceed()).as("refused").isFalse();
                assertThat(r.outcome().exitCode()).isEqualTo(1);
                assertThat(r.err()).contains("not supported").endsWith(" Parser function exited with Error\n");
                String option = c.args().get(0);
                assertThat(r.err()).as("names the option").contains(option.startsWith("--") ? option
                        : option.substring(0, 2));
                return;
            }
            if (r.outcome().proceed()) {
                assertThat(c.accepted()).as("perftest accepts it too; it printed:\n" + c.err()).isTrue();
                assertThat(r.out()).isEqualTo(c.out());
                assertThat(r.err()).isEqualTo(c.errBeforeDevice());
            } else {
                assertThat(c.accepted()).as("perftest rejects it too; panverbs printed:\n" + r.err()).isFalse();
                assertThat(r.outcome().exitCode()).isEqualTo(c.rc());
                if (c.out().equals("usage")) {
                    assertThat(r.out()).startsWith("Usage:\n  " + c.tool() + "  ");
                } else {
                    assertThat(r.out()).isEqualTo(c.out());
                }
                assertThat(r.err()).isEqualTo(c.err());
            }
        }));
    }
}
