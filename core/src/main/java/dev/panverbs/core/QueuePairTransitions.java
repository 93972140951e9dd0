package dev.panverbs.core;

import static dev.panverbs.bindings.verbs.verbs_h.*;

import java.util.Set;

/**
 * The QP state-transition table of the InfiniBand spec (vol. 1, 11.2.4.2 / 10.3), as the Linux kernel encodes it in
 * {@code qp_state_table} ({@code drivers/infiniband/core/verbs.c}, {@code ib_modify_qp_is_ok}): for each
 * (current state, next state, QP type) the attributes that must be given and those that may be given.
 *
 * <p>{@link QueuePair#modify(QueuePairAttributes)} checks every modification against this table before calling
 * {@code ibv_modify_qp}, so a wrong transition or a missing/extra attribute is reported as an
 * {@link InvalidTransitionException} naming the attributes instead of the kernel's bare {@code EINVAL}. The named
 * transitions ({@link QueuePair#toInit}, {@link QueuePair#toRtr}, {@link QueuePair#toRts}) use it too.
 *
 * <p>Any state may move to {@link QueuePairState#RESET} or {@link QueuePairState#ERR} with no other attribute.
 */
public final class QueuePairTransitions {

    private static final int STATES = 7; // RESET .. ERR; UNKNOWN is never a legal source nor target
    private static final int TYPES = QueuePairType.values().length;

    private static final boolean[][] VALID = new boolean[STATES][STATES];
    private static final int[][][] REQUIRED = new int[STATES][STATES][TYPES];
    private static final int[][][] OPTIONAL = new int[STATES][STATES][TYPES];

    private static final int RESET = IBV_QPS_RESET(), INIT = IBV_QPS_INIT(), RTR = IBV_QPS_RTR(), RTS = IBV_QPS_RTS(),
            SQD = IBV_QPS_SQD(), SQE = IBV_QPS_SQE(), ERR = IBV_QPS_ERR();
    private static final int RC = QueuePairType.RC.ordinal(), UC = QueuePairType.UC.ordinal(),
            UD = QueuePairType.UD.ordinal(), RAW = QueuePairType.RAW_PACKET.ordinal(),
            XRC_INI = QueuePairType.XRC_SEND.ordinal(), XRC_TGT = QueuePairType.XRC_RECV.ordinal(),
            DCI = QueuePairType.DC_INITIATOR.ordinal(), DCT = QueuePairType.DC_TARGET.ordinal();

