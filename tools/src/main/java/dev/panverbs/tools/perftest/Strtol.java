package dev.panverbs.tools.perftest;

/**
 * C's {@code strtol(s, &end, 0)} and {@code strtof}, as perftest's {@code CHECK_VALUE} macros use them: base 0
 * (decimal, {@code 0x} hex, leading-0 octal), leading white space skipped, an optional sign, overflow clamped to
 * {@code LONG_MAX}/{@code LONG_MIN}, and the index of the first unconsumed character so a caller can insist that
 * the whole argument was a number.
 */
final class Strtol {
    private Strtol() { }

    /** Value and end index of one conversion. */
    record Result(long value, int end) {
        /** True when the whole string was consumed ({@code *endptr == '\0'}). */
        boolean complete(String s) {
            return end == s.length();
        }
    }

    static Result parse(String s) {
        int i = 0;
        int n = s.length();
        while (i < n && isSpace(s.charAt(i))) {
            i++;
        }
        boolean negative = false;
        if (i < n && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
            negative = s.charAt(i) == '-';
            i++;
        }
        int base = 10;
        if (i < n && s.charAt(i) == '0') {
            if (i + 2 < n && (s.charAt(i + 1) == 'x' || s.charAt(i + 1) == 'X')
                    && Character.digit(s.charAt(i + 2), 16) >= 0) {
                base = 16;
                i += 2;
            } else {
                base = 8;
            }
        }
        int start = i;
        boolean overflow = false;
        long acc = 0;
        while (i < n) {
            int d = Character.digit(s.charAt(i), base);
            if (d < 0 || s.charAt(i) > 0x7f) {
                break;
            }
            if (!overflow) {
                try {
                    acc = Math.addExact(Math.multiplyExact(acc, base), d);
                } catch (ArithmeticException e) {
                    overflow = true;
                }
            }
            i++;
        }
        if (i == start) {
            return new Result(0, 0); // no digits: endptr = nptr
        }
        long value = overflow ? (negative ? Long.MIN_VALUE : Long.MAX_VALUE) : (negative ? -acc : acc);
        return new Result(value, i);
    }

    /** {@code strtof(s, NULL)}: the longest leading float, 0 when there is none. */
    static double parseFloat(String s) {
        java.util.regex.Matcher m = FLOAT.matcher(s);
        if (!m.lookingAt()) {
            return 0;
        }
        String t = m.group(1);
        try {
            return (float) Double.parseDouble(t);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** {@code atof(s)}: like strtof but double precision. */
    static double atof(String s) {
        java.util.regex.Matcher m = FLOAT.matcher(s);
        if (!m.lookingAt()) {
            return 0;
        }
        try {
            return Double.parseDouble(m.group(1));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static final java.util.regex.Pattern FLOAT =
            java.util.regex.Pattern.compile("[ \\t\\n\\x0B\\f\\r]*([+-]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d+)?)");

    private static boolean isSpace(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == 0x0B || c == '\f' || c == '\r';
    }
}
