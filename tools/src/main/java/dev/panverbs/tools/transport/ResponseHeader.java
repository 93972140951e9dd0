package dev.panverbs.tools.transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The 8 bytes the server writes in front of each response, in the same RDMA write as the payload.
 *
 * <pre>
 *  0               4       6       7       8
 * +---------------+-------+-------+-------+---------------------------
 * | length (u32)  |credits|status |  0    | payload: length bytes
 * +---------------+-------+-------+-------+---------------------------
 *  little-endian; credits (u16) are the request credits returned with this response
 * </pre>
 * Little-endian is fixed, not native: both ends are Java, but the layout is a wire format and must not depend
 * on the hosts. The header travels in the data rather than in the immediate so that the immediate can carry a
 * full request id, and so that credits ride along with responses at no extra cost (piggy-backing).
 */
final class ResponseHeader {
    static final int SIZE = 8;
    static final int STATUS_OK = 0;
    /** The server's handler threw; the payload is its message in UTF-8. */
    static final int STATUS_HANDLER_ERROR = 1;
    /** The request was larger than the server's receive buffers; never sent by a client that checks sizes. */
    static final int STATUS_BAD_REQUEST = 2;

    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16 =
            ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private ResponseHeader() {}

    static void write(MemorySegment slot, int length, int credits, int status) {
        slot.set(U32, 0, length);
        slot.set(U16, 4, (short) credits);
        slot.set(ValueLayout.JAVA_BYTE, 6, (byte) status);
        slot.set(ValueLayout.JAVA_BYTE, 7, (byte) 0);
    }

    static int length(MemorySegment slot) {
        return slot.get(U32, 0);
    }

    static int credits(MemorySegment slot) {
        return Short.toUnsignedInt(slot.get(U16, 4));
    }

    static int status(MemorySegment slot) {
        return Byte.toUnsignedInt(slot.get(ValueLayout.JAVA_BYTE, 6));
    }
}