    static {
        for (int s = 0; s < STATES; s++) {
            VALID[s][RESET] = true;
            VALID[s][ERR] = true;
        }
        int pkeyPortAccess = IBV_QP_PKEY_INDEX() | IBV_QP_PORT() | IBV_QP_ACCESS_FLAGS();
        int pkeyPortQkey = IBV_QP_PKEY_INDEX() | IBV_QP_PORT() | IBV_QP_QKEY();

        // RESET -> INIT
        valid(RESET, INIT);
        req(RESET, INIT, UD, pkeyPortQkey);
        req(RESET, INIT, RAW, IBV_QP_PORT());
        req(RESET, INIT, UC, pkeyPortAccess);
        req(RESET, INIT, RC, pkeyPortAccess);
        req(RESET, INIT, XRC_INI, pkeyPortAccess);
        req(RESET, INIT, XRC_TGT, pkeyPortAccess);
        // mlx5 DC, as Linux's mlx5_ib checks them (modify_dci_qp_is_ok, mlx5_ib_modify_dct)
        req(RESET, INIT, DCI, IBV_QP_PKEY_INDEX() | IBV_QP_PORT());
        req(RESET, INIT, DCT, pkeyPortAccess);

        // INIT -> INIT
        valid(INIT, INIT);
        opt(INIT, INIT, UD, pkeyPortQkey);
        opt(INIT, INIT, UC, pkeyPortAccess);
        opt(INIT, INIT, RC, pkeyPortAccess);
        opt(INIT, INIT, XRC_INI, pkeyPortAccess);
        opt(INIT, INIT, XRC_TGT, pkeyPortAccess);
        opt(INIT, INIT, DCI, IBV_QP_PKEY_INDEX() | IBV_QP_PORT());

        // INIT -> RTR
        int rtrUc = IBV_QP_AV() | IBV_QP_PATH_MTU() | IBV_QP_DEST_QPN() | IBV_QP_RQ_PSN();
        int rtrRc = rtrUc | IBV_QP_MAX_DEST_RD_ATOMIC() | IBV_QP_MIN_RNR_TIMER();
        int rtrOpt = IBV_QP_ALT_PATH() | IBV_QP_ACCESS_FLAGS() | IBV_QP_PKEY_INDEX();
        valid(INIT, RTR);
        req(INIT, RTR, UC, rtrUc);
        req(INIT, RTR, RC, rtrRc);
        req(INIT, RTR, XRC_INI, rtrUc);
        req(INIT, RTR, XRC_TGT, rtrRc);
        opt(INIT, RTR, UD, IBV_QP_PKEY_INDEX() | IBV_QP_QKEY());
        opt(INIT, RTR, UC, rtrOpt);
        opt(INIT, RTR, RC, rtrOpt);
        opt(INIT, RTR, XRC_INI, rtrOpt);
        opt(INIT, RTR, XRC_TGT, rtrOpt);
        req(INIT, RTR, DCI, IBV_QP_PATH_MTU()); // no remote QP: each WR names its DCT
        opt(INIT, RTR, DCI, IBV_QP_PKEY_INDEX() | IBV_QP_AV());
        req(INIT, RTR, DCT, IBV_QP_MIN_RNR_TIMER() | IBV_QP_AV() | IBV_QP_PATH_MTU());

        // RTR -> RTS
        int rtsRc = IBV_QP_TIMEOUT() | IBV_QP_RETRY_CNT() | IBV_QP_RNR_RETRY() | IBV_QP_SQ_PSN()
                | IBV_QP_MAX_QP_RD_ATOMIC();
        int curQkey = IBV_QP_CUR_STATE() | IBV_QP_QKEY();
        int curAltAccessMig = IBV_QP_CUR_STATE() | IBV_QP_ALT_PATH() | IBV_QP_ACCESS_FLAGS()
                | IBV_QP_PATH_MIG_STATE();
        int curAltAccessMigRnr = curAltAccessMig | IBV_QP_MIN_RNR_TIMER();
        valid(RTR, RTS);
        req(RTR, RTS, UD, IBV_QP_SQ_PSN());
        req(RTR, RTS, UC, IBV_QP_SQ_PSN());
        req(RTR, RTS, RC, rtsRc);
        req(RTR, RTS, XRC_INI, rtsRc);
        req(RTR, RTS, XRC_TGT, IBV_QP_TIMEOUT() | IBV_QP_SQ_PSN());
        opt(RTR, RTS, UD, curQkey);
        opt(RTR, RTS, UC, curAltAccessMig);
        opt(RTR, RTS, RC, curAltAccessMigRnr);
        opt(RTR, RTS, XRC_INI, curAltAccessMig);
        opt(RTR, RTS, XRC_TGT, curAltAccessMigRnr);
        opt(RTR, RTS, RAW, IBV_QP_RATE_LIMIT());
        req(RTR, RTS, DCI, rtsRc);
        opt(RTR, RTS, DCI, IBV_QP_MIN_RNR_TIMER());

        // RTS -> RTS, SQD -> RTS (same optional sets), RTS -> SQD
        for (int from : new int[] {RTS, SQD}) {
            valid(from, RTS);
            opt(from, RTS, UD, curQkey);
            opt(from, RTS, UC, curAltAccessMig);
            opt(from, RTS, RC, curAltAccessMigRnr);
            opt(from, RTS, XRC_INI, curAltAccessMig);
            opt(from, RTS, XRC_TGT, curAltAccessMigRnr);
        }
        opt(RTS, RTS, RAW, IBV_QP_RATE_LIMIT());
        opt(RTS, RTS, DCI, IBV_QP_MIN_RNR_TIMER());
        valid(RTS, SQD);
        for (int t : new int[] {UD, UC, RC, XRC_INI, XRC_TGT}) {
            opt(RTS, SQD, t, IBV_QP_EN_SQD_ASYNC_NOTIFY());
        }

        // SQD -> SQD
        valid(SQD, SQD);
        opt(SQD, SQD, UD, IBV_QP_PKEY_INDEX() | IBV_QP_QKEY());
        opt(SQD, SQD, UC, IBV_QP_AV() | IBV_QP_ALT_PATH() | IBV_QP_ACCESS_FLAGS() | IBV_QP_PKEY_INDEX()
                | IBV_QP_PATH_MIG_STATE());
        opt(SQD, SQD, RC, IBV_QP_PORT() | IBV_QP_AV() | IBV_QP_TIMEOUT() | IBV_QP_RETRY_CNT() | IBV_QP_RNR_RETRY()
                | IBV_QP_MAX_QP_RD_ATOMIC() | IBV_QP_MAX_DEST_RD_ATOMIC() | IBV_QP_ALT_PATH()
                | IBV_QP_ACCESS_FLAGS() | IBV_QP_PKEY_INDEX() | IBV_QP_MIN_RNR_TIMER() | IBV_QP_PATH_MIG_STATE());
        opt(SQD, SQD, XRC_INI, IBV_QP_PORT() | IBV_QP_AV() | IBV_QP_TIMEOUT() | IBV_QP_RETRY_CNT()
                | IBV_QP_RNR_RETRY() | IBV_QP_MAX_QP_RD_ATOMIC() | IBV_QP_ALT_PATH() | IBV_QP_ACCESS_FLAGS()
                | IBV_QP_PKEY_INDEX() | IBV_QP_PATH_MIG_STATE());
        opt(SQD, SQD, XRC_TGT, IBV_QP_PORT() | IBV_QP_AV() | IBV_QP_TIMEOUT() | IBV_QP_MAX_DEST_RD_ATOMIC()
                | IBV_QP_ALT_PATH() | IBV_QP_ACCESS_FLAGS() | IBV_QP_PKEY_INDEX() | IBV_QP_MIN_RNR_TIMER()
                | IBV_QP_PATH_MIG_STATE());

        // SQE -> RTS
        valid(SQE, RTS);
        opt(SQE, RTS, UD, curQkey);
        opt(SQE, RTS, UC, IBV_QP_CUR_STATE() | IBV_QP_ACCESS_FLAGS());
    }

