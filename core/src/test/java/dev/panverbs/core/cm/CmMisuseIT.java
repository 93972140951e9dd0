package dev.panverbs.core.cm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.Device;
import dev.panverbs.core.ProtectionDomain;
import dev.panverbs.core.QueuePairCapabilities;
import dev.panverbs.testing.RdmaTestDevice;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * rdma_cm misused on a real device: every verb of a closed ID or channel, waiting for events of an ID that is or
 * gets closed (a closed ID never gets one: an {@link IllegalStateException} at once, not a wait as long as the
 * timeout), "forever" timeouts, null addresses.
 */
class CmMisuseIT {
    private static final Duration FOREVER = Duration.ofSeconds(Long.MAX_VALUE);
    private static final Duration BOUND = Duration.ofSeconds(60); // TCG guest: generous, but a hang fails

    private CmResources res;
    private EventChannel channel;

    @BeforeEach
    void open() throws Exception {
        res = new CmResources();
        channel = res.channel();
    }

    @AfterEach
    void close() {
        if (res != null) {
            res.close();
        }
    }

    @Test
    void everyVerbOfAClosedIdThrowsNamingItAndTheVerb() {
        CmId id = channel.createId(PortSpace.TCP);
        InetSocketAddress at = res.nextAddress();
        id.close();
        id.close(); // idempotent
        assertThat(id.isClosed()).isTrue();
        assertThatThrownBy(() -> id.bindAddress(at)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed").hasMessageContaining("rdma_bind_addr");
        assertThatThrownBy(() -> id.listen(4)).hasMessageContaining("is closed").hasMessageContaining("rdma_listen");
        assertThatThrownBy(() -> id.resolveAddress(null, at, BOUND)).hasMessageContaining("rdma_resolve_addr");
        assertThatThrownBy(() -> id.resolveRoute(BOUND)).hasMessageContaining("rdma_resolve_route");
        assertThatThrownBy(id::context).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(id::localAddress).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(id::disconnect).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(id::pollEvent).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed").hasMessageContaining("rdma_get_cm_event");
        // no event of a destroyed ID can come: refused at once, not after the (here endless) timeout
        assertTimeoutPreemptively(BOUND, () -> assertThatThrownBy(() -> id.await(CmEventType.ADDR_RESOLVED, FOREVER))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("is closed"));
    }

    @Test
    void anIdClosedWhileAnotherThreadAwaitsItsEventWakesThatThread() throws Exception {
        CmId listener = channel.createId(PortSpace.TCP);
        listener.bindAddress(res.nextAddress());
        listener.listen(4);
        CompletableFuture<Throwable> waiter = CompletableFuture.supplyAsync(() -> {
            try {
                listener.await(CmEventType.CONNECT_REQUEST, FOREVER); // nobody connects
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        Thread.sleep(300);
        listener.close();
        Throwable t = waiter.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        assertThat(t).isInstanceOf(IllegalStateException.class).hasMessageContaining("is closed");
    }

    @Test
    void aClosedChannelRefusesAndItsIdsAreClosedWithIt() {
        CmId id = channel.createId(PortSpace.UDP);
        channel.close();
        assertThat(id.isClosed()).isTrue();
        assertThatThrownBy(() -> channel.createId(PortSpace.TCP)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed").hasMessageContaining("rdma_create_id");
        assertThatThrownBy(channel::poll).isInstanceOf(IllegalStateException.class);
        assertTimeoutPreemptively(BOUND, () -> assertThatThrownBy(() -> channel.await(FOREVER))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("rdma_get_cm_event"));
        assertThatCode(channel::close).doesNotThrowAnyException();
        assertThatCode(id::close).doesNotThrowAnyException();
    }

    @Test
    void theQpOfAnIdNeedsCqsOfThePdsContext() {
        CmId id = channel.createId(PortSpace.UDP);
        id.bindAddress(res.nextAddress());
        Context ctx = id.context();
        ProtectionDomain pd = ctx.allocPd();
        CompletionQueue own = ctx.createCq(8).build(); // the number an alien CQ's handle would be taken for
        try (Context other = Device.open(RdmaTestDevice.name())) {
            CompletionQueue alien = other.createCq(8).build();
            assertThatThrownBy(() -> id.createQp(pd, own, alien, new QueuePairCapabilities(4, 4, 1, 1, 0)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("rdma_create_qp(")
                    .hasMessageContaining(alien.toString()).hasMessageContaining("another context");
            assertThat(id.queuePair()).isEmpty();
            // PD and CQs all of another context of the same device: librdmacm's bare EINVAL, refused by name first
            ProtectionDomain alienPd = other.allocPd();
            assertThatThrownBy(() -> id.createQp(alienPd, alien, alien, new QueuePairCapabilities(4, 4, 1, 1, 0)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(alienPd.toString())
                    .hasMessageContaining("not of this ID's device context");
        }
        assertThat(id.createQp(pd, own, own, new QueuePairCapabilities(4, 4, 1, 1, 0)).isClosed()).isFalse();
    }

    /**
     * Private data the IB CM cannot carry is refused by name with the limit, before the kernel's bare EINVAL; the
     * largest that fits goes through on each message (connect request, reject; accept checked before the kernel).
     */
    @Test
    void privateDataOverTheCmLimitsIsRefusedWithTheLimit() {
        CmId listener = channel.createId(PortSpace.TCP);
        InetSocketAddress at = res.nextAddress();
        listener.bindAddress(at);
        listener.listen(4);
        EventChannel client = res.channel();
        CmId active = client.createId(PortSpace.TCP);
        active.resolve(at, BOUND);
        ProtectionDomain pd = active.context().allocPd();
        CompletionQueue cq = active.context().createCq(8).build();
        active.createQp(pd, cq, cq, new QueuePairCapabilities(4, 4, 1, 1, 0));
        assertThatThrownBy(() -> active.connect(ConnectionParameters.defaults().withPrivateData(new byte[57])))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("rdma_connect(")
                .hasMessageContaining("57 bytes of private data").hasMessageContaining("at most 56");
        byte[] hello = new byte[56];
        Arrays.fill(hello, (byte) 7);
        active.connect(ConnectionParameters.defaults().withPrivateData(hello)); // the refusal changed nothing
        CmEvent request = listener.await(CmEventType.CONNECT_REQUEST, BOUND);
        assertThat(Arrays.copyOf(request.privateData(), 56)).isEqualTo(hello);
        CmId passive = request.id();
        assertThatThrownBy(() -> passive.accept(ConnectionParameters.defaults().withPrivateData(new byte[197])))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("rdma_accept(")
                .hasMessageContaining("at most 196");
        assertThatThrownBy(() -> passive.reject(new byte[149])).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("rdma_reject(").hasMessageContaining("at most 148");
        byte[] no = new byte[148];
        Arrays.fill(no, (byte) 9);
        passive.reject(no);
        assertThatThrownBy(() -> active.await(CmEventType.ESTABLISHED, BOUND))
                .isInstanceOfSatisfying(ConnectionRejectedException.class,
                        e -> assertThat(Arrays.copyOf(e.privateData(), 148)).isEqualTo(no));
        CmId datagram = client.createId(PortSpace.UDP);
        datagram.resolve(at, BOUND); // nobody listens there in the UDP space; the refusal comes before any send
        assertThatThrownBy(() -> datagram.connect(ConnectionParameters.defaults().withPrivateData(new byte[181])))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 180");
    }

    @Test
    void foreverTimeoutsAndNullArguments() {
        CmId id = channel.createId(PortSpace.TCP);
        assertThatThrownBy(() -> channel.createId(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("portSpace");
        assertThatThrownBy(() -> id.bindAddress(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("local");
        assertThatThrownBy(() -> id.resolveAddress(null, null, BOUND)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("destination");
        // Duration.ofSeconds(Long.MAX_VALUE) overflows toMillis()/toNanos(): it means "no limit", not an error
        assertTimeoutPreemptively(BOUND, () -> {
            id.resolveAddress(null, res.nextAddress(), FOREVER);
            assertThat(id.await(CmEventType.ADDR_RESOLVED, FOREVER).type()).isEqualTo(CmEventType.ADDR_RESOLVED);
            id.resolveRoute(FOREVER);
            assertThat(id.await(CmEventType.ROUTE_RESOLVED, FOREVER).type()).isEqualTo(CmEventType.ROUTE_RESOLVED);
        });
        assertThat(channel.poll()).isNull();
        assertThatThrownBy(() -> id.await(CmEventType.ESTABLISHED, Duration.ofMillis(-5)))
                .isInstanceOf(CmTimeoutException.class).hasMessageContaining("ESTABLISHED");
    }
}
