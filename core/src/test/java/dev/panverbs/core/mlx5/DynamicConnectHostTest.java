package dev.panverbs.core.mlx5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.panverbs.bindings.mlx5dv.mlx5dv_qp_ex;
import dev.panverbs.bindings.verbs.ibv_context;
import dev.panverbs.bindings.verbs.ibv_device;
import dev.panverbs.core.AddressHandle;
import dev.panverbs.core.CompletionQueue;
import dev.panverbs.core.Context;
import dev.panverbs.core.FakeProvider;
import dev.panverbs.core.MemoryRegion;
import dev.panverbs.core.PostBatch;
import dev.panverbs.core.QueuePair;
import dev.panverbs.core.InvalidTransitionException;
import dev.panverbs.core.Mtu;
import dev.panverbs.core.QueuePairAttribute;
import dev.panverbs.core.QueuePairAttributes;
import dev.panverbs.core.QueuePairState;
import dev.panverbs.core.QueuePairTransitions;
import dev.panverbs.core.QueuePairType;
import dev.panverbs.core.SendFlag;
import dev.panverbs.core.SendOperation;
import dev.panverbs.core.UnsupportedVerbException;
import dev.panverbs.core.WorkCompletions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The DC transport's Java side on the host, over the core's fake provider: the refusal of a device libmlx5 does not
 * drive (the real libmlx5 answering {@code mlx5dv_is_supported} for a fake device), and a DC initiator's
 * {@code ibv_wr_*} batch whose {@code mlx5dv_qp_ex.wr_set_dc_addr} slot is the fake's recording C function: the DC address reaches
 * the provider as given, the address handle is pinned until the completion retires, and the misuses are refused by
 * name before the provider. The WQE bytes libmlx5 builds are the oracle tests'; execution is the hardware lane's.
 */
class DynamicConnectHostTest {
    private static FakeProvider fake;
    /** {@code struct mlx5dv_qp_ex} whose {@code wr_set_dc_addr} records its arguments. */
    private static MemorySegment mqp;
    private static MethodHandle lastDcAddr;
    private static long callsBefore;

    @BeforeAll
    static void openFake() throws ReflectiveOperationException {
        fake = new FakeProvider(FakeProvider.compile(Path.of("src/test/c/fake_provider.c"), Path.of("target/fake")));
        // a struct verbs_device whose provider ops are not libmlx5's: mlx5dv_is_supported reads them
        MemorySegment ctx = FakeProvider.handle(fake.context()).reinterpret(ibv_context.sizeof());
        ibv_context.device(ctx, Arena.global().allocate(ibv_device.sizeof() + 64, 8));
        mqp = Arena.global().allocate(mlx5dv_qp_ex.sizeof(), 8);
        mqp.set(ValueLayout.ADDRESS, mlx5dv_qp_ex.wr_set_dc_addr$offset(), fake.symbol("fake_wr_set_dc_addr"));
        lastDcAddr = fake.downcall("fake_last_dc_addr", FunctionDescriptor.of(ValueLayout.JAVA_LONG,
                ValueLayout.ADDRESS), false);
    }

    /** The calls of {@code wr_set_dc_addr} since the test began, the last one's arguments: mqp, ah, dctn, key. */
    private static long calls(long[] last) throws Throwable {
        MemorySegment out = Arena.ofAuto().allocate(32, 8);
        long n = (long) lastDcAddr.invokeExact(out);
        MemorySegment.copy(out, ValueLayout.JAVA_LONG, 0, last, 0, 4);
        return n - callsBefore;
    }

    @BeforeEach
    void clear() throws Throwable {
        callsBefore = 0;
        callsBefore = calls(new long[4]);
    }

    private static DcInitiator dci(CompletionQueue cq) {
        return new DcInitiator(fake.createDcInitiator(cq, 16, EnumSet.of(SendOperation.RDMA_WRITE,
                SendOperation.SEND)), mqp);
    }

    private static int drain(CompletionQueue cq) {
        WorkCompletions wcs = WorkCompletions.allocate(16);
        int total = 0;
        int n;
        while ((n = cq.poll(wcs)) > 0) {
            total += n;
        }
        return total;
    }

