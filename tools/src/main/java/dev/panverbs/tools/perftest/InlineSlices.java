package dev.panverbs.tools.perftest;

import java.lang.foreign.MemorySegment;

/**
 * Inline sends need the data as a segment; perftest's addresses cycle through at most a page of slots, so
 * slices are cached per offset (open addressing, no allocation once every slot has been seen).
 */
final class InlineSlices {
    private final MemorySegment buffer;
    private final long[] keys = new long[256];
    private final MemorySegment[] values = new MemorySegment[256];
    private int length = -1;

    InlineSlices(MemorySegment buffer) {
        this.buffer = buffer;
    }

    void reset(int len) {
        if (len != length) {
            java.util.Arrays.fill(values, null);
            length = len;
        }
    }

    MemorySegment at(long offset) {
        int h = (int) (offset ^ (offset >>> 7)) & 255;
        for (int i = 0; i < 256; i++) {
            int slot = (h + i) & 255;
            MemorySegment v = values[slot];
            if (v == null) {
                v = buffer.asSlice(offset, length);
                keys[slot] = offset;
                values[slot] = v;
                return v;
            }
            if (keys[slot] == offset) {
                return v;
            }
        }
        return buffer.asSlice(offset, length); // more distinct offsets than slots: rare, allocate
    }
}
