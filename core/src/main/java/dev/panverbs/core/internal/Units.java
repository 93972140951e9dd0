package dev.panverbs.core.internal;

/** Formatting helpers for messages. */
public final class Units {

    private Units() {}

    /** {@code 1 GiB}, {@code 64 KiB}, {@code 1536 B}: exact binary units, else bytes. */
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