    @Test
    void aDeviceLibmlx5DoesNotDriveIsRefusedByNameBeforeAnyDcVerb() {
        Context ctx = fake.context();
        CompletionQueue cq = fake.createCq(8);
        for (var call : List.<org.assertj.core.api.ThrowableAssert.ThrowingCallable>of(
                () -> DynamicConnect.capabilities(ctx),
                () -> DcInitiator.builder(fake.protectionDomain(), cq).build())) {
            assertThatThrownBy(call).isInstanceOf(UnsupportedVerbException.class)
                    .hasMessageContaining("fake0 is not an mlx5 device")
                    .satisfies(e -> assertThat(((UnsupportedVerbException) e).capability())
                            .isEqualTo(DynamicConnect.CAPABILITY));
        }
    }

    @Test
    void aDciRefusedForItsAtomicsIsNotReportedAsADeviceWithoutDc() {
        int eopnotsupp = dev.panverbs.bindings.verbs.verbs_h.EOPNOTSUPP();
        RuntimeException atomics = DynamicConnect.createFailed("mlx5dv_create_qp(dc_type=MLX5DV_DCTYPE_DCI)",
                "mlx5_0", eopnotsupp, "MLX5DV_DCTYPE_DCI", true); // libmlx5's own refusal: atomic_cap NONE
        assertThat(atomics).isInstanceOf(UnsupportedVerbException.class).hasMessageContaining("mlx5_0 has no atomics")
                .hasMessageContaining("ATOMIC_FETCH_AND_ADD").hasMessageNotContaining("no DC support");
        RuntimeException noDc = DynamicConnect.createFailed("mlx5dv_create_qp(dc_type=MLX5DV_DCTYPE_DCI)", "mlx5_0",
                eopnotsupp, "MLX5DV_DCTYPE_DCI", false);
        assertThat(noDc).hasMessageContaining("no DC support").hasMessageNotContaining("atomics");
    }

