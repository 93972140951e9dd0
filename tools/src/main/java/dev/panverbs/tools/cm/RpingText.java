package dev.panverbs.tools.cm;

import java.nio.charset.StandardCharsets;

/**
 * The ping data rdma-core's {@code rping} client puts in its start buffer: {@code "rdma-ping-N: "} followed by a
 * run of the ASCII characters 'A' (65) to 'z' (122) that starts one character later with every ping, and a NUL in
 * the last byte. Both implementations produce byte-identical buffers, so a C server prints what a C client would
 * have sent.
 */
final class RpingText {

    /**
     * {@code RPING_MIN_BUFSIZE}: {@code sizeof(stringify(INT_MAX)) + sizeof("rdma-ping-%d: ")}, 8 + 15: the macro
     * stringifies the name "INT_MAX", not its value (rdma-core 44's rping prints "valid range is 23 to 65536").
     * 23 bytes hold the longest header, "rdma-ping-2147483647: " and its NUL.
     */
    static final int MIN_SIZE = 23;
    /** {@code RPING_BUFSIZE}; -S must stay below it. */
    static final int MAX_SIZE = 64 * 1024;

    private RpingText() {}

    /** Fills {@code buf} with ping {@code ping}'s data; {@code start} is the first filler character of this ping. */
    static void fill(byte[] buf, int ping, int start) {
        byte[] head = ("rdma-ping-" + ping + ": ").getBytes(StandardCharsets.US_ASCII);
        // snprintf(start_buf, size, ...) truncates to size - 1 characters
        int cc = Math.min(head.length, buf.length - 1);
        System.arraycopy(head, 0, buf, 0, cc);
        int c = start;
        for (int i = head.length; i < buf.length; i++) { // C starts at snprintf's return value, the untruncated length
            buf[i] = (byte) c;
            c++;
            if (c > 122) {
                c = 65;
            }
        }
        buf[buf.length - 1] = 0;
    }

    /** The filler start of the ping after one that started at {@code start}. */
    static int next(int start) {
        return start + 1 > 122 ? 65 : start + 1;
    }

    /** The C string at the start of {@code buf} (up to its first NUL), as {@code printf("%s")} prints it. */
    static String cString(byte[] buf) {
        int n = 0;
        while (n < buf.length && buf[n] != 0) {
            n++;
        }
        return new String(buf, 0, n, StandardCharsets.ISO_8859_1);
    }
}
