package dev.panverbs.core;

import static dev.panverbs.bindings.verbs.verbs_h.*;

import java.util.Set;

/**
 * Flags of a send work request ({@code enum ibv_send_flags}, {@code ibv_post_send(3)}). On the control path use
 * {@code EnumSet<SendFlag>}; on the hot path precompute the C bits once with {@link #bits(Set)} (or use the
 * {@code int} constants such as {@link #SIGNALED_BIT}) and pass the {@code int}.
 */
public enum SendFlag {
    /** {@code IBV_SEND_FENCE}: wait for prior RDMA READs/atomics to complete before starting this WR. */
    FENCE(IBV_SEND_FENCE()),
    /** {@code IBV_SEND_SIGNALED}: generate a completion (needless if the QP was created with sqSigAll). */
    SIGNALED(IBV_SEND_SIGNALED()),
    /** {@code IBV_SEND_SOLICITED}: raise a solicited event at the peer (SEND/RDMA WRITE with immediate). */
    SOLICITED(IBV_SEND_SOLICITED()),
    /**
     * {@code IBV_SEND_INLINE}: copy the payload into the WQE at post time; the buffer is reusable on return and
     * needs no MR (lkey ignored). At most {@code max_inline_data} bytes.
     */
    INLINE(IBV_SEND_INLINE()),
    /** {@code IBV_SEND_IP_CSUM}: offload IP checksum (UD/raw packet on capable devices). */
    IP_CSUM(IBV_SEND_IP_CSUM());

    /** {@code IBV_SEND_SIGNALED} as a hot-path constant. */
    public static final int SIGNALED_BIT = IBV_SEND_SIGNALED();
    /** {@code IBV_SEND_INLINE} as a hot-path constant. */
    public static final int INLINE_BIT = IBV_SEND_INLINE();
    /** {@code IBV_SEND_SOLICITED} as a hot-path constant. */
    public static final int SOLICITED_BIT = IBV_SEND_SOLICITED();
    /** {@code IBV_SEND_FENCE} as a hot-path constant. */
    public static final int FENCE_BIT = IBV_SEND_FENCE();

    private final int bit;

    SendFlag(int bit) {
        this.bit = bit;
    }

    /** The C bit. */
    public int bit() {
        return bit;
    }

    /** The C bits of {@code flags}: compute once, pass the int on the hot path. */
    public static int bits(Set<SendFlag> flags) {
        int b = 0;
        for (SendFlag f : flags) {
            b |= f.bit;
        }
        return b;
    }
}
