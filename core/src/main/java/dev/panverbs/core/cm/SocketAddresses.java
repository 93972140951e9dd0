package dev.panverbs.core.cm;

import dev.panverbs.bindings.rdmacma.rdma_cma_h;
import dev.panverbs.bindings.rdmacma.sockaddr_in;
import dev.panverbs.bindings.rdmacma.sockaddr_in6;
import dev.panverbs.bindings.rdmacma.sockaddr_storage;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;

/** {@code struct sockaddr_in}/{@code sockaddr_in6} to and from {@link InetSocketAddress}, at jextract's offsets. */
final class SocketAddresses {

    private static final ValueLayout.OfShort PORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private SocketAddresses() {}

    /** A {@code struct sockaddr_storage} holding {@code address} (resolved; IPv4 or IPv6). */
    static MemorySegment toNative(InetSocketAddress address, Arena arena) {
        if (address.isUnresolved()) {
            throw new IllegalArgumentException("unresolved address " + address + ": resolve the host name first");
        }
        MemorySegment s = arena.allocate(sockaddr_storage.layout());
        InetAddress ip = address.getAddress();
        if (ip instanceof Inet4Address) {
            sockaddr_in.sin_family(s, (short) rdma_cma_h.AF_INET());
            s.set(PORT, sockaddr_in.sin_port$offset(), (short) address.getPort());
            MemorySegment.copy(ip.getAddress(), 0, s, ValueLayout.JAVA_BYTE, sockaddr_in.sin_addr$offset(), 4);
        } else {
            sockaddr_in6.sin6_family(s, (short) rdma_cma_h.AF_INET6());
            s.set(PORT, sockaddr_in6.sin6_port$offset(), (short) address.getPort());
            MemorySegment.copy(ip.getAddress(), 0, s, ValueLayout.JAVA_BYTE, sockaddr_in6.sin6_addr$offset(), 16);
            sockaddr_in6.sin6_scope_id(s, ((Inet6Address) ip).getScopeId());
        }
        return s;
    }

    /** The address in a {@code struct sockaddr}, or {@code null} for an unset one (family 0) or another family. */
    static InetSocketAddress fromNative(MemorySegment sockaddr) {
        MemorySegment s = sockaddr.reinterpret(sockaddr_storage.sizeof());
        int family = sockaddr_in.sin_family(s);
        try {
            if (family == rdma_cma_h.AF_INET()) {
                byte[] ip = new byte[4];
                MemorySegment.copy(s, ValueLayout.JAVA_BYTE, sockaddr_in.sin_addr$offset(), ip, 0, 4);
                return new InetSocketAddress(InetAddress.getByAddress(ip),
                        Short.toUnsignedInt(s.get(PORT, sockaddr_in.sin_port$offset())));
            }
            if (family == rdma_cma_h.AF_INET6()) {
                byte[] ip = new byte[16];
                MemorySegment.copy(s, ValueLayout.JAVA_BYTE, sockaddr_in6.sin6_addr$offset(), ip, 0, 16);
                return new InetSocketAddress(InetAddress.getByAddress(ip),
                        Short.toUnsignedInt(s.get(PORT, sockaddr_in6.sin6_port$offset())));
            }
            return null;
        } catch (UnknownHostException e) {
            throw new AssertionError("4 or 16 address bytes are always accepted", e);
        }
    }
}
