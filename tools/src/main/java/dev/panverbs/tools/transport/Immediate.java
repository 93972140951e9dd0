package dev.panverbs.tools.transport;

/**
 * The 32-bit immediate value every transport message carries: a 2-bit kind and a 30-bit argument.
 *
 * <pre>
 *  31 30 29                                            0
 * +-----+-----------------------------------------------+
 * |kind |  argument                                     |
 * +-----+-----------------------------------------------+
 *
 * client -&gt; server, SEND with immediate (consumes one credit):
 *   REQUEST   argument = request id, payload = request bytes, a response follows
 *   ONE_WAY   argument = 0,          payload = message bytes, no response
 *   SHUTDOWN  argument = 0,          no payload; sent on the credit kept in reserve for it
 * server -&gt; client, RDMA WRITE with immediate (consumes one receive the client keeps posted):
 *   RESPONSE  argument = request id, the write filled the request's response slot
 *   CREDIT    argument = credits returned, zero-length write
 *   SHUTDOWN  argument = 0, zero-length write: every response has been written
 * </pre>
 * Request ids are {@code generation << 16 | slot}; the generation (14 bits) changes each time a slot is
 * reused, so a response for an earlier use of the slot is detected rather than delivered to the wrong call.
 *
 * <p>The value is kept in host order here; {@code ibv_send_wr.imm_data} and {@code ibv_wc.imm_data} are
 * big-endian ({@code __be32}) in C, and the core layer converts both ways, so the bits above are the bits on
 * the wire.
 */
final class Immediate {
    static final int REQUEST = 0;
    static final int ONE_WAY = 1;
    static final int SHUTDOWN = 2;
    static final int RESPONSE = 0;
    static final int CREDIT = 1;

    static final int ARGUMENT_BITS = 30;
    static final int MAX_ARGUMENT = (1 << ARGUMENT_BITS) - 1;
    static final int SLOT_BITS = 16;
    static final int MAX_SLOTS = 1 << SLOT_BITS;
    static final int GENERATION_MASK = (1 << (ARGUMENT_BITS - SLOT_BITS)) - 1;

    private Immediate() {}

    static int encode(int kind, int argument) {
        if ((kind & ~3) != 0 || (argument & ~MAX_ARGUMENT) != 0) {
            throw new IllegalArgumentException("immediate kind " + kind + " argument " + argument);
        }
        return kind << ARGUMENT_BITS | argument;
    }

    static int kind(int imm) {
        return imm >>> ARGUMENT_BITS;
    }

    static int argument(int imm) {
        return imm & MAX_ARGUMENT;
    }

    static int requestId(int slot, int generation) {
        return (generation & GENERATION_MASK) << SLOT_BITS | slot;
    }

    static int slot(int requestId) {
        return requestId & (MAX_SLOTS - 1);
    }

    static int generation(int requestId) {
        return requestId >>> SLOT_BITS;
    }
}
