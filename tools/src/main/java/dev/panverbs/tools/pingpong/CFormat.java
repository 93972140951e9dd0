package dev.panverbs.tools.pingpong;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * The few C {@code printf} conversions the ping-pong output needs, byte for byte.
 *
 * <p>{@code String.format("%.2f")} is not used for floating point: Java rounds the shortest decimal
 * representation half-up ({@code 0.125} becomes {@code 0.13}, {@code 1.005} becomes {@code 1.01}), whereas glibc
 * rounds the exact binary value to nearest-even ({@code 0.12}, {@code 1.00}).
 */
final class CFormat {
    private CFormat() {}

    /** C's {@code %.2f}: the exact value of {@code v}, rounded half-even to two decimals. */
    static String fixed2(double v) {
        if (Double.isNaN(v)) {
            return "-nan";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "inf" : "-inf";
        }
        String s = new BigDecimal(v).setScale(2, RoundingMode.HALF_EVEN).toPlainString();
        // glibc keeps the sign of a negative value that rounds to zero
        return (v < 0 || (v == 0 && 1 / v < 0)) && !s.startsWith("-") ? "-" + s : s;
    }

    /** C's {@code %0<width>x} of a non-negative value. */
    static String hex(long value, int width) {
        String h = Long.toHexString(value);
        return h.length() >= width ? h : "0".repeat(width - h.length()) + h;
    }
}
