package dev.panverbs.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The resource base with fake native objects: no device needed. */
class ResourceTest {

    private final List<String> destroyed = new ArrayList<>();
    private long nextAddress = 0x1000;

    /** A fake verbs object: its destroyer records its name, optionally failing. */
    private Resource fake(ResourceKind kind, String name, Resource... parents) {
        return fake(kind, name, null, parents);
    }

    private Resource fake(ResourceKind kind, String name, RuntimeException failure, Resource... parents) {
        MemorySegment handle = MemorySegment.ofAddress(nextAddress += 0x40);
        return Resource.adopt(kind, name, name, handle, h -> {
            synchronized (destroyed) {
                destroyed.add(name);
            }
            if (failure != null) {
                throw failure;
            }
        }, parents);
    }

    @Test
    void closeParentClosesChildrenInDependencyOrderNewestFirst() {
        Resource ctx = fake(ResourceKind.CONTEXT, "ctx");
        Resource pd = fake(ResourceKind.PROTECTION_DOMAIN, "pd", ctx);
        Resource cq = fake(ResourceKind.COMPLETION_QUEUE, "cq", ctx);
        Resource mr1 = fake(ResourceKind.MEMORY_REGION, "mr1", pd);
        Resource qp = fake(ResourceKind.QUEUE_PAIR, "qp", pd, cq, cq);
        Resource mr2 = fake(ResourceKind.MEMORY_REGION, "mr2", pd);
        Resource ah = fake(ResourceKind.ADDRESS_HANDLE, "ah", pd);

        ctx.close();

        // context children by kind: CQ before PD; the CQ closes its QP first; the PD then closes AH, MRs newest first
        assertThat(destroyed).containsExactly("qp", "cq", "ah", "mr2", "mr1", "pd", "ctx");
        for (Resource r : List.of(ctx, pd, cq, mr1, qp, mr2, ah)) {
            assertThat(r.isClosed()).as(r.description()).isTrue();
            assertThat(r.rawHandle()).isEqualTo(MemorySegment.NULL);
        }
        assertThat(ctx.children()).isEmpty();
    }

    @Test
    void childClosedFirstUnregistersFromEveryParent() {
        Resource ctx = fake(ResourceKind.CONTEXT, "ctx");
        Resource pd = fake(ResourceKind.PROTECTION_DOMAIN, "pd", ctx);
        Resource cq = fake(ResourceKind.COMPLETION_QUEUE, "cq", ctx);
        Resource qp = fake(ResourceKind.QUEUE_PAIR, "qp", pd, cq);
        qp.close();
        assertThat(pd.children()).isEmpty();
        assertThat(cq.children()).isEmpty();
        ctx.close();
        assertThat(destroyed).containsExactly("qp", "cq", "pd", "ctx");
    }

    @Test
    void closeTwiceIsNoOp() {
        Resource ctx = fake(ResourceKind.CONTEXT, "ctx");
        Resource pd = fake(ResourceKind.PROTECTION_DOMAIN, "pd", ctx);
        pd.close();
        pd.close();
        ctx.close();
        ctx.close();
        pd.close();
        assertThat(destroyed).containsExactly("pd", "ctx");
    }

