package dev.panverbs.tools.perftest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.tools.perftest.RdmaCmOptionTest.Parsed;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The help screen tells the truth: every option its "Not supported by panverbs" list names for a program is refused
 * by name when that program parses it, and the options it lists as usable (here: -R, -z, which once were in that
 * list) parse.
 */
class UsageTest {
    /** A value for the listed options that take one. */
    private static final Map<String, String> VALUE = Map.of("-M", "ff12::1", "-W", "tx_packets", "--mmap", "/dev/zero",
            "--inline_recv", "64", "--flow_label", "1");
    private static final Pattern LISTED = Pattern.compile("-c ([A-Za-z/]+)|(?<![\\w-])(--?[A-Za-z][\\w-]*)");

    private static String usage(PerftestTest test) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(o, true, StandardCharsets.UTF_8)) {
            Usage.print(test, test.programName(), out);
        }
        return o.toString(StandardCharsets.UTF_8);
    }

    /** The argument vectors of the options named in the "Not supported" list, up to its ';'. */
    static List<List<String>> refusedArgs(String usage) {
        String head = " Not supported by panverbs (refused by name): ";
        String list = usage.substring(usage.indexOf(head) + head.length());
        list = list.substring(0, list.indexOf(';'));
        List<List<String>> args = new ArrayList<>();
        Matcher m = LISTED.matcher(list);
        while (m.find()) {
            if (m.group(1) != null) {
                for (String type : m.group(1).split("/")) {
                    args.add(List.of("-c", type));
                }
            } else {
                String opt = m.group(2);
                args.add(VALUE.containsKey(opt) ? List.of(opt, VALUE.get(opt)) : List.of(opt));
            }
        }
        return args;
    }

    @Test
    void everyOptionListedAsNotSupportedIsRefusedByNameByThatProgram() {
        for (PerftestTest t : PerftestTest.values()) {
            List<List<String>> listed = refusedArgs(usage(t));
            assertThat(listed).as(t + ": options found in the list").hasSizeGreaterThanOrEqualTo(10);
            for (List<String> a : listed) {
                Parsed p = RdmaCmOptionTest.parse(t, a.toArray(String[]::new));
                assertThat(p.outcome().proceed()).as(t + " " + a).isFalse();
                assertThat(p.err()).as(t + " " + a).contains("not supported")
                        .endsWith(" Parser function exited with Error\n");
            }
        }
    }

    @Test
    void rdmaCmOptionsAreListedAsOptionsAndParse() {
        for (PerftestTest t : PerftestTest.values()) {
            String u = usage(t);
            assertThat(u).contains("  -R, --rdma_cm ").contains("  -z, --comm_rdma_cm ");
            assertThat(refusedArgs(u)).doesNotContain(List.of("-R"), List.of("-z"));
            for (String opt : new String[] {"-R", "-z", "--rdma_cm", "--comm_rdma_cm"}) {
                Parsed p = RdmaCmOptionTest.parse(t, opt, "h");
                assertThat(p.outcome().proceed()).as(t + " " + opt + p.err()).isTrue();
            }
        }
    }
}
