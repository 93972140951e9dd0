package dev.panverbs.core.mlx5;

import static dev.panverbs.core.mlx5.Mlx5Model.LOCAL_WRITE;
import static dev.panverbs.core.mlx5.Mlx5Model.REMOTE_ATOMIC;
import static dev.panverbs.core.mlx5.Mlx5Model.REMOTE_READ;
import static dev.panverbs.core.mlx5.Mlx5Model.REMOTE_WRITE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.FakeProvider;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the mlx5 tests over the PRM device model share (Java-only): the core's real objects over the fake provider (a CQ, an RTS QP of 16
 * WRs, 4 SGEs and 64 bytes inline, two registered regions) and the PRM device model on plain memory behind a direct
 * send queue and a direct CQ, rebuilt for every test.
 */
abstract class Mlx5Fixture {
    static final int SIG = SendFlag.SIGNALED_BIT;

    FakeProvider fp;
    Arena arena;
    CompletionQueue cq;
    QueuePair qp;
    DirectSendQueue dsq;
    DirectCompletionQueue dcq;
    MemorySegment local, remote, sq, dbrec, bf, cqBuf, rcqBuf;
    MemoryRegion mrLocal, mrRemote;
    final WorkCompletions wcs = WorkCompletions.allocate(16);

    @BeforeEach
    void setUp() throws Throwable {
        Mlx5Model.load();
        fp = new FakeProvider(FakeProvider.compile(Path.of("src/test/c/fake_provider.c"), Path.of("target/fake")));
        arena = Arena.ofShared();
        cq = fp.createCq(64);
        qp = fp.createRtsQp(fp.protectionDomain(), cq, cq, 16, 16, maxSendSge(), 64, Set.of()); // 16 WRs, 64 inline
        sq = arena.allocate(64 * 64, 64).fill((byte) 0xEE);
        dbrec = arena.allocate(8, 8);
        bf = arena.allocate(512, 64);
        cqBuf = Mlx5Model.invalidCqes(arena.allocate(64 * 64, 64), 64);
        rcqBuf = Mlx5Model.invalidCqes(arena.allocate(64 * 64, 64), 64);
        dcq = DirectCompletionQueue.over(cq, new Mlx5CompletionQueueView(cqBuf, 64, 64, arena.allocate(8, 8),
                arena.allocate(8, 8), 0x77));
        dsq = DirectSendQueue.over(qp, view(), dcq, true, false);
        local = arena.allocate(8192, 64);
        remote = arena.allocate(8192, 64);
        for (int k = 0; k < 8192; k++) {
            local.set(ValueLayout.JAVA_BYTE, k, (byte) (k * 7 + 3));
        }
        mrLocal = fp.register(local, 0x1111);
        mrRemote = fp.register(remote, 0x2222);
        Mlx5Model.reset.invokeExact();
        Mlx5Model.reg.invokeExact(0x1111, local.address(), 8192L, LOCAL_WRITE);
        Mlx5Model.reg.invokeExact(0x2222, remote.address(), 8192L,
                LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC);
        Mlx5Model.qpFn.invokeExact(sq, 64, dbrec, qp.qpNum(), cqBuf, 64, rcqBuf, 64, 0x999);
    }

    /** The QP's {@code max_send_sge}: 4 (a subclass may use another). */
    int maxSendSge() {
        return 4;
    }

    Mlx5QueuePairView view() {
        return new Mlx5QueuePairView(sq, 64, 64, dbrec, bf, 256, qp.qpNum());
    }

    @AfterEach
    void tearDown() {
        qp.close();
    }

    /** What {@code c} throws when called on another thread (null if nothing); a hang fails after 30 s. */
    static Throwable thrownOnAnotherThread(ThrowingCallable c) throws Exception {
        return CompletableFuture.supplyAsync(() -> {
            try {
                c.call();
                return null;
            } catch (Throwable e) {
                return e;
            }
        }).get(30, TimeUnit.SECONDS);
    }

    static int ring() throws Throwable {
        return (int) Mlx5Model.doorbell.invokeExact();
    }

    byte[] ringBytes() {
        return sq.toArray(ValueLayout.JAVA_BYTE);
    }

    /** The write of a valid WR still goes through, rings and completes with its wr_id: the queue is usable. */
    void stillUsable(long wrId) throws Throwable {
        dsq.rdmaWrite(wrId, SIG, mrRemote.rkey(), remote.address() + 512, mrLocal, 512, 32);
        assertThat(dsq.post()).isEqualTo(1);
        assertThat(ring()).isEqualTo(1);
        assertThat(dcq.poll(wcs)).isEqualTo(1);
        assertThat(wcs.get(0).wrId()).isEqualTo(wrId);
        assertThat(wcs.get(0).ok()).isTrue();
    }



    DirectReceiveQueue receiveQueue() {
        return DirectReceiveQueue.over(qp, rqView(), dcq);
    }

    Mlx5ReceiveQueueView rqView() {
        return new Mlx5ReceiveQueueView(arena.allocate(16 * 32, 64), 16, 32, arena.allocate(8, 8), qp.qpNum());
    }
}
