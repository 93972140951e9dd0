package dev.panverbs.core.internal;

/** Formatting helpers for messages. Java-only. */
public final class Units {

    private Units() {}

    /** {@code 1 GiB}, {@code 64 KiB}, {@code 1536 B}: exact binary units, else bytes. */
    /**
     * {@code d} in milliseconds clamped to {@code 0 .. Integer.MAX_VALUE} (about 24 days): a negative timeout means
     * "do not wait", and a huge one (even {@code Duration.ofSeconds(Long.MAX_VALUE)}, whose {@code toMillis()}
     * overflows) "wait that long".
     */
    public static int clampedMillis(java.time.Duration d) {
        if (d.isNegative()) {
            return 0;
        }
        return d.compareTo(java.time.Duration.ofMillis(Integer.MAX_VALUE)) >= 0 ? Integer.MAX_VALUE : (int) d.toMillis();
    }

    /**
     * {@code d} in nanoseconds for a deadline: 0 for a negative duration, at most {@code Long.MAX_VALUE / 4} (146
     * years), so neither {@code toNanos()} nor {@code System.nanoTime() + } it overflows for a "forever" timeout.
     */
    public static long clampedNanos(java.time.Duration d) {
        if (d.isNegative()) {
            return 0;
        }
        return d.compareTo(java.time.Duration.ofNanos(Long.MAX_VALUE / 4)) > 0 ? Long.MAX_VALUE / 4 : d.toNanos();
    }

    public static String bytes(long n) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        int u = 0;
        long v = n;
        while (u < units.length - 1 && v != 0 && (v & 1023) == 0) {
            v >>= 10;
            u++;
        }
        return v + " " + units[u];
    }

    /** {@code 0x7f12a4c01000}. */
    public static String hex(long address) {
        return "0x" + Long.toHexString(address);
    }
}
