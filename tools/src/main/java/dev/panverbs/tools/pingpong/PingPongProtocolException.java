package dev.panverbs.tools.pingpong;

import java.io.IOException;

/**
 * The peer of the TCP address exchange broke the ping-pong protocol: it sent a malformed or short message,
 * closed the connection early, or went silent past the timeout. Java-only: the C tools report such a
 * peer with {@code perror} and exit.
 */
public final class PingPongProtocolException extends IOException {
    private static final long serialVersionUID = 1L;

    PingPongProtocolException(String message) {
        super(message);
    }

    PingPongProtocolException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Bytes as a Java-escaped ASCII string, at most 64 of them, for error messages. */
    static String printable(byte[] bytes) {
        return printable(bytes, bytes.length);
    }

    static String printable(byte[] bytes, int length) {
        StringBuilder sb = new StringBuilder();
        int n = Math.min(length, 64);
        for (int i = 0; i < n; i++) {
            int b = bytes[i] & 0xff;
            if (b == 0) {
                sb.append("\\0");
            } else if (b == '"' || b == '\\') {
                sb.append('\\').append((char) b);
            } else if (b >= 0x20 && b < 0x7f) {
                sb.append((char) b);
            } else {
                sb.append(String.format("\\x%02x", b));
            }
        }
        if (length > n) {
            sb.append("...");
        }
        return sb.toString();
    }
}
