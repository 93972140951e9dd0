package dev.panverbs.tools.perftest;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The typed messages of perftest 6.06's TCP exchange on top of {@link ExchangeChannel}: version, system data,
 * MTU, key messages and the bandwidth report, each checked so that anything a real perftest peer cannot send is
 * reported as such.
 */
final class PerftestExchange {
    /** Oldest peer version perftest 6.06 accepts ({@code check_version_compatibility}). */
    static final double MIN_PEER_VERSION = 5.70;

    private final ExchangeTransport channel;
    private String peerVersion = "";

    PerftestExchange(ExchangeTransport channel) {
        this.channel = channel;
    }

    ExchangeTransport channel() {
        return channel;
    }

    String peerVersion() {
        return peerVersion;
    }

    /** The 16-byte version message: our {@code "6.06"} NUL padded, as {@code strncpy} into a zeroed buffer. */
    static byte[] encodeVersion(String version) {
        byte[] v = version.getBytes(StandardCharsets.US_ASCII);
        return Arrays.copyOf(v, ExchangeChannel.VERSION_SIZE);
    }

    /**
     * Exchanges versions ({@code exchange_versions}) and refuses a peer older than 5.70 with perftest's message
     * ({@code check_version_compatibility}). A peer that is not perftest at all usually fails here.
     */
    String exchangeVersions() {
        byte[] theirs = channel.exchange(encodeVersion(PerftestParameters.VERSION), ExchangeChannel.VERSION_SIZE,
                "version");
        int end = 0;
        while (end < theirs.length && theirs[end] != 0) {
            end++;
        }
        String v = new String(theirs, 0, end, StandardCharsets.ISO_8859_1);
        double number = Strtol.atof(v);
        if (!(number >= MIN_PEER_VERSION)) {
            throw new ExchangeException("Current implementation is not compatible with versions older than 5.70"
                    + " (the peer sent " + ExchangeChannel.describe(theirs, theirs.length)
                    + (looksLikeVersion(v) ? "" : ", which is not a perftest version: is the peer a perftest tool?")
                    + ")");
        }
        peerVersion = v;
        return v;
    }

    private static boolean looksLikeVersion(String v) {
        return v.matches("\\d+\\.\\d+.*");
    }

    /**
     * Exchanges page size and cache line size ({@code check_sys_data}, peers >= 5.32) and returns the larger of
     * each, which both sides then use to lay out their buffers.
     */
    int[] exchangeSysData(int cycleBuffer, int cacheLineSize) {
        int remoteCycle = ByteBuffer.wrap(channel.exchange(int32(cycleBuffer), 4, "page size")).getInt();
        int remoteLine = ByteBuffer.wrap(channel.exchange(int32(cacheLineSize), 4, "cache line size")).getInt();
        if (!plausiblePowerOfTwo(remoteCycle, 1 << 30)) {
            throw new ExchangeException("the peer sent page size " + Integer.toUnsignedString(remoteCycle)
                    + ", which no perftest sends (a power of two up to 1 GiB): is the peer a perftest tool?");
        }
        if (!plausiblePowerOfTwo(remoteLine, 4096)) {
            throw new ExchangeException("the peer sent cache line size " + Integer.toUnsignedString(remoteLine)
                    + ", which no perftest sends (a power of two up to 4096): is the peer a perftest tool?");
        }
        return new int[] {Math.max(cycleBuffer, remoteCycle), Math.max(cacheLineSize, remoteLine)};
    }

    private static boolean plausiblePowerOfTwo(int v, int max) {
        return v > 0 && v <= max && Integer.bitCount(v) == 1;
    }

    private static byte[] int32(int v) {
        return ByteBuffer.allocate(4).putInt(v).array();
    }

    /**
     * Exchanges the MTU ({@code check_mtu}): 2 bytes, the ASCII digit of {@code enum ibv_mtu} and a NUL
     * ({@code "3\0"} is 1024). Returns the smaller of ours and the peer's.
     */
    int exchangeMtu(int mtuEnum) {
        byte[] mine = {(byte) ('0' + mtuEnum), 0};
        byte[] theirs = channel.exchange(mine, 2, "MTU");
        if (theirs[0] < '1' || theirs[0] > '5' || theirs[1] != 0) {
            throw new ExchangeException("the peer sent MTU " + ExchangeChannel.describe(theirs, 2)
                    + ", not an ibv_mtu value \"1\\0\"..\"5\\0\": is the peer a perftest tool?");
        }
        return Math.min(mtuEnum, theirs[0] - '0');
    }

    /** One key message each way ({@code ctx_hand_shake}); the local GID index decides the form for both. */
    KeyMessage handShake(KeyMessage mine, String step) {
        return handShake(mine, step, channel.defaultTimeoutMillis());
    }

    /** As {@link #handShake(KeyMessage, String)}, waiting up to {@code timeoutMillis} for the peer. */
    KeyMessage handShake(KeyMessage mine, String step, long timeoutMillis) {
        if (channel.binaryKeys()) {
            byte[] theirs = channel.exchange(CmKeyMessage.encode(mine), CmKeyMessage.SIZE, step, timeoutMillis);
            return CmKeyMessage.decode(theirs, mine.hasGid(), step);
        }
        byte[] theirs = channel.exchange(mine.encode(), KeyMessage.size(mine.hasGid()), step, timeoutMillis);
        try {
            return KeyMessage.decode(theirs, mine.hasGid());
        } catch (KeyMessage.MalformedException e) {
            throw new ExchangeException("bad " + step + " message from the peer: " + e.getMessage(), e);
        }
    }

    /** The five 8-byte report exchanges ({@code xchg_bw_reports}, peer >= 5.33: 64-bit iterations). */
    BwReport exchangeReports(BwReport mine) {
        String[] names = {"report size", "report iterations", "report peak", "report average", "report rate"};
        byte[][] theirs = new byte[5][];
        for (int i = 0; i < 5; i++) {
            theirs[i] = channel.exchange(mine.field(i), 8, names[i]);
        }
        return BwReport.fromFields(theirs);
    }
}
