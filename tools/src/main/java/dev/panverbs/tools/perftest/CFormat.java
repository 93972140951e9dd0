package dev.panverbs.tools.perftest;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;

/**
 * The few C {@code printf} conversions perftest's output uses, reproduced byte for byte. Java's
 * {@link String#format} differs from glibc in ways that show in perftest output: it rounds the decimal string
 * half-up where glibc rounds the exact binary value half-to-even ({@code %.2f} of 0.125 is "0.12" in C), it
 * spells NaN and infinity differently, and it has no equivalent of C's {@code #} flag with zero padding
 * ({@code %#06x} of 0 is "000000" in C, with no "0x").
 */
final class CFormat {
    private CFormat() { }

    /** {@code %.{precision}f}: the exact binary value rounded half-to-even, as glibc does. */
    static String fixed(double value, int precision) {
        if (Double.isNaN(value)) {
            return (Double.doubleToRawLongBits(value) < 0) ? "-nan" : "nan";
        }
        if (Double.isInfinite(value)) {
            return value < 0 ? "-inf" : "inf";
        }
        String s = new BigDecimal(value).setScale(precision, RoundingMode.HALF_EVEN).toPlainString();
        if (value == 0.0 && 1 / value < 0 && !s.startsWith("-")) {
            s = "-" + s; // C keeps the sign of -0.0
        }
        return s;
    }

    /** {@code %-{width}.{precision}f}. */
    static String fixedLeft(double value, int width, int precision) {
        return left(fixed(value, precision), width);
    }

    /** {@code %lf} / {@code %f}: six decimals. */
    static String lf(double value) {
        return fixed(value, 6);
    }

    /** {@code %-{width}s}, also {@code %-{width}lu} once the number is a string. */
    static String left(String s, int width) {
        if (s.length() >= width) {
            return s;
        }
        return s + " ".repeat(width - s.length());
    }

    /** {@code %{width}s}. */
    static String right(String s, int width) {
        if (s.length() >= width) {
            return s;
        }
        return " ".repeat(width - s.length()) + s;
    }

    /** {@code %lu} of a 64-bit value taken as unsigned. */
    static String lu(long value) {
        return Long.toUnsignedString(value);
    }

    /** {@code %-{width}lu}. */
    static String luLeft(long value, int width) {
        return left(lu(value), width);
    }

    /** {@code %0{width}d}. */
    static String zeroPad(long value, int width) {
        String digits = Long.toString(Math.abs(value));
        String sign = value < 0 ? "-" : "";
        int pad = width - sign.length() - digits.length();
        return sign + (pad > 0 ? "0".repeat(pad) : "") + digits;
    }

    /**
     * {@code %#0{width}x} (also written {@code %#{width}x} in perftest, where the 0 flag is implied by the
     * width starting with 0, e.g. {@code %#04x}). C semantics: the value 0 gets no "0x" and is zero padded to the
     * width; any other value gets "0x", and the zeros go between "0x" and the digits, the prefix counting in the
     * width. A value wider than the field is not truncated.
     */
    static String hexAlt(long value, int width) {
        String digits = Long.toHexString(value);
        if (value == 0) {
            return zeroPad(0, width);
        }
        int pad = width - 2 - digits.length();
        return "0x" + (pad > 0 ? "0".repeat(pad) : "") + digits;
    }

    /** {@code %0{width}x}: lowercase hex, zero padded, no prefix. */
    static String hex(long value, int width) {
        String digits = Long.toHexString(value);
        return digits.length() >= width ? digits : "0".repeat(width - digits.length()) + digits;
    }

    /**
     * {@code %g} (precision 6): the shorter of {@code %e} and {@code %f} per the C rules, trailing zeros and a
     * trailing point removed. Used for the latency histogram ({@code -H}, {@code -U}).
     */
    static String g(double value) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            return fixed(value, 0);
        }
        if (value == 0.0) {
            return (1 / value < 0) ? "-0" : "0";
        }
        final int p = 6;
        BigDecimal exact = new BigDecimal(value);
        BigDecimal rounded = exact.round(new java.math.MathContext(p, RoundingMode.HALF_EVEN));
        int x = rounded.precision() - rounded.scale() - 1; // decimal exponent of the rounded value
        String s;
        if (x < -4 || x >= p) {
            BigInteger unscaled = rounded.unscaledValue().abs();
            String digits = unscaled.toString();
            while (digits.length() < p) {
                digits += "0";
            }
            String mantissa = digits.charAt(0) + (p > 1 ? "." + digits.substring(1, p) : "");
            mantissa = stripZeros(mantissa);
            String exp = (x < 0 ? "-" : "+") + (Math.abs(x) < 10 ? "0" : "") + Math.abs(x);
            s = (value < 0 ? "-" : "") + mantissa + "e" + exp;
        } else {
            s = stripZeros(rounded.setScale(Math.max(p - 1 - x, 0), RoundingMode.HALF_EVEN).toPlainString());
        }
        return s;
    }

    private static String stripZeros(String s) {
        if (s.indexOf('.') < 0) {
            return s;
        }
        int end = s.length();
        while (s.charAt(end - 1) == '0') {
            end--;
        }
        if (s.charAt(end - 1) == '.') {
            end--;
        }
        return s.substring(0, end);
    }
}
