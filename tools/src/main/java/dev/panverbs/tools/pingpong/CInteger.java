package dev.panverbs.tools.pingpong;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses an integer option the way the C tools' {@code strtol(optarg, NULL, 0)} does, hex ({@code 0x10}) and
 * octal ({@code 010}) included, but rejects what {@code strtol} would silently read as 0 or truncate: trailing
 * garbage, an empty string, values beyond 64 bits.
 */
final class CInteger implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
        return parse(value);
    }

    static long parse(String value) {
        String s = value.strip();
        boolean negative = false;
        if (s.startsWith("-") || s.startsWith("+")) {
            negative = s.charAt(0) == '-';
            s = s.substring(1);
        }
        int radix = 10;
        if (s.length() > 2 && (s.startsWith("0x") || s.startsWith("0X"))) {
            radix = 16;
            s = s.substring(2);
        } else if (s.length() > 1 && s.startsWith("0")) {
            radix = 8;
            s = s.substring(1);
        }
        if (s.isEmpty() || s.charAt(0) == '-' || s.charAt(0) == '+') {
            throw new TypeConversionException("'" + value + "' is not an integer");
        }
        try {
            long v = Long.parseLong(s, radix);
            return negative ? -v : v;
        } catch (NumberFormatException e) {
            throw new TypeConversionException("'" + value + "' is not an integer (decimal, 0x hex or 0 octal)");
        }
    }
}
