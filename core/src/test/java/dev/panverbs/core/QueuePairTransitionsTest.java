package dev.panverbs.core;

import static dev.panverbs.core.QueuePairAttribute.*;
import static dev.panverbs.core.QueuePairState.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The QP state/mask table against the IB spec's (and the kernel's qp_state_table) values, written out here. */
class QueuePairTransitionsTest {

    private static final QueuePairType[] CREATABLE = {QueuePairType.RC, QueuePairType.UC, QueuePairType.UD};

    /** The spec's required attributes for the connection-setup path, spelled out independently of the table. */
    private static Set<QueuePairAttribute> expectedRequired(QueuePairType t, QueuePairState from, QueuePairState to) {
        if (from == QueuePairState.RESET && to == INIT) {
            return t == QueuePairType.UD ? EnumSet.of(PKEY_INDEX, PORT, QKEY)
                    : EnumSet.of(PKEY_INDEX, PORT, ACCESS_FLAGS);
        }
        if (from == INIT && to == RTR) {
            return switch (t) {
                case RC -> EnumSet.of(AV, PATH_MTU, DEST_QPN, RQ_PSN, MAX_DEST_RD_ATOMIC, MIN_RNR_TIMER);
                case UC -> EnumSet.of(AV, PATH_MTU, DEST_QPN, RQ_PSN);
                default -> EnumSet.noneOf(QueuePairAttribute.class);
            };
        }
        if (from == RTR && to == RTS) {
            return t == QueuePairType.RC ? EnumSet.of(TIMEOUT, RETRY_CNT, RNR_RETRY, SQ_PSN, MAX_QP_RD_ATOMIC)
                    : EnumSet.of(SQ_PSN);
        }
        return EnumSet.noneOf(QueuePairAttribute.class);
    }

    @Test
    void setupPathRequiredSetsMatchTheSpec() {
        for (QueuePairType t : CREATABLE) {
            assertThat(QueuePairTransitions.required(t, QueuePairState.RESET, INIT))
                    .isEqualTo(expectedRequired(t, QueuePairState.RESET, INIT));
            assertThat(QueuePairTransitions.required(t, INIT, RTR)).isEqualTo(expectedRequired(t, INIT, RTR));
            assertThat(QueuePairTransitions.required(t, RTR, RTS)).isEqualTo(expectedRequired(t, RTR, RTS));
        }
    }

    @Test
    void setupPathOptionalSetsMatchTheSpec() {
        assertThat(QueuePairTransitions.optional(QueuePairType.RC, INIT, RTR))
                .containsExactlyInAnyOrder(ALT_PATH, ACCESS_FLAGS, PKEY_INDEX);
        assertThat(QueuePairTransitions.optional(QueuePairType.UD, INIT, RTR))
                .containsExactlyInAnyOrder(PKEY_INDEX, QKEY);
        assertThat(QueuePairTransitions.optional(QueuePairType.RC, RTR, RTS))
                .containsExactlyInAnyOrder(CUR_STATE, ALT_PATH, ACCESS_FLAGS, MIN_RNR_TIMER, PATH_MIG_STATE);
        assertThat(QueuePairTransitions.optional(QueuePairType.UC, RTR, RTS))
                .containsExactlyInAnyOrder(CUR_STATE, ALT_PATH, ACCESS_FLAGS, PATH_MIG_STATE);
        assertThat(QueuePairTransitions.optional(QueuePairType.UD, RTR, RTS))
                .containsExactlyInAnyOrder(CUR_STATE, QKEY);
        assertThat(QueuePairTransitions.optional(QueuePairType.UD, QueuePairState.RESET, INIT)).isEmpty();
        assertThat(QueuePairTransitions.optional(QueuePairType.RC, RTS, SQD)).containsExactly(EN_SQD_ASYNC_NOTIFY);
    }

    /** Every legal transition passes with exactly its required set and with required + every optional one. */
    @ParameterizedTest
    @EnumSource(value = QueuePairType.class, names = {"RC", "UC", "UD"})
    void everyLegalTransitionAcceptsRequiredAndOptional(QueuePairType t) {
        int legal = 0;
        for (QueuePairState from : QueuePairState.values()) {
            for (QueuePairState to : QueuePairState.values()) {
                if (!QueuePairTransitions.isValid(from, to)) {
                    continue;
                }
                legal++;
                int req = QueuePairAttribute.toMask(QueuePairTransitions.required(t, from, to));
                int opt = QueuePairAttribute.toMask(QueuePairTransitions.optional(t, from, to));
                int state = STATE.bit();
                QueuePairTransitions.check(t, from, to, req | state);
                QueuePairTransitions.check(t, from, to, req | opt | state);
                for (QueuePairAttribute o : QueuePairAttribute.fromMask(opt)) {
                    QueuePairTransitions.check(t, from, to, req | o.bit() | state);
                }
            }
        }
        // 7 states to RESET and ERR, RESET->INIT, INIT->INIT/RTR, RTR->RTS, RTS->RTS/SQD, SQD->RTS/SQD, SQE->RTS
        assertThat(legal).isEqualTo(14 + 9);
    }

