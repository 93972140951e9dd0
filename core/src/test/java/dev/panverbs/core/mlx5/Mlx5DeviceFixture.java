package dev.panverbs.core.mlx5;

import dev.panverbs.core.Access;
import dev.panverbs.core.AddressVector;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.Device;
import dev.panverbs.core.Mtu;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.WorkCompletion;
import dev.panverbs.core.WorkCompletions;
import dev.panverbs.testing.RdmaTestDevice;
import java.util.Set;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the mlx5 ITs on the test device share (Java-only): the device opened with a PD for every test, closed after
 * it, a loopback path on port 1 (by LID on InfiniBand, by GID on RoCE), an RC pair connected over it, and polling
 * with a 10 s bound.
 */
abstract class Mlx5DeviceFixture {
    static final int PORT = 1;

    String name;
    Context ctx;
    ProtectionDomain pd;

    @BeforeEach
    void open() {
        name = RdmaTestDevice.name();
        ctx = Device.open(name);
        pd = ctx.allocPd();
    }

    @AfterEach
    void close() {
        ctx.close();
    }

    /** The address vector of this port to itself. */
    AddressVector loopbackPath() {
        int lid = ctx.queryPort(PORT).lid();
        int gidIndex = ctx.queryGid(PORT, 1).isZero() ? 0 : 1;
        return lid != 0 ? AddressVector.builder(PORT).dlid(lid).build() // InfiniBand: by LID
                : AddressVector.builder(PORT).grh(ctx.queryGid(PORT, gidIndex).toBytes(), gidIndex, 64).build();
    }

    /** Connects RC QPs {@code a} and {@code b} to each other on this port, each granting {@code remote}. */
    void connect(QueuePair a, QueuePair b, Set<Access> remote) {
        a.toInit(PORT, remote);
        b.toInit(PORT, remote);
        AddressVector av = loopbackPath();
        a.toRtr(av, Mtu.MTU_1024, b.qpNum(), 100);
        b.toRtr(av, Mtu.MTU_1024, a.qpNum(), 200);
        a.toRts(200);
        b.toRts(100);
    }

    static WorkCompletion poll(CompletionQueue cq, WorkCompletions wcs) {
        return pollUntil(cq::poll, wcs);
    }

    static WorkCompletion poll(DirectCompletionQueue cq, WorkCompletions wcs) {
        return pollUntil(cq::poll, wcs);
    }

    private static WorkCompletion pollUntil(ToIntFunction<WorkCompletions> poll, WorkCompletions wcs) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (poll.applyAsInt(wcs) > 0) {
                return wcs.get(0);
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no completion within 10 s");
    }
}
