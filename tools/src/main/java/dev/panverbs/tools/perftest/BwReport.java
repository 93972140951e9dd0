package dev.panverbs.tools.perftest;

import java.nio.ByteBuffer;

/**
 * One bandwidth result row ({@code struct bw_report_data} without the per-port fields): what a BW test prints and
 * what the client sends the server at the end ({@code xchg_bw_reports}).
 *
 * <p>On the wire (peer version >= 5.33) it is five separate 8-byte big-endian exchanges, in this order:
 * <pre>
 *   size (u64) | iters (u64) | bw_peak (double) | bw_avg (double) | msgRate (double)
 * </pre>
 */
record BwReport(long size, long iters, double bwPeak, double bwAvg, double msgRate) {

    /** Field {@code i} (0..4) as the 8 bytes perftest sends. */
    byte[] field(int i) {
        ByteBuffer b = ByteBuffer.allocate(8); // big endian
        switch (i) {
            case 0 -> b.putLong(size);
            case 1 -> b.putLong(iters);
            case 2 -> b.putDouble(bwPeak);
            case 3 -> b.putDouble(bwAvg);
            case 4 -> b.putDouble(msgRate);
            default -> throw new IllegalArgumentException("field " + i);
        }
        return b.array();
    }

    /** Rebuilds a report from the five received fields. */
    static BwReport fromFields(byte[][] f) {
        return new BwReport(ByteBuffer.wrap(f[0]).getLong(), ByteBuffer.wrap(f[1]).getLong(),
                ByteBuffer.wrap(f[2]).getDouble(), ByteBuffer.wrap(f[3]).getDouble(),
                ByteBuffer.wrap(f[4]).getDouble());
    }
}
