package dev.panverbs.tools.perftest;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * What the perftest clones need from a verbs implementation, shaped after perftest's own resource setup
 * ({@code ctx_init}, {@code ctx_connect}, {@code ctx_set_send_wqes}) so that the test logic above it (post
 * loops, CQ moderation, timing, reports) is written once. {@link CoreEngine} implements it on
 * {@code dev.panverbs.core}; the unit tests use an in-process simulation to exercise the TCP exchange and the
 * bookkeeping without a device.
 *
 * <p>Data-path calls ({@link Qp#post}, {@link Cq#poll}) are made in tight loops: implementations must not
 * allocate in them.
 */
interface VerbsEngine {

    /** Names of the RDMA devices, in {@code ibv_get_device_list} order. */
    List<String> deviceNames();

    /** Opens a device ({@code ibv_open_device}). */
    Device open(String name);

    /** Port attributes perftest looks at ({@code ibv_query_port}). */
    record PortInfo(int state, boolean ethernet, int activeMtu, int lid, int gidTableLength) {
        static final int ACTIVE = 4;

        /** perftest's {@code portStates[]} names. */
        String stateName() {
            String[] names = {"Nop", "Down", "Init", "Armed", "", "Active Defer"};
            return state == ACTIVE ? "Active" : (state >= 0 && state < names.length ? names[state] : "?");
        }
    }

    /** One entry of the port's GID table: the 16 bytes and, on RoCE, its type. */
    record GidEntry(int index, byte[] gid, String type) {
        boolean isZero() {
            for (byte b : gid) {
                if (b != 0) {
                    return false;
                }
            }
            return true;
        }

        boolean isIpv4Mapped() {
            for (int i = 0; i < 10; i++) {
                if (gid[i] != 0) {
                    return false;
                }
            }
            return (gid[10] & 0xff) == 0xff && (gid[11] & 0xff) == 0xff;
        }

        boolean isRoceV2() {
            return "RoCE v2".equals(type);
        }
    }

    /** An open device context. */
    interface Device extends AutoCloseable {
        String name();

        /** {@code IB}, {@code IW} or {@code Unknown}: perftest's {@code transport_str}. */
        String transport();

        int vendorId();

        int vendorPartId();

        int maxQpRdAtom();

        int maxPkeys();

        int numCompVectors();

        /** True when the QPs can be driven through {@code ibv_wr_*} ({@code ibv_create_qp_ex} with send ops). */
        boolean supportsWrApi();

        /** {@code mlx5dv_is_supported}: whether --direct_wqe can run on this device. */
        default boolean isMlx5() {
            return false;
        }

        /** {@code IBV_DEVICE_XRC} in {@code device_cap_flags}: whether {@code -c XRC} could run; none by default. */
        default boolean supportsXrc() {
            return false;
        }

        /** The device's on-demand-paging capabilities ({@code odp_caps}), for --odp; none by default. */
        default OdpCaps odpCaps() {
            return OdpCaps.NONE;
        }

        /** {@code ibv_query_port}; throws with the verb and errno when the port does not exist. */
        PortInfo port(int port);

        /** The usable (non-zero) GID entries of a port, in index order. */
        List<GidEntry> gids(int port);

        /** Creates PD, MRs, CQs and QPs in INIT, as {@code ctx_init} does. */
        Resources allocate(ResourceSpec spec);

        @Override
        void close();
    }

    /**
     * {@code struct ibv_odp_caps}: whether ODP is supported ({@code IBV_ODP_SUPPORT}) and the
     * {@code IBV_ODP_SUPPORT_*} bits per transport.
     */
    record OdpCaps(boolean supported, int rc, int uc, int ud, int xrc) {
        static final OdpCaps NONE = new OdpCaps(false, 0, 0, 0, 0);
    }

    /**
     * What {@code ctx_init} creates, derived from the test parameters. {@code useSrq}: the QPs take their receives
     * from one shared receive queue of {@code rxDepth} WRs ({@code --use-srq} on a side that receives);
     * {@code useOdp}: the buffers are registered with {@code IBV_ACCESS_ON_DEMAND} (--odp).
     */
    record ResourceSpec(PerftestTest.Verb verb, PerftestParameters.Connection connection, int numQps,
                        int port, int pkeyIndex, int txDepth, int rxDepth, int inlineSize, long bufferSize,
                        boolean mrPerQp, boolean relaxedOrdering, boolean iwarp, boolean zeroFill,
                        boolean useWrApi, boolean useEvents, int completionVector, boolean useSrq,
                        boolean directWqe, boolean useOdp) {

        /** Without --odp. */
        ResourceSpec(PerftestTest.Verb verb, PerftestParameters.Connection connection, int numQps, int port,
                     int pkeyIndex, int txDepth, int rxDepth, int inlineSize, long bufferSize, boolean mrPerQp,
                     boolean relaxedOrdering, boolean iwarp, boolean zeroFill, boolean useWrApi, boolean useEvents,
                     int completionVector, boolean useSrq, boolean directWqe) {
            this(verb, connection, numQps, port, pkeyIndex, txDepth, rxDepth, inlineSize, bufferSize, mrPerQp,
                    relaxedOrdering, iwarp, zeroFill, useWrApi, useEvents, completionVector, useSrq, directWqe, false);
        }

        /** Without --direct_wqe. */
        ResourceSpec(PerftestTest.Verb verb, PerftestParameters.Connection connection, int numQps, int port,
                     int pkeyIndex, int txDepth, int rxDepth, int inlineSize, long bufferSize, boolean mrPerQp,
                     boolean relaxedOrdering, boolean iwarp, boolean zeroFill, boolean useWrApi, boolean useEvents,
                     int completionVector, boolean useSrq) {
            this(verb, connection, numQps, port, pkeyIndex, txDepth, rxDepth, inlineSize, bufferSize, mrPerQp,
                    relaxedOrdering, iwarp, zeroFill, useWrApi, useEvents, completionVector, useSrq, false, false);
        }

        /** Without a shared receive queue. */
        ResourceSpec(PerftestTest.Verb verb, PerftestParameters.Connection connection, int numQps, int port,
                     int pkeyIndex, int txDepth, int rxDepth, int inlineSize, long bufferSize, boolean mrPerQp,
                     boolean relaxedOrdering, boolean iwarp, boolean zeroFill, boolean useWrApi, boolean useEvents,
                     int completionVector) {
            this(verb, connection, numQps, port, pkeyIndex, txDepth, rxDepth, inlineSize, bufferSize, mrPerQp,
                    relaxedOrdering, iwarp, zeroFill, useWrApi, useEvents, completionVector, false, false, false);
        }
    }

    /** Address and transport attributes for RTR/RTS ({@code ctx_modify_qp_to_rtr}/{@code _rts}). */
    record Connect(int mtu, int remoteQpn, int remotePsn, int localPsn, int remoteLid, byte[] remoteGid,
                   int sgidIndex, int trafficClass, int sl, int maxDestRdAtomic, int maxRdAtomic, int timeout,
                   boolean toRts) {
    }

    /** The resources of one test run. Closing releases everything (QPs, CQs, MRs, PD). */
    interface Resources extends AutoCloseable {
        /** The data buffer of MR {@code i} (0 unless --mr_per_qp), registered for the whole spec size. */
        MemorySegment buffer(int mr);

        int lkey(int mr);

        int rkey(int mr);

        Qp qp(int i);

        Cq sendCq();

        /** The receive CQ (SEND tests), the send CQ otherwise. */
        Cq recvCq();

        /** Whether the QPs post through {@code ibv_wr_*}; false after --use_old_post_send or a fallback. */
        boolean usesWrApi();

        @Override
        void close();
    }

    /**
     * One queue pair. The send work request's fixed parts (opcode, keys, inline, UD address) are set once per
     * message size with {@link #configureSend}; each post then only names addresses and signaling.
     */
    interface Qp {
        int qpNum();

        /** max_inline_data the device actually granted. */
        int maxInlineData();

        /** Moves the QP to RTR, and to RTS when {@code c.toRts()}; creates the UD address handle. */
        void connect(Connect c);

        /**
         * Fixes the send WR template for the next posts: operation from the spec, {@code length} bytes,
         * {@code lkey}/{@code rkey}, IBV_SEND_INLINE when {@code inline}, and for UD the destination.
         */
        void configureSend(int length, int lkey, int rkey, boolean inline, int remoteQpn, int remoteQkey);

        /**
         * Posts {@code count} send WRs in one call (one {@code ibv_post_send} chain or one
         * {@code ibv_wr_start}..{@code ibv_wr_complete} batch). WR {@code k} uses {@code localAddr[k]},
         * {@code remoteAddr[k]} and is signaled when bit {@code k} of {@code signaledMask} is set.
         *
         * @return 0, or the errno of the failed post
         */
        int post(int count, long[] localAddr, long[] remoteAddr, long signaledMask, long wrId);

        /** Posts one receive WR. @return 0 or the errno */
        int postRecv(long addr, int length, int lkey, long wrId);
    }

    /** A completion queue, polled into a reusable array of at most {@value #BATCH} entries. */
    interface Cq {
        int BATCH = 16;

        /** {@code ibv_poll_cq} of up to {@code max} entries; negative on failure. */
        int poll(int max);

        long wrId(int i);

        /** {@code enum ibv_wc_status} value of entry {@code i}, 0 = success. */
        int status(int i);

        int vendorErr(int i);

        /** Symbolic name of a status value, e.g. {@code RETRY_EXC_ERR}. */
        String statusName(int status);

        /** Arms the CQ for the next completion event ({@code ibv_req_notify_cq}). */
        void requestNotify();

        /**
         * Waits for a completion event, acknowledges it and re-arms ({@code ctx_notify_events}).
         *
         * @return false when nothing arrived within {@code timeoutMillis}
         */
        boolean awaitEvent(long timeoutMillis);
    }
}
