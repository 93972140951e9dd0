package dev.panverbs.tools.pingpong;

/**
 * The lines the C ping-pong tools print, byte for byte (see rdma-core's {@code libibverbs/examples}).
 *
 * <p>The arithmetic mirrors the C code's types: the elapsed time is a {@code float} of microseconds,
 * {@code usec / 1000000.} and {@code bytes * 8. / usec} are done in {@code double}, but {@code usec / iters}
 * is a {@code float} division. Printing uses C's {@code %.2f} rounding ({@link CFormat#fixed2}).
 */
public final class PingPongReport {
    private PingPongReport() {}

    /** {@code "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s"}. */
    public static String localAddressRc(PingPongDestination local) {
        return "  local address:  " + local;
    }

    /**
     * {@code ibv_ud_pingpong}'s local line, which (unlike its remote line and both RC lines) has a colon
     * before {@code GID}: {@code "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x: GID %s"}.
     */
    public static String localAddressUd(PingPongDestination local) {
        return "  local address:  LID 0x" + CFormat.hex(local.lid(), 4) + ", QPN 0x" + CFormat.hex(local.qpn(), 6)
                + ", PSN 0x" + CFormat.hex(local.psn(), 6) + ": GID " + GidText.format(local.gid());
    }

    /** {@code "  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s"}. */
    public static String remoteAddress(PingPongDestination remote) {
        return "  remote address: " + remote;
    }

    /** The elapsed time as the C tools hold it: a {@code float} of whole microseconds. */
    public static float elapsedMicros(long startNanos, long endNanos) {
        return (float) ((endNanos - startNanos) / 1000);
    }

    /** {@code "%lld bytes in %.2f seconds = %.2f Mbit/sec"}, where bytes is {@code size * iters * 2}. */
    public static String bandwidthLine(int size, int iters, float usec) {
        long bytes = (long) size * iters * 2;
        return bytes + " bytes in " + CFormat.fixed2(usec / 1000000.) + " seconds = "
                + CFormat.fixed2(bytes * 8. / usec) + " Mbit/sec";
    }

    /** {@code "%d iters in %.2f seconds = %.2f usec/iter"}. */
    public static String latencyLine(int iters, float usec) {
        float perIter = usec / iters; // float division, as in C
        return iters + " iters in " + CFormat.fixed2(usec / 1000000.) + " seconds = " + CFormat.fixed2(perIter)
                + " usec/iter";
    }

    /** {@code "invalid data in page %d"}, printed by the server side with {@code -c}. */
    public static String invalidPage(int page) {
        return "invalid data in page " + page;
    }
}
