package dev.panverbs.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.core.internal.NativeHandles;
import java.time.Duration;
import java.util.EnumSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The ownership rules against real objects: cascade, idempotent close, use after close; channels; AHs. */
class LifecycleIT {

    private CoreResources res;

    @BeforeEach
    void open() {
        res = new CoreResources();
    }

    @AfterEach
    void close() {
        res.close();
    }

    @Test
    void closeContextClosesPdAndMrs() {
        MemoryRegion a = res.pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE));
        MemoryRegion b = res.pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE));
        CompletionChannel ch = res.context.createCompChannel();
        res.context.close();
        assertThat(res.context.isClosed()).isTrue();
        assertThat(res.pd.isClosed()).isTrue();
        assertThat(a.isClosed()).isTrue();
        assertThat(b.isClosed()).isTrue();
        assertThat(ch.isClosed()).isTrue();
    }

    @Test
    void closePdTwiceAndAfterContextIsNoOp() {
        res.pd.close();
        res.pd.close();
        res.context.close();
        res.pd.close();
        res.context.close();
    }

    @Test
    void useAfterCloseThrowsNamingObjectAndVerb() {
        res.context.close();
        assertThatThrownBy(() -> res.pd.allocate(4096, EnumSet.of(Access.LOCAL_WRITE)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("ProtectionDomain[")
                .hasMessageContaining("is closed (closed with its parent Context[" + res.deviceName + "])")
                .hasMessageEndingWith("cannot call ibv_reg_mr");
        assertThatThrownBy(res.context::allocPd)
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("Context[" + res.deviceName + "] is closed; cannot call ibv_alloc_pd");
        assertThatThrownBy(res.context::queryDevice).hasMessageContaining("cannot call ibv_query_device_ex");
        assertThatThrownBy(() -> NativeHandles.pd(res.pd, "ibv_create_qp")).hasMessageContaining("ibv_create_qp");
    }

    @Test
    void closeChannelClosesItsCqFirst() {
        CompletionChannel ch = res.context.createCompChannel();
        CompletionQueue cq = res.context.createCq(16).channel(ch).build();
        cq.reqNotify(false);
        assertThat(ch.getCqEvent(50)).as("no completion, no event").isNull();
        ch.close(); // ibv_destroy_comp_channel would fail with EBUSY if the CQ were still alive
        assertThat(cq.isClosed()).isTrue();
    }

    @Test
    void compChannelTimedWaitReturnsWithinTimeout() {
        CompletionChannel ch = res.context.createCompChannel();
        res.context.createCq(16).channel(ch).build().reqNotify(false);
        long start = System.nanoTime();
        assertThat(ch.getCqEvent(Duration.ofMillis(300))).isEmpty();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(250), Duration.ofSeconds(10));
        assertThat(ch.tryGetCqEvent()).isEmpty();
    }

    @Test
    void createAhWithGrhToOwnGid() {
        PortAttributes port = res.context.queryPort(1);
        GidEntry gid = res.context.queryGidTable().stream().filter(e -> e.portNum() == 1)
                .filter(e -> e.type() == GidType.ROCE_V2 || e.type() == GidType.IB).findFirst().orElseThrow();
        AddressVector av = AddressVector.builder(1).dlid(port.lid())
                .grh(gid.gid().toBytes(), gid.index(), 64).build();
        AddressHandle ah = res.pd.createAh(av);
        assertThat(ah.addressVector()).isEqualTo(av);
        res.pd.close();
        assertThat(ah.isClosed()).isTrue();
    }

    @Test
    void createAhWithoutGrhOnRoceFailsWithHint() {
        if (res.context.queryPort(1).linkLayer() != LinkLayer.ETHERNET) {
            return;
        }
        assertThatThrownBy(() -> res.pd.createAh(AddressVector.builder(1).dlid(1).build()))
                .isInstanceOf(VerbsException.class)
                .hasMessageContaining("ibv_create_ah(")
                .hasMessageContaining("needs a GRH");
    }
}
