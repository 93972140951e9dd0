package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.testing.RdmaTestDevice;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The fixture of the data-path ITs (pyverbs' {@code BaseResources}/{@code RCResources} shape): one context and
 * protection domain on the test device, closed by one {@code @AfterEach} through the cascade, and helpers that
 * connect two QPs of that context to each other and poll with a deadline.
 */
abstract class DataPathResources {
    static final Set<Access> ALL_REMOTE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
            Access.REMOTE_READ, Access.REMOTE_ATOMIC);
    static final Set<Access> QP_REMOTE = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC);
    static final int PORT = 1;
    /** Soft-RoCE's {@code vendor_id} (0xFFFFFF, RXE_VENDOR_ID in the kernel). */
    static final int RXE_VENDOR_ID = 0xFFFFFF;
    /** Long enough for rxe under TCG emulation. */
    static final Duration DEADLINE = Duration.ofSeconds(60);

    Context ctx;
    ProtectionDomain pd;
    int gidIndex;
    byte[] gid;
    final WorkCompletions wcs = WorkCompletions.allocate(16);

    @BeforeEach
    void open() {
        ctx = Device.open(RdmaTestDevice.name());
        pd = ctx.allocPd();
        gidIndex = ctx.queryGid(PORT, 1).isZero() ? 0 : 1;
        gid = ctx.queryGid(PORT, gidIndex).toBytes();
    }

    @AfterEach
    void close() {
        if (ctx != null) { // null when open() failed: report that failure, not this
            ctx.close(); // the cascade closes QPs, CQs, MRs
        }
    }

    AddressVector path() {
        return AddressVector.builder(PORT).grh(gid, gidIndex, 64).build();
    }

    boolean isRxe() {
        return ctx.queryDevice().vendorId() == RXE_VENDOR_ID;
    }

    /** Moves a and b (RC or UC) through INIT and RTR to RTS, connected to each other. */
    void connect(QueuePair a, QueuePair b) {
        for (QueuePair q : new QueuePair[] {a, b}) {
            q.toInit(PORT, QP_REMOTE);
        }
        a.toRtr(path(), Mtu.MTU_1024, b.qpNum(), 100);
        b.toRtr(path(), Mtu.MTU_1024, a.qpNum(), 200);
        a.toRts(200);
        b.toRts(100);
        assertThat(a.state()).isEqualTo(QueuePairState.RTS);
        assertThat(b.state()).isEqualTo(QueuePairState.RTS);
    }

    /** The next completion of {@code cq}, waiting up to {@link #DEADLINE}; the flyweight of a 1-entry poll. */
    static WorkCompletion pollOne(CompletionQueue cq) {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        WorkCompletions one = WorkCompletions.allocate(1);
        while (System.nanoTime() < deadline) {
            if (cq.poll(one) == 1) {
                return one.get(0);
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no completion within " + DEADLINE + " on " + cq);
    }

    /**
     * The wr_ids of the completions of {@code cq} (all must be SUCCESS): polls until {@code expected} arrived (at most
     * {@link #DEADLINE}), then {@code quiet} longer to catch any extra one.
     */
    static List<Long> awaitSuccesses(CompletionQueue cq, int expected, Duration quiet) {
        List<Long> ids = new ArrayList<>();
        WorkCompletions batch = WorkCompletions.allocate(16);
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        long quietUntil = Long.MAX_VALUE;
        while (true) {
            long now = System.nanoTime();
            if (ids.size() >= expected && quietUntil == Long.MAX_VALUE) {
                quietUntil = now + quiet.toNanos();
            }
            if (now >= Math.min(deadline, quietUntil)) {
                return ids;
            }
            int n = cq.poll(batch);
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = batch.get(i);
                assertThat(wc.status()).as("status of wr %d", wc.wrId()).isEqualTo(WorkCompletionStatus.SUCCESS);
                ids.add(wc.wrId());
            }
            if (n == 0) {
                Thread.onSpinWait();
            }
        }
    }

    /** Every async event of the context within {@code window} (one non-blocking read when it is zero). */
    List<AsyncEvent> asyncEvents(Duration window) {
        List<AsyncEvent> events = new ArrayList<>();
        long until = System.nanoTime() + window.toNanos();
        do {
            long left = Math.max(0, until - System.nanoTime());
            ctx.getAsyncEvent(Duration.ofNanos(left)).ifPresent(events::add);
        } while (System.nanoTime() < until);
        return events;
    }

    static void fill(MemorySegment s, long off, int len, int seed) {
        for (int i = 0; i < len; i++) {
            s.set(ValueLayout.JAVA_BYTE, off + i, (byte) (seed + i * 31));
        }
    }

    static void assertSameBytes(MemorySegment a, long aOff, MemorySegment b, long bOff, int len) {
        assertThat(MemorySegment.mismatch(a, aOff, aOff + len, b, bOff, bOff + len)).as("first differing byte")
                .isEqualTo(-1);
    }

    static void assertZero(MemorySegment s, long off, int len) {
        for (int i = 0; i < len; i++) {
            assertThat(s.get(ValueLayout.JAVA_BYTE, off + i)).as("byte %d", off + i).isZero();
        }
    }
}
