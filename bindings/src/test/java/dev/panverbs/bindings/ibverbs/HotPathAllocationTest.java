package dev.panverbs.bindings.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.bindings.verbs.ibv_cq_ex;
import dev.panverbs.bindings.verbs.ibv_qp_ex;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Method;
import org.junit.jupiter.api.Test;

/**
 * The bind-once routes allocate nothing per call once compiled. Every slot points at libc's {@code getpid},
 * which ignores its arguments (extra register arguments are harmless in the SysV ABI) and has no side effect.
 */
class HotPathAllocationTest {

    private static final MemorySegment GETPID = Linker.nativeLinker().defaultLookup().find("getpid").orElseThrow();

    @Test
    void qpExOpsAndCqExOpsAllocateNothingPerCall() {
        try (FakeVerbs f = new FakeVerbs()) {
            for (long off = ibv_qp_ex.wr_atomic_cmp_swp$offset(); off <= ibv_qp_ex.wr_atomic_write$offset(); off += 8) {
                f.qp.set(ValueLayout.ADDRESS, off, GETPID);
            }
            for (long off = ibv_cq_ex.start_poll$offset(); off <= ibv_cq_ex.read_completion_wallclock_ns$offset();
                    off += 8) {
                f.cq.set(ValueLayout.ADDRESS, off, GETPID);
            }
            for (long off : new long[] {VerbsInline.OPS_POST_SEND, VerbsInline.OPS_POST_RECV,
                    VerbsInline.OPS_POST_SRQ_RECV, VerbsInline.OPS_POLL_CQ, VerbsInline.OPS_REQ_NOTIFY_CQ}) {
                f.ctx.set(ValueLayout.ADDRESS, off, GETPID);
            }
            QpExOps qp = QpExOps.of(f.qp);
            CqExOps cq = CqExOps.of(f.cq);
            ContextOps ops = ContextOps.of(f.ctx);
            MemorySegment sge = f.attr;

            long sink = 0;
            for (int i = 0; i < 200_000; i++) {
                sink += round(qp, cq, ops, f, sge, i);
            }
            int rounds = 100_000;
            long before = allocatedBytes();
            for (int i = 0; i < rounds; i++) {
                sink += round(qp, cq, ops, f, sge, i);
            }
            long allocated = allocatedBytes() - before;
            System.out.println("HotPathAllocationTest: " + allocated + " bytes in " + rounds + " rounds");
            assertThat(sink).isNotZero();
            // one allocation per call would be >= 16 B x 11 per round; below 1 B per round is the
            // measurement's own few boxed values, not the calls
            assertThat(allocated).as("bytes allocated by %d rounds of 11 calls", rounds).isLessThan(rounds);
        }
    }

    /**
     * {@code com.sun.management.ThreadMXBean.getCurrentThreadAllocatedBytes()}, reflectively: the bindings
     * module does not read java.management, and tests compile inside it.
     */
    private static long allocatedBytes() {
        try {
            return (Long) ALLOCATED_BYTES.invoke(THREAD_MX_BEAN);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private static final Object THREAD_MX_BEAN;
    private static final Method ALLOCATED_BYTES;

    static {
        try {
            THREAD_MX_BEAN = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean")
                    .invoke(null);
            ALLOCATED_BYTES = Class.forName("com.sun.management.ThreadMXBean")
                    .getMethod("getCurrentThreadAllocatedBytes");
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static long round(QpExOps qp, CqExOps cq, ContextOps ops, FakeVerbs f, MemorySegment sge, int i) {
        qp.wr_id(i);
        qp.wr_flags(2);
        qp.ibv_wr_start();
        qp.ibv_wr_rdma_write(0x1234, 0x1000L + i);
        qp.ibv_wr_set_sge(0x42, sge.address(), 64);
        long r = qp.ibv_wr_complete();
        r += cq.ibv_start_poll(sge);
        r += cq.ibv_wc_read_byte_len() + cq.wr_id();
        cq.ibv_end_poll();
        r += ops.ibv_post_send(f.qp, sge, sge);
        r += ops.ibv_poll_cq(f.cq, 16, sge);
        return r;
    }
}
