package dev.panverbs.tools.perftest;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Host facts perftest reads from the system: page size and cache line size (exchanged with the peer and used to
 * lay out the buffers), the /proc/stat sample behind --cpu_util, and the PCIe relaxed-ordering check that adds a
 * warning to the header. Linux only; every probe has perftest's fallback.
 */
final class Platform {
    private Platform() { }

    /** {@code sysconf(_SC_PAGESIZE)}, read from the ELF auxiliary vector (AT_PAGESZ); 4096 if unreadable. */
    static int pageSize() {
        try {
            byte[] auxv = Files.readAllBytes(Path.of("/proc/self/auxv"));
            ByteBuffer b = ByteBuffer.wrap(auxv).order(ByteOrder.nativeOrder());
            while (b.remaining() >= 16) {
                long type = b.getLong();
                long value = b.getLong();
                if (type == 6 /* AT_PAGESZ */ && value > 0 && value <= (1 << 30)) {
                    return (int) value;
                }
                if (type == 0) {
                    break;
                }
            }
        } catch (IOException | RuntimeException e) {
            // fall through to perftest's DEF_PAGE_SIZE
        }
        return 4096;
    }

    /** L1 data cache line size from sysfs ({@code get_cache_line_size}); 64 if unknown. */
    static int cacheLineSize() {
        try {
            String s = Files.readString(Path.of("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size"))
                    .trim();
            int v = Integer.parseInt(s);
            return v > 0 ? v : 64;
        } catch (IOException | RuntimeException e) {
            return 64;
        }
    }

    /** User and idle jiffies from the first line of /proc/stat ({@code get_cpu_stats}), or zeros. */
    static long[] cpuStat() {
        try (var lines = Files.lines(Path.of("/proc/stat"))) {
            String first = lines.findFirst().orElse("");
            String[] f = first.trim().split("\\s+");
            return new long[] {Long.parseLong(f[1]), Long.parseLong(f[4])};
        } catch (IOException | RuntimeException e) {
            return new long[2];
        }
    }

    /**
     * False when the host has one of the Intel root ports that mishandle PCIe relaxed ordering (device ids
     * 0x6f01..0x6f0e and 0x2f01), which perftest warns about in its header.
     */
    static boolean pcieRelaxedOrderingCompliant() {
        Path root = Path.of("/sys/bus/pci/devices");
        if (!Files.isDirectory(root)) {
            return true;
        }
        try (DirectoryStream<Path> devs = Files.newDirectoryStream(root)) {
            for (Path d : devs) {
                int vendor = readHex(d.resolve("vendor"));
                int device = readHex(d.resolve("device"));
                if (vendor == 0x8086 && ((device >= 0x6f01 && device <= 0x6f0e) || device == 0x2f01)) {
                    return false;
                }
            }
        } catch (IOException | RuntimeException e) {
            return true;
        }
        return true;
    }

    private static int readHex(Path p) {
        try {
            return Integer.decode(Files.readString(p).trim());
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
