package dev.panverbs.tools.pingpong;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The data the {@code -c/--chk} option sends and checks, identical to the C tools' (rdma-core's
 * {@code ibv_rc_pingpong} and {@code ibv_ud_pingpong}) so either side may be C.
 *
 * <p>The C tools fill the buffer with {@code 0x7b}; with {@code -c} the client then stores
 * {@code i / page_size % sizeof(char)} at every page start {@code i}, which is always 0 ({@code sizeof(char)} is
 * 1), and the server, after the run, reports each page whose first byte is not that value. This class writes
 * the same image, but the check is stricter: it compares every byte of the page with the image (0 at the page
 * start, {@code 0x7b} elsewhere), so corruption anywhere in a page is caught, while data from a C client with
 * {@code -c} still passes.
 */
public final class PagePattern {
    /** The byte the C tools fill their buffer with ({@code memset(ctx->buf, 0x7b, size)}). */
    public static final byte FILL = 0x7b;

    private static final int AT_PAGESZ = 6;
    private static final int PAGE_SIZE = readPageSize();

    private PagePattern() {}

    /** The system page size ({@code sysconf(_SC_PAGESIZE)}), read from the ELF auxiliary vector. */
    public static int pageSize() {
        return PAGE_SIZE;
    }

    /** Fills {@code size} bytes at {@code offset} with {@link #FILL}, what every C side starts with. */
    public static void fill(MemorySegment buf, long offset, int size) {
        buf.asSlice(offset, size).fill(FILL);
    }

    /** Writes the {@code -c} client image: a 0 at every page start. */
    public static void mark(MemorySegment buf, long offset, int size, int pageSize) {
        for (int i = 0; i < size; i += pageSize) {
            buf.set(ValueLayout.JAVA_BYTE, offset + i, (byte) 0);
        }
    }

    /** Returns the pages of the received data that differ from the {@code -c} client image, in order. */
    public static List<Integer> invalidPages(MemorySegment buf, long offset, int size, int pageSize) {
        List<Integer> bad = new ArrayList<>();
        for (int page = 0; (long) page * pageSize < size; page++) {
            long start = (long) page * pageSize;
            long end = Math.min(size, start + pageSize);
            boolean ok = buf.get(ValueLayout.JAVA_BYTE, offset + start) == 0;
            for (long i = start + 1; ok && i < end; i++) {
                ok = buf.get(ValueLayout.JAVA_BYTE, offset + i) == FILL;
            }
            if (!ok) {
                bad.add(page);
            }
        }
        return bad;
    }

    private static int readPageSize() {
        try {
            ByteBuffer auxv = ByteBuffer.wrap(Files.readAllBytes(Path.of("/proc/self/auxv")))
                    .order(ByteOrder.nativeOrder());
            while (auxv.remaining() >= 16) {
                long type = auxv.getLong();
                long value = auxv.getLong();
                if (type == AT_PAGESZ && value > 0 && value <= 1 << 30) {
                    return (int) value;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or /proc not mounted: fall through to the common page size
        }
        return 4096;
    }
}
