package dev.panverbs.tools.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class ResponseHeaderTest {
    @Test
    void writeIsLittleEndianWithTheDocumentedOffsets() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment slot = arena.allocate(16);
            ResponseHeader.write(slot, 0x01020304, 0xfffe, ResponseHeader.STATUS_HANDLER_ERROR);
            assertThat(HexFormat.of().formatHex(slot.asSlice(0, 8).toArray(ValueLayout.JAVA_BYTE)))
                    .isEqualTo("04030201feff0100");
            assertThat(ResponseHeader.length(slot)).isEqualTo(0x01020304);
            assertThat(ResponseHeader.credits(slot)).isEqualTo(0xfffe);
            assertThat(ResponseHeader.status(slot)).isEqualTo(ResponseHeader.STATUS_HANDLER_ERROR);
        }
    }

    @Test
    void headerWorksAtUnalignedOffsets() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment slot = arena.allocate(32).asSlice(3);
            ResponseHeader.write(slot, 4096, 1, ResponseHeader.STATUS_OK);
            assertThat(ResponseHeader.length(slot)).isEqualTo(4096);
            assertThat(ResponseHeader.credits(slot)).isEqualTo(1);
        }
    }
}