    @Test
    void useAfterCloseNamesObjectVerbAndClosingParent() {
        Resource ctx = fake(ResourceKind.CONTEXT, "Context[rxe0]");
        Resource pd = fake(ResourceKind.PROTECTION_DOMAIN, "ProtectionDomain[0x1 on rxe0]", ctx);
        ctx.close();
        assertThatThrownBy(() -> pd.checkOpen("ibv_reg_mr"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("ProtectionDomain[0x1 on rxe0] is closed (closed with its parent Context[rxe0]); "
                        + "cannot call ibv_reg_mr");
        assertThatThrownBy(() -> ctx.handle("ibv_alloc_pd"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("Context[rxe0] is closed; cannot call ibv_alloc_pd");
    }

    @Test
    void adoptUnderClosedParentDestroysHandleAndThrows() {
        Resource ctx = fake(ResourceKind.CONTEXT, "ctx");
        Resource pd = fake(ResourceKind.PROTECTION_DOMAIN, "pd", ctx);
        pd.close();
        assertThatThrownBy(() -> fake(ResourceKind.MEMORY_REGION, "late-mr", ctx, pd))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("pd is closed")
                .hasMessageContaining("create late-mr");
        assertThat(destroyed).containsExactly("pd", "late-mr");
        assertThat(ctx.children()).as("registration with the open parent was rolled back").isEmpty();
    }

    @Test
    void cascadeKeepsGoingAndThrowsFirstFailureWithOthersSuppressed() {
        Resource ctx = fake(ResourceKind.CONTEXT, "ctx");
        Resource pd = fake(ResourceKind.PROTECTION_DOMAIN, "pd", ctx);
        RuntimeException first = new RuntimeException("mr2 EBUSY");
        RuntimeException second = new RuntimeException("mr1 EINVAL");
        fake(ResourceKind.MEMORY_REGION, "mr1", second, pd);
        fake(ResourceKind.MEMORY_REGION, "mr2", first, pd);
        Resource ah = fake(ResourceKind.ADDRESS_HANDLE, "ah", pd);

        assertThatThrownBy(ctx::close).isSameAs(first).satisfies(t -> assertThat(t.getSuppressed()).containsExactly(second));
        assertThat(destroyed).containsExactly("ah", "mr2", "mr1", "pd", "ctx");
        assertThat(ah.isClosed()).isTrue();
        assertThat(ctx.isClosed()).isTrue();
        ctx.close(); // still idempotent after a failed cascade
    }

    @Test
    void findOwnerWalksDescendantsByKindAndAddress() {
        Resource ctx = fake(ResourceKind.CONTEXT, "ctx");
        Resource pd = fake(ResourceKind.PROTECTION_DOMAIN, "pd", ctx);
        Resource cq = fake(ResourceKind.COMPLETION_QUEUE, "cq", ctx);
        Resource qp = fake(ResourceKind.QUEUE_PAIR, "qp", pd, cq);
        assertThat(ctx.findOwner(ResourceKind.QUEUE_PAIR, qp.rawHandle().address())).isEqualTo("qp");
        assertThat(ctx.findOwner(ResourceKind.COMPLETION_QUEUE, qp.rawHandle().address())).isNull();
        qp.close();
        assertThat(ctx.findOwner(ResourceKind.QUEUE_PAIR, 0x1000 + 4 * 0x40)).isNull();
    }

    @Test
    void replaceParentMovesRegistration() {
        Resource ctx = fake(ResourceKind.CONTEXT, "ctx");
        Resource pd1 = fake(ResourceKind.PROTECTION_DOMAIN, "pd1", ctx);
        Resource pd2 = fake(ResourceKind.PROTECTION_DOMAIN, "pd2", ctx);
        Resource mr = fake(ResourceKind.MEMORY_REGION, "mr", pd1);
        mr.replaceParent(pd1, pd2);
        assertThat(pd1.children()).isEmpty();
        assertThat(pd2.children()).containsExactly(mr);
        assertThat(mr.parents()).containsExactly(pd2);
        pd1.close();
        assertThat(mr.isClosed()).isFalse();
        pd2.close();
        assertThat(destroyed).containsExactly("pd1", "mr", "pd2");
    }

    @Test
    void concurrentClosesDestroyExactlyOnce() throws Exception {
        Resource ctx = fake(ResourceKind.CONTEXT, "ctx");
        AtomicInteger destroys = new AtomicInteger();
        List<Resource> pds = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            pds.add(Resource.adopt(ResourceKind.PROTECTION_DOMAIN, "pd" + i, "pd" + i,
                    MemorySegment.ofAddress(0x10000 + i), h -> destroys.incrementAndGet(), ctx));
        }
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                pds.forEach(Resource::close);
                ctx.close();
            }));
        }
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        assertThat(destroys).hasValue(64);
        assertThat(destroyed).containsExactly("ctx");
    }

    @Test
    void closeAllKeepsGoing() {
        List<String> closed = new ArrayList<>();
        IllegalStateException a = new IllegalStateException("a");
        Exception b = new Exception("b (checked)");
        AutoCloseable failA = () -> {
            closed.add("a");
            throw a;
        };
        AutoCloseable failB = () -> {
            closed.add("b");
            throw b;
        };
        AutoCloseable ok = () -> closed.add("ok");
        assertThatThrownBy(() -> CloseHelper.closeAll(failA, null, ok, failB))
                .isSameAs(a)
                .satisfies(t -> assertThat(t.getSuppressed()).containsExactly(b));
        assertThat(closed).containsExactly("a", "ok", "b");
        CloseHelper.closeAll(ok, ok);
    }

    /** A parent's cascade meeting a child another thread is closing waits for that child's destroy verb. */
    @Test
    void aCascadeWaitsForAChildThatAnotherThreadIsDestroying() throws Exception {
        Resource pd = fake(ResourceKind.PROTECTION_DOMAIN, "pd");
        CountDownLatch inDestroy = new CountDownLatch(1);
        AtomicInteger childDone = new AtomicInteger();
        AtomicInteger childDoneWhenParentDestroyed = new AtomicInteger(-1);
        Resource parent = Resource.adopt(ResourceKind.PROTECTION_DOMAIN, "parent", "parent",
                MemorySegment.ofAddress(0x9000), h -> childDoneWhenParentDestroyed.set(childDone.get()));
        Resource child = Resource.adopt(ResourceKind.QUEUE_PAIR, "child", "child", MemorySegment.ofAddress(0x9040),
                h -> {
                    inDestroy.countDown();
                    try {
                        Thread.sleep(300); // a slow ibv_destroy_qp
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    childDone.set(1);
                }, parent);
        Thread other = Thread.ofPlatform().start(child::close);
        inDestroy.await();
        parent.close(); // the cascade finds the child CLOSING on the other thread
        other.join();
        assertThat(childDoneWhenParentDestroyed.get()).as("the child's destroy had finished").isEqualTo(1);
        assertThat(parent.children()).isEmpty();
        pd.close();
    }
}
