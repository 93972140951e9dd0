package dev.panverbs.tools.perftest;

/**
 * Where perftest puts things in its data buffer ({@code alloc_ctx}, {@code create_mr}, {@code set_up_connection},
 * {@code ctx_set_recv_wqes}). One registered buffer holds, per QP, a send half and a receive half:
 *
 * <pre>
 *   buf: | QP0 send | QP1 send | ... | QP0 recv (vaddr 0) | QP1 recv (vaddr 1) | ... |  (+ cache line for UD)
 *          BUFF each                    BUFF each, advertised to the peer as VAddr
 *   BUFF = max(size, page size); the allocation rounds each slot up to the cache line and doubles it.
 * </pre>
 *
 * With --mr_per_qp every QP has its own buffer: send at offset 0, VAddr at offset BUFF. Messages no larger than
 * half a page move through the page in cache-line aligned steps ({@code INC}) and wrap, as perftest does to
 * spread small transfers over cache lines.
 */
final class BufferLayout {
    final long buff;
    final int cacheLine;
    final int cycleBuffer;
    final int numQps;
    final boolean mrPerQp;
    final boolean ud;

    /** @param allocSize the size the buffers are laid out for: -s, or 8 MiB with -a */
    BufferLayout(long allocSize, int cycleBuffer, int cacheLine, int numQps, boolean mrPerQp, boolean ud) {
        this.buff = Math.max(allocSize, cycleBuffer);
        this.cacheLine = cacheLine;
        this.cycleBuffer = cycleBuffer;
        this.numQps = numQps;
        this.mrPerQp = mrPerQp;
        this.ud = ud;
    }

    /** {@code INC(size, cache_line)}: the address step between consecutive small messages. */
    static long inc(long size, int cacheLine) {
        return size > cacheLine ? roundUp(size, cacheLine) : cacheLine;
    }

    static long roundUp(long v, long a) {
        return v % a == 0 ? v : a * (v / a + 1);
    }

    /** Bytes to register per MR ({@code ctx->buff_size}). */
    long bufferSize() {
        long b = inc(buff, cacheLine) * 2 * (mrPerQp ? 1 : numQps);
        return ud ? b + cacheLine : b;
    }

    int mrCount() {
        return mrPerQp ? numQps : 1;
    }

    int mrOf(int qp) {
        return mrPerQp ? qp : 0;
    }

    /** Offset in MR {@link #mrOf(int)} of QP {@code i}'s send area ({@code ctx->buf[i]}). */
    long sendOffset(int i) {
        return mrPerQp ? 0 : i * buff;
    }

    /** Offset of the area QP {@code i} advertises to the peer as VAddr (where the peer writes or reads). */
    long remoteOffset(int i) {
        return mrPerQp ? buff : (numQps + i) * buff;
    }

    /** Offset of QP {@code i}'s first receive buffer for SEND tests, before the UD adjustment. */
    long recvOffset(int i) {
        return mrPerQp ? 0 : (numQps + i) * inc(buff, cacheLine);
    }

    /** True when messages of {@code size} cycle through the page ({@code size <= cycle_buffer / 2}). */
    boolean cycles(long size) {
        return size <= cycleBuffer / 2;
    }

    /** How many message slots one cycle holds ({@code cycle_buffer / INC}). */
    long slots(long size) {
        return cycleBuffer / inc(size, cacheLine);
    }
}