    @ParameterizedTest
    @EnumSource(value = QueuePairType.class, names = {"RC", "UC", "UD"})
    void eachMissingRequiredAttributeIsNamed(QueuePairType t) {
        for (QueuePairState[] step : new QueuePairState[][] {{QueuePairState.RESET, INIT}, {INIT, RTR}, {RTR, RTS}}) {
            Set<QueuePairAttribute> req = QueuePairTransitions.required(t, step[0], step[1]);
            for (QueuePairAttribute dropped : req) {
                int mask = QueuePairAttribute.toMask(req) & ~dropped.bit() | STATE.bit();
                InvalidTransitionException e = catchThrowableOfType(InvalidTransitionException.class,
                        () -> QueuePairTransitions.check(t, step[0], step[1], mask));
                assertThat(e.missing()).containsExactly(dropped);
                assertThat(e.extra()).isEmpty();
                assertThat(e.current()).isEqualTo(step[0]);
                assertThat(e.next()).isEqualTo(step[1]);
                assertThat(e.getMessage()).contains(dropped.name()).contains(dropped.setter());
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = QueuePairType.class, names = {"RC", "UC", "UD"})
    void eachAttributeNotAcceptedIsExtra(QueuePairType t) {
        for (QueuePairState[] step : new QueuePairState[][] {{QueuePairState.RESET, INIT}, {INIT, RTR}, {RTR, RTS}}) {
            int req = QueuePairAttribute.toMask(QueuePairTransitions.required(t, step[0], step[1]));
            int opt = QueuePairAttribute.toMask(QueuePairTransitions.optional(t, step[0], step[1]));
            for (QueuePairAttribute a : QueuePairAttribute.values()) {
                if (((req | opt | STATE.bit()) & a.bit()) != 0) {
                    continue;
                }
                InvalidTransitionException e = catchThrowableOfType(InvalidTransitionException.class,
                        () -> QueuePairTransitions.check(t, step[0], step[1], req | a.bit() | STATE.bit()));
                assertThat(e.extra()).as("%s %s->%s with %s", t, step[0], step[1], a).containsExactly(a);
                assertThat(e.missing()).isEmpty();
            }
        }
    }

    @Test
    void udRejectsConnectedAttributesAtRtr() {
        InvalidTransitionException e = catchThrowableOfType(InvalidTransitionException.class,
                () -> QueuePairTransitions.check(QueuePairType.UD, INIT, RTR,
                        STATE.bit() | AV.bit() | DEST_QPN.bit() | PATH_MTU.bit()));
        assertThat(e.extra()).containsExactlyInAnyOrder(AV, DEST_QPN, PATH_MTU);
    }

    @Test
    void rcRtrWithoutAnythingListsAllSix() {
        InvalidTransitionException e = catchThrowableOfType(InvalidTransitionException.class,
                () -> QueuePairTransitions.check(QueuePairType.RC, INIT, RTR, STATE.bit()));
        assertThat(e.missing())
                .containsExactlyInAnyOrder(AV, PATH_MTU, DEST_QPN, RQ_PSN, MAX_DEST_RD_ATOMIC, MIN_RNR_TIMER);
        assertThat(e.getMessage()).startsWith("ibv_modify_qp(RC, INIT -> RTR): ")
                .contains("missing [").contains("maxDestRdAtomic");
    }

    @Test
    void illegalTransitionsAreRejected() {
        QueuePairState[][] illegal = {{QueuePairState.RESET, RTR}, {QueuePairState.RESET, RTS}, {INIT, RTS},
                {RTR, INIT}, {RTS, RTR}, {ERR, RTS}, {ERR, INIT}, {QueuePairState.RESET, SQD}, {SQE, SQD},
                {UNKNOWN, INIT}, {INIT, UNKNOWN}};
        for (QueuePairState[] p : illegal) {
            assertThat(QueuePairTransitions.isValid(p[0], p[1])).as("%s->%s", p[0], p[1]).isFalse();
            for (QueuePairType t : CREATABLE) {
                assertThatThrownBy(() -> QueuePairTransitions.check(t, p[0], p[1], STATE.bit()))
                        .isInstanceOf(InvalidTransitionException.class)
                        .hasMessageContaining("allows no transition from " + p[0] + " to " + p[1]);
            }
        }
    }

    @Test
    void anyStateGoesToResetAndErrWithNothingElse() {
        for (QueuePairState from : EnumSet.range(QueuePairState.RESET, ERR)) {
            for (QueuePairType t : CREATABLE) {
                QueuePairTransitions.check(t, from, QueuePairState.RESET, STATE.bit());
                QueuePairTransitions.check(t, from, ERR, STATE.bit());
                assertThatThrownBy(() -> QueuePairTransitions.check(t, from, ERR, STATE.bit() | QKEY.bit()))
                        .isInstanceOf(InvalidTransitionException.class);
            }
        }
    }

    @Test
    void curStateOnlyFromRtrRtsSqdSqe() {
        // RTS -> RTS accepts CUR_STATE; INIT -> INIT does not (the kernel's ib_modify_qp_is_ok rule)
        QueuePairTransitions.check(QueuePairType.RC, RTS, RTS, STATE.bit() | CUR_STATE.bit());
        InvalidTransitionException e = catchThrowableOfType(InvalidTransitionException.class,
                () -> QueuePairTransitions.check(QueuePairType.RC, INIT, INIT, STATE.bit() | CUR_STATE.bit()));
        assertThat(e.extra()).containsExactly(CUR_STATE);
    }

    @Test
    void ucHasNoReadAtomicAttributesAtRts() {
        InvalidTransitionException e = catchThrowableOfType(InvalidTransitionException.class,
                () -> QueuePairTransitions.check(QueuePairType.UC, RTR, RTS,
                        STATE.bit() | SQ_PSN.bit() | TIMEOUT.bit() | MAX_QP_RD_ATOMIC.bit()));
        assertThat(e.extra()).containsExactlyInAnyOrder(TIMEOUT, MAX_QP_RD_ATOMIC);
    }
}
