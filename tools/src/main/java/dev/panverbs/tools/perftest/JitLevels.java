package dev.panverbs.tools.perftest;

import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.TreeMap;
import javax.management.ObjectName;

/**
 * Which tier HotSpot has compiled the runners' round methods at, read from the JVM's own code list (the
 * {@code Compiler.codelist} diagnostic command that {@code jcmd PID Compiler.codelist} prints, here through the
 * platform's DiagnosticCommand MBean; no WhiteBox, no agent). The JIT warm-up ({@link Warmup}) runs until every
 * round method the pair ran is compiled by C2 (tier 4) and in use: a probe of a fixed length left them at tier 3
 * (C1 with profiling) on a slow machine, and C2 then compiled them inside the timed section.
 */
final class JitLevels {
    /** The methods the timed loops spend their time in (the post and poll calls are inlined into them). */
    private static final String[] CLASSES = {
        "dev.panverbs.tools.perftest.LatencyRunner.", "dev.panverbs.tools.perftest.BwRunner.",
    };
    private static final String SUFFIX = "Rounds(";

    private JitLevels() { }

    /**
     * The highest tier in use per round method that has compiled code ({@code writeRounds -> 4}), sorted by
     * name; null when this JVM cannot tell (no DiagnosticCommand MBean).
     */
    static Map<String, Integer> roundMethods() {
        String list;
        try {
            list = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "compilerCodelist",
                    new Object[] {null}, new String[] {String[].class.getName()});
        } catch (Exception | LinkageError e) {
            return null;
        }
        return parse(list);
    }

    /**
     * Parses the code list: one nmethod per line, {@code "<compile id> <tier> <state> <class.method(sig)ret> [...]"},
     * state 0 = in use (an nmethod made not entrant is not counted).
     */
    static Map<String, Integer> parse(String list) {
        Map<String, Integer> levels = new TreeMap<>();
        for (String line : list.split("\n")) {
            String[] f = line.trim().split(" ", 5);
            if (f.length < 4 || !f[3].contains(SUFFIX)) {
                continue;
            }
            for (String c : CLASSES) {
                if (f[3].startsWith(c)) {
                    String name = f[3].substring(c.length(), f[3].indexOf('('));
                    int level;
                    try {
                        level = "0".equals(f[2]) ? Integer.parseInt(f[1]) : 0;
                    } catch (NumberFormatException e) {
                        continue;
                    }
                    levels.merge(name, level, Math::max);
                }
            }
        }
        return levels;
    }

    /** Whether {@code levels} has a round method and all of them at tier 4 (C2). */
    static boolean allAtC2(Map<String, Integer> levels) {
        return levels != null && !levels.isEmpty() && levels.values().stream().allMatch(l -> l == 4);
    }
}
