package dev.panverbs.tools.pingpong;

/**
 * Formats a 16-byte GID the way glibc's {@code inet_ntop(AF_INET6, ...)} does, which is what the rdma-core
 * ping-pong examples print after {@code GID}.
 *
 * <p>{@link java.net.Inet6Address#getHostAddress()} cannot be used: it never compresses zero runs and never
 * prints the dotted IPv4 tail, so {@code ::ffff:10.0.2.15} (the IPv4-mapped GID of a RoCE v2 port) would come
 * out as {@code 0:0:0:0:0:ffff:a00:20f}. The rules mirrored here are those of glibc's {@code inet_ntop6}: the
 * longest run of at least two zero words is written as {@code ::} (the first one on a tie), hex words lose
 * their leading zeros, and an address whose first 96 bits are zero, or whose first 80 bits are zero followed by
 * {@code ffff}, ends in dotted quad form (except {@code ::} and {@code ::x} with a single non-zero last word).
 */
public final class GidText {
    private GidText() {}

    /** Returns the {@code inet_ntop} text of {@code gid}, which must be 16 bytes in network order. */
    public static String format(byte[] gid) {
        if (gid.length != 16) {
            throw new IllegalArgumentException("a GID is 16 bytes, got " + gid.length);
        }
        int[] words = new int[8];
        for (int i = 0; i < 8; i++) {
            words[i] = ((gid[2 * i] & 0xff) << 8) | (gid[2 * i + 1] & 0xff);
        }
        int bestBase = -1;
        int bestLen = 0;
        int curBase = -1;
        int curLen = 0;
        for (int i = 0; i < 8; i++) {
            if (words[i] == 0) {
                if (curBase == -1) {
                    curBase = i;
                    curLen = 1;
                } else {
                    curLen++;
                }
            } else if (curBase != -1) {
                if (bestBase == -1 || curLen > bestLen) {
                    bestBase = curBase;
                    bestLen = curLen;
                }
                curBase = -1;
            }
        }
        if (curBase != -1 && (bestBase == -1 || curLen > bestLen)) {
            bestBase = curBase;
            bestLen = curLen;
        }
        if (bestBase != -1 && bestLen < 2) {
            bestBase = -1;
        }
        StringBuilder sb = new StringBuilder(46);
        for (int i = 0; i < 8; i++) {
            if (bestBase != -1 && i >= bestBase && i < bestBase + bestLen) {
                if (i == bestBase) {
                    sb.append(':');
                }
                continue;
            }
            if (i != 0) {
                sb.append(':');
            }
            if (i == 6 && bestBase == 0 && (bestLen == 6 || (bestLen == 5 && words[5] == 0xffff))) {
                sb.append(gid[12] & 0xff).append('.').append(gid[13] & 0xff).append('.')
                        .append(gid[14] & 0xff).append('.').append(gid[15] & 0xff);
                return sb.toString();
            }
            sb.append(Integer.toHexString(words[i]));
        }
        if (bestBase != -1 && bestBase + bestLen == 8) {
            sb.append(':');
        }
        return sb.toString();
    }
}
