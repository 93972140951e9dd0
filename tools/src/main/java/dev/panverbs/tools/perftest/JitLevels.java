package dev.panverbs.tools.perftest;

import com.sun.management.HotSpotDiagnosticMXBean;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.TreeMap;
import javax.management.DynamicMBean;

/**
 * Which tier HotSpot has compiled the runners' round methods at, read from the JVM's own code list (the
 * {@code Compiler.codelist} diagnostic command that {@code jcmd PID Compiler.codelist} prints, here through the
 * JVM's DiagnosticCommand MBean; no WhiteBox, no agent). The JIT warm-up ({@link Warmup}) runs until every
 * round method the pair ran is compiled by C2 (tier 4) and in use: a probe of a fixed length left them at tier 3
 * (C1 with profiling) on a slow machine, and C2 then compiled them inside the timed section.
 */
final class JitLevels {
    /** The methods the timed loops spend their time in (the post and poll calls are inlined into them). */
    private static final String[] CLASSES = {
        "dev.panverbs.tools.perftest.LatencyRunner.", "dev.panverbs.tools.perftest.BwRunner.",
    };
    private static final String SUFFIX = "Rounds(";

    private static volatile DynamicMBean dcmd;
    private static volatile boolean looked;

    private JitLevels() { }

    /**
     * The highest tier in use per round method that has compiled code ({@code writeRounds -> 4}), sorted by
     * name; null when this JVM cannot tell (no DiagnosticCommand MBean).
     */
    static Map<String, Integer> roundMethods() {
        DynamicMBean dcmd = diagnosticCommands();
        if (dcmd == null) {
            return null;
        }
        try {
            return parse((String) dcmd.invoke("compilerCodelist", new Object[] {null},
                    new String[] {String[].class.getName()}));
        } catch (Exception | LinkageError e) {
            return null;
        }
    }

    /**
     * The JVM's DiagnosticCommand MBean, taken directly (the launcher opens its package to the tools): the platform
     * MBean server would also start every platform MXBean, JFR's among them (it parses JFR's XML settings), a few
     * seconds of class loading and compilation under emulation, during which the Soft-RoCE bed's 2-vCPU QEMU once
     * crashed a JVM (its known torn decode of code HotSpot patches, README "Known limits"). Null when not opened:
     * the warm-up then runs for its time budget, as without this check.
     */
    private static DynamicMBean diagnosticCommands() {
        DynamicMBean d = dcmd;
        if (d == null && !looked) {
            looked = true;
            try {
                Method m = Class.forName("com.sun.management.internal.DiagnosticCommandImpl")
                        .getDeclaredMethod("getDiagnosticCommandMBean");
                m.setAccessible(true);
                d = (DynamicMBean) m.invoke(null);
                dcmd = d;
            } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                return null;
            }
        }
        return d;
    }

    /** Whether this JVM compiles with C2 at all (not with -XX:TieredStopAtLevel below 4, as the ITs' JVMs run). */
    static boolean c2Available() {
        try {
            HotSpotDiagnosticMXBean hs = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            String stop = hs.getVMOption("TieredStopAtLevel").getValue();
            String tiered = hs.getVMOption("TieredCompilation").getValue();
            return "false".equals(tiered) || Integer.parseInt(stop) >= 4;
        } catch (RuntimeException | LinkageError e) {
            return true;
        }
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