    private QueuePairTransitions() {}

    private static void valid(int from, int to) {
        VALID[from][to] = true;
    }

    private static void req(int from, int to, int type, int mask) {
        REQUIRED[from][to][type] = mask;
    }

    private static void opt(int from, int to, int type, int mask) {
        OPTIONAL[from][to][type] = mask;
    }

    private static boolean inRange(QueuePairState s) {
        return s.value() >= 0 && s.value() < STATES;
    }

    /** Whether the spec allows {@code current -> next} at all (for some attribute set). */
    public static boolean isValid(QueuePairState current, QueuePairState next) {
        return inRange(current) && inRange(next) && VALID[current.value()][next.value()];
    }

    /** The attributes {@code current -> next} requires for a QP of {@code type} (empty if the move is invalid). */
    public static Set<QueuePairAttribute> required(QueuePairType type, QueuePairState current, QueuePairState next) {
        return QueuePairAttribute.fromMask(requiredMask(type, current, next));
    }

    /** The attributes {@code current -> next} also accepts for a QP of {@code type}, beyond the required ones. */
    public static Set<QueuePairAttribute> optional(QueuePairType type, QueuePairState current, QueuePairState next) {
        return QueuePairAttribute.fromMask(optionalMask(type, current, next));
    }

    static int requiredMask(QueuePairType type, QueuePairState current, QueuePairState next) {
        return isValid(current, next) ? REQUIRED[current.value()][next.value()][type.ordinal()] : 0;
    }

    static int optionalMask(QueuePairType type, QueuePairState current, QueuePairState next) {
        return isValid(current, next) ? OPTIONAL[current.value()][next.value()][type.ordinal()] : 0;
    }

    /**
     * Checks a modification the way the kernel's {@code ib_modify_qp_is_ok} does. {@code mask} is the full
     * attribute mask; without {@code IBV_QP_STATE} the QP stays in {@code current} (an in-state modification).
     *
     * @throws InvalidTransitionException if the transition is not allowed, an attribute is missing or one is not
     *         accepted for this transition and QP type
     */
    public static void check(QueuePairType type, QueuePairState current, QueuePairState next, int mask) {
        boolean curStateOk = (mask & IBV_QP_CUR_STATE()) == 0
                || current == QueuePairState.RTR || current == QueuePairState.RTS
                || current == QueuePairState.SQD || current == QueuePairState.SQE;
        if (!isValid(current, next)) {
            throw new InvalidTransitionException(type, current, next, Set.of(),
                    QueuePairAttribute.fromMask(mask & ~IBV_QP_STATE()));
        }
        int required = REQUIRED[current.value()][next.value()][type.ordinal()];
        int optional = OPTIONAL[current.value()][next.value()][type.ordinal()];
        int missing = required & ~mask;
        int extra = mask & ~(required | optional | IBV_QP_STATE());
        if (!curStateOk) {
            extra |= IBV_QP_CUR_STATE();
        }
        if (missing != 0 || extra != 0) {
            throw new InvalidTransitionException(type, current, next, QueuePairAttribute.fromMask(missing),
                    QueuePairAttribute.fromMask(extra));
        }
    }
}