    @Test
    void aTargetWithoutASharedReceiveQueueOrWithNullsIsRefusedByName() {
        CompletionQueue cq = fake.createCq(8);
        assertThatThrownBy(() -> DcTarget.create(fake.protectionDomain(), cq, null, 7))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("MLX5DV_DCTYPE_DCT")
                .hasMessageContaining("shared receive queue");
        assertThatThrownBy(() -> DcTarget.create(fake.protectionDomain(), null, null, 7))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("cq");
        assertThatThrownBy(() -> DcInitiator.builder(null, cq)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("mlx5dv_create_qp");
        assertThatThrownBy(() -> DcInitiator.builder(fake.protectionDomain(), cq).sendOps(EnumSet.noneOf(
                SendOperation.class))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ibv_wr_*");
        assertThatThrownBy(() -> DcInitiator.builder(fake.protectionDomain(), cq).maxSendWr(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxSendWr");
    }

    @Test
    void theDcAddressReachesTheProviderAndPinsTheAddressHandleUntilTheCompletionRetires() throws Throwable {
        CompletionQueue cq = fake.createCq(64);
        DcInitiator dci = dci(cq);
        MemoryRegion buf = fake.buffer(0x71);
        AtomicInteger destroyed = new AtomicInteger();
        AddressHandle ah = FakeProvider.fakeAh(fake.protectionDomain(), destroyed);
        try (PostBatch b = dci.startSend()) {
            b.rdmaWrite(5, SendFlag.SIGNALED_BIT, 0x1234, 0x10000);
            dci.setDcAddr(b, ah, 0xABCDEF, 0x0123456789ABCDEFL).setSge(buf, 0, 64);
            b.submit();
        }
        long[] last = new long[4];
        assertThat(calls(last)).isEqualTo(1);
        assertThat(last).containsExactly(mqp.address(), FakeProvider.handle(ah).address(), 0xABCDEF,
                0x0123456789ABCDEFL);
        assertThatThrownBy(ah::close).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_destroy_ah").hasMessageContaining("outstanding");
        assertThat(destroyed).hasValue(0);
        assertThat(drain(cq)).isEqualTo(1);
        ah.close();
        assertThat(destroyed).hasValue(1);
        dci.close();
        buf.close();
    }

    @Test
    void aWorkRequestWithoutADcAddressIsRefusedAtSubmitNamingTheSetter() {
        CompletionQueue cq = fake.createCq(64);
        DcInitiator dci = dci(cq);
        MemoryRegion buf = fake.buffer(0x72);
        AddressHandle ah = FakeProvider.fakeAh(fake.protectionDomain(), new AtomicInteger());
        try (PostBatch b = dci.startSend()) {
            b.send(1, SendFlag.SIGNALED_BIT);
            dci.setDcAddr(b, ah, 1, 2).setSge(buf, 0, 8);
            b.send(2, SendFlag.SIGNALED_BIT).setSge(buf, 0, 8); // no setDcAddr
            assertThatThrownBy(b::submit).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("work request 1").hasMessageContaining("setDcAddr")
                    .hasMessageContaining("mlx5dv_wr_set_dc_addr");
        }
        assertThat(drain(cq)).as("nothing was posted").isZero();
        ah.close(); // the aborted batch pinned nothing
        dci.close();
        buf.close();
    }

    @Test
    void aWorkRequestWithItsDcAddressButNoDataIsRefusedNamingIt() {
        CompletionQueue cq = fake.createCq(64);
        DcInitiator dci = dci(cq);
        AddressHandle ah = FakeProvider.fakeAh(fake.protectionDomain(), new AtomicInteger());
        try (PostBatch b = dci.startSend()) { // libmlx5 finishes a DCI WQE at its second setter: never, here
            b.send(1, SendFlag.SIGNALED_BIT);
            dci.setDcAddr(b, ah, 1, 2);
            assertThatThrownBy(() -> b.send(2, 0)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("work request 0").hasMessageContaining("no data");
            assertThatThrownBy(b::submit).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("work request 0").hasMessageContaining("no data");
        }
        assertThat(drain(cq)).as("nothing was posted").isZero();
        ah.close();
        dci.close();
    }

    @Test
    void aClosedAddressHandleIsRefusedNamingTheVerbAndOneClosedAfterItsSetterAbortsTheBatch() throws Throwable {
        CompletionQueue cq = fake.createCq(64);
        DcInitiator dci = dci(cq);
        MemoryRegion buf = fake.buffer(0x73);
        AddressHandle closed = FakeProvider.fakeAh(fake.protectionDomain(), new AtomicInteger());
        closed.close();
        try (PostBatch b = dci.startSend()) {
            b.send(1, SendFlag.SIGNALED_BIT);
            assertThatThrownBy(() -> dci.setDcAddr(b, closed, 1, 2)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("mlx5dv_wr_set_dc_addr");
        }
        assertThat(calls(new long[4])).as("the provider never saw the closed AH").isZero();
        AddressHandle ah = FakeProvider.fakeAh(fake.protectionDomain(), new AtomicInteger());
        try (PostBatch b = dci.startSend()) {
            b.send(1, SendFlag.SIGNALED_BIT);
            dci.setDcAddr(b, ah, 1, 2).setSge(buf, 0, 8);
            ah.close(); // staged, not yet published: the close succeeds and the submit must refuse
            assertThatThrownBy(b::submit).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining(ah.toString()).hasMessageContaining("setDcAddr");
        }
        assertThat(drain(cq)).as("nothing was posted").isZero();
        dci.close();
        buf.close();
    }

    @Test
    void otherQueuePairsBatchesOtherDomainsAndNullsAreRefusedBeforeTheProvider() throws Throwable {
        CompletionQueue cq = fake.createCq(64);
        DcInitiator dci = dci(cq);
        QueuePair rc = fake.createRtsQp(cq, 16, 0, EnumSet.of(SendOperation.SEND));
        AddressHandle ah = FakeProvider.fakeAh(fake.protectionDomain(), new AtomicInteger());
        AddressHandle foreign = FakeProvider.fakeAh(fake.newPd(), new AtomicInteger());
        assertThatThrownBy(() -> new DcInitiator(rc, mqp)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a DC initiator");
        try (PostBatch b = rc.startSend()) {
            b.send(1, 0);
            assertThatThrownBy(() -> dci.setDcAddr(b, ah, 1, 2)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("mlx5dv_wr_set_dc_addr").hasMessageContaining("RC");
        }
        try (PostBatch b = dci.startSend()) {
            assertThatThrownBy(() -> dci.setDcAddr(b, ah, 1, 2)).as("no current WR")
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("no current work request");
            b.send(1, 0);
            assertThatThrownBy(() -> dci.setDcAddr(b, foreign, 1, 2)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("another protection domain");
            assertThatThrownBy(() -> dci.setDcAddr(b, null, 1, 2)).isInstanceOf(NullPointerException.class)
                    .hasMessageContaining("mlx5dv_wr_set_dc_addr");
        }
        assertThatThrownBy(() -> dci.setDcAddr(null, ah, 1, 2)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("mlx5dv_wr_set_dc_addr");
        assertThat(calls(new long[4])).as("the provider saw none of them").isZero();
        assertThatThrownBy(() -> dci.queuePair().sendRequests()).isInstanceOf(UnsupportedVerbException.class)
                .hasMessageContaining("ibv_post_send").hasMessageContaining("setDcAddr");
        assertThatThrownBy(() -> dci.queuePair().receiveRequests()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("DC initiator");
        assertThatThrownBy(() -> fake.protectionDomain().createQp(QueuePairType.DC_INITIATOR, cq, cq))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("DynamicConnect");
        dci.close();
        assertThatThrownBy(dci::startSend).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ibv_wr_start");
        rc.close();
    }

    @Test
    void theTransitionsAreThoseLinuxMlx5IbChecksForDciAndDct() {
        var dci = QueuePairType.DC_INITIATOR;
        var dct = QueuePairType.DC_TARGET;
        assertThat(QueuePairTransitions.required(dci, QueuePairState.RESET, QueuePairState.INIT))
                .containsExactlyInAnyOrder(QueuePairAttribute.PKEY_INDEX, QueuePairAttribute.PORT);
        assertThat(QueuePairTransitions.required(dci, QueuePairState.INIT, QueuePairState.RTR))
                .containsExactly(QueuePairAttribute.PATH_MTU);
        assertThat(QueuePairTransitions.optional(dci, QueuePairState.INIT, QueuePairState.RTR))
                .containsExactlyInAnyOrder(QueuePairAttribute.PKEY_INDEX, QueuePairAttribute.AV);
        assertThat(QueuePairTransitions.required(dci, QueuePairState.RTR, QueuePairState.RTS))
                .containsExactlyInAnyOrder(QueuePairAttribute.TIMEOUT, QueuePairAttribute.RETRY_CNT,
                        QueuePairAttribute.RNR_RETRY, QueuePairAttribute.SQ_PSN, QueuePairAttribute.MAX_QP_RD_ATOMIC);
        assertThat(QueuePairTransitions.required(dct, QueuePairState.RESET, QueuePairState.INIT))
                .containsExactlyInAnyOrder(QueuePairAttribute.PKEY_INDEX, QueuePairAttribute.PORT,
                        QueuePairAttribute.ACCESS_FLAGS);
        assertThat(QueuePairTransitions.required(dct, QueuePairState.INIT, QueuePairState.RTR))
                .containsExactlyInAnyOrder(QueuePairAttribute.AV, QueuePairAttribute.PATH_MTU,
                        QueuePairAttribute.MIN_RNR_TIMER);
        // a DCI names no remote QP and takes no access flags; a DCT never sends
        assertThatThrownBy(() -> QueuePairTransitions.check(dci, QueuePairState.INIT, QueuePairState.RTR,
                new QueuePairAttributes().qpState(QueuePairState.RTR).pathMtu(Mtu.MTU_1024).destQpNum(5)
                        .attributes().stream().mapToInt(QueuePairAttribute::bit).sum()))
                .isInstanceOf(InvalidTransitionException.class).hasMessageContaining("DEST_QPN");
        assertThat(QueuePairTransitions.isValid(QueuePairState.RTR, QueuePairState.RTS)).isTrue();
        assertThat(QueuePairTransitions.required(dct, QueuePairState.RTR, QueuePairState.RTS)).isEmpty();
    }
}
