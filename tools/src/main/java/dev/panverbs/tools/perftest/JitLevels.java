package dev.panverbs.tools.perftest;

import com.sun.management.HotSpotDiagnosticMXBean;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
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
    private static final String PANVERBS = "dev.panverbs.";

    private static volatile DynamicMBean dcmd;
    private static volatile boolean looked;

    private JitLevels() { }

    /** The code list now; null when this JVM cannot tell (the DiagnosticCommand MBean is not reachable). */
    static Snapshot snapshot() {
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
     * What the code list says: the highest tier in use per round method ({@code writeRounds -> 4}) and the compile
     * ids of every panverbs method's C2 code in use (a deoptimization makes one disappear).
     */
    record Snapshot(Map<String, Integer> rounds, Set<Integer> c2Ids) {
        /** Whether there is a round method and all of them are at tier 4 (C2). */
        boolean allAtC2() {
            return !rounds.isEmpty() && rounds.values().stream().allMatch(l -> l == 4);
        }

        /**
         * Whether the C2 code is stable from {@code before} to this one: the round methods at tier 4 in both, and
         * none of the C2 code in use then deoptimized since. The warm-up runs one more fresh pair between the two:
         * a branch its profile never saw taken (a new memory region's key, say, which the run's first post brings)
         * is an uncommon trap in C2 code, and it must fire there, not in the timed section.
         */
        boolean stableSince(Snapshot before) {
            return before != null && before.allAtC2() && allAtC2() && c2Ids.containsAll(before.c2Ids);
        }
    }

    /**
     * Parses the code list: one nmethod per line, {@code "<compile id> <tier> <state> <class.method(sig)ret> [...]"},
     * state 0 = in use (an nmethod made not entrant is not counted).
     */
    static Snapshot parse(String list) {
        Map<String, Integer> levels = new TreeMap<>();
        Set<Integer> c2 = new HashSet<>();
        for (String line : list.split("\n")) {
            String[] f = line.trim().split(" ", 5);
            if (f.length < 4 || !f[3].startsWith(PANVERBS) || !"0".equals(f[2])) {
                continue;
            }
            int id;
            int level;
            try {
                id = Integer.parseInt(f[0]);
                level = Integer.parseInt(f[1]);
            } catch (NumberFormatException e) {
                continue;
            }
            if (level == 4) {
                c2.add(id);
            }
            for (String c : CLASSES) {
                if (f[3].startsWith(c) && f[3].contains(SUFFIX)) {
                    levels.merge(f[3].substring(c.length(), f[3].indexOf('(')), level, Math::max);
                }
            }
        }
        return new Snapshot(levels, c2);
    }
}
