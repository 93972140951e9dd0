package dev.panverbs.tools.perftest;

import java.util.ArrayList;
import java.util.List;

/**
 * A faithful emulation of glibc's {@code getopt_long(3)} in its default (permuting) mode, so that the perftest
 * clones accept exactly the command lines the C tools accept: options anywhere on the line, clustered short
 * options ({@code -aF}), attached arguments ({@code -n100}, {@code --iters=100}), unique prefixes of long
 * options ({@code --it 100}) and {@code --} to end the options. Error messages are glibc 2.36's, word for word,
 * including the ambiguity list in table order.
 *
 * <p>Not thread-safe; one instance parses one command line.
 */
final class GetoptLong {

    /** One entry of the long option table ({@code struct option}). */
    record LongOption(String name, boolean hasArg, boolean flag, int val) {
        /** A long option that reports {@code val} like a short option. */
        static LongOption of(String name, boolean hasArg, char val) {
            return new LongOption(name, hasArg, false, val);
        }

        /**
         * A long option with {@code .flag = &x_flag}: getopt returns 0 and every such option has its own flag
         * address, which matters for ambiguity (two entries are "the same option" only if has_arg, flag and val
         * all agree).
         */
        static LongOption flag(String name, boolean hasArg) {
            return new LongOption(name, hasArg, true, 0);
        }
    }

    /**
     * One result of the scan: an option ({@code c} is the short option character, or 0 for a flag-style long
     * option, with {@code longOption} set), or an error ({@code c == '?'}, {@code error} is the glibc message).
     */
    record Result(int c, String optarg, LongOption longOption, String error) { }

    private final String argv0;
    private final String optstring;
    private final List<LongOption> longOptions;

    GetoptLong(String argv0, String optstring, List<LongOption> longOptions) {
        this.argv0 = argv0;
        this.optstring = optstring;
        this.longOptions = List.copyOf(longOptions);
    }

    /** The outcome of scanning a whole command line: options in order, then the non-option arguments. */
    record Scan(List<Result> options, List<String> operands) { }

    /**
     * Scans {@code args} completely. Like the C loop {@code while ((c = getopt_long(...)) != -1)}, a caller
     * processes {@link Scan#options()} in order and stops at the first error it cares about.
     */
    Scan scan(List<String> args) {
        List<Result> out = new ArrayList<>();
        List<String> operands = new ArrayList<>();
        int i = 0;
        while (i < args.size()) {
            String arg = args.get(i);
            if (arg.equals("--")) {
                operands.addAll(args.subList(i + 1, args.size()));
                break;
            }
            if (arg.startsWith("--")) {
                i = longOption(args, i, out);
            } else if (arg.startsWith("-") && arg.length() > 1) {
                i = shortOptions(args, i, out);
            } else {
                operands.add(arg); // permutation: non-options are moved to the end
                i++;
            }
        }
        return new Scan(out, operands);
    }

    private int longOption(List<String> args, int i, List<Result> out) {
        String body = args.get(i).substring(2);
        int eq = body.indexOf('=');
        String name = eq < 0 ? body : body.substring(0, eq);
        String inlineArg = eq < 0 ? null : body.substring(eq + 1);

        LongOption found = null;
        for (LongOption o : longOptions) {
            if (o.name().equals(name)) {
                found = o;
                break;
            }
        }
        if (found == null) {
            List<LongOption> prefixed = new ArrayList<>();
            for (LongOption o : longOptions) {
                if (o.name().startsWith(name)) {
                    prefixed.add(o);
                }
            }
            if (!prefixed.isEmpty()) {
                LongOption first = prefixed.get(0);
                boolean ambiguous = false;
                StringBuilder list = new StringBuilder();
                for (LongOption o : prefixed) {
                    // Entries identical to the first match in (has_arg, flag, val) are not a conflict.
                    boolean conflicts = o == first || o.flag() || first.flag() || o.hasArg() != first.hasArg()
                            || o.val() != first.val();
                    if (o != first && conflicts) {
                        ambiguous = true;
                    }
                    if (conflicts) {
                        list.append(" '--").append(o.name()).append('\'');
                    }
                }
                if (ambiguous) {
                    out.add(error(argv0 + ": option '--" + body + "' is ambiguous; possibilities:" + list));
                    return i + 1;
                }
                found = first;
            }
        }
        if (found == null) {
            out.add(error(argv0 + ": unrecognized option '--" + body + "'"));
            return i + 1;
        }
        if (inlineArg != null && !found.hasArg()) {
            out.add(error(argv0 + ": option '--" + found.name() + "' doesn't allow an argument"));
            return i + 1;
        }
        String optarg = inlineArg;
        int next = i + 1;
        if (found.hasArg() && optarg == null) {
            if (next >= args.size()) {
                out.add(error(argv0 + ": option '--" + found.name() + "' requires an argument"));
                return next;
            }
            optarg = args.get(next++);
        }
        out.add(new Result(found.flag() ? 0 : found.val(), optarg, found, null));
        return next;
    }

    private int shortOptions(List<String> args, int i, List<Result> out) {
        String arg = args.get(i);
        int next = i + 1;
        for (int k = 1; k < arg.length(); k++) {
            char c = arg.charAt(k);
            int at = c == ':' ? -1 : optstring.indexOf(c);
            if (at < 0) {
                out.add(error(argv0 + ": invalid option -- '" + c + "'"));
                continue;
            }
            boolean hasArg = at + 1 < optstring.length() && optstring.charAt(at + 1) == ':';
            if (!hasArg) {
                out.add(new Result(c, null, null, null));
                continue;
            }
            if (k + 1 < arg.length()) {
                out.add(new Result(c, arg.substring(k + 1), null, null));
            } else if (next < args.size()) {
                out.add(new Result(c, args.get(next++), null, null));
            } else {
                out.add(error(argv0 + ": option requires an argument -- '" + c + "'"));
            }
            break;
        }
        return next;
    }

    private static Result error(String message) {
        return new Result('?', null, null, message);
    }
}
