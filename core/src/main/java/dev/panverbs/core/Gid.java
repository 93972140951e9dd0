package dev.panverbs.core;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * A 128-bit global identifier ({@code union ibv_gid}): an IB port's subnet prefix and GUID, or on RoCE an
 * IPv6 address, or an IPv4 address mapped as {@code ::ffff:a.b.c.d}. Bytes are in network order, as the
 * GID table and the wire carry them. Immutable.
 */
public final class Gid {

    /** The all-zero GID: an empty GID table slot. */
    public static final Gid ZERO = new Gid(new byte[16]);

    private static final HexFormat HEX = HexFormat.of();
    private final byte[] raw;

    private Gid(byte[] raw) {
        this.raw = raw;
    }

    /** The GID with these 16 bytes (network order); the array is copied. */
    public static Gid of(byte[] raw) {
        Objects.requireNonNull(raw, "raw");
        if (raw.length != 16) {
            throw new IllegalArgumentException("a GID is 16 bytes, got " + raw.length);
        }
        return new Gid(raw.clone());
    }

    /** The GID a RoCE port holds for {@code address}: the IPv6 address, or IPv4 mapped as {@code ::ffff:a.b.c.d}. */
    public static Gid of(InetAddress address) {
        byte[] ip = address.getAddress();
        if (address instanceof Inet4Address) {
            byte[] g = new byte[16];
            g[10] = (byte) 0xff;
            g[11] = (byte) 0xff;
            System.arraycopy(ip, 0, g, 12, 4);
            return new Gid(g);
        }
        return new Gid(ip);
    }

    /** Eight groups of four hex digits: what {@code ibv_devinfo -v} and {@link #toString()} print. */
    private static final java.util.regex.Pattern DEVINFO_FORM =
            java.util.regex.Pattern.compile("\\p{XDigit}{4}(:\\p{XDigit}{4}){7}");

    /**
     * Parses the form {@code ibv_devinfo -v} and this class's {@link #toString()} print
     * ({@code fe80:0000:0000:0000:5054:00ff:fe12:3456}), or any IPv6 / IPv4 literal.
     */
    public static Gid parse(String text) {
        String t = text.trim();
        if (DEVINFO_FORM.matcher(t).matches()) {
            return new Gid(HEX.parseHex(t.replace(":", "")));
        }
        try {
            return of(InetAddress.ofLiteral(t)); // a literal only, never a DNS lookup
        } catch (IllegalArgumentException e) {
            // fall through
        }
        throw new IllegalArgumentException("not a GID: '" + text + "' (expected e.g. fe80:0000:0000:0000:0000:0000:0000:0001)");
    }

    /** The 16 bytes, network order (a copy). */
    public byte[] toBytes() {
        return raw.clone();
    }

    /** Whether this is the empty GID. */
    public boolean isZero() {
        return equals(ZERO);
    }

    /** The upper 64 bits: the subnet prefix on IB ({@code global.subnet_prefix}, host order). */
    public long subnetPrefix() {
        return longAt(0);
    }

    /** The lower 64 bits: the port GUID on IB ({@code global.interface_id}, host order). */
    public long interfaceId() {
        return longAt(8);
    }

    /** Whether this is an IPv4-mapped IPv6 address ({@code ::ffff:a.b.c.d}), as RoCE v2 GIDs of IPv4 addresses are. */
    public boolean isIpv4Mapped() {
        for (int i = 0; i < 10; i++) {
            if (raw[i] != 0) {
                return false;
            }
        }
        return raw[10] == (byte) 0xff && raw[11] == (byte) 0xff;
    }

    /** The IP address this GID stands for on RoCE: an {@link Inet4Address} when IPv4-mapped, else IPv6. */
    public InetAddress toInetAddress() {
        try {
            if (isIpv4Mapped()) {
                return InetAddress.getByAddress(Arrays.copyOfRange(raw, 12, 16));
            }
            return Inet6Address.getByAddress(null, raw, null);
        } catch (UnknownHostException e) {
            throw new AssertionError("16 and 4 bytes are valid address lengths", e);
        }
    }

    private long longAt(int offset) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (raw[offset + i] & 0xff);
        }
        return v;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Gid g && Arrays.equals(g.raw, raw);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(raw);
    }

    /** Eight groups of four hex digits, as {@code ibv_devinfo -v} prints: {@code 0000:0000:0000:0000:0000:ffff:c0a8:0101}. */
    @Override
    public String toString() {
        String h = HEX.formatHex(raw);
        StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < 32; i += 4) {
            if (i > 0) {
                sb.append(':');
            }
            sb.append(h, i, i + 4);
        }
        return sb.toString();
    }
}
